"""The `rise` workload's part of analysis/ (analysis.workload.WorkloadAnalysis): its tables
(tables.py), metrics (metrics.py), summary header and figure data (figure_data.py; the
figures that draw it are figures.py, found by analysis.workload.figures_for)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from priolab.workloads.rise import RiseParams
from priolab.workloads.rise.logs import ENDPOINTS
from priolab.workloads.rise.metrics import CORE_METRICS, rise_metrics
from priolab.workloads.rise.tables import write_tables
from priolab.workloads.what_ran import params_of

if TYPE_CHECKING:
    from analysis.rundirs import Run

RUN_COLUMNS = (
    "video_bitrate_mbps", "fps", "tracking_speed_deg_s", "prio_guest", "prio_host", "fifo_drop",
    "processing_delay_ms", "warmup_s", "buffer_bytes",
)  # fmt: skip


def buffer_scheme(workload: dict[str, object], endpoint: str) -> str:
    """What an endpoint's sender buffer B was: `prio` (the channels) or the single FIFO with
    its drop policy. Runs before issue 10 have no fifo_drop: their FIFO dropped the tail."""
    if workload.get(f"prio_{endpoint}", True):
        return "prio"
    return f"fifo-{workload.get('fifo_drop', 'tail')}-drop"


def scheme_description(runs: list[Run], key: Any = None) -> list[str]:
    """One line per scheme: what ran at the Guest and the Host (from each run's metadata) and
    the warm-up excluded, so a table never hides which baseline it compares against."""
    seen: dict[str, set[str]] = {}
    for r in runs:  # B as recorded (a missing fifo_drop is history: see buffer_scheme)
        g, h = buffer_scheme(r.workload, "guest"), buffer_scheme(r.workload, "host")
        p = params_of(RiseParams, r.workload)
        seen.setdefault(r.scheme, set()).add(
            f"Guest {g}, Host {h}, warm-up {p.warmup_s:g} s, "
            f"processing delay {p.processing_delay_ms:g} ms"
        )
    return [f"- {s}: {'; '.join(sorted(v))}" for s, v in sorted(seen.items(), key=key)]


class RiseAnalysis:
    core_metrics: tuple[str, ...] = CORE_METRICS
    run_columns: tuple[str, ...] = RUN_COLUMNS
    log_dirs: tuple[str, ...] = ENDPOINTS

    def write_tables(self, run_dir: Path, tables_dir: Path) -> dict[str, object]:
        return write_tables(run_dir, tables_dir)

    def metrics(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> tuple[dict[str, float], dict[str, Any]]:
        return rise_metrics(run_dir, meta)

    def summary_header(self, runs: list[Run]) -> list[str]:
        from analysis.aggregate import scheme_key

        return [
            "Guest's perspective unless the metric ends in _host. Percentiles, freezes, "
            "stalls and displayed fps exclude each run's warm-up; a stall is a display gap "
            "≥ max(3/fps, 1/fps + 150 ms), including the gap from the last display to the end "
            "of the run (priolab/workloads/rise/README.md).",
            "",
            "What ran (sender buffer B per endpoint: prio = priority channels; fifo-head-drop "
            "= one FIFO dropping its oldest datagram when full, as vanilla quinn; "
            "fifo-tail-drop = one FIFO dropping the new datagram):",
            "",
            *scheme_description(runs, key=lambda x: scheme_key(x[0])),
            "",
        ]

    def figure_data(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> dict[str, dict[str, list[Any]]]:
        from analysis.metrics import read_metrics
        from priolab.workloads.rise.figure_data import figure_data

        return figure_data(run_dir, meta, (read_metrics(run_dir) or {}).get("analysis") or {})


ANALYSIS = RiseAnalysis()
