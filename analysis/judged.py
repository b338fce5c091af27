"""A claim's verdict from its own runs (papers.Claim.judge): the value as the page prints it,
n, and "reproduced", "not reproduced, because ..." or "differs, because ...".

A judge is called with the runs.csv rows (valid runs) of one (scenario, setting): `num` those
of the claim's scheme, `den` those of the scheme it is compared with (empty when none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Judged:
    value: str  # priolab's number: mean [95 % CI] (or a ratio), with its unit
    n: str  # valid runs (numerator + denominator)
    verdict: str


Judge = Callable[[pd.DataFrame, pd.DataFrame], Judged]
