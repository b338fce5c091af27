"""The emulated link's part of every run, whatever the workload: linkem's stats
(linkem-stats.jsonl, netem/README.md) → the `linkem` table and its metrics."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.logs import read_linkem_stats
from ground import rundir

LINKEM_FILE = rundir.LINK_STATS
DIRECTION = {"a_to_b": "up", "b_to_a": "down"}
"""linkem's directions: a_to_b = uplink (Guest → Host in the access topology)."""
NAN = float("nan")


def linkem_table(run_dir: Path) -> tuple[pd.DataFrame, object]:
    """(the stats lines with a `direction` column up/down, the manifest note: rows or
    `missing`). No stats file (tc backend) → an empty table with the columns."""
    path = run_dir / LINKEM_FILE
    lk = read_linkem_stats(path)
    lk.insert(2, "direction", lk["dir"].map(DIRECTION).astype(object))
    return lk, (len(lk) if path.is_file() else "missing")


def linkem_metrics(linkem: pd.DataFrame) -> dict[str, float]:
    """Queue and policer drops (totals: the final line's, else the sum of the per-second
    lines) and the largest per-second max queue delay, per direction."""
    out: dict[str, float] = {}
    for direction in ("up", "down"):
        d = linkem[linkem["direction"] == direction]
        per_s = d[~d["final"].astype(bool)]
        fin = d[d["final"].astype(bool)]
        for col in ("drops_queue", "drops_police"):
            total = fin[col].iloc[-1] if len(fin) else per_s[col].sum()
            out[f"linkem_{col}_{direction}"] = NAN if d.empty else float(total)
        qmax = float(per_s["queue_delay_ms_max"].max()) if len(per_s) else NAN
        out[f"linkem_queue_delay_max_ms_{direction}"] = NAN if d.empty else qmax
    return out
