"""The coverage of a claim's intervals (analysis/intervals.py), the test that justifies
Student-t over a bootstrap (issue 37): synthetic samples with a known mean, normal and
lognormal, 10,000 repetitions per case (the issue asks for at least 2,000; five times as many
keep the estimate's own error, ±0.2 % at 93 %, well inside the margins); each interval must
cover the truth at least 90 % of the time at n = 5 runs and at least 93 % from n = 10.

The lognormal has σ = 0.3: a coefficient of variation of 0.31 and a skewness of 0.95, a
run-to-run spread wider than a cell's metrics usually have (a run's metric is a mean or a
percentile over thousands of frames, blocks or packets). The t interval's coverage of a mean
falls with the skew: at σ = 0.5 it is about 92 % at n = 10, under the 93 % asked for
(docs/investigations/2026-12-07-claim-interval-coverage.md, which also measures BCa: 84 % at
n = 5 on normal samples, the reason it was not chosen). The ratio interval keeps ≥ 94 % there.
Vectorised: every repetition's interval in one call, a fraction of a second per case."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.intervals import LEVEL, difference_ci, level_each, mean_ci, ratio_ci

REPS = 10_000
SIGMA = 0.3  # the lognormal's shape (the module docstring says why)


def _normal(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, float]:
    return rng.normal(10.0, 2.0, shape), 10.0


def _lognormal(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, float]:
    return rng.lognormal(0.0, SIGMA, shape), math.exp(SIGMA**2 / 2)


SAMPLES = {"normal": _normal, "lognormal": _lognormal}


def _floor(n: int) -> float:
    return 0.90 if n < 10 else 0.93


@pytest.mark.parametrize("n", [5, 10, 20, 40])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_mean_interval_covers_the_known_mean(name: str, n: int) -> None:
    rng = np.random.default_rng(20261207 + n)
    x, mean = SAMPLES[name](rng, (REPS, n))
    _, lo, hi = mean_ci(x)
    coverage = float(np.mean((lo <= mean) & (mean <= hi)))
    assert coverage >= _floor(n), (name, n, coverage)


@pytest.mark.parametrize("n", [5, 10, 20, 40])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_ratio_interval_covers_the_known_ratio(name: str, n: int) -> None:
    """Two cells with different means (the numerator's 1.5 × the denominator's, the same
    shape): the interval of ā / b̄ must cover 1.5."""
    rng = np.random.default_rng(7 + n)
    a, mean_a = SAMPLES[name](rng, (REPS, n))
    b, mean_b = SAMPLES[name](rng, (REPS, n))
    a = a * 1.5
    _, lo, hi = ratio_ci(a, b)
    truth = 1.5 * mean_a / mean_b
    coverage = float(np.mean((lo <= truth) & (truth <= hi)))
    assert coverage >= _floor(n), (name, n, coverage)


@pytest.mark.parametrize("n", [5, 10, 20])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_difference_interval_covers_the_known_difference(name: str, n: int) -> None:
    rng = np.random.default_rng(11 + n)
    a, mean_a = SAMPLES[name](rng, (REPS, n))
    b, mean_b = SAMPLES[name](rng, (REPS, n))
    a = a + 3.0
    _, lo, hi = difference_ci(a, b)
    truth = 3.0 + mean_a - mean_b
    assert float(np.mean((lo <= truth) & (truth <= hi))) >= _floor(n)


def test_bonferroni_intervals_hold_together() -> None:
    """Three cells, each at level_each(0.95, 3): all three cover at once about 95 % of the
    time (normal, n = 5; independent cells: 0.9833³ = 0.951), which is what a claim over
    three settings rests on; at 0.95 each they would hold together only 86 % of the time."""
    rng = np.random.default_rng(3)
    joint = {}
    for level in (level_each(LEVEL, 3), LEVEL):
        hits = np.ones(4 * REPS, dtype=bool)
        for _ in range(3):
            x, mean = _normal(rng, (4 * REPS, 5))
            _, lo, hi = mean_ci(x, level)
            hits &= (lo <= mean) & (mean <= hi)
        joint[level] = float(hits.mean())
    assert joint[level_each(LEVEL, 3)] >= 0.945 and joint[LEVEL] < 0.9


def test_degenerate_samples_give_no_interval_or_a_point() -> None:
    m, lo, hi = mean_ci([3.0])
    assert m == 3.0 and math.isnan(lo) and math.isnan(hi)
    m, lo, hi = mean_ci([2.0, 2.0, 2.0])
    assert (m, lo, hi) == (2.0, 2.0, 2.0)
    r, lo, hi = ratio_ci([1.0, 2.0], [0.0, 0.0])
    assert math.isinf(r) and math.isnan(lo) and math.isnan(hi)
    r, lo, hi = ratio_ci([4.0, 4.0], [2.0, 2.0])
    assert (r, lo, hi) == (2.0, 2.0, 2.0)
    assert level_each(0.95, 1) == 0.95 and abs(level_each(0.95, 5) - 0.99) < 1e-12


def test_a_known_interval() -> None:
    """mean ± t(4, 0.975) · s / √5 for 1..5: t = 2.776445, s = √2.5."""
    m, lo, hi = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.7764451051977987 * math.sqrt(2.5 / 5)
    assert m == 3.0 and lo == pytest.approx(3.0 - half) and hi == pytest.approx(3.0 + half)
