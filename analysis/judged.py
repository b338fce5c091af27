"""A claim's verdict from its own runs (papers.Claim.judge): the value as the page prints it,
n, and "reproduced", "not reproduced, because ..." or "differs, because ...".

A judge is called with the runs.csv rows (valid runs) of one (scenario, setting): `num` those
of the claim's scheme, `den` those of the scheme it is compared with (empty when none).

`standard` is the judge of a claim that is a mean or a ratio of means against the paper's
value or range; the reason for a verdict other than "reproduced" comes from the workload's
`Why`, which reads the mechanism off the same runs (where the blocks went, what the link
lost), never prose typed for a result.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats import bootstrap_ci, bootstrap_ratio_ci


@dataclass(frozen=True)
class Judged:
    value: str  # priolab's number: mean [95 % CI] (or a ratio), with its unit
    n: str  # valid runs (numerator + denominator), as runs_text gives them
    verdict: str


Judge = Callable[[pd.DataFrame, pd.DataFrame], Judged]
# The measured mechanism behind a verdict, from the same runs (num, den): a clause for
# "..., because <why>".
Why = Callable[[pd.DataFrame, pd.DataFrame], str]


def num_text(x: float) -> str:
    if math.isnan(x):
        return "–"
    return "∞" if math.isinf(x) else f"{x:.3g}"


def ci_text(x: float, lo: float, hi: float) -> str:
    """`x [lo, hi]` to 3 significant digits, or 4 when 3 would print one number thrice (a CI
    that lies just off 1 must not read "1 [1, 1]")."""
    texts = [num_text(v) for v in (x, lo, hi)]
    if lo != hi and len(set(texts)) == 1:
        texts = [f"{v:.4g}" for v in (x, lo, hi)]
    return f"{texts[0]} [{texts[1]}, {texts[2]}]"


def all_alike(runs: pd.DataFrame) -> bool:
    """Whether two or more runs measured the same in everything (every numeric column but
    `rep`, to 12 decimals): on the sim site a run is a function of its seed, and where a
    scenario gives the seed nothing to draw on (no random loss, UDP) its runs repeat one
    result. Only all alike is said: runs with other losses can share every summary by count
    (dtp-loss-small at 1 %: three runs with 8 losses each), so fewer distinct rows than runs
    does not show repeats."""
    cols = [c for c in runs.columns if c != "rep" and pd.api.types.is_numeric_dtype(runs[c])]
    return len(runs) > 1 and bool(cols) and len(runs[cols].round(12).drop_duplicates()) == 1


def runs_text(metric: str, *groups: pd.DataFrame) -> str:
    """n for a claim's row: the runs with a finite `metric` per group (numerator, and
    denominator of a ratio), joined by `+`, and which group's runs are all alike (`10 (all
    alike)`, `10+10 (denominator's all alike)`): their CI shows nothing of a real stack's
    jitter."""
    have = [g[np.isfinite(g[metric].to_numpy(float))] if metric in g else g[:0] for g in groups]
    text = "+".join(str(len(g)) for g in have)
    alike = [all_alike(g) for g in have]
    if len(alike) == 1 and alike[0]:
        return f"{text} (all alike)"
    if len(alike) == 2 and any(alike):
        who = "both" if all(alike) else "numerator's" if alike[0] else "denominator's"
        return f"{text} ({who} all alike)"
    return text


def finite(runs: pd.DataFrame, metric: str) -> np.ndarray:
    """The metric's finite values over the runs (none when the column is absent)."""
    if runs.empty or metric not in runs:
        return np.array([])
    v = runs[metric].to_numpy(float)
    return v[np.isfinite(v)]


def mean_of(runs: pd.DataFrame, metric: str) -> float:
    v = finite(runs, metric)
    return float(v.mean()) if len(v) else math.nan


def quoted(runs: pd.DataFrame, metric: str, template: str) -> list[str]:
    """A reason's clause: `template` filled with the metric's mean over the runs, as a list
    of one, or none where no run measured it."""
    x = mean_of(runs, metric)
    return [template.format(x)] if math.isfinite(x) else []


def scheme_of(runs: pd.DataFrame) -> str:
    """The scheme the runs are of ("?" when there are none), for a Why's clause."""
    return str(runs["scheme"].iloc[0]) if "scheme" in runs and len(runs) else "?"


def per_scheme(
    num: pd.DataFrame, den: pd.DataFrame, describe: Callable[[pd.DataFrame], str]
) -> list[str]:
    """A Why's clauses: `describe` of the claim's runs, and of the runs it is compared with
    when there are any."""
    return [describe(num)] + ([describe(den)] if not den.empty else [])


def decide(ci_lo: float, ci_hi: float, lo: float, hi: float, ratio: bool) -> tuple[str, str]:
    """(kind, where): kind is "reproduced", "differs" or "not reproduced"; `where` says how
    the CI [ci_lo, ci_hi] lies against the paper's range [lo, hi] (a template with
    `{paper}` for the paper's value as printed).

    A mean: reproduced iff the CI meets the range. A ratio: reproduced iff the CI meets the
    range and, when the range lies on one side of 1 (a gain or a loss), the CI does too.
    A ratio that is not reproduced "differs" when the effect has the paper's direction but
    another size (the CI on the range's side of 1, outside the range) or when the CI holds 1
    (no significant difference where the paper saw one); it is "not reproduced" when the CI
    lies on the other side of 1, or away from a range that holds 1 ("the same", "≥")."""
    meets = ci_lo <= hi and ci_hi >= lo
    above, below = lo > 1, hi < 1  # the paper's range is a gain / a loss
    if not ratio:
        if meets:
            return "reproduced", ""
        return "not reproduced", _off(ci_hi < lo)
    holds_1 = ci_lo <= 1 <= ci_hi
    if meets and not ((above or below) and holds_1):
        return "reproduced", ""
    if (above or below) and holds_1:
        return "differs", "no significant difference: the CI holds 1, the paper has {paper}"
    if (above and ci_lo > 1) or (below and ci_hi < 1):
        # the CI lies on the range's side of 1, beyond it (away from 1: a larger effect) or
        # short of it (towards 1: a smaller one); for a loss, below the range is away from 1
        beyond = ci_lo > hi if above else ci_hi < lo
        side = "larger" if beyond else "smaller"
        return "differs", f"the paper's direction, a {side} effect than its {{paper}}"
    return "not reproduced", _off(ci_hi < lo)


def _off(low: bool) -> str:
    return "CI below the paper's {paper}" if low else "CI above the paper's {paper}"


def standard(lo: float, hi: float, metric: str, ratio: bool, paper: str, why: Why) -> Judge:
    """The judge of a claim whose value is num's mean of `metric` (or, with `ratio`, num's ÷
    den's) against the paper's `lo`..`hi` (printed as `paper`), with a 95 % percentile
    bootstrap CI as every table of analysis/ gives it; `why` explains any other verdict than
    "reproduced"."""

    def judge(num: pd.DataFrame, den: pd.DataFrame) -> Judged:
        a = finite(num, metric)
        b = finite(den, metric) if ratio else np.array([])
        n = runs_text(metric, num, den) if ratio else runs_text(metric, num)
        if not len(a) or (ratio and not len(b)):
            return Judged("–", n, "not run")
        if ratio and b.mean() == 0:
            if a.mean() == 0:
                return Judged(
                    "– (both means 0)",
                    n,
                    f"not reproduced (neither scheme has any), because {why(num, den)}",
                )
            x = ci_lo = ci_hi = math.inf  # the denominator's mean is 0, the numerator's not
            value = f"∞ (÷ a mean of 0; {num_text(float(a.mean()))} ÷ 0)"
        else:
            x, ci_lo, ci_hi = bootstrap_ratio_ci(a, b) if ratio else bootstrap_ci(a)[:3]
            if not (math.isfinite(ci_lo) and math.isfinite(ci_hi)) or len(a) < 2:
                return Judged(f"{num_text(x)} (no CI)", n, "no verdict: fewer than 2 runs")
            value = ci_text(x, ci_lo, ci_hi)
        kind, where = decide(ci_lo, ci_hi, lo, hi, ratio)
        if kind == "reproduced":
            return Judged(value, n, "reproduced")
        return Judged(value, n, f"{kind} ({where.format(paper=paper)}), because {why(num, den)}")

    return judge
