"""Operations on throughput traces: mean, scale, cut, convert, summarise.

Every op that returns `DeliveryOpportunities` keeps the last opportunity at `period_ms`, so the
result can be written in Mahimahi format (which takes the period from the last line). Where that
needs it, the last opportunity is moved to the period end: at most one 1500-byte packet moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from traces.errors import TraceError, TraceWindowError
from traces.throughput import MTU_BYTES, DeliveryOpportunities, RateSchedule

Trace = RateSchedule | DeliveryOpportunities
BITS_PER_OPP = MTU_BYTES * 8


def duration_s(x: Trace) -> float:
    return x.duration_s if isinstance(x, RateSchedule) else x.period_ms / 1000.0


def mean_mbps(x: Trace) -> float:
    """Time-weighted mean over one period."""
    if isinstance(x, RateSchedule):
        return float(np.sum(x.rate_mbps * x.step_durations_s) / x.duration_s)
    return len(x.times_ms) * BITS_PER_OPP / (x.period_ms * 1000.0)


def _close(times_ms: np.ndarray, period_ms: int) -> DeliveryOpportunities:
    if len(times_ms) == 0:
        raise TraceError(None, "no delivery opportunity left (the rate would be 0)")
    times = np.sort(np.asarray(times_ms, dtype=np.int64))
    times[-1] = period_ms
    return DeliveryOpportunities(times, period_ms)


def scale(x: Trace, factor: float) -> Trace:
    """Multiply the rate by factor. Mahimahi: opportunities are thinned or repeated so that
    the cumulative count after entry i is floor(factor·(i+1)); the count becomes
    floor(factor·n) (at least 1), the timing shape is kept."""
    if not (factor > 0 and math.isfinite(factor)):
        raise TraceError(None, f"scale factor must be > 0 and finite, not {factor}")
    if isinstance(x, RateSchedule):
        return RateSchedule(x.times_s, x.rate_mbps * factor, x.duration_s)
    n = len(x.times_ms)
    cum = np.floor(factor * np.arange(0, n + 1) + 1e-9).astype(np.int64)
    reps = np.diff(cum)
    times = np.repeat(x.times_ms, reps)
    if len(times) == 0:
        times = x.times_ms[-1:]
    return _close(times, x.period_ms)


def scale_to_mean(x: Trace, target_mean_mbps: float) -> Trace:
    m = mean_mbps(x)
    if m <= 0:
        raise TraceError(None, "cannot scale a trace whose mean rate is 0 to a target mean")
    return scale(x, target_mean_mbps / m)


def cut(x: Trace, start_s: float, end_s: float) -> Trace:
    """The window [start_s, end_s) of one period, re-based to start at 0."""
    d = duration_s(x)
    if not (0 <= start_s < end_s <= d + 1e-9):
        raise TraceError(None, f"window [{start_s}, {end_s}) s is not inside [0, {d}] s")
    if isinstance(x, RateSchedule):
        t = x.times_s
        i0 = int(np.searchsorted(t, start_s, side="right")) - 1
        i1 = int(np.searchsorted(t, end_s, side="left"))
        times = np.maximum(t[i0:i1], start_s) - start_s
        return RateSchedule(times, x.rate_mbps[i0:i1], end_s - start_s)
    s_ms, e_ms = round(start_s * 1000), round(end_s * 1000)
    t = x.times_ms
    sel = t[(t >= s_ms) & (t < e_ms)] if e_ms < x.period_ms else t[t >= s_ms]
    return _close(sel - s_ms, e_ms - s_ms)


def window(
    x: Trace, start_s: float = 0.0, end_s: float | None = None, path: Path | None = None
) -> Trace:
    """The trace a link replays when its `trace:` gives `start_s` / `end_s`: `cut` to
    [start_s, end_s) (end_s None: the trace's end) and re-based to 0, so that a loop wraps
    within the window. The whole trace (start 0, no end) comes back unchanged. A window not
    within the trace is a `TraceWindowError` naming the key, the file (`path`) and the
    trace's length."""
    if start_s == 0.0 and end_s is None:
        return x
    d = duration_s(x)
    end = d if end_s is None else end_s
    length = f"the trace lasts {d:g} s"
    if not 0.0 <= start_s < d:
        problem = f"{start_s:g} s is not within the trace: {length}; allowed: 0 <= start_s < {d:g}"
        raise TraceWindowError(path, "start_s", problem)
    if not start_s < end <= d + 1e-9:
        why = "is past the trace's end" if end > d else "is not after start_s"
        problem = f"{end:g} s {why}: {length}; allowed: {start_s:g} < end_s <= {d:g}"
        raise TraceWindowError(path, "end_s", problem)
    try:
        return cut(x, start_s, min(end, d))
    except TraceError as e:  # e.g. a Mahimahi window without a delivery opportunity
        problem = f"the window [{start_s:g}, {end:g}) s ({length}): {e.problem}"
        raise TraceWindowError(path, "start_s", problem) from e


def to_schedule(x: DeliveryOpportunities, step_ms: int = 1000) -> RateSchedule:
    """Bin the opportunities into steps of step_ms. Bin k counts entries with
    k·step ≤ t < (k+1)·step; the entry at t = period (the wrap point) counts in the last bin.
    The last bin may be shorter than step_ms."""
    if step_ms <= 0:
        raise TraceError(None, f"step_ms must be > 0, not {step_ms}")
    p = x.period_ms
    n_bins = math.ceil(p / step_ms)
    idx = np.minimum(x.times_ms // step_ms, n_bins - 1)
    counts = np.bincount(idx, minlength=n_bins)
    edges = np.minimum(np.arange(n_bins + 1) * step_ms, p)
    widths_ms = np.diff(edges)
    rate = counts * BITS_PER_OPP / (widths_ms * 1000.0)
    return RateSchedule(edges[:-1] / 1000.0, rate, p / 1000.0)


def to_opportunities(x: RateSchedule) -> DeliveryOpportunities:
    """Opportunity k (k = 1, 2, ...) at the first millisecond by which the schedule has
    delivered k·12000 bits (cumulative integral, rounded up to whole ms)."""
    edges = np.append(x.times_s, x.duration_s)
    cum_bits = np.concatenate([[0.0], np.cumsum(x.rate_mbps * 1e6 * x.step_durations_s)])
    n = int(math.floor(cum_bits[-1] / BITS_PER_OPP + 1e-9))
    period_ms = round(x.duration_s * 1000)
    if n == 0:
        raise TraceError(None, "the schedule delivers less than one 1500-byte packet")
    targets = np.arange(1, n + 1) * BITS_PER_OPP
    seg = np.searchsorted(cum_bits, targets - 1e-6, side="left") - 1
    seg = np.clip(seg, 0, len(x.rate_mbps) - 1)
    rate_bps = x.rate_mbps[seg] * 1e6
    t_s = edges[seg] + (targets - cum_bits[seg]) / np.where(rate_bps > 0, rate_bps, np.inf)
    times = np.minimum(np.ceil(t_s * 1000 - 1e-6).astype(np.int64), period_ms)
    return _close(times, period_ms)


def fraction_below(x: Trace, rate_mbps: float, bin_s: float = 1.0) -> float:
    """Fraction of time the rate is < rate_mbps (Mahimahi: measured on bins of bin_s)."""
    s = x if isinstance(x, RateSchedule) else to_schedule(x, round(bin_s * 1000))
    return float(np.sum(s.step_durations_s[s.rate_mbps < rate_mbps]) / s.duration_s)


@dataclass(frozen=True)
class Summary:
    duration_s: float
    mean_mbps: float
    min_mbps: float
    max_mbps: float
    median_mbps: float
    steps: int  # schedule steps, or Mahimahi lines
    below_mbps: float | None = None
    fraction_below: float | None = None


def summary(x: Trace, below_mbps: float | None = None, bin_s: float = 1.0) -> Summary:
    """Duration, mean, and min/max/median over steps (Mahimahi: over bins of bin_s). The
    median is time-weighted."""
    s = x if isinstance(x, RateSchedule) else to_schedule(x, round(bin_s * 1000))
    w = s.step_durations_s
    order = np.argsort(s.rate_mbps, kind="stable")
    cw = np.cumsum(w[order])
    half = cw[-1] / 2
    lo = int(np.searchsorted(cw, half - 1e-9, side="left"))
    med = float(s.rate_mbps[order[lo]])
    if math.isclose(cw[lo], half, abs_tol=1e-9) and lo + 1 < len(order):
        med = (med + float(s.rate_mbps[order[lo + 1]])) / 2
    n = len(x.times_ms) if isinstance(x, DeliveryOpportunities) else len(x.times_s)
    return Summary(
        duration_s=duration_s(x),
        mean_mbps=mean_mbps(x),
        min_mbps=float(s.rate_mbps.min()),
        max_mbps=float(s.rate_mbps.max()),
        median_mbps=med,
        steps=n,
        below_mbps=below_mbps,
        fraction_below=None if below_mbps is None else fraction_below(x, below_mbps, bin_s),
    )
