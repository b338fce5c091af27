"""Does a link carry next to nothing at the start of a run? (`priolab check` warns.)

Real cellular logs often start idle (a UE that has not begun its download logs 0 kbit/s), and
a run replays a trace from its time 0. A link that carries next to nothing for the first
seconds holds a QUIC handshake's first flights until the rate comes: the endpoints give up
on a silent peer after their idle timeout (RISE 5 s, DTP / MoQ / QPR / RoQ 10 s:
`--idle-timeout-s` in endpoints/*/src/cli.rs) or their connect timeout (10-15 s), and even a
handshake that survives starts the measurement late. The window (`trace: {start_s}`) skips
such a start; this module finds it from the resolved rate both replayers get.

- `IDLE_START_WINDOW_S` = 3 s: more than half of the shortest idle timeout (RISE's 5 s), and
  the span of quinn's first two handshake retransmissions (its first probe timeout is about
  1 s: 3 × the 333 ms initial RTT; then 2 s).
- `IDLE_START_THRESHOLD_BPS` = 0.1 Mbit/s, the mean over that window: "next to nothing".
  An idle log reads 0 and tc runs a trace step below 10 kbit/s at 10 kbit/s; at 0.1 Mbit/s
  one full 1514-byte frame takes 0.12 s.
"""

from __future__ import annotations

import numpy as np

from netem.resolve import (
    ConstantRate,
    OpportunitiesRate,
    PolicerRate,
    Rate,
    ResolvedDirection,
    ScheduleRate,
)

IDLE_START_WINDOW_S = 3.0
IDLE_START_THRESHOLD_BPS = 100_000.0


def delivered_bits(rate: Rate, t_s: np.ndarray) -> np.ndarray | None:
    """Bits the rate can carry over [0, t) for each t (s), wrapping if the trace loops and 0
    after its end if it does not; None for an unlimited link."""
    t = np.asarray(t_s, dtype=np.float64)
    if isinstance(rate, ConstantRate | PolicerRate):
        return rate.rate_bps * t
    if isinstance(rate, ScheduleRate):
        edges_s = np.array([p[0] for p in rate.points] + [rate.period_ms]) / 1000.0
        bps = np.array([p[1] for p in rate.points], dtype=np.float64)
        cum = np.concatenate([[0.0], np.cumsum(bps * np.diff(edges_s))])

        def within(x: np.ndarray) -> np.ndarray:
            return np.interp(x, edges_s, cum)

    elif isinstance(rate, OpportunitiesRate):
        times_s = np.asarray(rate.times_ms, dtype=np.float64) / 1000.0
        bits = rate.bytes_per_opportunity * 8.0

        def within(x: np.ndarray) -> np.ndarray:
            return np.searchsorted(times_s, x, side="left") * bits

    else:
        return None
    period_s = rate.period_ms / 1000.0
    if not rate.loop:
        return within(np.minimum(t, period_s))
    loops = np.floor(t / period_s)
    return loops * within(np.array(period_s)) + within(t - loops * period_s)


def start_mean_bps(rate: Rate, window_s: float = IDLE_START_WINDOW_S) -> float | None:
    """Mean rate over the first `window_s` of the replay; None when unlimited."""
    b = delivered_bits(rate, np.array([window_s]))
    return None if b is None else float(b[0]) / window_s


def first_busy_start_s(
    rate: Rate,
    window_s: float = IDLE_START_WINDOW_S,
    threshold_bps: float = IDLE_START_THRESHOLD_BPS,
) -> float | None:
    """For a trace: the earliest moment the link wakes up for good, the start (s, within one
    period) to suggest as `start_s`. Candidates are where the link becomes busy (a schedule
    step of at least `threshold_bps`, a delivery opportunity); the first from which the next
    `window_s` carry at least `threshold_bps` on average wins. None if there is none, or when
    the rate is no trace. (A sliding window would suggest a start inside the idle stretch,
    just before the rate rises.)"""
    if isinstance(rate, ScheduleRate):
        cand = np.array([t for t, bps in rate.points if bps >= threshold_bps], dtype=np.float64)
    elif isinstance(rate, OpportunitiesRate):
        cand = np.unique(np.asarray(rate.times_ms, dtype=np.float64))
        cand = cand[cand < rate.period_ms]
    else:
        return None
    starts = cand / 1000.0
    ends = starts + window_s
    if not rate.loop:  # a window is cut within the trace: it ends at the trace's end at most
        keep = ends <= rate.period_ms / 1000.0 + 1e-9
        starts, ends = starts[keep], ends[keep]
    if len(starts) == 0:
        return None
    b0, b1 = delivered_bits(rate, starts), delivered_bits(rate, ends)
    assert b0 is not None and b1 is not None
    ok = np.flatnonzero((b1 - b0) / window_s >= threshold_bps)
    return float(starts[ok[0]]) if len(ok) else None


def idle_start_warning(d: ResolvedDirection, start_s: float = 0.0) -> str | None:
    """A warning when the direction carries less than IDLE_START_THRESHOLD_BPS on average
    over the first IDLE_START_WINDOW_S of a run, else None. `start_s`: the window's start the
    trace already has (the suggestion is in the trace's own time)."""
    mean = start_mean_bps(d.rate)
    if mean is None or mean >= IDLE_START_THRESHOLD_BPS:
        return None
    w, thr = IDLE_START_WINDOW_S, IDLE_START_THRESHOLD_BPS / 1e6
    text = (
        f"carries {mean / 1e6:.3g} Mbit/s on average over the first {w:g} s of a run, below "
        f"{thr:g} Mbit/s: a QUIC handshake waits for it and may time out "
        "(netem/README.md, 'An idle start')"
    )
    if not isinstance(d.rate, ScheduleRate | OpportunitiesRate):
        return text + "; give the link a higher rate"
    busy = first_busy_start_s(d.rate)
    if busy is None:
        return text + f"; no {w:g} s of this trace carry {thr:g} Mbit/s on average"
    at = np.format_float_positional(round(start_s + busy, 3), trim="-")
    return text + f"; it carries that from {at} s of the trace on: set start_s: {at}"
