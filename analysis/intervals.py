"""The confidence intervals a claim's verdict rests on (analysis/verdicts.py): Student-t.

- The mean of one cell's runs: the Student-t interval, mean ± t(n − 1) · s / √n.
- The ratio of two cells' means: the Student-t interval of the log of the ratio, with the
  delta method's standard error √(s_a² / (n_a ā²) + s_b² / (n_b b̄²)) and Welch-
  Satterthwaite's degrees of freedom, exponentiated: ā / b̄ · exp(± t · se). The two cells'
  runs are two samples (their seeds are drawn per run, not paired).
- The difference of two cells' means: Welch's interval, ā − b̄ ± t · √(s_a²/n_a + s_b²/n_b).

Why Student-t and not a bootstrap: with the 5 to 10 runs a cell has, a percentile or BCa
bootstrap cannot reach beyond the range of the runs, so it covers the true mean less often
than it says; the t interval widens with the t quantile at small n. The coverage test
(tests/test_intervals_coverage.py) checks the choice on synthetic normal and lognormal
samples with a known mean: at least 90 % at n = 5 and at least 93 % from n = 10, for each
interval here, at 2,000 repetitions.

Every function works on the last axis of an array, so one call computes the intervals of many
samples at once (the coverage test's thousands); a sample with a NaN has NaN bounds. The
degenerate cases give NaN bounds, never a made-up certainty: fewer than two runs; a ratio
whose mean is not positive on either side (its logarithm is undefined). Runs that all measured
the same value give a zero-width interval at that value (sim runs whose seed changed nothing:
analysis/why.py `all_alike` names them on the page).

`level_each` is Bonferroni's: k intervals at 1 − (1 − level) / k each hold together with
probability at least `level`, so a claim over k settings (its smallest, its largest, or each
of them) rests on intervals that hold jointly.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

LEVEL = 0.95
"""Every claim's interval: 95 %."""

Array = np.ndarray


def level_each(level: float, k: int) -> float:
    """The level of each of k intervals that hold together at `level` (Bonferroni)."""
    return 1.0 - (1.0 - level) / max(k, 1)


def _t(level: float, df: Array | float) -> Array:
    return np.asarray(stats.t.ppf(0.5 + level / 2.0, df), dtype=np.float64)


def _moments(x: Array) -> tuple[Array, Array, Array]:
    """(n, mean, sample variance) along the last axis; NaN variance for n < 2."""
    x = np.asarray(x, dtype=np.float64)
    n = np.full(x.shape[:-1], x.shape[-1], dtype=np.float64)
    mean = x.mean(axis=-1)
    var = x.var(axis=-1, ddof=1) if x.shape[-1] > 1 else np.full(mean.shape, np.nan)
    return n, mean, var


def mean_ci(x: Array | list[float], level: float = LEVEL) -> tuple[Array, Array, Array]:
    """(mean, lo, hi) of the Student-t interval of the mean, along the last axis."""
    n, mean, var = _moments(np.asarray(x, dtype=np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        half = _t(level, n - 1) * np.sqrt(var / n)
    return mean, mean - half, mean + half


def ratio_ci(
    a: Array | list[float], b: Array | list[float], level: float = LEVEL
) -> tuple[Array, Array, Array]:
    """(ā / b̄, lo, hi): the Student-t interval of log(ā / b̄), delta-method standard error,
    Welch-Satterthwaite degrees of freedom, exponentiated. NaN bounds where either mean is
    not positive or either side has fewer than two runs; where both sides' runs are all
    alike, a zero-width interval at the ratio."""
    na, ma, va = _moments(np.asarray(a, dtype=np.float64))
    nb, mb, vb = _moments(np.asarray(b, dtype=np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = ma / mb
        ua, ub = va / (na * ma**2), vb / (nb * mb**2)
        se = np.sqrt(ua + ub)
        df = (ua + ub) ** 2 / (ua**2 / (na - 1) + ub**2 / (nb - 1))
        df = np.where(ua + ub == 0, np.inf, df)  # both all alike: no spread, t → z
        half = _t(level, df) * se
        lo, hi = ratio * np.exp(-half), ratio * np.exp(half)
    bad = ~((ma > 0) & (mb > 0))
    return ratio, np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def difference_ci(
    a: Array | list[float], b: Array | list[float], level: float = LEVEL
) -> tuple[Array, Array, Array]:
    """(ā − b̄, lo, hi): Welch's interval of the difference of two means."""
    na, ma, va = _moments(np.asarray(a, dtype=np.float64))
    nb, mb, vb = _moments(np.asarray(b, dtype=np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        ua, ub = va / na, vb / nb
        df = (ua + ub) ** 2 / (ua**2 / (na - 1) + ub**2 / (nb - 1))
        df = np.where(ua + ub == 0, np.inf, df)
        half = _t(level, df) * np.sqrt(ua + ub)
    diff = ma - mb
    return diff, diff - half, diff + half


def scalar(ci: tuple[Array, Array, Array]) -> tuple[float, float, float]:
    """One sample's (value, lo, hi) as floats."""
    return float(ci[0]), float(ci[1]), float(ci[2])
