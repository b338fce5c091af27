"""Per-run analysis of a `dtp` run: the logs (endpoints/README.md "dtp") → one blocks table
and the metrics.

`tables/dtp_blocks.parquet`: one row per block the sender released, with its fate:
`block_id, round, priority, payload_bytes, created_s` (since the first release),
`deadline_ms, outcome` (sender: sent | dropped | pending), `sent_bytes` (handed to QUIC,
header included), `status` (receiver: complete | reset | broken | never),
`recovered_bytes` (rebuilt from parity), `completion_ms` (receiver's last byte − release;
NaN unless complete), `on_time` (complete and
completion_ms ≤ deadline_ms).

Metrics (metrics.json), every block released counts (one still queued at the close, or
never seen by the receiver, is not on time, so a run that stops delivering cannot look good):
- `deadline_ratio`: blocks on time / blocks released (Fig. 3a); `deadline_ratio_p<k>` per
  priority (p1 the most important, Fig. 3b);
- `good_bytes_ratio`: bytes of on-time blocks / bytes the sender handed to QUIC (header
  included in both; what was sent for dropped or late blocks is waste);
- `window_ratio_min`: the worst 1 s window's deadline ratio (windows by release time; Fig. 4
  plots them all);
- `redundancy_overhead_pct`: parity bytes (datagrams) / block bytes handed to QUIC;
  `recovered_pct`: blocks completed by rebuilding lost data from parity;
- `dropped_pct`, `pending_pct` (sender), `completion_median_ms`, `completion_p95_ms` (blocks
  complete at the receiver), `blocks_released`, `lost_packets_pct` (quinn's count ÷ packets
  sent).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from analysis.logs import AnalysisError
from priolab.workloads.dtp.workload import DtpParams
from priolab.workloads.what_ran import what_ran

if TYPE_CHECKING:
    from analysis.rundirs import Run

HEADER_BYTES = 36  # endpoints/dtp/src/wire.rs
BLOCKS_TABLE = "dtp_blocks.parquet"
WINDOW_S = 1.0  # [DTP Fig. 4]: "each point represents the block completion rate in the past second"
SENT_COLUMNS = ["block_id", "round", "priority", "payload_bytes", "created_us", "deadline_us",
                "sent_bytes", "outcome"]  # fmt: skip
RECEIVED_COLUMNS = ["block_id", "created_us", "end_us", "received_bytes", "status"]


def _read(path: Path, columns: list[str]) -> pd.DataFrame:
    if not path.is_file():
        raise AnalysisError(f"{path}: missing")
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise AnalysisError(f"{path}: not a CSV log ({e})") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise AnalysisError(f"{path}: columns {missing} missing (endpoints/README.md, dtp logs)")
    return df


def blocks_table(run_dir: Path) -> pd.DataFrame:
    sent_path = run_dir / "host" / "blocks_sent.csv"
    got_path = run_dir / "guest" / "blocks_received.csv"
    sent = _read(sent_path, SENT_COLUMNS).sort_values("block_id").reset_index(drop=True)
    got = _read(got_path, RECEIVED_COLUMNS)
    if not np.array_equal(sent["block_id"].to_numpy(), np.arange(len(sent))):
        raise AnalysisError(f"{sent_path}: block ids not 0..n-1")
    if got["block_id"].duplicated().any():
        raise AnalysisError(f"{got_path}: a block twice")
    unknown = set(got["block_id"]) - set(sent["block_id"])
    if unknown:
        raise AnalysisError(f"{got_path}: blocks {sorted(unknown)[:5]} were never released")
    g = got.set_index("block_id").reindex(sent["block_id"])
    status = g["status"].fillna("never").astype(str).to_numpy()
    t0 = float(sent["created_us"].iloc[0]) if len(sent) else 0.0
    took_ms = (g["end_us"].to_numpy(float) - sent["created_us"].to_numpy(float)) / 1e3
    completion_ms = np.where(status == "complete", took_ms, np.nan)
    deadline_ms = sent["deadline_us"].to_numpy(float) / 1e3
    return pd.DataFrame(
        {
            "block_id": sent["block_id"].to_numpy(),
            "round": sent["round"].to_numpy(),
            "priority": sent["priority"].to_numpy(),
            "payload_bytes": sent["payload_bytes"].to_numpy(),
            "created_s": (sent["created_us"].to_numpy(float) - t0) / 1e6,
            "deadline_ms": deadline_ms,
            "outcome": sent["outcome"].astype(str).to_numpy(),
            "sent_bytes": sent["sent_bytes"].to_numpy(),
            "status": status,
            "completion_ms": completion_ms,
            "on_time": (status == "complete") & (completion_ms <= deadline_ms),
            "recovered_bytes": g["recovered_bytes"].fillna(0).to_numpy(float)
            if "recovered_bytes" in g
            else np.zeros(len(sent)),
        }
    )


def window_ratios(blocks: pd.DataFrame, window_s: float = WINDOW_S) -> pd.DataFrame:
    """Deadline ratio of the blocks released in each window: window_start_s, blocks, ratio."""
    if blocks.empty:
        return pd.DataFrame({"window_start_s": [], "blocks": [], "ratio": []})
    w = np.floor(blocks["created_s"].to_numpy(float) / window_s).astype(int)
    g = blocks.assign(w=w).groupby("w")["on_time"]
    return pd.DataFrame(
        {"window_start_s": g.size().index * window_s, "blocks": g.size().to_numpy(),
         "ratio": g.mean().to_numpy(float)}
    ).reset_index(drop=True)  # fmt: skip


def _summary(run_dir: Path) -> dict[str, Any]:
    p = run_dir / "host" / "summary.json"
    try:
        obj = json.loads(p.read_text())
    except (OSError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


def metrics(blocks: pd.DataFrame, sender: dict[str, Any] | None = None) -> dict[str, float]:
    n = len(blocks)
    nan = math.nan
    m: dict[str, float] = {"blocks_released": float(n)}
    on = blocks["on_time"].to_numpy(bool)
    m["deadline_ratio"] = float(on.mean()) if n else nan
    for p in sorted(int(x) for x in blocks["priority"].unique()):
        sel = (blocks["priority"] == p).to_numpy()
        m[f"deadline_ratio_p{p}"] = float(on[sel].mean())
    total = float(blocks["sent_bytes"].sum())
    good = float((blocks["payload_bytes"][on] + HEADER_BYTES).sum())
    m["good_bytes_ratio"] = good / total if total > 0 else nan
    wr = window_ratios(blocks)
    m["window_ratio_min"] = float(wr["ratio"].min()) if len(wr) else nan
    m["dropped_pct"] = 100.0 * float((blocks["outcome"] == "dropped").mean()) if n else nan
    m["pending_pct"] = 100.0 * float((blocks["outcome"] == "pending").mean()) if n else nan
    c = blocks["completion_ms"].dropna().to_numpy(float)
    m["completion_median_ms"] = float(np.median(c)) if len(c) else nan
    m["completion_p95_ms"] = float(np.percentile(c, 95)) if len(c) else nan
    if "recovered_bytes" in blocks:
        m["recovered_pct"] = 100.0 * float((blocks["recovered_bytes"] > 0).mean()) if n else nan
    s = sender or {}
    parity, written = s.get("parity_bytes"), s.get("block_bytes_written")
    ok = isinstance(parity, int | float) and isinstance(written, int | float) and written > 0
    m["redundancy_overhead_pct"] = 100.0 * float(parity) / float(written) if ok else nan  # type: ignore[arg-type]
    sent_pk, lost_pk = s.get("sent_packets"), s.get("lost_packets")
    ok = isinstance(sent_pk, int | float) and isinstance(lost_pk, int | float) and sent_pk > 0
    m["lost_packets_pct"] = 100.0 * float(lost_pk) / float(sent_pk) if ok else nan  # type: ignore[arg-type]
    return m


class DtpAnalysis:
    """The `dtp` workload's part of analysis/ (analysis.workload.WorkloadAnalysis)."""

    core_metrics: tuple[str, ...] = ("deadline_ratio", "deadline_ratio_p1", "good_bytes_ratio")
    # not "scheme": runs.csv's scheme column is the matrix's name (dtp-d, ...), not the param
    run_columns: tuple[str, ...] = ("alpha", "cc", "redundancy", "deadline_ms")
    log_dirs: tuple[str, ...] = ("guest", "host")

    def write_tables(self, run_dir: Path, tables_dir: Path) -> dict[str, object]:
        blocks = blocks_table(run_dir)
        tables_dir.mkdir(exist_ok=True)
        blocks.to_parquet(tables_dir / BLOCKS_TABLE, index=False)
        return {BLOCKS_TABLE: len(blocks)}

    def metrics(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> tuple[dict[str, float], dict[str, Any]]:
        self.write_tables(run_dir, tables_dir)
        blocks = pd.read_parquet(tables_dir / BLOCKS_TABLE)
        return metrics(blocks, _summary(run_dir)), {"window_s": WINDOW_S}

    def summary_header(self, runs: list[Run]) -> list[str]:
        names = {"quic": "quic (round robin, quiche 0.2.0's default)", "quic-fifo": "quic-fifo"}

        def describe(p: DtpParams) -> str:
            what = f"{p.scheme} (α {p.alpha})" if p.scheme == "ads" else p.scheme
            return f"{names.get(p.scheme, what)}, congestion control {p.cc}"

        return [
            "Every block the sender released counts. deadline_ratio = blocks complete at the "
            "receiver within their deadline of their release / blocks released (p<k>: of "
            "priority k, 1 the most important); good_bytes_ratio = bytes of on-time blocks / "
            "bytes handed to QUIC; window_ratio_min = the worst 1 s window "
            "(priolab/workloads/dtp/README.md).",
            "",
            "What ran:",
            "",
            *what_ran(runs, DtpParams, describe),
            "",
        ]

    def figure_data(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> dict[str, dict[str, list[Any]]]:
        """`windows`: the deadline ratio of each 1 s window of releases (Fig. 4)."""
        from analysis.figure_data import sigs

        p = tables_dir / BLOCKS_TABLE
        w = window_ratios(pd.read_parquet(p) if p.is_file() else blocks_table(run_dir))
        return {"windows": {"window_start_s": sigs(w["window_start_s"]),
                            "ratio": sigs(w["ratio"])}}  # fmt: skip


ANALYSIS = DtpAnalysis()
