"""Whether two computations of one run's metrics are the same: the check of a result that
must come out alike on any CPU (the sim site is deterministic per seed).

Counts (metrics whose values are whole numbers on both sides) must be equal; every other
number may differ by `REL_TOL` relative, the slack for a last bit that moved in a summation
or a math kernel; a value on one side only, or NaN or null (metrics.json's "not measured")
on one side only, is a difference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

REL_TOL = 1e-9
"""Relative slack of a non-integer metric: far above a double's last bits (1e-16) and far
below any effect a page reports."""


def _same(a: float | None, b: float | None, rel_tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if float(a).is_integer() and float(b).is_integer():
        return a == b
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=0.0)


def moved(
    expected: Mapping[str, float | None],
    got: Mapping[str, float | None],
    rel_tol: float = REL_TOL,
) -> list[str]:
    """Every metric that differs, as `name: got X, expected Y` (or what is missing)."""
    out = []
    for name in sorted(set(expected) | set(got)):
        if name not in got:
            out.append(f"{name}: missing, expected {expected[name]!r}")
        elif name not in expected:
            out.append(f"{name}: {got[name]!r}, not expected")
        elif not _same(expected[name], got[name], rel_tol):
            out.append(f"{name}: got {got[name]!r}, expected {expected[name]!r}")
    return out
