"""Per-run analysis of a `moq` run: the logs (endpoints/README.md "moq") → one frames table
and the metrics, all from the subscriber's view.

`tables/moq_frames.parquet`: one row per frame the publisher released (decode order):
`frame_id, pict_type, group, size_bytes, capture_ms, arrival_ms, latency_ms, display_delay_ms`
(ms since the first capture; `arrival_ms`/`latency_ms` NaN for a frame that never arrived;
`display_delay_ms` = when the frame and everything it depends on had arrived − capture, inf
if one never did; see otdr.py).

Metrics (metrics.json): for the budgets of BUDGETS_MS, `otdr_<b>ms` over all frames and
`otdr_<T>_<b>ms` per type; per type `latency_<T>_median_ms`, `_p95_ms`, `_max_ms` over the
frames that arrived, and `lost_<T>_pct` (never arrived); `i_all_on_time_budget_ms` = the
smallest budget at which every I frame is on time (the largest I display delay; NaN if an
I frame never arrived); `frames_sent`, `received_pct`; what the run put on the wire
(`payload_mbps`, `downlink_ip_mbps`, `clip_ip_mbps`, `overhead_bytes_per_frame`, ...:
wire.py), from the link's counters in metadata.json. A frame is counted in the OTDR
whether or not it arrived (never arrived = never on time): a run that stops delivering
cannot look good.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from analysis.logs import AnalysisError
from priolab.workloads.logs import read_csv_log
from priolab.workloads.moq.otdr import display_delay_ms, otdr
from priolab.workloads.moq.wire import wire_metrics
from priolab.workloads.moq.workload import MoqParams
from priolab.workloads.what_ran import what_ran

if TYPE_CHECKING:
    from analysis.rundirs import Run

TYPES = ("I", "P", "B")
BUDGETS_MS = (500, 700, 1000, 2000, 3000)  # the summary table's budgets, and the claims' (Fig. 10)
CURVE_BUDGETS_MS = np.arange(0, 3001, 10)  # Fig. 10: 0-3000 ms
FRAMES_TABLE = "moq_frames.parquet"
SENT_COLUMNS = ["frame_id", "pict_type", "group", "size_bytes", "capture_us", "release_us"]
RECEIVED_COLUMNS = ["frame_id", "pict_type", "capture_us", "arrival_us"]


class MoqLogError(ValueError):
    """A log that is missing or does not have the documented columns (names the file)."""


def _read(path: Path, columns: list[str]) -> pd.DataFrame:
    return read_csv_log(path, columns, MoqLogError, "endpoints/README.md, moq logs")


def frames_table(run_dir: Path) -> pd.DataFrame:
    sent = _read(run_dir / "host" / "frames_sent.csv", SENT_COLUMNS)
    got = _read(run_dir / "guest" / "frames_received.csv", RECEIVED_COLUMNS)
    sent = sent.sort_values("frame_id").reset_index(drop=True)
    if not np.array_equal(sent["frame_id"].to_numpy(), np.arange(len(sent))):
        raise MoqLogError(f"{run_dir / 'host' / 'frames_sent.csv'}: frame ids not 0..n-1")
    if got["frame_id"].duplicated().any():
        raise MoqLogError(f"{run_dir / 'guest' / 'frames_received.csv'}: a frame twice")
    arrival = got.set_index("frame_id")["arrival_us"].reindex(sent["frame_id"])
    t0 = float(sent["capture_us"].iloc[0]) if len(sent) else 0.0
    capture_ms = (sent["capture_us"].to_numpy(float) - t0) / 1e3
    arrival_ms = (arrival.to_numpy(float) - t0) / 1e3
    types = sent["pict_type"].astype(str).tolist()
    return pd.DataFrame(
        {
            "frame_id": sent["frame_id"].to_numpy(),
            "pict_type": types,
            "group": sent["group"].to_numpy(),
            "size_bytes": sent["size_bytes"].to_numpy(),
            "capture_ms": capture_ms,
            "arrival_ms": arrival_ms,
            "latency_ms": arrival_ms - capture_ms,
            "display_delay_ms": display_delay_ms(types, capture_ms, arrival_ms)
            if types
            else np.array([]),
        }
    )


def _pct(v: np.ndarray, q: float) -> float:
    return float(np.percentile(v, q)) if len(v) else math.nan


def metrics(frames: pd.DataFrame) -> dict[str, float]:
    m: dict[str, float] = {}
    n = len(frames)
    m["frames_sent"] = float(n)
    m["received_pct"] = 100.0 * float(frames["arrival_ms"].notna().mean()) if n else math.nan
    delay = frames["display_delay_ms"].to_numpy(float)
    for b, v in zip(BUDGETS_MS, otdr(delay, np.array(BUDGETS_MS)), strict=True):
        m[f"otdr_{b}ms"] = float(v) if n else math.nan
    for t in TYPES:
        sel = frames["pict_type"] == t
        d = delay[sel.to_numpy()]
        for b, v in zip(BUDGETS_MS, otdr(d, np.array(BUDGETS_MS)), strict=True):
            m[f"otdr_{t}_{b}ms"] = float(v) if len(d) else math.nan
        lat = frames.loc[sel, "latency_ms"].dropna().to_numpy(float)
        m[f"latency_{t}_median_ms"] = _pct(lat, 50)
        m[f"latency_{t}_p95_ms"] = _pct(lat, 95)
        m[f"latency_{t}_max_ms"] = float(lat.max()) if len(lat) else math.nan
        m[f"lost_{t}_pct"] = 100.0 * (1 - len(lat) / int(sel.sum())) if sel.any() else math.nan
    i_delay = delay[(frames["pict_type"] == "I").to_numpy()]
    finite = len(i_delay) and np.isfinite(i_delay).all()
    m["i_all_on_time_budget_ms"] = float(i_delay.max()) if finite else math.nan
    return m


def otdr_curves(frames: pd.DataFrame) -> pd.DataFrame:
    """OTDR against CURVE_BUDGETS_MS for all frames and per type: budget_ms, frames, otdr."""
    delay = frames["display_delay_ms"].to_numpy(float)
    rows = []
    for name in ("all", *TYPES):
        d = delay if name == "all" else delay[(frames["pict_type"] == name).to_numpy()]
        curve = otdr(d, CURVE_BUDGETS_MS)
        rows.append(pd.DataFrame({"budget_ms": CURVE_BUDGETS_MS, "frames": name, "otdr": curve}))
    return pd.concat(rows, ignore_index=True)


def run_analysis(
    run_dir: Path, tables_dir: str = "tables", meta: dict[str, Any] | None = None
) -> dict[str, float]:
    """Write tables/moq_frames.parquet; return the run's metrics, with what the run put on
    the wire (wire.py) from metadata.json's link counters when `meta` is given."""
    frames = frames_table(run_dir)
    out = run_dir / tables_dir
    out.mkdir(exist_ok=True)
    frames.to_parquet(out / FRAMES_TABLE, index=False)
    m = metrics(frames)
    if meta is not None:
        down = (meta.get("link_applied") or {}).get("resolved", {}).get("downlink") or {}
        counters = (meta.get("link_final") or {}).get("downlink")
        m.update(wire_metrics(frames, counters, down.get("mean_rate_bps")))
    return m


class MoqAnalysis:
    """The `moq` workload's part of analysis/ (analysis.workload.WorkloadAnalysis)."""

    core_metrics: tuple[str, ...] = ()
    run_columns: tuple[str, ...] = ("scheme", "cc", "max_group_lag")
    log_dirs: tuple[str, ...] = ("guest", "host")

    def write_tables(self, run_dir: Path, tables_dir: Path) -> dict[str, object]:
        try:
            frames = frames_table(run_dir)
        except MoqLogError as e:
            raise AnalysisError(str(e)) from None
        tables_dir.mkdir(exist_ok=True)
        frames.to_parquet(tables_dir / FRAMES_TABLE, index=False)
        return {FRAMES_TABLE: len(frames)}

    def metrics(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> tuple[dict[str, float], dict[str, Any]]:
        try:
            return run_analysis(run_dir, tables_dir.name, meta), {}
        except MoqLogError as e:
            raise AnalysisError(str(e)) from None

    def summary_header(self, runs: list[Run]) -> list[str]:
        def describe(p: MoqParams) -> str:
            return f"delivery {p.scheme}, congestion control {p.cc}"

        return [
            "The subscriber's view, per frame the publisher released. otdr_<b>ms = share of "
            "frames displayable within b ms of their capture (the frame and every frame it "
            "depends on arrived; a frame that never arrived is never on time); latency = "
            "arrival − capture of the frames that arrived; lost_<T>_pct = frames of type T "
            "that never arrived (priolab/workloads/moq/README.md).",
            "",
            "What ran:",
            "",
            *what_ran(runs, MoqParams, describe),
            "",
        ]

    def figure_data(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> dict[str, dict[str, list[Any]]]:
        from priolab.workloads.moq.figure_data import figure_data

        return figure_data(run_dir, meta, tables_dir)


ANALYSIS = MoqAnalysis()
