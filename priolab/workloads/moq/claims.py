"""The mechanism behind a verdict on [MoQ]'s claims (paper.py's `why`, analysis/why.py
`Why`; the verdict is analysis/verdicts.py's): where the frames waited, read off the runs of
the claim's point (the link's queue, the largest latency), never prose typed for a result.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.intervals import mean_ci
from analysis.why import Why


def _num(x: float, fmt: str = ".3g") -> str:
    if math.isnan(x):
        return "–"
    return "∞" if math.isinf(x) else f"{x:{fmt}}"


def _mean_ci(v: list[float] | np.ndarray, fmt: str = ".3g") -> str:
    """The mean with its Student-t interval (analysis/intervals.py), as the reasons print it."""
    v = np.asarray(v, dtype=float)
    if len(v) < 2:
        return f"{_num(float(v.mean()) if len(v) else math.nan, fmt)} (n={len(v)}, no CI)"
    mean, lo, hi = (float(x) for x in mean_ci(v))
    return f"{_num(mean, fmt)} [{_num(lo, fmt)}, {_num(hi, fmt)}]"


def _col(runs: pd.DataFrame, metric: str) -> np.ndarray:
    if runs.empty or metric not in runs:
        return np.array([])
    return runs[metric].to_numpy(float)


def load_text(runs: pd.DataFrame) -> str:
    """The video's rate as the link counts it against the link's rate, from the runs."""
    load, eth = _col(runs, "link_load"), _col(runs, "downlink_eth_mbps")
    rate = _col(runs, "link_rate_mbps")
    if not len(load) or not np.isfinite(load).any():
        return ""
    over = "above" if np.nanmean(load) >= 1 else "below"
    return (
        f"the video is {np.nanmean(eth):.4g} Mbit/s as the link counts it (IP + Ethernet), "
        f"{np.nanmean(load):.1%} of the {np.nanmean(rate):g} Mbit/s link ({over} it); "
    )


def backlog_where(runs: pd.DataFrame, latency_metric: str) -> str:
    """Where the frames waited, from the runs' own counters: the link's FIFO queue (linkem's
    largest queue delay) against the frames' largest latency. Stream priorities order only
    what the publisher still holds; a packet in the link's queue waits its turn."""
    lat = _col(runs, latency_metric)
    q = _col(runs, "link_queue_delay_max_ms")
    lat, q = lat[np.isfinite(lat)], q[np.isfinite(q)]
    if not len(lat) or not len(q):
        return load_text(runs) + "the link's queue delay was not counted"
    share = float(np.mean(q)) / float(np.mean(lat)) if np.mean(lat) > 0 else math.nan
    where = (
        "in the link's FIFO queue, which no stream priority reorders (the congestion window "
        "let the backlog leave the publisher)"
        if share >= 0.5
        else "in the publisher, behind the data already sent into the congestion window"
    )
    kind = latency_metric.split("_")[1]
    return (
        f"{load_text(runs)}the largest {kind}-frame latency is {_mean_ci(lat, '.0f')} ms "
        f"and the link's queue held packets up to {_mean_ci(q, '.0f')} ms ({share:.0%} of "
        f"it): the frames waited {where}"
    )


def waited(frame_type: str) -> Why:
    """analysis.why.Why for a claim on one frame type: where its frames waited (backlog_where)."""

    def why(num: pd.DataFrame, den: pd.DataFrame) -> str:
        return backlog_where(pd.concat([num, den]), f"latency_{frame_type}_max_ms")

    return why
