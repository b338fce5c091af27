"""SSIM (Wang et al. 2004) and PSNR of two 8-bit luma planes.

SSIM uses 8 × 8 windows at every position (a box window, as ffmpeg's `ssim` filter does,
instead of the paper's 11 × 11 Gaussian), C1 = (0.01·255)², C2 = (0.03·255)², the mean over
windows. PSNR = 10·log10(255² / MSE), capped at PSNR_CAP_DB for identical planes.
"""

from __future__ import annotations

import numpy as np

WINDOW = 8
C1 = (0.01 * 255) ** 2
C2 = (0.03 * 255) ** 2
PSNR_CAP_DB = 100.0


def _box_mean(x: np.ndarray, k: int) -> np.ndarray:
    """Mean of every k × k window (valid positions only), via an integral image."""
    s = np.zeros((x.shape[0] + 1, x.shape[1] + 1))
    s[1:, 1:] = x.cumsum(0).cumsum(1)
    return (s[k:, k:] - s[:-k, k:] - s[k:, :-k] + s[:-k, :-k]) / (k * k)


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    if a.shape != b.shape:
        raise ValueError(f"planes of shapes {a.shape} and {b.shape}")
    x, y = a.astype(np.float64), b.astype(np.float64)
    mx, my = _box_mean(x, WINDOW), _box_mean(y, WINDOW)
    vx = _box_mean(x * x, WINDOW) - mx * mx
    vy = _box_mean(y * y, WINDOW) - my * my
    cxy = _box_mean(x * y, WINDOW) - mx * my
    num = (2 * mx * my + C1) * (2 * cxy + C2)
    den = (mx * mx + my * my + C1) * (vx + vy + C2)
    return float(np.mean(num / den))


def psnr_db(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return PSNR_CAP_DB if mse == 0 else min(PSNR_CAP_DB, 10 * np.log10(255.0**2 / mse))
