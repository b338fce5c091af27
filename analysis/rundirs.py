"""Find the run directories of a scenario and read what aggregation needs from each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.logs import AnalysisError, read_metadata, workload_kind
from analysis.metrics import read_metrics, run_metrics
from analysis.workload import analysis_for
from ground import rundir
from ground.reasons import Code, Reason, from_metadata


@dataclass
class Run:
    path: Path
    setting: str
    scheme: str
    speed: str
    rep: str
    meta: dict[str, Any]
    valid: bool
    reasons: list[Reason]
    metrics: dict[str, float]

    @property
    def reasons_prose(self) -> str:
        """The reasons as one line for people."""
        return "; ".join(r.prose() for r in self.reasons)

    @property
    def workload(self) -> dict[str, Any]:
        w = self.meta.get("run", {}).get("workload", {})
        return w if isinstance(w, dict) else {}


def find_run_dirs(scenario_dir: Path) -> list[Path]:
    """Every finished run under the scenario directory (engine.rundir's layout)."""
    return rundir.find_runs(scenario_dir)


def load_run(path: Path, recompute: bool = False) -> Run:
    """A run with its metrics (computed and written if metrics.json is absent or older than
    the logs, or recompute). Invalid runs get no metrics: their logs may be absent or broken."""
    at = rundir.coords(path)
    meta = read_metadata(path)
    valid = bool(meta.get("valid", False))
    reasons = from_metadata(meta)
    metrics: dict[str, float] = {}
    if valid:
        m = None if recompute else _fresh_metrics(path, meta)
        try:
            if m is None:
                run_metrics(path)
                m = read_metrics(path)
        except AnalysisError as e:
            valid, reasons = False, [Reason(Code.ANALYSIS, f"analysis: {e}")]
        else:
            assert m is not None
            if m.get("valid") is False and m.get("analysis_error"):
                valid, reasons = False, from_metadata(m)
            metrics = m["metrics"]
    return Run(path, at.setting, at.scheme, at.speed, str(at.rep), meta, valid, reasons, metrics)


def _fresh_metrics(path: Path, meta: dict[str, Any]) -> dict[str, Any] | None:
    """metrics.json, unless a log of the run is newer (the workload says where its logs are)."""
    mj = path / rundir.METRICS
    if not mj.is_file():
        return None
    t = mj.stat().st_mtime
    for ep in analysis_for(workload_kind(meta)).log_dirs:
        d = path / ep
        if d.is_dir() and any(f.stat().st_mtime > t for f in d.iterdir()):
            return None
    return read_metrics(path)
