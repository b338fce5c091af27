"""The one judge of every claim (analysis/verdicts.py) on hand-made runs: each verdict kind,
the interval it rests on, no verdict below 5 runs a side, runs the harness spoiled left out,
sessions the protocol lost counted at their worst, sites never pooled, claims over several
points, and how many runs a primary cell needs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.claims import (
    GAIN,
    LOSS,
    NOT_WORSE,
    SAME_AS,
    Band,
    Cell,
    Claim,
    Condition,
    Paper,
    Point,
    SessionMetric,
    above,
    around,
    around_ratio,
    claim,
)
from analysis.intervals import level_each, mean_ci, ratio_ci
from analysis.verdicts import (
    CAP_RUNS,
    DIFFERS,
    FLOOR_RUNS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_RUN,
    OUTSIDE,
    REPRODUCED,
    decide,
    enough,
    judge,
    precision,
    wanted,
)

INF = math.inf
METRICS = {"m": SessionMetric("higher", 0.0), "lat": SessionMetric("lower", None),
           "budget": SessionMetric("lower", INF, nan_is_worst=True)}  # fmt: skip


def cell(scheme: str, setting: str = "s1") -> Cell:
    return Cell("sc", setting, scheme)


def cond(*points: Point, site: str = "sim") -> Condition:
    return Condition("primary", site, points, "test")


def mean_claim(band: Band, metric: str = "m", over: str = "one", points: int = 1) -> Claim:
    pts = tuple(Point(cell("a", f"s{i + 1}")) for i in range(points))
    return claim("c", "Fig. 1", "t", "p", metric, "mean", band, (cond(*pts),), over=over)


def ratio_claim(band: Band, direction: str = "gain", over: str = "one", points: int = 1,
                metric: str = "m") -> Claim:  # fmt: skip
    pts = tuple(Point(cell("a", f"s{i + 1}"), cell("b", f"s{i + 1}")) for i in range(points))
    return claim("c", "Fig. 1", "t", "p", metric, "ratio", band, (cond(*pts),), direction, over)


def rows(scheme: str, values: list[float], setting: str = "s1", site: str = "sim",
         metric: str = "m", **extra: list) -> pd.DataFrame:  # fmt: skip
    n = len(values)
    return pd.DataFrame({"scenario": ["sc"] * n, "setting": [setting] * n, "scheme": [scheme] * n,
                         "speed": ["default"] * n, "rep": list(range(1, n + 1)),
                         "site": [site] * n, "valid": [True] * n, metric: values,
                         **extra})  # fmt: skip


POINT_GAIN = around_ratio(1.5)  # [1.4, 1.6]


@pytest.mark.parametrize(
    ("c", "ci", "kind"),
    [
        # a mean: inside, straddling, outside
        (mean_claim(Band(0.95, 1.0, "b")), (0.96, 0.99), REPRODUCED),
        (mean_claim(Band(0.95, 1.0, "b")), (0.90, 0.99), INCONCLUSIVE),
        (mean_claim(Band(0.95, 1.0, "b")), (0.80, 0.90), OUTSIDE),
        (mean_claim(Band(0.0, 0.5, "b")), (0.60, 0.70), OUTSIDE),
        # a gain of a given size (1.5×: [1.4, 1.6])
        (ratio_claim(POINT_GAIN), (1.45, 1.55), REPRODUCED),
        (ratio_claim(POINT_GAIN), (1.30, 1.50), INCONCLUSIVE),
        (ratio_claim(POINT_GAIN), (1.70, 2.00), DIFFERS),  # the paper's direction, larger
        (ratio_claim(POINT_GAIN), (1.15, 1.30), DIFFERS),  # smaller, but a clear gain
        (ratio_claim(POINT_GAIN), (0.95, 1.05), NOT_REPRODUCED),  # no effect: in the margin
        (ratio_claim(POINT_GAIN), (0.70, 0.85), NOT_REPRODUCED),  # the opposite direction
        (ratio_claim(POINT_GAIN), (0.85, 1.20), NOT_REPRODUCED),  # holds 1: no significance
        # a loss
        (ratio_claim(LOSS, "loss"), (0.50, 0.80), REPRODUCED),
        (ratio_claim(around_ratio(0.5), "loss"), (0.20, 0.30), DIFFERS),
        (ratio_claim(LOSS, "loss"), (1.10, 1.30), NOT_REPRODUCED),
        # the same as, not worse than: no direction
        (ratio_claim(SAME_AS, "none"), (0.95, 1.05), REPRODUCED),
        (ratio_claim(SAME_AS, "none"), (0.60, 1.01), INCONCLUSIVE),  # issue 37's example
        (ratio_claim(SAME_AS, "none"), (1.20, 1.40), NOT_REPRODUCED),
        (ratio_claim(NOT_WORSE, "none"), (0.95, 3.00), REPRODUCED),
        (ratio_claim(NOT_WORSE, "none"), (0.50, 0.80), NOT_REPRODUCED),
        # one-sided: "> 2×"
        (ratio_claim(above(2.0, "b")), (2.5, 3.0), REPRODUCED),
        (ratio_claim(above(2.0, "b")), (1.8, 2.5), INCONCLUSIVE),
        # a gain of unstated size: beyond the no-effect margin; inside it is no effect, not
        # "inconclusive"
        (ratio_claim(GAIN), (1.15, 1.40), REPRODUCED),
        (ratio_claim(GAIN), (1.05, 1.30), INCONCLUSIVE),
        (ratio_claim(GAIN), (1.02, 1.08), NOT_REPRODUCED),
        (ratio_claim(GAIN), (0.97, 1.08), NOT_REPRODUCED),
    ],
)
def test_decide(c: Claim, ci: tuple[float, float], kind: str) -> None:
    assert decide(c, *ci).kind == kind


def test_a_mean_or_same_as_claim_reaching_outside_its_band_is_never_reproduced() -> None:
    """Issue 37: a CI that meets the band is not enough; one that reaches outside it reads
    'inconclusive'. [0.2, 5] meets almost anything; [0.6, 1.01] touches 'the same'."""
    for c, ci in ((mean_claim(Band(1.0, 2.0, "b")), (0.2, 5.0)),
                  (mean_claim(Band(1.0, 2.0, "b")), (1.5, 2.1)),
                  (ratio_claim(SAME_AS, "none"), (0.6, 1.01)),
                  (ratio_claim(SAME_AS, "none"), (0.95, 1.2))):  # fmt: skip
        v = decide(c, *ci)
        assert v.kind == INCONCLUSIVE and "reaches outside" in v.detail


def test_the_verdict_rests_on_the_runs_student_t_interval() -> None:
    a, b = [1.5, 1.52, 1.48, 1.51, 1.49], [1.0, 1.01, 0.99, 1.0, 1.0]
    r = pd.concat([rows("a", a), rows("b", b)])
    j = judge(ratio_claim(POINT_GAIN), ratio_claim(POINT_GAIN).primary, r, METRICS)
    assert (j.value, j.lo, j.hi) == pytest.approx(tuple(float(v) for v in ratio_ci(a, b)))
    assert j.verdict.kind == REPRODUCED and j.points[0].num.n == 5
    m = judge(mean_claim(Band(1.3, 1.7, "b")), mean_claim(Band(1.3, 1.7, "b")).primary, r,
              METRICS)  # fmt: skip
    assert (m.value, m.lo, m.hi) == pytest.approx(tuple(float(v) for v in mean_ci(a)))


def test_no_verdict_below_five_runs_a_side() -> None:
    c = ratio_claim(POINT_GAIN)
    r = pd.concat([rows("a", [1.5] * 5), rows("b", [1.0] * 4)])
    j = judge(c, c.primary, r, METRICS)
    assert j.verdict.kind == NOT_RUN and "4 of b" in j.verdict.detail
    assert judge(c, c.primary, r.iloc[:0], METRICS).verdict.detail.startswith("no runs yet")


def test_spoiled_runs_are_left_out_and_lost_sessions_count_at_their_worst() -> None:
    """Runs the harness spoiled (valid False) are not counted; a session the protocol lost
    (session_failed 1) is, at the metric's bound (0 here: a higher-is-better ratio) or, for
    a metric without one, at the worst value its cell measured."""
    good = rows("a", [1.0] * 5, session_failed=[0] * 5)
    died = rows("a", [0.9, float("nan")], session_failed=[1, 1])
    spoiled = rows("a", [0.0] * 3).assign(valid=False)
    c = mean_claim(Band(0.9, 1.0, "b"))
    j = judge(c, c.primary, pd.concat([good, died, spoiled]), METRICS)
    side = j.points[0].num
    assert side.n == 7 and side.failed == 2
    assert sorted(side.values) == [0.0, 0.0, 1, 1, 1, 1, 1]
    lat = pd.concat([rows("a", [10.0, 20.0, 30.0, 15.0, 12.0], metric="lat",
                          session_failed=[0, 0, 0, 0, 0]),
                     rows("a", [5.0], metric="lat", session_failed=[1])])  # fmt: skip
    jl = judge(mean_claim(Band(0, 100, "b"), "lat"), mean_claim(Band(0, 100, "b"), "lat").primary,
               lat, METRICS)  # fmt: skip
    assert sorted(jl.points[0].num.values) == [10, 12, 15, 20, 30, 30]  # 5 → the cell's worst


def test_a_nan_that_means_the_worst_counts_so() -> None:
    """MoQ's smallest budget with every I frame on time is NaN when an I frame never came:
    never on time, an infinite budget, outside any finite band."""
    r = rows("a", [400.0, 500.0, 450.0, 480.0, float("nan")], metric="budget")
    c = mean_claim(Band(0.0, 700.0, "b"), "budget")
    j = judge(c, c.primary, r, METRICS)
    assert math.isinf(j.value) and j.verdict.kind == OUTSIDE
    ok = judge(c, c.primary, r.iloc[:4].pipe(lambda d: pd.concat([d, d.iloc[:1]])), METRICS)
    assert ok.verdict.kind == REPRODUCED


def test_sites_and_cells_are_never_pooled() -> None:
    c = mean_claim(Band(0.9, 1.1, "b"))
    r = pd.concat([rows("a", [1.0] * 5, site="mininet"), rows("a", [1.0] * 2, site="sim"),
                   rows("a", [1.0] * 5, setting="s2")])  # fmt: skip
    assert judge(c, c.primary, r, METRICS).verdict.kind == NOT_RUN
    assert judge(c, c.primary.but("sensitivity", "x", site="mininet"), r, METRICS).verdict.kind == (
        REPRODUCED)  # fmt: skip


def _three(values: dict[str, list[float]]) -> pd.DataFrame:
    return pd.concat([rows(s, v, setting=st) for st, per in values.items()
                      for s, v in (("a", per), ("b", [1.0, 1.01, 0.99, 1.0, 1.0]))])  # fmt: skip


def test_claims_over_several_points() -> None:
    """Three settings: `each` takes its worst point's verdict, `max` and `min` the interval
    the joint intervals give for the largest and the smallest ratio, each point at the
    Bonferroni level."""
    near = [2.0, 2.02, 1.98, 2.01, 1.99]
    far = [4.0, 4.04, 3.96, 4.02, 3.98]
    r = _three({"s1": near, "s2": near, "s3": far})
    band = Band(1.5, 2.5, "b")
    each = judge(ratio_claim(band, over="each", points=3), ratio_claim(band, over="each",
                 points=3).primary, r, METRICS)  # fmt: skip
    assert [p.verdict.kind for p in each.points] == [REPRODUCED, REPRODUCED, DIFFERS]
    assert each.verdict.kind == DIFFERS and "s3" in each.verdict.detail
    assert each.level == pytest.approx(level_each(0.95, 3))
    top = ratio_claim(Band(3.5, 4.5, "b"), over="max", points=3)
    jt = judge(top, top.primary, r, METRICS)
    assert jt.value == pytest.approx(max(p.value for p in jt.points))
    assert jt.hi == max(p.hi for p in jt.points) and jt.verdict.kind == REPRODUCED
    low = ratio_claim(Band(1.5, 2.5, "b"), over="min", points=3)
    assert judge(low, low.primary, r, METRICS).verdict.kind == REPRODUCED


def test_a_ratio_without_an_interval() -> None:
    """A denominator that measured 0 in every run: no interval, so inconclusive; 0 ÷ 0 is no
    effect for a gain and no difference for a same-as claim."""
    zero = rows("b", [0.0] * 5)
    c = ratio_claim(POINT_GAIN)
    j = judge(c, c.primary, pd.concat([rows("a", [1.0, 2.0, 1.5, 1.2, 1.1]), zero]), METRICS)
    assert j.verdict.kind == INCONCLUSIVE and "denominator measured 0" in j.verdict.detail
    both = pd.concat([rows("a", [0.0] * 5), zero])
    assert judge(c, c.primary, both, METRICS).verdict.kind == NOT_REPRODUCED
    same = ratio_claim(SAME_AS, "none")
    assert judge(same, same.primary, both, METRICS).verdict.kind == REPRODUCED


def test_how_many_runs_a_primary_cell_needs() -> None:
    assert enough(9, 1.0, 1.0, 0.2) == (False, enough(9, 1.0, 1.0, 0.2)[1])
    assert enough(10, 0.95, 1.05, 0.2)[0] and not enough(10, 0.8, 1.2, 0.2)[0]
    assert enough(CAP_RUNS, 0.0, 9.0, 0.2)[0] and not enough(FLOOR_RUNS, math.nan, 1, 0.2)[0]
    c = ratio_claim(POINT_GAIN)  # band [1.4, 1.6]: half-width at most 0.1
    tight = pd.concat([rows("a", [1.5, 1.52, 1.48] * 4), rows("b", [1.0, 1.01, 0.99] * 4)])
    p = precision(judge(c, c.primary, tight, METRICS))
    assert p.enough and p.runs == 12
    loose = pd.concat([rows("a", [1.0, 2.0, 1.5, 1.2, 1.8] * 2), rows("b", [1.0] * 10)])
    p = precision(judge(c, c.primary, loose, METRICS))
    assert not p.enough and "half-width" in p.why
    paper = Paper("x", "X", "k", ("sc",), (c,), METRICS, "sites")
    ((cl, site, pr),) = [w for w in wanted(paper, tight) if w[0].scheme == "a"]
    assert (cl, site, pr.enough) == (cell("a"), "sim", True)
    assert c.precision_scale == pytest.approx(0.2)
    assert ratio_claim(GAIN).precision_scale == pytest.approx(SAME_AS.width)
    assert mean_claim(above(50.0, "b")).precision_scale == pytest.approx(10.0)


def test_a_claim_is_checked_when_it_is_made() -> None:
    p = cond(Point(cell("a")))
    with pytest.raises(ValueError, match="exactly one primary"):
        Claim("k", "s", "t", "p", "m", "mean", GAIN, p, others=(p,))
    with pytest.raises(ValueError, match="no denominator"):
        claim("k", "s", "t", "p", "m", "mean", GAIN, (cond(Point(cell("a"), cell("b"))),))
    with pytest.raises(ValueError, match="need a denominator"):
        claim("k", "s", "t", "p", "m", "ratio", GAIN, (p,), "gain")
    with pytest.raises(ValueError, match="own no-effect margin"):
        claim("k", "s", "t", "p", "m", "difference", GAIN, (cond(Point(cell("a"), cell("b"))),),
              "gain")  # fmt: skip
    with pytest.raises(ValueError, match="key"):
        claim("K 1", "s", "t", "p", "m", "mean", GAIN, (p,))
    with pytest.raises(ValueError, match="lo <= hi and a reason"):
        Band(2.0, 1.0, "x")
    with pytest.raises(ValueError, match="without a SessionMetric"):
        Paper("x", "X", "k", (), (claim("k", "s", "t", "p", "z", "mean", GAIN, (p,)),),
              {}, "s")  # fmt: skip
    assert (around(10.0).lo, around(10.0).hi) == pytest.approx((8.0, 12.0))
    assert (around_ratio(1.2).lo, around_ratio(1.2).hi) == pytest.approx((1.16, 1.24))
    assert np.isclose(around_ratio(0.5).lo, 0.4) and np.isclose(around_ratio(0.5).hi, 0.6)
