"""Confidence intervals across repetitions."""

from __future__ import annotations

import math

import numpy as np

N_RESAMPLES = 10_000
SEED = 20_250_101  # fixed: the same input always gives the same interval
LEVEL = 0.95


def bootstrap_ci(
    values: np.ndarray | list[float],
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> tuple[float, float, float, int]:
    """(mean, ci_low, ci_high, n) of the finite values: a percentile bootstrap of the mean
    over runs (resample the n runs with replacement n_resamples times; the interval is the
    (1−level)/2 and (1+level)/2 quantiles of the resampled means). Fewer than two values:
    no interval, NaN bounds (one run has no spread to resample; a zero-width interval would
    claim a certainty it does not have); the mean is the value, or NaN with n = 0. Tables
    print that case with `ci_text`. Deterministic: the RNG is seeded per call, so the
    interval does not depend on which other groups were computed before."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    n = len(v)
    nan = float("nan")
    if n == 0:
        return nan, nan, nan, 0
    mean = float(v.mean())
    if n == 1:
        return mean, nan, nan, 1
    if np.all(v == v[0]):
        return mean, mean, mean, n
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    means = v[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return mean, float(lo), float(hi), n


def ci_text(lo: float, hi: float, n: int, fmt: str = ".3g") -> str:
    """A confidence interval as tables print it: `[lo, hi]`, or `(n=1, no CI)` when there is
    none (fewer than two runs, `bootstrap_ci`'s NaN bounds)."""
    if n < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return f"(n={n}, no CI)"
    return f"[{lo:{fmt}}, {hi:{fmt}}]"


def bootstrap_ci_rows(
    values: np.ndarray,
    n_resamples: int = 1000,
    seed: int = SEED,
    level: float = LEVEL,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, ci_low, ci_high) per row of a (rows × runs) array, NaN = no value: the same
    percentile bootstrap over runs as `bootstrap_ci`, vectorised over rows (one set of
    resampled run indices for all rows; NaNs are left out of each resampled mean). A row
    with one value: low = high = value (unlike `bootstrap_ci`, whose n < 2 gives NaN bounds;
    these rows feed figure bands, not tables); with none: NaN."""
    import warnings

    v = np.asarray(values, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows give NaN, as documented
        mean = np.nanmean(v, axis=1)
        if v.shape[1] <= 1:
            return mean, mean.copy(), mean.copy()
        idx = np.random.default_rng(seed).integers(0, v.shape[1], size=(n_resamples, v.shape[1]))
        lo, hi = np.empty(len(v)), np.empty(len(v))
        for a in range(0, len(v), 256):  # bounded memory: 256 rows × resamples × runs
            m = np.nanmean(v[a : a + 256][:, idx], axis=2)
            lo[a : a + 256], hi[a : a + 256] = np.nanquantile(
                m, [(1 - level) / 2, (1 + level) / 2], axis=1
            )
    return mean, lo, hi


def bootstrap_ratio_ci(
    a: np.ndarray | list[float],
    b: np.ndarray | list[float],
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> tuple[float, float, float]:
    """(mean(a) / mean(b), ci_low, ci_high): a percentile bootstrap of the ratio of two
    means, resampling the runs of a and of b independently (two schemes' runs are two
    samples). Resamples whose b-mean is 0 are left out; NaN when every one is, or when a or
    b has no finite value. Deterministic, as `bootstrap_ci`."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    nan = float("nan")
    if not len(x) or not len(y) or y.mean() == 0:
        return nan, nan, nan
    ratio = float(x.mean() / y.mean())
    rng = np.random.default_rng(seed)
    mx = x[rng.integers(0, len(x), size=(n_resamples, len(x)))].mean(axis=1)
    my = y[rng.integers(0, len(y), size=(n_resamples, len(y)))].mean(axis=1)
    ok = my != 0
    if not ok.any():
        return ratio, nan, nan
    lo, hi = np.quantile(mx[ok] / my[ok], [(1 - level) / 2, (1 + level) / 2])
    return ratio, float(lo), float(hi)
