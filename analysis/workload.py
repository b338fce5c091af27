"""What analysis needs from a workload, and where it finds it.

analysis/ owns the generic steps (a run's tables and metrics.json, aggregation across runs,
figures, CIs, comparisons); everything that knows a workload's logs lives in its folder
(priolab/workloads/<kind>/analysis.py, whose `ANALYSIS` implements `WorkloadAnalysis`). A
workload without one gets `LinkOnly`: the emulated link's table and metrics, nothing else.

analysis imports no package of workloads: a package that has them declares an entry point in
the group `analysis.workloads` (priolab: pyproject.toml, `priolab.workloads:PACKAGES`), which
loads a mapping kind → the workload folder's package, and `analysis_for` imports that
package's `analysis` module when a run of the kind is analysed, `figures_for` its `figures`
module when a scenario's figures are drawn (from runs.csv and each run's figure data).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
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

    def figure_data(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> dict[str, dict[str, list[Any]]]:
        """The compact data the workload's figures draw, from one valid run's tables
        (analysis/figure_data.py): quantile vectors, binned series, one run's own series."""
        ...


class WorkloadFigures(Protocol):
    """A workload folder's `figures` module (drawing only: it reads runs.csv and each run's
    figure data, never a run's tables or logs, so the evidence store's records draw the
    same figures)."""

    def make_figures(self, runs: pd.DataFrame, scenario_dir: Path) -> tuple[list[Path], list[str]]:
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

    def figure_data(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> dict[str, dict[str, list[Any]]]:
        return {}


ENTRY_POINTS = "analysis.workloads"
"""The entry-point group of the packages that provide workload kinds (see the module's doc)."""


@functools.cache
def workload_packages() -> dict[str, str]:
    """kind → the package of its workload folder, from every entry point of ENTRY_POINTS."""
    found: dict[str, str] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINTS):
        for kind, pkg in dict(ep.load()).items():
            if found.setdefault(kind, pkg) != pkg:
                raise AnalysisError(
                    f"workload kind {kind!r} is provided twice (entry-point group "
                    f"{ENTRY_POINTS!r}): by {found[kind]!r} and by {pkg!r} ({ep.value})"
                )
    if not found:
        raise AnalysisError(
            f"no installed package provides workloads (entry-point group {ENTRY_POINTS!r}); "
            "install this checkout: `make venv`, or `pip install --no-deps -e .`"
        )
    return found


def _workload_module(kind: str, name: str) -> Any:
    """The workload folder's module `name`, or None when the folder has none."""
    packages = workload_packages()
    if kind not in packages:
        raise AnalysisError(f"workload kind {kind!r}: not one of {sorted(packages)}")
    try:
        return importlib.import_module(f"{packages[kind]}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{packages[kind]}.{name}":
            raise
        return None


def analysis_for(kind: str) -> WorkloadAnalysis:
    """The analysis of workload `kind` (its folder's analysis.py), else LinkOnly."""
    mod = _workload_module(kind, "analysis")
    found = getattr(mod, "ANALYSIS", None) if mod is not None else None
    return found if found is not None else LinkOnly()


def figures_for(kind: str) -> WorkloadFigures | None:
    """The figures of workload `kind` (its folder's figures.py), or None when it draws none.
    Imported by name, like the analysis: the modules that compute a run's metrics never
    import the drawing (the evidence store's code digest follows imports: evidence/README.md)."""
    return _workload_module(kind, "figures")
