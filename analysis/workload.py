"""What analysis needs from a workload, and where it finds it.

analysis/ owns the generic steps (a run's tables and metrics.json, aggregation across runs,
figures, CIs, comparisons); everything that knows a workload's logs lives in its folder
(priolab/workloads/<kind>/analysis.py, whose `ANALYSIS` implements `WorkloadAnalysis`). A
workload without one gets `LinkOnly`: the emulated link's table and metrics, nothing else.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from analysis.link import linkem_metrics, linkem_table
from analysis.logs import AnalysisError
from ground import rundir

if TYPE_CHECKING:
    from analysis.rundirs import Run


class WorkloadAnalysis(Protocol):
    core_metrics: tuple[str, ...]
    """The metrics every run of the workload reports; the summary's first rows."""
    run_columns: tuple[str, ...]
    """Workload parameters copied into runs.csv (figures group by them)."""
    log_dirs: tuple[str, ...]
    """Folders of a run whose files, when newer than metrics.json, make it stale."""

    def write_tables(self, run_dir: Path, tables_dir: Path) -> dict[str, object]:
        """Read the run's logs, write its tables into tables_dir; return the manifest
        (source → rows or `missing`). Malformed logs raise AnalysisError."""
        ...

    def metrics(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> tuple[dict[str, float], dict[str, Any]]:
        """(metrics, what the analysis assumed: window, warm-up, ...) of one run. A metric
        without data is NaN. Malformed logs raise AnalysisError."""
        ...

    def summary_header(self, runs: list[Run]) -> list[str]:
        """Lines of summary.md under its title: what the metrics mean and what ran."""
        ...

    def figures(self, runs: pd.DataFrame, scenario_dir: Path) -> tuple[list[Path], list[str]]:
        """The scenario's figures from runs.csv's valid runs: (files made, skipped with why)."""
        ...


class LinkOnly:
    """A workload with no analysis of its own: the link emulator's view only."""

    core_metrics: tuple[str, ...] = ()
    run_columns: tuple[str, ...] = ()
    log_dirs: tuple[str, ...] = ()

    def write_tables(self, run_dir: Path, tables_dir: Path) -> dict[str, object]:
        lk, note = linkem_table(run_dir)
        tables_dir.mkdir(exist_ok=True)
        lk.to_parquet(tables_dir / "linkem.parquet", index=False)
        return {rundir.LINK_STATS: note}

    def metrics(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> tuple[dict[str, float], dict[str, Any]]:
        return linkem_metrics(linkem_table(run_dir)[0]), {}

    def summary_header(self, runs: list[Run]) -> list[str]:
        return ["Metrics of the emulated link only (this workload has no analysis of its own).", ""]

    def figures(self, runs: pd.DataFrame, scenario_dir: Path) -> tuple[list[Path], list[str]]:
        return [], ["this workload has no figures"]


def analysis_for(kind: str) -> WorkloadAnalysis:
    """The analysis of workload `kind` (its folder's analysis.py), else LinkOnly."""
    from priolab.workloads import PACKAGES

    if kind not in PACKAGES:
        raise AnalysisError(f"workload kind {kind!r}: not one of {sorted(PACKAGES)}")
    try:
        mod = importlib.import_module(f"{PACKAGES[kind]}.analysis")
    except ModuleNotFoundError as e:
        if e.name != f"{PACKAGES[kind]}.analysis":
            raise
        return LinkOnly()
    found = getattr(mod, "ANALYSIS", None)
    return found if found is not None else LinkOnly()
