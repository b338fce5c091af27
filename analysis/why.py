"""The mechanism behind a claim's verdict, read off the claim's own runs (`Why`), and the
helpers a workload's `Why` uses.

A workload's `Why` (priolab/workloads/<kind>/claims.py) is called with the runs of one point
of a claim (one row per run: the numerator's, and the denominator's, empty for a mean) and
returns a clause in words: where DTP's blocks went, what QPR's player got, what RoQ's
receiver saw, where MoQ's frames waited. Never prose typed for a result: every number in it
is a mean over the same runs the verdict rests on.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

Why = Callable[[pd.DataFrame, pd.DataFrame], str]


def all_alike(runs: pd.DataFrame) -> bool:
    """Whether two or more runs measured the same in everything (every numeric column but
    `rep` and `seed`, to 12 decimals): on the sim site a run is a function of its seed, and
    where a scenario gives the seed nothing to draw on (no random loss, UDP) its runs repeat
    one result. Only all alike is said: runs with other losses can share every summary by
    count (dtp-loss-small at 1 %: three runs with 8 losses each), so fewer distinct rows than
    runs does not show repeats."""
    skip = {"rep", "seed", "valid", "session_failed"}
    cols = [c for c in runs.columns
            if c not in skip and pd.api.types.is_numeric_dtype(runs[c])]  # fmt: skip
    return len(runs) > 1 and bool(cols) and len(runs[cols].round(12).drop_duplicates()) == 1


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
