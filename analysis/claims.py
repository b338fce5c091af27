"""What a claim of a paper is, as data: one type for all five papers (issue 37).

A claim is one statement of a paper (`source`, `text`, the value as the paper prints it) and
how priolab measures it:

- `metric`, a per-run metric, and `kind`: the mean of one cell's runs (`mean`), the ratio of
  two cells' means (`ratio`) or their difference (`difference`);
- `band`, the equivalence band the claim is reproduced in, with the reason for its edges: the
  paper's range, or a tolerance around a point value, or one edge for a one-sided claim
  ("> 2×");
- `direction`, for a ratio or a difference: the effect the paper saw (`gain`: the numerator
  above the denominator, `loss`: below) or none (`none`: "the same as", "not worse than",
  "no additional freezes"), and `same`, the margin within which there is no effect;
- its conditions: exactly one `primary` condition, fixed in the claim before its runs (the
  paper's own set-up as far as priolab can run it: scenario, setting, scheme(s), site), and
  any number of `sensitivity` (a declared variation along one axis) or `exploratory` (a
  condition chosen after seeing data, or so that a claim holds) conditions, each saying why;
- `over`, for a claim over several settings ("2.3-5.7× across the three settings"): each
  condition then has one point per setting, and the claim is about each of them (`each`),
  the smallest (`min`) or the largest (`max`).

The judge (analysis/verdicts.py) turns a claim, one of its conditions and the runs into a
verdict; a paper's page (book/) sets them out. The claims themselves live in each workload's
folder (priolab/workloads/<kind>/paper.py, `PAPER`), beside the metrics they read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import pandas as pd

from analysis.why import Why

Role = Literal["primary", "sensitivity", "exploratory"]
Kind = Literal["mean", "ratio", "difference"]
Direction = Literal["gain", "loss", "none"]
Over = Literal["one", "each", "min", "max"]

ROLES: tuple[Role, ...] = ("primary", "sensitivity", "exploratory")
ROLE_MEANING = {
    "primary": "the paper's own set-up as far as priolab can run it, fixed before its runs",
    "sensitivity": "a declared variation of the primary condition along one axis",
    "exploratory": "a condition chosen after seeing data, or so that a claim holds",
}
KEY = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class Band:
    """The values a claim is reproduced in, [lo, hi] (either edge may be infinite: a one-sided
    claim), and why its edges are where they are."""

    lo: float
    hi: float
    why: str

    def __post_init__(self) -> None:
        if not (self.lo <= self.hi) or not self.why.strip():
            raise ValueError(f"a band needs lo <= hi and a reason: {self}")

    @property
    def width(self) -> float:
        return self.hi - self.lo

    def holds(self, lo: float, hi: float) -> bool:
        """The whole interval [lo, hi] lies inside."""
        return self.lo <= lo and hi <= self.hi

    def meets(self, lo: float, hi: float) -> bool:
        return lo <= self.hi and hi >= self.lo

    def text(self, unit: str = "") -> str:
        if math.isinf(self.hi) and math.isinf(self.lo):
            return "any value"
        if math.isinf(self.hi):
            return f"≥ {num(self.lo)}{unit}"
        if math.isinf(self.lo):
            return f"≤ {num(self.hi)}{unit}"
        return f"[{num(self.lo)}, {num(self.hi)}]{unit}"


SAME_AS = Band(
    0.9,
    1.1,
    "the same-as margin: a ratio within ±10 % of 1 counts as no effect (no paper says how "
    "large a difference it would call one)",
)
POINT_TOLERANCE = 0.2
"""A value the paper states as one number is read as that number ±20 %: the paper gives no
spread for it, and a value read off its text or a figure is rounded."""


def num(x: float) -> str:
    """A number as the pages print it: 3 significant digits, ∞, or – for NaN."""
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.3g}"


def around(value: float, why: str = "", tolerance: float = POINT_TOLERANCE) -> Band:
    """The band of a point value of a mean or a difference: value × (1 ± tolerance)."""
    lo, hi = sorted((value * (1 - tolerance), value * (1 + tolerance)))
    return Band(lo, hi, why or f"the paper's {num(value)}, read as ±{tolerance:.0%}: "
                "it gives no spread for it, and a stated value is rounded")  # fmt: skip


def around_ratio(ratio: float, why: str = "", tolerance: float = POINT_TOLERANCE) -> Band:
    """The band of a point value of a ratio: its effect (the distance from 1) ± tolerance,
    1 + (ratio − 1) × (1 ± tolerance). ±20 % of the ratio itself would let a small effect
    (1.2×) include no effect at all; for a large one (9.4×) the two readings agree."""
    lo, hi = sorted((1 + (ratio - 1) * (1 - tolerance), 1 + (ratio - 1) * (1 + tolerance)))
    return Band(lo, hi, why or f"the paper's {num(ratio)}×, read as its effect "
                f"({num(ratio - 1):s} from 1) ±{tolerance:.0%}: it gives no spread, and a "
                "stated value is rounded")  # fmt: skip


def paper_range(lo: float, hi: float, why: str = "") -> Band:
    """The paper's own range, as its edges."""
    return Band(lo, hi, why or f"the paper's range, {num(lo)}-{num(hi)}")


def above(edge: float, why: str) -> Band:
    return Band(edge, math.inf, why)


def below(edge: float, why: str) -> Band:
    return Band(-math.inf, edge, why)


GAIN = above(1.1, "a gain of unstated size: beyond the same-as margin's 1.1, the whole CI above it")
LOSS = Band(0.0, 0.9, "a loss of unstated size: beyond the same-as margin's 0.9, the whole CI "
            "below it")  # fmt: skip
NOT_WORSE = above(0.9, "not worse: the whole CI above the same-as margin's 0.9")
NOT_MORE = Band(0.0, 1.1, "no more: the whole CI below the same-as margin's 1.1")


@dataclass(frozen=True)
class Cell:
    """One matrix point of a scenario: its runs are one side of a claim's value."""

    scenario: str  # the scenario's `name:`
    setting: str
    scheme: str
    speed: str = "default"  # the scenario's speed (`default` when it defines none)

    def text(self) -> str:
        speed = "" if self.speed == "default" else f", {self.speed}"
        return f"{self.setting}, {self.scheme}{speed}"


@dataclass(frozen=True)
class Point:
    """One value of a claim: the numerator cell's mean, or numerator ÷ (or −) denominator."""

    num: Cell
    den: Cell | None = None
    label: str = ""  # how the page names the point when a claim has several

    @property
    def name(self) -> str:
        return self.label or self.num.setting


@dataclass(frozen=True)
class Condition:
    """Where a claim's runs come from: its points and the site, its role and why."""

    role: Role
    site: str
    points: tuple[Point, ...]
    why: str

    def __post_init__(self) -> None:
        if self.role not in ROLES or not self.points or not self.why.strip():
            raise ValueError(f"a condition needs a role, points and a reason: {self}")

    def cells(self) -> tuple[Cell, ...]:
        out: list[Cell] = []
        for p in self.points:
            out += [c for c in (p.num, p.den) if c is not None and c not in out]
        return tuple(out)

    def scenarios(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.scenario for c in self.cells()))

    def but(self, role: Role, why: str, site: str | None = None, **cell: str) -> Condition:
        """This condition with `site` and every cell's fields in `cell` (scenario, setting,
        scheme, speed) replaced, in another role: a sensitivity or exploratory row."""

        def swap(c: Cell) -> Cell:
            return replace(c, **cell)

        points = tuple(
            replace(p, num=swap(p.num), den=None if p.den is None else swap(p.den))
            for p in self.points
        )
        return Condition(role, site or self.site, points, why)


@dataclass(frozen=True)
class SessionMetric:
    """How a per-run metric counts a session that died (the protocol lost its connection:
    the run is valid, its session failed): it takes `worst`, the metric's worst possible
    value, or with `worst` None (the metric has no bound) the worst value any run of its cell
    measured. `nan_is_worst`: a NaN in a living session also means the worst (MoQ's smallest
    budget with every I frame on time is NaN when an I frame never arrived). `compute`: a
    metric derived from a run's other metrics (its row), when the runs do not carry it."""

    better: Literal["higher", "lower"]
    worst: float | None = None
    nan_is_worst: bool = False
    compute: Callable[[pd.DataFrame], pd.Series] | None = None
    unit: str = ""


def over_settings(
    scenario: str, settings: tuple[str, ...], num: str, den: str = "", speed: str = "default"
) -> tuple[Point, ...]:
    """One point per setting of one scenario: `num`'s cell, ÷ `den`'s in the same setting."""
    return tuple(
        Point(Cell(scenario, s, num, speed), Cell(scenario, s, den, speed) if den else None)
        for s in settings
    )


@dataclass(frozen=True)
class Extra:
    """Per-run metrics a workload computes after the runs, in a file of a results folder
    (columns scenario, setting, scheme, speed, rep and the metrics), and the command that
    writes it: the book joins them to the runs' rows."""

    path: str  # relative to a results folder
    metrics: tuple[str, ...]
    command: str


@dataclass(frozen=True)
class Claim:
    key: str  # the claim's anchor on its page, unique within its paper
    source: str  # where the paper says it: "Fig. 5, §4.2"
    text: str  # the statement, quoted or paraphrased
    paper: str  # the paper's value as printed
    metric: str
    kind: Kind
    band: Band
    primary: Condition
    direction: Direction = "none"
    others: tuple[Condition, ...] = ()
    over: Over = "one"
    den_metric: str = ""  # a ratio of two metrics of the same cell (default: `metric`)
    same: Band = SAME_AS  # no effect, for a directional ratio (a difference sets its own)

    def __post_init__(self) -> None:
        problems = []
        if not KEY.match(self.key):
            problems.append("key: lower-case letters, digits and '-'")
        if self.primary.role != "primary" or any(c.role == "primary" for c in self.others):
            problems.append("exactly one primary condition")
        if self.kind == "mean" and self.direction != "none":
            problems.append("a mean has no direction")
        for c in self.conditions:
            if self.kind == "mean" and any(p.den is not None for p in c.points):
                problems.append("a mean's points have no denominator")
            if self.kind != "mean" and any(p.den is None for p in c.points):
                problems.append(f"a {self.kind}'s points need a denominator")
            if self.over == "one" and len(c.points) != 1:
                problems.append("one point per condition unless the claim is `over` several")
            if len(c.points) != len(self.primary.points):
                problems.append("every condition has as many points as the primary")
        if self.kind == "difference" and self.direction != "none" and self.same is SAME_AS:
            problems.append("a directional difference sets its own no-effect margin `same`")
        if problems:
            raise ValueError(f"claim {self.key}: " + "; ".join(dict.fromkeys(problems)))

    @property
    def conditions(self) -> tuple[Condition, ...]:
        return (self.primary, *self.others)

    @property
    def neutral(self) -> float:
        """The value of no effect: 1 for a ratio, 0 for a difference."""
        return 1.0 if self.kind == "ratio" else 0.0

    @property
    def precision_scale(self) -> float:
        """The width a decisive interval is measured against: the band's, or for a one-sided
        band the no-effect margin's (a ratio or a difference) or a fifth of its edge (a
        mean)."""
        if math.isfinite(self.band.width):
            return self.band.width
        if self.kind != "mean":
            return self.same.width
        edge = self.band.lo if math.isfinite(self.band.lo) else self.band.hi
        return 0.2 * abs(edge)

    def what(self) -> str:
        """The claim's measure in words: `metric` num ÷ den."""
        m = f"`{self.metric}`" + (f" ÷ `{self.den_metric}`" if self.den_metric else "")
        return {"mean": f"mean {m}", "ratio": f"ratio of means of {m}",
                "difference": f"difference of means of {m}"}[self.kind]  # fmt: skip


def claim(
    key: str, source: str, text: str, paper: str, metric: str, kind: Kind, band: Band,
    conditions: tuple[Condition, ...], direction: Direction = "none", over: Over = "one",
    **more: object,
) -> Claim:  # fmt: skip
    """A claim with its conditions as one tuple, the primary first (the papers' shorthand)."""
    primary, *others = conditions
    return Claim(key, source, text, paper, metric, kind, band, primary, direction,
                 tuple(others), over, **more)  # type: ignore[arg-type]  # fmt: skip


@dataclass(frozen=True)
class Unmeasured:
    """A statement of the paper priolab does not measure, and why."""

    source: str
    text: str
    why: str


@dataclass(frozen=True)
class PageContext:
    """What a section hook reads: every run of the paper's scenarios (one row per run, valid
    or not, with its site; analysis/verdicts.py `ROW_COLUMNS`) and the results folders, one
    per site, for what a run keeps as a file (figures, maps); `out_dir` is the page's folder,
    where a hook copies the figures it shows (under `figures/`)."""

    rows: pd.DataFrame
    trees: tuple[Path, ...] = ()
    out_dir: Path | None = None


Section = Callable[[PageContext], list[str]]
"""A page section of a paper's own (markdown lines), from its runs: RISE's regime
explanation, its freeze and key-frame analyses; any paper may have some."""


@dataclass(frozen=True)
class Paper:
    key: str  # the page's file name: results/<key>.md
    short: str  # the paper's key in book/bibliography.py: [RISE], [RoQ §5.2]
    kind: str  # workload kind
    scenarios: tuple[str, ...]  # the scenarios whose runs the page reads
    claims: tuple[Claim, ...]
    metrics: Mapping[str, SessionMetric]  # every metric a claim reads
    sites: str  # why the primary conditions run on the site they do (markdown)
    notes: tuple[str, ...] = ()  # markdown lines after the claims
    unmeasured: tuple[Unmeasured, ...] = ()
    why: Why | None = None  # the mechanism behind a verdict, read off a point's runs
    sections: tuple[Section, ...] = field(default=())
    extras: tuple[Extra, ...] = ()

    def __post_init__(self) -> None:
        keys = [c.key for c in self.claims]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise ValueError(f"{self.key}: claim keys used twice: {dup}")
        missing = sorted({m for c in self.claims for m in (c.metric, c.den_metric)
                          if m and m not in self.metrics})  # fmt: skip
        if missing:
            raise ValueError(f"{self.key}: metrics without a SessionMetric: {missing}")
