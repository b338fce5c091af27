"""Verdicts on [MoQ]'s claims from a `moq` scenario's runs (runs.csv rows, valid runs):
priolab's number with n and its 95 % bootstrap CI, and "reproduced", "not reproduced,
because ..." or "differs, because ...", where the reason is a mechanism read off the same
runs (the link's queue, lost frames), never prose typed for a result.

book/papers.py names these as the MoQ claims' `judge` (analysis/judged.py: what
a judge is called with and returns).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.judged import Judge, Judged, Why
from analysis.stats import bootstrap_ci, bootstrap_ratio_ci


def _num(x: float, fmt: str = ".3g") -> str:
    if math.isnan(x):
        return "–"
    return "∞" if math.isinf(x) else f"{x:{fmt}}"


def _mean_ci(v: list[float] | np.ndarray, fmt: str = ".3g") -> str:
    mean, lo, hi, n = bootstrap_ci(v)
    if n < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{_num(mean, fmt)} (n={n}, no CI)"
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


def all_i_on_time(budget_ms: float) -> Judge:
    """[MoQ Fig. 6]: at a budget of `budget_ms` or more every I frame is displayed on time.
    Per run, the smallest budget with every I frame on time (`i_all_on_time_budget_ms`; NaN:
    an I frame never arrived = never on time). Reproduced iff it is ≤ the budget in every
    run."""

    def judge(num: pd.DataFrame, den: pd.DataFrame) -> Judged:
        v = _col(num, "i_all_on_time_budget_ms")
        v = np.where(np.isnan(v), np.inf, v)
        n = len(v)
        if n == 0:
            return Judged("–", "0", "not run")
        late = int(np.sum(v > budget_ms))
        worst = float(np.max(v))
        value = f"{_mean_ci(v[np.isfinite(v)], '.0f')} ms, worst run {_num(worst, '.0f')} ms"
        if late == 0:
            return Judged(value, str(n), f"reproduced: every I frame on time in all {n} runs")
        lost = int(np.sum(np.isinf(v)))
        why = (f"{lost} of {n} runs lost an I frame; " if lost else "") + backlog_where(
            num, "latency_I_max_ms"
        )
        return Judged(
            value,
            str(n),
            f"not reproduced, because in {late} of {n} runs an I frame was displayable only "
            f"after {budget_ms:g} ms: {why}",
        )

    return judge


def scheme_gain(metric: str) -> Judge:
    """[MoQ Fig. 10]: FT (num) displays more frames on time than FEFS (den) under the same
    constraint. Reproduced iff the ratio's CI lies above 1; differs if it holds 1."""

    def judge(num: pd.DataFrame, den: pd.DataFrame) -> Judged:
        a, b = _col(num, metric), _col(den, metric)
        a, b = a[np.isfinite(a)], b[np.isfinite(b)]
        if not len(a) or not len(b):
            return Judged("–", f"{len(a)}+{len(b)}", "not run")
        n = f"{len(a)}+{len(b)}"
        if np.mean(b) == 0:
            return Judged("–", n, "undefined: FEFS displayed nothing on time")
        r, lo, hi = bootstrap_ratio_ci(list(a), list(b))
        value = f"{_num(r)} [{_num(lo)}, {_num(hi)}]" if math.isfinite(lo) else _num(r)
        if math.isfinite(lo) and lo > 1:
            return Judged(value, n, "reproduced")
        where = backlog_where(pd.concat([num, den]), "latency_I_max_ms")
        both = f"FT displays {np.mean(a):.3f} of the frames on time, FEFS {np.mean(b):.3f}; "
        if math.isfinite(hi) and hi < 1:
            return Judged(value, n, f"not reproduced (FT lower), because {both}{where}")
        return Judged(value, n, f"differs (no gain: the CI holds 1), because {both}{where}")

    return judge


def within(lo: float, hi: float, metric: str, unit: str) -> Judge:
    """A measured setup value against the paper's: reproduced iff the CI lies in [lo, hi]."""

    def judge(num: pd.DataFrame, den: pd.DataFrame) -> Judged:
        v = _col(num, metric)
        v = v[np.isfinite(v)]
        if not len(v):
            return Judged("–", "0", "not run")
        mean, clo, chi, n = bootstrap_ci(v)
        if n < 2:
            clo = chi = mean  # one run: its value (the page says there is no CI)
        value = f"{_mean_ci(v, '.4g')} {unit}"
        if lo <= clo and chi <= hi:
            return Judged(value, str(n), "reproduced")
        return Judged(value, str(n), f"differs: outside [{lo:g}, {hi:g}] {unit}")

    return judge


def waited(frame_type: str) -> Why:
    """judged.Why for a claim on one frame type: where its frames waited (backlog_where)."""

    def why(num: pd.DataFrame, den: pd.DataFrame) -> str:
        return backlog_where(pd.concat([num, den]), f"latency_{frame_type}_max_ms")

    return why


def _spread(runs: pd.DataFrame, frame_type: str) -> np.ndarray:
    """Per run, the spread of one type's frame latencies: p95 − median over the frames that
    arrived (assumption: Figs. 6-8 plot every frame's latency; the spread between the bulk and
    the tail is read as their "variation")."""
    v = _col(runs, f"latency_{frame_type}_p95_ms") - _col(runs, f"latency_{frame_type}_median_ms")
    return v[np.isfinite(v)] if len(v) else v


def spread_order(num: pd.DataFrame, den: pd.DataFrame) -> Judged:
    """[MoQ Figs. 6-8]: "the variation is smallest for the I-frames and largest for the
    B-frames" (FT). Reproduced iff the ratios P ÷ I and B ÷ P of the mean spreads both have
    CIs above 1; not reproduced if either lies below 1; differs otherwise (a CI holds 1)."""
    s = {t: _spread(num, t) for t in ("I", "P", "B")}
    if any(not len(v) for v in s.values()):
        return Judged("–", str(len(num)), "not run")
    value = ", ".join(f"{t} {_mean_ci(v, '.0f')}" for t, v in s.items()) + " ms (p95 − median)"
    n = str(min(len(v) for v in s.values()))
    pi, bp = bootstrap_ratio_ci(s["P"], s["I"]), bootstrap_ratio_ci(s["B"], s["P"])
    if not all(math.isfinite(x) for x in (*pi[1:], *bp[1:])):
        return Judged(value, n, "no verdict: no CI (a spread of 0 or fewer than 2 runs)")
    if pi[1] > 1 and bp[1] > 1:
        return Judged(value, n, "reproduced")
    order = f"P ÷ I {_num(pi[0])} [{_num(pi[1])}, {_num(pi[2])}], B ÷ P {_num(bp[0])} " + (
        f"[{_num(bp[1])}, {_num(bp[2])}]"
    )
    kind = "not reproduced" if pi[2] < 1 or bp[2] < 1 else "differs (a CI holds 1)"
    return Judged(value, n, f"{kind}, because {order}; {backlog_where(num, 'latency_B_max_ms')}")
