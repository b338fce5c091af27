"""A run folder → its record (records.py): what `priolab evidence add` keeps of a run.

Reads metadata.json, metrics.json (computed first where the metrics step has not run) and
figure-data.json of the run, the calibration report of its machine beside the run folders
(`calibration-<host>.json`, a real-time site's) and the RISE page's picture scores where they
were scored (`picture/runs.csv`); hashes the code that produced it (digest.py). Never a log.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import figure_data
from analysis.metrics import read_metrics, run_metrics
from analysis.rundirs import load_run
from ground import rundir
from priolab.evidence import digest
from priolab.evidence.records import REAL_TIME_SITES, ReasonRecord, RunRecord

NO_SITE = "site not recorded"
"""A run whose metadata.json has no `site` (from before sites were recorded)."""
META_KEYS = ("target", "backend", "site", "host", "slurm", "udp_drops", "ran_s", "versions",
             "cpu", "inputs", "interfaces")  # fmt: skip
"""What a record keeps of metadata.json besides the run block and the verdict: what the
pages read (site and its cost, CPU, kernel UDP drops) and the provenance of the tools."""
CPU_KEYS = ("applies", "why", "saturated", "rule", "utilisation_mean_pct", "samples",
            "worst_node")  # fmt: skip
"""metadata.json's `cpu` keeps its summary, not its per-node and per-process samples."""
PICTURE = Path("picture") / "runs.csv"
"""The RISE page's Fig. 7 scores beside the run folders (priolab/workloads/rise/picture.py)."""


def _strip_paths(obj: Any, run_dir: Path, repo: Path) -> Any:
    """Run-folder and checkout paths in strings → `<run>/…` and `<repo>/…`."""
    if isinstance(obj, str):
        for prefix, name in (
            (str(run_dir), "<run>"),
            (str(run_dir) + rundir.PARTIAL_SUFFIX, "<run>"),
            (str(repo.resolve()), "<repo>"),
        ):
            if obj.startswith(prefix):
                return name + obj[len(prefix) :]
        return obj
    if isinstance(obj, dict):
        return {k: _strip_paths(v, run_dir, repo) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_strip_paths(v, run_dir, repo) for v in obj]
    return obj


def meta_facts(meta: dict[str, Any], run_dir: Path, repo: Path) -> dict[str, Any]:
    """The part of metadata.json a record keeps (META_KEYS; `run` normalised)."""
    out = {k: meta[k] for k in META_KEYS if k in meta}
    if isinstance(out.get("cpu"), dict):
        out["cpu"] = {k: v for k, v in out["cpu"].items() if k in CPU_KEYS}
    if isinstance(out.get("site"), dict):
        out["site"] = {k: v for k, v in out["site"].items() if k != "binary"}
    out["run"] = digest.normalised_run(meta.get("run") or {}, repo)
    return _strip_paths(out, run_dir.resolve(), repo)


def machine(meta: dict[str, Any]) -> dict[str, Any]:
    """The machine a real-time run ran on: host, kernel and the nodes' hosts."""
    nodes = {n: {k: v for k, v in (d or {}).items() if k in ("hostname", "kernel", "name")}
             for n, d in sorted((meta.get("nodes") or {}).items())}  # fmt: skip
    return {"host": meta.get("host") or {},
            "kernel": (meta.get("versions") or {}).get("kernel"), "nodes": nodes}  # fmt: skip


def calibration(results_root: Path, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The calibration report of the machine that ran a real-time run, if it is there."""
    host = (meta.get("host") or {}).get("hostname")
    p = results_root / f"calibration-{host}.json"
    if not host or not p.is_file():
        return None
    try:
        report = json.loads(p.read_text())
    except ValueError:
        return None
    return {"file": p.name, "report": report}


def picture_scores(results_root: Path) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    """(scenario, setting label, scheme, rep) → that run's row of picture/runs.csv."""
    p = results_root / PICTURE
    if not p.is_file():
        return {}
    try:
        t = pd.read_csv(p)
    except (OSError, pd.errors.EmptyDataError):
        return {}
    out = {}
    for r in t.to_dict("records"):
        key = (str(r["scenario"]), str(r["setting"]), str(r["scheme"]), int(r["rep"]))
        out[key] = {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in r.items()
            if k not in ("scenario", "setting", "scheme", "rep")
        }
    return out


def record(
    run_dir: Path,
    repo: Path,
    results_root: Path,
    multi_speed: bool = False,
    pictures: dict[tuple[str, str, str, int], dict[str, Any]] | None = None,
) -> RunRecord:
    """The record of one finished run folder (metrics computed first where absent)."""
    at = rundir.coords(run_dir)
    if not (run_dir / rundir.METRICS).is_file():
        run_metrics(run_dir)
    run = load_run(run_dir)  # the validity and typed reasons aggregation uses
    meta = run.meta
    m = read_metrics(run_dir) or {}
    site = str((meta.get("site") or {}).get("kind") or NO_SITE)
    spec = meta.get("run") or {}
    kind = str((spec.get("workload") or {}).get("kind") or "")
    git = meta.get("git") or {}
    label = f"{at.setting}/{at.speed}" if multi_speed else at.setting
    real = site in REAL_TIME_SITES
    return RunRecord(
        scenario=str(spec.get("scenario") or at.scenario),
        site=site,
        setting=at.setting,
        scheme=at.scheme,
        speed=at.speed,
        rep=at.rep,
        seed=int(spec.get("seed") or 0),
        valid=run.valid,
        reasons=tuple(ReasonRecord.of(r) for r in run.reasons),
        metrics={
            k: (None if isinstance(v, float) and math.isnan(v) else float(v))
            for k, v in (m.get("metrics") or {}).items()
        },  # fmt: skip
        analysis=m.get("analysis") or {},
        commit=git.get("commit"),
        dirty=git.get("dirty"),
        lock_digest=(meta.get("python_packages") or {}).get("lock_sha256"),
        digests=digest.digests(spec, digest.run_files(spec, repo), kind, site, repo),
        meta=meta_facts(meta, run_dir, repo),
        machine=machine(meta) if real else None,
        calibration=calibration(results_root, meta) if real else None,
        figure_data=figure_data.read(run_dir) if run.valid else {},
        picture=(pictures or {}).get((at.scenario, label, at.scheme, at.rep)),
    )
