"""Start a link's trace `lead_ms` after the link itself.

A real site starts the link emulator (linkem, or the tc trace replayer) a little before the
endpoints (`priolab.engine.plan.LINK_SETTLE_S`), and a trace's clock runs from the emulator's
start. Without a lead the endpoints would meet the trace from its second 1 on, while the sim
site, whose link and endpoints start at one instant, meets it from second 0. Shifting the trace
by the lead makes the endpoints meet the trace's time 0 on every site.

Pure functions on resolved rates (netem.resolve). A looped trace is rotated, so it is exact from
the lead on and keeps its period; a trace that plays once is delayed, holding its first rate (a
schedule) or offering nothing (delivery opportunities) during the lead, when no endpoint sends.
"""

from __future__ import annotations

from dataclasses import replace

from netem.resolve import OpportunitiesRate, Rate, ResolvedDirection, ResolvedLink, ScheduleRate


def lead_points(
    points: tuple[tuple[int, int], ...], period_ms: int, loop: bool, lead_ms: int
) -> tuple[tuple[tuple[int, int], ...], int]:
    """A piecewise-constant schedule (first point at 0) whose time 0 falls at `lead_ms`.
    Returns (points, period_ms)."""
    if lead_ms < 0:
        raise ValueError(f"lead_ms must be >= 0, got {lead_ms}")
    if not loop:
        shifted = tuple((t + lead_ms, r) for t, r in points if t > 0)
        return ((0, points[0][1]), *shifted), period_ms + lead_ms
    lead = lead_ms % period_ms
    if lead == 0:
        return points, period_ms
    cut = period_ms - lead  # trace time that lands at link time 0

    def rate_at(t_ms: int) -> int:
        return [r for t, r in points if t <= t_ms][-1]

    tail = tuple((t - cut, r) for t, r in points if t > cut)
    head = tuple((t + lead, r) for t, r in points if 0 < t < cut)
    return ((0, rate_at(cut)), *tail, (lead, points[0][1]), *head), period_ms


def lead_times(
    times_ms: tuple[int, ...], period_ms: int, loop: bool, lead_ms: int
) -> tuple[tuple[int, ...], int]:
    """Delivery opportunities (sorted, within one period) whose time 0 falls at `lead_ms`.
    Returns (times_ms, period_ms)."""
    if lead_ms < 0:
        raise ValueError(f"lead_ms must be >= 0, got {lead_ms}")
    if not loop:
        return tuple(t + lead_ms for t in times_ms), period_ms + lead_ms
    lead = lead_ms % period_ms
    return tuple(sorted((t + lead) % period_ms for t in times_ms)), period_ms


def lead_rate(rate: Rate, lead_ms: int) -> Rate:
    """`rate` with its trace led by `lead_ms`; constant rates, policers and unlimited links have
    no clock and come back unchanged."""
    if isinstance(rate, ScheduleRate):
        points, period = lead_points(rate.points, rate.period_ms, rate.loop, lead_ms)
        return replace(rate, points=points, period_ms=period)
    if isinstance(rate, OpportunitiesRate):
        times, period = lead_times(rate.times_ms, rate.period_ms, rate.loop, lead_ms)
        return replace(rate, times_ms=times, period_ms=period)
    return rate


def lead_link(link: ResolvedLink, lead_ms: int) -> ResolvedLink:
    """Both directions' traces led by `lead_ms`."""

    def one(d: ResolvedDirection) -> ResolvedDirection:
        return replace(d, rate=lead_rate(d.rate, lead_ms))

    return ResolvedLink(uplink=one(link.uplink), downlink=one(link.downlink))
