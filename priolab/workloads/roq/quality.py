"""SSIM (Wang et al. 2004) and PSNR of two 8-bit luma planes.

SSIM uses 8 × 8 windows at every position (a box window, as ffmpeg's `ssim` filter does,
instead of the paper's 11 × 11 Gaussian), C1 = (0.01·255)², C2 = (0.03·255)², the mean over
windows. PSNR = 10·log10(255² / MSE), capped at PSNR_CAP_DB for identical planes.

How (speed: every sent frame of every run is scored, 3,000 per 120 s run): the window sums of
x, y, x² + y² and x·y come from doubling shifted adds in int32 (exact: an 8 × 8 sum of
products of 8-bit values is below 2²³), and SSIM is written in those sums, N = 64 pixels:
(2·Sx·Sy + C1·N²)(2·(N·Sxy − Sx·Sy) + C2·N²) ÷ ((Sx² + Sy² + C1·N²)(N·(Sxx + Syy) − Sx² −
Sy² + C2·N²)), the windowed means and (co)variances multiplied through by N⁴. The int32
terms stay below 2³⁰; the products are taken in float64.

This numpy code is the definition. The analysis scores with the Rust kernel (kernel.py), which
gives the same bits for a fraction of the CPU
(docs/investigations/2026-12-08-roq-scoring-kernel.md).
"""

from __future__ import annotations

import numpy as np

WINDOW = 8
C1 = (0.01 * 255) ** 2
C2 = (0.03 * 255) ** 2
PSNR_CAP_DB = 100.0
_N = WINDOW * WINDOW


def window_sums(x: np.ndarray) -> np.ndarray:
    """Sum of every WINDOW × WINDOW window (valid positions) over the last two axes, by
    doubling: pairs, then fours, then eights along each axis."""
    if WINDOW != 8:  # the doubling below is written for 8
        raise ValueError(f"window_sums needs WINDOW = 8, not {WINDOW}")
    for span in (1, 2, 4):
        x = x[..., :-span] + x[..., span:]
    for span in (1, 2, 4):
        x = x[..., :-span, :] + x[..., span:, :]
    return x


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    if a.shape != b.shape:
        raise ValueError(f"planes of shapes {a.shape} and {b.shape}")
    x, y = a.astype(np.int32), b.astype(np.int32)
    sx, sy, sq, sxy = window_sums(np.stack([x, y, x * x + y * y, x * y]))
    sxsy = sx * sy  # ≤ 2²⁸
    s2 = sx * sx + sy * sy  # ≤ 2²⁹
    num = (2.0 * sxsy + C1 * _N * _N) * (2.0 * (_N * sxy - sxsy) + C2 * _N * _N)
    den = (s2 + C1 * _N * _N) * ((_N * sq - s2) + C2 * _N * _N)
    return float(np.mean(num / den))


def psnr_db(a: np.ndarray, b: np.ndarray) -> float:
    d = a.astype(np.int32) - b.astype(np.int32)
    return psnr_of_mse(float(np.mean(d * d)))


def psnr_of_mse(mse: float) -> float:
    """PSNR of a mean squared error. The kernel's (kernel.py) is its integer Σ(x − y)² ÷ the
    pixel count: the same float as np.mean's above, whose float sum of those integers (each
    partial sum below 2⁵³) is exact in any order."""
    return PSNR_CAP_DB if mse == 0 else min(PSNR_CAP_DB, 10 * np.log10(255.0**2 / mse))
