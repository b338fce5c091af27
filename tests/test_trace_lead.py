"""netem.trace_lead: a trace led by the link's settle time meets the endpoints at its time 0."""

from __future__ import annotations

import pytest

from netem.resolve import ConstantRate, OpportunitiesRate, ScheduleRate
from netem.trace_lead import lead_points, lead_rate, lead_times


def _rate_at(points: tuple[tuple[int, int], ...], period_ms: int, loop: bool, t_ms: int) -> int:
    """The rate a schedule gives at link time t_ms (each point holds until the next; wraps at
    the period when looped, else the last rate holds)."""
    if loop:
        t_ms %= period_ms
    return [r for t, r in points if t <= t_ms][-1]


TRACE = ((0, 10), (300, 20), (700, 30), (1800, 40))


@pytest.mark.parametrize("lead_ms", [0, 1, 250, 300, 1000, 1900, 2000, 3500])
@pytest.mark.parametrize("loop", [True, False])
def test_led_schedule_gives_the_trace_shifted_by_the_lead(lead_ms: int, loop: bool) -> None:
    period = 2000
    points, new_period = lead_points(TRACE, period, loop, lead_ms)
    assert points[0][0] == 0
    assert all(a[0] < b[0] for a, b in zip(points, points[1:], strict=False))  # strictly increasing
    for t in range(lead_ms, lead_ms + 3 * period, 50):  # every instant from the lead on
        assert _rate_at(points, new_period, loop, t) == _rate_at(TRACE, period, loop, t - lead_ms)
    if loop:
        assert new_period == period
    else:  # held at the first rate until the trace starts
        assert all(_rate_at(points, new_period, loop, t) == 10 for t in range(0, lead_ms, 50))


def test_lead_one_second_on_a_real_shaped_case() -> None:
    points, period = lead_points(((0, 5), (1000, 8), (2000, 2)), 3000, True, 1000)
    assert (points, period) == (((0, 2), (1000, 5), (2000, 8)), 3000)


@pytest.mark.parametrize("loop", [True, False])
def test_led_opportunities_shift_every_delivery(loop: bool) -> None:
    times, period = (0, 0, 5, 17, 40), 40
    led, new_period = lead_times(times, period, loop, 12)
    assert list(led) == sorted(led)
    if loop:  # the same deliveries per period, each 12 ms later, wrapped
        assert new_period == 40 and led == (12, 12, 12, 17, 29)  # 40 is the next 0
    else:
        assert new_period == 52 and led == (12, 12, 17, 29, 52)


def test_rates_without_a_clock_are_unchanged_and_a_negative_lead_is_refused() -> None:
    assert lead_rate(ConstantRate(5_000_000), 1000) == ConstantRate(5_000_000)
    sched = lead_rate(ScheduleRate(((0, 1), (10, 2)), 20, True), 10)
    assert isinstance(sched, ScheduleRate) and sched.points == ((0, 2), (10, 1))
    opp = lead_rate(OpportunitiesRate((1, 2), 4, 1500, True), 1)
    assert isinstance(opp, OpportunitiesRate) and opp.times_ms == (2, 3)
    with pytest.raises(ValueError, match="lead_ms must be >= 0"):
        lead_points(TRACE, 2000, True, -1)
