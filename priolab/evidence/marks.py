"""How a page marks what its numbers rest on: stale records and real-time records.

A number rests on the runs it was computed from (rows of a materialised runs.csv: materialise.py
adds each record's standing). A page puts `mark(runs)` after the site that names them:
"(stale: 3 of 10 runs)" when some were made by other code than the checkout's (a refresh
reruns them), "(real time)" when they ran on a real-time site (not replayable: they rest on
their machine and its calibration report, which the page's provenance lists).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

STALE = "evidence_stale"
REAL_TIME = "evidence_real_time"


def _why(runs: pd.DataFrame) -> list[str]:
    """Each run's reason to be stale ("" when current; a CSV reads an empty cell as NaN)."""
    if runs.empty or STALE not in runs:
        return []
    return [x if isinstance(x, str) else "" for x in runs[STALE]]


def stale_count(runs: pd.DataFrame) -> int:
    return sum(1 for w in _why(runs) if w)


def real_time(runs: pd.DataFrame) -> bool:
    if runs.empty or REAL_TIME not in runs:
        return False
    return any(isinstance(x, bool | np.bool_) and bool(x) for x in runs[REAL_TIME])


def mark(runs: pd.DataFrame) -> str:
    """ "" when every run is current and replayable, else what the page must say."""
    parts = []
    k = stale_count(runs)
    if k:
        parts.append(f"stale: {k} of {len(runs)} runs")
    if real_time(runs):
        parts.append("real time")
    return f" ({'; '.join(parts)})" if parts else ""


def site_cell(runs: pd.DataFrame) -> str:
    """The sites the runs ran on (their `site` column) with their mark."""
    sites = ", ".join(sorted(set(runs["site"].astype(str)))) if "site" in runs else "–"
    return sites + mark(runs)


def why_stale(runs: pd.DataFrame) -> list[str]:
    """The distinct reasons the stale runs give, most frequent first, with their counts."""
    counts = pd.Series([w for w in _why(runs) if w], dtype=object).value_counts()
    return [f"{n} {w}" for w, n in counts.items()]
