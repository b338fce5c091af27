"""How the RISE report prints a number and a mean with its CI (reproduction.py, mechanisms.py)."""

from __future__ import annotations

import math


def fmt(x: float, digits: int = 3) -> str:
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞"
    if abs(x) >= 10**digits:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def ci(v: tuple[float, float, float]) -> str:
    if math.isfinite(v[0]) and not (math.isfinite(v[1]) and math.isfinite(v[2])):
        return f"{fmt(v[0])} (n=1, no CI)"  # bootstrap_ci: fewer than two runs
    return f"{fmt(v[0])} [{fmt(v[1])}, {fmt(v[2])}]"
