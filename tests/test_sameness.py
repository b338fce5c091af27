"""analysis.sameness: what counts as the same metrics from two computations of one run."""

from __future__ import annotations

import math

from analysis.sameness import REL_TOL, moved


def test_counts_must_be_equal_and_other_numbers_within_the_relative_slack() -> None:
    expected = {"frames": 810.0, "mtp_ms": 38.648, "ratio": 0.18888888888888888}
    assert moved(expected, dict(expected)) == []
    assert moved(expected, {**expected, "mtp_ms": 38.648 * (1 + REL_TOL / 2)}) == []
    assert moved(expected, {**expected, "mtp_ms": 38.648 * (1 + 3 * REL_TOL)}) == [
        f"mtp_ms: got {38.648 * (1 + 3 * REL_TOL)!r}, expected 38.648"
    ]
    assert moved(expected, {**expected, "frames": 811.0}) == ["frames: got 811.0, expected 810.0"]


def test_missing_extra_nan_and_null_are_differences() -> None:
    expected = {"a": 1.5, "b": math.nan, "c": None}
    assert moved(expected, {"a": 1.5, "b": math.nan, "c": None}) == []
    assert moved(expected, {"a": 1.5, "b": 2.0, "c": None}) == ["b: got 2.0, expected nan"]
    assert moved(expected, {"a": 1.5, "b": math.nan, "c": 0.0}) == ["c: got 0.0, expected None"]
    assert moved(expected, {"b": math.nan, "c": None, "d": 1.0}) == [
        "a: missing, expected 1.5",
        "d: 1.0, not expected",
    ]
