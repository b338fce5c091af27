"""The judge of every claim of every paper: a pure function of a claim, one of its conditions
and the runs (issue 37). No file is read here; the runs come as a DataFrame, one row per run
(`ROW_COLUMNS`: the matrix point, the site, `valid`; the metric columns; `session_failed`,
1 for a session the protocol lost), whatever produced them (results folders, the evidence
store).

For each point of the condition, each side's runs are the cell's **valid** runs at the
condition's site: a run the harness spoiled (CPU saturation, a late start, an emulator fault)
is left out, as the judge of a run (priolab/engine/judge.py) says. A session that died is a
valid run: it counts, with its worst value of the metric (analysis/claims.py
`SessionMetric`), and the death rate stands beside the value. Then:

- no verdict below `MIN_RUNS` runs a side: "not run";
- the point's value with its Student-t interval (analysis/intervals.py), at 95 %, or for a
  claim over k points at 1 − 0.05 / k each (Bonferroni), so the k intervals hold together;
- `decide`: where the interval lies against the claim's band. Reproduced when the whole
  interval lies inside the band; inconclusive when it overlaps the band but reaches outside
  (more runs would decide); otherwise a mean is "outside the band", a claim of no difference
  ("the same as", "not worse") is "not reproduced", and a claim of an effect "differs" when
  the interval lies on the paper's side of no effect (the paper's direction, another size)
  and is "not reproduced" when it lies inside the no-effect margin, holds no effect, or lies
  on the other side.
- a claim over several points: its smallest (`min`) or largest (`max`) value, with the
  interval [min lo, min hi] (or [max lo, max hi]) that the joint intervals imply; or `each`
  point in the band, whose verdict is its worst point's (`SEVERITY`).

`precision` says whether a claim's primary cells have enough runs: at least `FLOOR_RUNS` a
side, and an interval whose half-width is at most half the band's width, or `CAP_RUNS`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.claims import Cell, Claim, Condition, Paper, Point, SessionMetric, num
from analysis.intervals import LEVEL, difference_ci, level_each, mean_ci, ratio_ci, scalar
from analysis.why import all_alike

ROW_COLUMNS = ("scenario", "setting", "scheme", "speed", "site", "valid")
"""The columns every run row has (besides its metrics; `session_failed` and `reasons` when
known)."""
MIN_RUNS = 5
"""No verdict from fewer runs a side."""
FLOOR_RUNS = 10
"""A primary cell runs at least this often."""
CAP_RUNS = 40
"""...and at most this often, when its interval stays wide."""

REPRODUCED = "reproduced"
INCONCLUSIVE = "inconclusive"
DIFFERS = "differs"
NOT_REPRODUCED = "not reproduced"
OUTSIDE = "outside the band"
NOT_RUN = "not run"
VERDICTS = (REPRODUCED, INCONCLUSIVE, DIFFERS, NOT_REPRODUCED, OUTSIDE, NOT_RUN)
"""Every verdict, in the order a scoreboard counts them."""
SEVERITY = (REPRODUCED, INCONCLUSIVE, OUTSIDE, DIFFERS, NOT_REPRODUCED, NOT_RUN)
NO_RUNS = "no runs yet"
"""A claim over `each` of its points takes its worst point's verdict, worst last."""


@dataclass(frozen=True)
class Verdict:
    kind: str  # one of VERDICTS
    detail: str  # where the interval lies against the band, in words

    def text(self) -> str:
        return f"{self.kind}: {self.detail}" if self.detail else self.kind


@dataclass(frozen=True, eq=False)
class Side:
    """One side of a point: the cell's valid runs at the site and the values they count
    with (a failed session at its worst value; runs that did not measure the metric are
    left out)."""

    cell: Cell
    runs: pd.DataFrame
    values: np.ndarray
    failed: int  # sessions the protocol lost, among `runs`

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def alike(self) -> bool:
        return all_alike(self.runs)


@dataclass(frozen=True, eq=False)
class PointResult:
    point: Point
    num: Side
    den: Side | None
    value: float
    lo: float
    hi: float
    verdict: Verdict

    @property
    def sides(self) -> tuple[Side, ...]:
        return (self.num,) if self.den is None else (self.num, self.den)


@dataclass(frozen=True, eq=False)
class Judgement:
    claim: Claim
    condition: Condition
    verdict: Verdict
    value: float
    lo: float
    hi: float
    points: tuple[PointResult, ...]
    level: float  # each point's interval level

    @property
    def runs_min(self) -> int:
        """The fewest runs of any side of any point."""
        return min((s.n for p in self.points for s in p.sides), default=0)


# --------------------------------------------------------------------------- the runs


def normalise(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with every column of `ROW_COLUMNS` (a missing `speed` is `default`, a
    missing `valid` True, a missing `site` unknown) and `session_failed` (0 when absent)."""
    out = rows.copy()
    for col, default in (("speed", "default"), ("valid", True), ("site", "?"),
                         ("session_failed", 0.0), ("scenario", ""), ("setting", ""),
                         ("scheme", "")):  # fmt: skip
        if col not in out:
            out[col] = default
    out["speed"] = out["speed"].fillna("default").astype(str)
    out["valid"] = out["valid"].fillna(False).astype(bool)
    out["session_failed"] = pd.to_numeric(out["session_failed"], errors="coerce").fillna(0.0)
    for col in ("scenario", "setting", "scheme", "site"):
        out[col] = out[col].astype(str)
    return out


def select(rows: pd.DataFrame, cell: Cell, site: str) -> pd.DataFrame:
    """The cell's valid runs at the site."""
    if rows.empty:
        return rows
    at = (
        (rows["scenario"] == cell.scenario)
        & (rows["setting"] == cell.setting)
        & (rows["scheme"] == cell.scheme)
        & (rows["speed"] == cell.speed)
        & (rows["site"] == site)
        & rows["valid"]
    )
    return rows[at]


def metric_values(runs: pd.DataFrame, metric: str, sm: SessionMetric) -> np.ndarray:
    """The metric per run, as a claim counts it: a failed session (and, with `nan_is_worst`,
    a NaN) at the metric's worst value; runs that did not measure it left out."""
    if sm.compute is not None and metric not in runs:
        col = sm.compute(runs) if len(runs) else pd.Series(dtype=float)
    else:
        col = runs[metric] if metric in runs else pd.Series(np.nan, index=runs.index)
    v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, copy=True)
    failed = runs["session_failed"].to_numpy(float) > 0 if "session_failed" in runs else (
        np.zeros(len(v), dtype=bool))  # fmt: skip
    worst_here = failed | (np.isnan(v) if sm.nan_is_worst else np.zeros(len(v), dtype=bool))
    if worst_here.any():
        measured = v[np.isfinite(v)]
        worst = sm.worst
        if worst is None:
            worst = (measured.max() if sm.better == "lower" else measured.min()) if len(
                measured) else math.nan  # fmt: skip
        v[worst_here] = worst
    return v[~np.isnan(v)]


def side(rows: pd.DataFrame, cell: Cell, site: str, metric: str, sm: SessionMetric) -> Side:
    runs = select(rows, cell, site)
    failed = int((runs["session_failed"] > 0).sum()) if len(runs) else 0
    return Side(cell, runs, metric_values(runs, metric, sm), failed)


# --------------------------------------------------------------------------- the decision


def decide(claim: Claim, lo: float, hi: float) -> Verdict:
    """The verdict of an interval [lo, hi] (finite bounds, or infinite ones where a side has
    an infinite worst value) against the claim's band (module docstring)."""
    band = claim.band
    ci = f"[{num(lo)}, {num(hi)}]"
    if band.holds(lo, hi):
        return Verdict(REPRODUCED, f"the whole CI {ci} lies inside the band {band.text()}")
    if claim.kind != "mean" and claim.direction != "none" and claim.same.holds(lo, hi):
        return Verdict(NOT_REPRODUCED, f"no effect: the CI {ci} lies inside the no-effect "
                       f"margin {claim.same.text()}")  # fmt: skip
    if band.meets(lo, hi):
        return Verdict(INCONCLUSIVE, f"the CI {ci} overlaps the band {band.text()} but "
                       "reaches outside it: more runs would decide")  # fmt: skip
    side_ = "above" if lo > band.hi else "below"
    if claim.kind == "mean":
        return Verdict(OUTSIDE, f"the CI {ci} lies {side_} the band {band.text()}")
    if claim.direction == "none":
        return Verdict(NOT_REPRODUCED, f"an effect where the paper saw none: the CI {ci} "
                       f"lies {side_} the band {band.text()}")  # fmt: skip
    zero = claim.neutral
    gain = claim.direction == "gain"
    if (gain and hi < zero) or (not gain and lo > zero):
        return Verdict(NOT_REPRODUCED, f"the opposite direction: the CI {ci} lies "
                       f"{'below' if gain else 'above'} {num(zero)}")  # fmt: skip
    if (gain and lo > zero) or (not gain and hi < zero):
        away = (side_ == "above") == gain
        size = "a larger" if away else "a smaller"
        return Verdict(DIFFERS, f"the paper's direction, {size} effect: the CI {ci} lies "
                       f"{side_} the band {band.text()}")  # fmt: skip
    return Verdict(NOT_REPRODUCED, f"no significant effect: the CI {ci} holds {num(zero)}")


def _no_interval(claim: Claim, a: Side, b: Side | None) -> Verdict:
    """The verdict where the runs give a value but no interval: a ratio with a side whose
    mean is 0."""
    ma = float(np.mean(a.values)) if a.n else math.nan
    mb = float(np.mean(b.values)) if b is not None and b.n else math.nan
    if claim.kind == "ratio" and ma == 0 and mb == 0:
        if claim.direction == "none":
            return Verdict(REPRODUCED, "both sides measured 0 in every run: no difference")
        return Verdict(NOT_REPRODUCED, "no effect: neither side measured any (0 ÷ 0)")
    if claim.kind == "ratio" and (mb == 0 or ma == 0):
        which = "denominator" if mb == 0 else "numerator"
        return Verdict(INCONCLUSIVE, f"the {which} measured 0 in every run, so the ratio "
                       f"({num(ma)} ÷ {num(mb)}) has no interval")  # fmt: skip
    return Verdict(INCONCLUSIVE, "the runs give no interval")


def _interval(claim: Claim, a: Side, b: Side | None, level: float) -> tuple[float, float, float]:
    va = a.values
    vb = b.values if b is not None else np.array([])
    if np.isinf(va).any() or np.isinf(vb).any():
        # a worst value without bound: the mean is infinite, and so is the interval's edge
        if claim.kind == "mean":
            x = float(np.mean(va))
        elif claim.kind == "ratio":
            x = float(np.mean(va) / np.mean(vb)) if np.mean(vb) != 0 else math.inf
        else:
            x = float(np.mean(va) - np.mean(vb))
        return x, x, x
    if claim.kind == "mean":
        return scalar(mean_ci(va, level))
    if claim.kind == "ratio":
        return scalar(ratio_ci(va, vb, level))
    return scalar(difference_ci(va, vb, level))


def _too_few(sides: list[Side]) -> Verdict | None:
    if all(s.n >= MIN_RUNS for s in sides):
        return None
    if all(s.n == 0 for s in sides):
        return Verdict(NOT_RUN, NO_RUNS)
    got = " and ".join(f"{s.n} of {s.cell.scheme}" for s in sides)
    return Verdict(NOT_RUN, f"{got} runs; a verdict needs {MIN_RUNS} a side")


def judge_point(
    claim: Claim, point: Point, rows: pd.DataFrame, site: str, metrics: Mapping[str, SessionMetric],
    level: float,
) -> PointResult:  # fmt: skip
    a = side(rows, point.num, site, claim.metric, metrics[claim.metric])
    b = None
    if point.den is not None:
        m = claim.den_metric or claim.metric
        b = side(rows, point.den, site, m, metrics[m])
    sides = [a] if b is None else [a, b]
    few = _too_few(sides)
    if few is not None:
        return PointResult(point, a, b, math.nan, math.nan, math.nan, few)
    x, lo, hi = _interval(claim, a, b, level)
    if math.isnan(lo) or math.isnan(hi):
        return PointResult(point, a, b, x, lo, hi, _no_interval(claim, a, b))
    return PointResult(point, a, b, x, lo, hi, decide(claim, lo, hi))


def judge(
    claim: Claim, condition: Condition, rows: pd.DataFrame, metrics: Mapping[str, SessionMetric]
) -> Judgement:
    """The verdict of one condition of a claim from the runs (module docstring)."""
    rows = normalise(rows)
    k = len(condition.points)
    level = level_each(LEVEL, k) if claim.over != "one" else LEVEL
    points = tuple(judge_point(claim, p, rows, condition.site, metrics, level)
                   for p in condition.points)  # fmt: skip
    not_run = [p for p in points if p.verdict.kind == NOT_RUN]
    if not_run:
        some = [p for p in not_run if p.verdict.detail != NO_RUNS]
        detail = "; ".join(f"{p.point.name}: {p.verdict.detail}" for p in some) if len(
            points) > 1 else not_run[0].verdict.detail  # fmt: skip
        detail = detail or f"{NO_RUNS} of this condition"
        return Judgement(claim, condition, Verdict(NOT_RUN, detail), math.nan, math.nan,
                         math.nan, points, level)  # fmt: skip
    if claim.over == "one":
        p = points[0]
        return Judgement(claim, condition, p.verdict, p.value, p.lo, p.hi, points, level)
    values = np.array([p.value for p in points])
    los, his = np.array([p.lo for p in points]), np.array([p.hi for p in points])
    if claim.over == "each":
        worst = max(points, key=lambda p: SEVERITY.index(p.verdict.kind))
        named = [p for p in points if p.verdict.kind == worst.verdict.kind]
        detail = "; ".join(f"{p.point.name}: {p.verdict.detail}" for p in named)
        if worst.verdict.kind == REPRODUCED:
            detail = f"every point's CI lies inside the band {claim.band.text()}"
        hull = float(np.min(los)), float(np.max(his))
        verdict = Verdict(worst.verdict.kind, detail)
        return Judgement(claim, condition, verdict, math.nan, *hull, points, level)
    pick = np.min if claim.over == "min" else np.max
    x, lo, hi = float(pick(values)), float(pick(los)), float(pick(his))
    if math.isnan(lo) or math.isnan(hi):
        gap = next(p for p in points if math.isnan(p.lo) or math.isnan(p.hi))
        return Judgement(claim, condition, Verdict(INCONCLUSIVE, f"{gap.point.name}: "
                         f"{gap.verdict.detail}"), x, lo, hi, points, level)  # fmt: skip
    return Judgement(claim, condition, decide(claim, lo, hi), x, lo, hi, points, level)


# --------------------------------------------------------------------------- how many runs


@dataclass(frozen=True)
class Precision:
    enough: bool
    runs: int  # the fewest runs of any side
    why: str


def enough(runs: int, lo: float, hi: float, scale: float) -> tuple[bool, str]:
    """Whether a cell with `runs` runs a side and the interval [lo, hi] needs no more: at
    least FLOOR_RUNS and a half-width at most half of `scale` (the band's width:
    Claim.precision_scale), or CAP_RUNS."""
    if runs < FLOOR_RUNS:
        return False, f"{runs} runs a side, fewer than the {FLOOR_RUNS} a primary cell needs"
    if runs >= CAP_RUNS:
        return True, f"{runs} runs a side: the cap of {CAP_RUNS}"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return False, "no finite interval yet"
    half = (hi - lo) / 2
    if half <= scale / 2:
        return True, f"half-width {num(half)} ≤ half the band's {num(scale)}"
    return False, f"half-width {num(half)} > half the band's {num(scale)}"


def precision(j: Judgement) -> Precision:
    """Whether the condition's cells need more runs to decide the claim: every point's
    interval must be narrow enough (`enough`)."""
    why = ""
    for p in j.points:
        ok, why = enough(min(s.n for s in p.sides), p.lo, p.hi, j.claim.precision_scale)
        if len(j.points) > 1:
            why = f"{p.point.name}: {why}"
        if not ok:
            return Precision(False, j.runs_min, why)
    return Precision(True, j.runs_min, why)


def wanted(paper: Paper, rows: pd.DataFrame) -> list[tuple[Cell, str, Precision]]:
    """Every primary cell of the paper (with its site): its own valid runs and whether it
    needs more, for every claim that reads it (the first claim that wants more says why):
    what a refresh of the evidence runs next."""
    rows = normalise(rows)
    out: dict[tuple[Cell, str], Precision] = {}
    for c in paper.claims:
        p = precision(judge(c, c.primary, rows, paper.metrics))
        for cell in c.primary.cells():
            key = (cell, c.primary.site)
            runs = len(select(rows, cell, c.primary.site))
            if key not in out or (out[key].enough and not p.enough):
                out[key] = Precision(p.enough, runs, f"{c.key}: {p.why}")
    return [(cell, site, p) for (cell, site), p in out.items()]
