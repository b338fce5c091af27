"""Regime diagnostics of one run and tracking delivery (pure functions over the run's tables;
definitions in this folder's README.md): is the sender held below its offered load, how full B
was, and whether the peer's tracking samples arrive."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from priolab.workloads.rise.stalls import Window

NAN = float("nan")
DIRECTIONS = {"up": ("guest", "host"), "down": ("host", "guest")}  # sender, receiver


def tracking_delays(
    sent: pd.DataFrame, received: pd.DataFrame, w: Window, guard_us: int
) -> pd.DataFrame:
    """One row per tracking sample the sender generated inside [window start, window end −
    guard]: sample_id, gen_time_us, owd_ms (receive − generation, the two endpoints' clocks,
    shared on one machine or chrony-synchronised; NaN if never received). The guard leaves out
    samples that may still be in flight when the run ended."""
    s = sent.drop_duplicates("sample_id", keep="first")
    t = s["gen_time_us"].to_numpy(np.int64)
    s = s[(t >= w.start_us) & (t <= w.end_us - guard_us)]
    first = received.groupby("sample_id")["recv_time_us"].min()
    recv = first.reindex(s["sample_id"].to_numpy()).to_numpy(np.float64)
    return pd.DataFrame(
        {
            "sample_id": s["sample_id"].to_numpy(np.int64),
            "gen_time_us": s["gen_time_us"].to_numpy(np.int64),
            "owd_ms": (recv - s["gen_time_us"].to_numpy(np.float64)) / 1000.0,
        }
    )


def tracking_metrics(delays: pd.DataFrame, direction: str) -> dict[str, float]:
    """tracking_delivery_pct_<dir> (received / generated × 100) and the one-way delay's
    median, p95 and p99 over the received samples."""
    owd = delays["owd_ms"].to_numpy(np.float64)
    got = owd[np.isfinite(owd)]
    out = {
        f"tracking_delivery_pct_{direction}": NAN if len(owd) == 0 else 100 * len(got) / len(owd)
    }
    qs = np.percentile(got, (50, 95, 99)) if len(got) else [NAN] * 3
    for name, q in zip(("median", "p95", "p99"), qs, strict=True):
        out[f"tracking_owd_{name}_ms_{direction}"] = float(q)
    return out


def _in_window(df: pd.DataFrame, w: Window) -> pd.DataFrame:
    return df[w.contains(df["time_us"].to_numpy(np.int64))].sort_values("time_us")


def sender_metrics(sender: pd.DataFrame, w: Window, endpoint: str) -> dict[str, float]:
    """From sender.csv (rows every 100 ms) inside the window:
    transport_limited_pct_<ep>: growth of the cumulative limited_us between the first and the
    last row / the time between them × 100; buffer_queued_{p50,p90}_bytes_<ep>: percentiles of
    the rows' time-weighted mean occupancy (over 100 ms intervals; never instantaneous
    samples, which the frame ticks would alias); buffer_queued_max_bytes: the largest
    per-interval maximum."""
    s = _in_window(sender, w)
    keys = ("transport_limited_pct", "buffer_queued_p50_bytes", "buffer_queued_p90_bytes",
            "buffer_queued_max_bytes")  # fmt: skip
    if s.empty:
        return {f"{k}_{endpoint}": NAN for k in keys}
    t = s["time_us"].to_numpy(np.int64)
    lim = s["limited_us"].to_numpy(np.int64)
    span = t[-1] - t[0]
    q = s["queued_bytes_mean"].to_numpy(np.float64)
    return {
        f"transport_limited_pct_{endpoint}": NAN if span <= 0 else 100 * (lim[-1] - lim[0]) / span,
        f"buffer_queued_p50_bytes_{endpoint}": float(np.percentile(q, 50)),
        f"buffer_queued_p90_bytes_{endpoint}": float(np.percentile(q, 90)),
        f"buffer_queued_max_bytes_{endpoint}": float(s["queued_bytes_max"].max()),
    }


def cwnd_metrics(
    path_stats: pd.DataFrame, w: Window, endpoint: str, video_bitrate_mbps: float | None
) -> dict[str, float]:
    """cwnd_median_bytes_<ep> over the window's path_stats rows, and cwnd_to_video_bdp_<ep> =
    that median / (video bitrate / 8 × median RTT): > 1 means quinn's window allows more
    than the video needs (not window-limited by the video alone; tracking and ACKs add a
    little), < 1 means the window holds the video back."""
    p = _in_window(path_stats, w)
    if p.empty:
        return {f"cwnd_median_bytes_{endpoint}": NAN, f"cwnd_to_video_bdp_{endpoint}": NAN}
    cwnd = float(p["cwnd_bytes"].median())
    bdp = (video_bitrate_mbps or NAN) * 1e6 / 8 * float(p["rtt_ms"].median()) / 1000.0
    return {
        f"cwnd_median_bytes_{endpoint}": cwnd,
        f"cwnd_to_video_bdp_{endpoint}": cwnd / bdp if bdp > 0 else NAN,
    }


def summary_counts(summary: dict[str, Any] | None, endpoint: str) -> dict[str, float]:
    """deadline_expirations_<ep> (whole run) from summary.json; NaN without it."""
    v = (summary or {}).get("deadline_expirations")
    return {f"deadline_expirations_{endpoint}": float(v) if isinstance(v, int | float) else NAN}
