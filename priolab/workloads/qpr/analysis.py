"""Per-run analysis of a `qpr` run: the player's logs (endpoints/README.md "qpr") → two
tables and the metrics.

`tables/qpr_segments.parquet`: one row per segment that arrived:
`segment, request_s, arrival_s, play_start_s, download_ms, bytes, throughput_mbps,
stall_before_ms` (times in s since the first request).
`tables/qpr_objects.parquet`: one row per object of those segments: `segment, object, rank`
(1 = highest priority), `quality` (1-5 as Table 2), `reliable, size_bytes, received_bytes,
datagrams_expected, datagrams_received, complete`, and `decodable_quality` = `quality` if
every byte arrived, else 0. The loss model: V-PCC cannot decode an object with missing data
([QPR §IV-D/E]: "the objects that experience loss cannot be reconstructed yet"), so an
unreliable object that lost a datagram counts as missing in that segment.

Metrics (metrics.json): per-segment throughput `throughput_mean_mbps`, `_median_`, `_p10_`
(in the run's rescaled units; `throughput_mean_full_scale_mbps` = mean ÷ `scale`);
`freezes`, `freeze_total_s`, `startup_s` (the player's playout model, endpoints/qpr
`playout.rs`), beside them `segments` and `played_pct` (media played / duration): a run that
stops delivering has few freezes but a low `played_pct`; per rank r = 1..4
`quality_rank<r>_mean` and `decodable_quality_rank<r>_mean`; `objects_incomplete_pct`,
`unreliable_bytes_lost_pct` (NaN when nothing was unreliable); the server's `lost_packets`
and `sent_packets` over both its connections (a second-connection unreliable path,
`unreliable_conn_*` in its summary), and `unreliable_conn_lost_packets` and
`unreliable_conn_cwnd_bytes` (its window at the end; NaN on the shared path); with FEC
(QPR(F)), `fec_overhead_pct` (repair bytes sent per 100 unreliable payload bytes; NaN when
nothing was unreliable) and `objects_recovered` (unreliable objects whose lost datagrams FEC
rebuilt: they count as complete).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ground import rundir
from priolab.workloads.qpr.workload import QprParams
from priolab.workloads.what_ran import what_ran

SEGMENTS_TABLE = "qpr_segments.parquet"
OBJECTS_TABLE = "qpr_objects.parquet"
SEGMENT_COLUMNS = ["segment", "request_us", "arrival_us", "play_start_us", "download_ms",
                   "bytes", "throughput_mbps", "stall_before_ms"]  # fmt: skip
OBJECT_COLUMNS = ["segment", "object", "rank", "quality", "reliable", "size_bytes",
                  "received_bytes", "datagrams_expected", "datagrams_received",
                  "complete"]  # fmt: skip
PLAYER_KEYS = ["freezes", "freeze_total_s", "startup_s", "played_s", "segments"]
RANKS = (1, 2, 3, 4)


class QprLogError(ValueError):
    """A log that is missing or does not have the documented columns (names the file)."""


def _read(path: Path, columns: list[str]) -> pd.DataFrame:
    if not path.is_file():
        raise QprLogError(f"{path}: missing")
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise QprLogError(f"{path}: not a CSV log ({e})") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise QprLogError(f"{path}: columns {missing} missing (endpoints/README.md, qpr logs)")
    return df


def _summary(path: Path, keys: list[str]) -> dict[str, Any]:
    try:
        obj = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise QprLogError(f"{path}: unreadable ({e})") from None
    missing = [k for k in keys if k not in obj]
    if missing:
        raise QprLogError(f"{path}: keys {missing} missing (endpoints/README.md, qpr logs)")
    return obj


def tables(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    seg = _read(run_dir / "guest" / "segments.csv", SEGMENT_COLUMNS)
    obj = _read(run_dir / "guest" / "objects.csv", OBJECT_COLUMNS)
    t0 = float(seg["request_us"].iloc[0]) if len(seg) else 0.0
    segments = pd.DataFrame(
        {
            "segment": seg["segment"].to_numpy(),
            "request_s": (seg["request_us"].to_numpy(float) - t0) / 1e6,
            "arrival_s": (seg["arrival_us"].to_numpy(float) - t0) / 1e6,
            "play_start_s": (seg["play_start_us"].to_numpy(float) - t0) / 1e6,
            "download_ms": seg["download_ms"].to_numpy(float),
            "bytes": seg["bytes"].to_numpy(),
            "throughput_mbps": seg["throughput_mbps"].to_numpy(float),
            "stall_before_ms": seg["stall_before_ms"].to_numpy(float),
        }
    )
    objects = obj[OBJECT_COLUMNS].copy()
    objects["rank"] = objects["rank"] + 1
    objects["quality"] = objects["quality"] + 1
    objects["decodable_quality"] = np.where(objects["complete"] == 1, objects["quality"], 0)
    return segments, objects


def metrics(
    segments: pd.DataFrame,
    objects: pd.DataFrame,
    player: dict[str, Any],
    server: dict[str, Any],
    duration_s: float | None,
    scale: float,
) -> dict[str, float]:
    m: dict[str, float] = {}
    thr = segments["throughput_mbps"].to_numpy(float)
    m["throughput_mean_mbps"] = float(thr.mean()) if len(thr) else math.nan
    m["throughput_median_mbps"] = float(np.median(thr)) if len(thr) else math.nan
    m["throughput_p10_mbps"] = float(np.percentile(thr, 10)) if len(thr) else math.nan
    m["throughput_mean_full_scale_mbps"] = m["throughput_mean_mbps"] / scale
    for k in PLAYER_KEYS:
        m[k] = float(player[k])
    m["played_pct"] = 100.0 * m["played_s"] / duration_s if duration_s else math.nan
    for r in RANKS:
        sel = objects[objects["rank"] == r]
        m[f"quality_rank{r}_mean"] = float(sel["quality"].mean()) if len(sel) else math.nan
        dq = float(sel["decodable_quality"].mean()) if len(sel) else math.nan
        m[f"decodable_quality_rank{r}_mean"] = dq
    n = len(objects)
    incomplete = float((objects["complete"] == 0).mean()) if n else math.nan
    m["objects_incomplete_pct"] = 100.0 * incomplete
    un = objects[objects["reliable"] == 0]
    size = float(un["size_bytes"].sum())
    m["unreliable_bytes_lost_pct"] = (
        100.0 * (1 - float(un["received_bytes"].sum()) / size) if size else math.nan
    )
    for k in ("lost_packets", "sent_packets"):
        m[k] = float(server.get(k, math.nan)) + float(server.get(f"unreliable_conn_{k}", 0))
    m["unreliable_conn_lost_packets"] = float(server.get("unreliable_conn_lost_packets", math.nan))
    # the datagram connection's window at the end (a fixed window keeps its size)
    m["unreliable_conn_cwnd_bytes"] = float(
        server.get("unreliable_conn_cwnd_bytes_at_end", math.nan)
    )
    # QPR(F): repair bytes sent per 100 unreliable payload bytes, and the objects FEC rebuilt
    unrel_sent = float(server.get("unreliable_bytes", 0) or 0)
    repair = float(server.get("repair_bytes", 0) or 0)
    m["fec_overhead_pct"] = 100.0 * repair / unrel_sent if unrel_sent else math.nan
    m["objects_recovered"] = float(player.get("objects_recovered", 0))
    return m


def write_tables(run_dir: Path, tables_dir: str = "tables") -> dict[str, int]:
    segments, objects = tables(run_dir)
    out = run_dir / tables_dir
    out.mkdir(exist_ok=True)
    segments.to_parquet(out / SEGMENTS_TABLE, index=False)
    objects.to_parquet(out / OBJECTS_TABLE, index=False)
    return {SEGMENTS_TABLE: len(segments), OBJECTS_TABLE: len(objects)}


def run_analysis(
    run_dir: Path, tables_dir: str = "tables", duration_s: float | None = None
) -> dict[str, float]:
    """Write the two tables; return the run's metrics."""
    write_tables(run_dir, tables_dir)
    segments = pd.read_parquet(run_dir / tables_dir / SEGMENTS_TABLE)
    objects = pd.read_parquet(run_dir / tables_dir / OBJECTS_TABLE)
    player = _summary(run_dir / "guest" / "summary.json", PLAYER_KEYS)
    server = _summary(run_dir / "host" / "summary.json", [])
    scale = _scale(run_dir)
    return metrics(segments, objects, player, server, duration_s, scale)


def _scale(run_dir: Path) -> float:
    """The run's content scale from metadata.json (1 if absent)."""
    try:
        meta = json.loads((run_dir / rundir.METADATA).read_text())
        return float(meta["run"]["workload"].get("scale", 1.0))
    except (OSError, KeyError, TypeError, ValueError, json.JSONDecodeError):
        return 1.0


class QprAnalysis:
    """The `qpr` workload's part of analysis/ (analysis.workload.WorkloadAnalysis)."""

    core_metrics: tuple[str, ...] = ()
    run_columns: tuple[str, ...] = (
        "transport", "q_pct", "unreliable_path", "scale", "cc", "buffer_segments",
    )  # fmt: skip
    log_dirs: tuple[str, ...] = ("guest", "host")

    def write_tables(self, run_dir: Path, tables_dir: Path) -> dict[str, object]:
        from analysis.logs import AnalysisError

        try:
            return dict(write_tables(run_dir, tables_dir.name))
        except QprLogError as e:
            raise AnalysisError(str(e)) from None

    def metrics(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> tuple[dict[str, float], dict[str, Any]]:
        from analysis.logs import AnalysisError

        try:
            return run_analysis(run_dir, tables_dir.name, meta["run"].get("duration_s")), {}
        except QprLogError as e:
            raise AnalysisError(str(e)) from None

    def summary_header(self, runs: list[Any]) -> list[str]:
        def describe(p: QprParams) -> str:
            path = f" on the {p.unreliable_path} path" if p.q_pct and p.transport == "quic" else ""
            return (f"transport {p.transport}, unreliable share {p.q_pct} %{path}, "
                    f"content scale {p.scale:g}")  # fmt: skip

        return [
            "The player's view: per-segment throughput, the playout model's freezes beside the "
            "media played, the quality per priority rank (priolab/workloads/qpr/README.md).",
            "",
            "What ran:",
            "",
            *what_ran(runs, QprParams, describe),
            "",
        ]

    def figures(self, runs: pd.DataFrame, scenario_dir: Path) -> tuple[list[Path], list[str]]:
        from priolab.workloads.qpr.figures import make_figures

        return make_figures(runs, scenario_dir)


ANALYSIS = QprAnalysis()
