"""linkem's packet log (`link.packet_log: true`; netem/README.md, "Stats and packet log") as
data: the log read into a table, throughput per direction in windows, and a run's windows as
figure data (analysis/figure_data.py). The drawing is analysis/microbursts.py's.

Per direction (a_to_b = uplink, Guest → Host; b_to_a = downlink) and per window:
- `sent_mbps`: bytes of the frames that left linkem in the window (by `t_out_us`) × 8 / window;
- `offered_mbps`: bytes of every frame that arrived at linkem in the window (by `t_in_us`,
  dropped ones included);
- `dropped_mbps`: bytes of the frames dropped on arrival in the window (queue, policer,
  oversized) plus those lost after the delay line (by `t_in_us`).
Bytes are Ethernet frames as linkem counts them. Times are linkem's (s since it started
forwarding), not the endpoints' clocks. Default window start: the middle of the log's span.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.logs import AnalysisError
from ground import rundir

PACKET_LOG = rundir.PACKET_LOG
DIRECTIONS = {"a_to_b": "uplink (Guest → Host)", "b_to_a": "downlink (Host → Guest)"}
FATES = {"sent", "drop_queue", "drop_loss", "drop_police", "oversized", "tx_error"}
COLUMNS = ["dir", "t_in_us", "t_out_us", "bytes", "fate"]


def read_packet_log(path: Path) -> pd.DataFrame:
    """The packet log as a table (COLUMNS). `tx_error` lines carry no packet and are left
    out; a last line without its newline (linkem killed mid-write) is dropped. Any other bad
    line is an AnalysisError naming the file and the line."""
    try:
        text = path.read_text()
    except OSError as e:
        raise AnalysisError(f"{path}: cannot read: {e.strerror}") from e
    lines = text.split("\n")
    if lines and lines[-1] != "":
        lines = lines[:-1]  # cut mid-line
    rows: list[tuple[Any, ...]] = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            row = (r["dir"], float(r["t_in_us"]), float(r["t_out_us"]), int(r["bytes"]), r["fate"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            raise AnalysisError(f"{path}: line {i}: not a packet-log record ({e})") from e
        if row[0] not in DIRECTIONS or row[4] not in FATES:
            raise AnalysisError(
                f"{path}: line {i}: dir must be one of {sorted(DIRECTIONS)} and fate one of "
                f"{sorted(FATES)}, got {row[0]!r} / {row[4]!r}"
            )
        if row[4] != "tx_error":
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def throughput_windows(
    log: pd.DataFrame, start_s: float, span_s: float = 0.5, window_ms: float = 1.0
) -> pd.DataFrame:
    """One row per direction and window in [start_s, start_s + span_s): `dir`, `t_s` (the
    window's start), `sent_mbps`, `offered_mbps`, `dropped_mbps`."""
    if span_s <= 0 or window_ms <= 0:
        raise ValueError("span_s and window_ms must be > 0")
    n = int(round(span_s * 1000.0 / window_ms))
    edges_us = start_s * 1e6 + np.arange(n + 1) * window_ms * 1e3
    to_mbps = 8.0 / (window_ms * 1e3)  # bytes per window → Mbit/s (bits per µs)
    out = []
    for d in DIRECTIONS:
        g = log[log["dir"] == d]
        sent = g[g["fate"] == "sent"]
        dropped = g[g["fate"] != "sent"]

        def binned(t_us: pd.Series, b: pd.Series) -> np.ndarray:
            h, _ = np.histogram(t_us.to_numpy(), bins=edges_us, weights=b.to_numpy(float))
            return h * to_mbps

        out.append(
            pd.DataFrame(
                {
                    "dir": d,
                    "t_s": edges_us[:-1] / 1e6,
                    "sent_mbps": binned(sent["t_out_us"], sent["bytes"]),
                    "offered_mbps": binned(g["t_in_us"], g["bytes"]),
                    "dropped_mbps": binned(dropped["t_in_us"], dropped["bytes"]),
                }
            )
        )
    return pd.concat(out, ignore_index=True)


def default_start_s(log: pd.DataFrame, span_s: float) -> float:
    """The middle of the log's span (rounded down to a ms), or 0 for an empty log."""
    if log.empty:
        return 0.0
    t = np.concatenate([log["t_in_us"].to_numpy(), log["t_out_us"].to_numpy()]) / 1e6
    mid = (float(t.min()) + float(t.max()) - span_s) / 2.0
    return max(0.0, math.floor(mid * 1000.0) / 1000.0)


def configured_rates_mbps(run_dir: Path) -> dict[str, float]:
    """Each direction's constant or policer rate from RUN_DIR/linkem.json (if any)."""
    p = run_dir / rundir.LINKEM_CONFIG
    try:
        cfg = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    out = {}
    for d in DIRECTIONS:
        rate = (cfg.get(d) or {}).get("rate") or {}
        if rate.get("kind") in ("constant", "policer"):
            out[d] = float(rate["rate_bps"]) / 1e6
    return out


SPAN_S = 0.5
"""The span a run's figure data keeps (`windows_data`), at WINDOW_MS."""
WINDOW_MS = 1.0


def windows_data(run_dir: Path) -> dict[str, list[Any]] | None:
    """A run's microburst windows as figure data (analysis/figure_data.py), or None when it
    logged no packets: the columns of `throughput_windows` over SPAN_S from the default start,
    and the configured rate per direction (`rate_<dir>`, one element)."""
    from analysis.figure_data import sigs

    path = run_dir / PACKET_LOG
    if not path.is_file():
        return None
    log = read_packet_log(path)
    w = throughput_windows(log, default_start_s(log, SPAN_S), SPAN_S, WINDOW_MS)
    out: dict[str, list[Any]] = {"dir": list(w["dir"])}
    out |= {c: sigs(w[c]) for c in ("t_s", "sent_mbps", "offered_mbps", "dropped_mbps")}
    out |= {f"rate_{d}": [r] for d, r in configured_rates_mbps(run_dir).items()}
    return out


COLUMNS_OUT = ("dir", "t_s", "sent_mbps", "offered_mbps", "dropped_mbps")
"""The columns of `throughput_windows`, as figure data keeps them."""
