"""The `roq` analysis: SSIM/PSNR, and per-frame alignment by RTP timestamp where a dropped
frame is scored as the frozen picture before it, not skipped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from priolab.workloads.roq.analysis import align, metrics, score_frames
from priolab.workloads.roq.quality import C1, C2, PSNR_CAP_DB, WINDOW, psnr_db, ssim


def _frames(n: int, h: int = 32, w: int = 48, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(n, h, w), dtype=np.uint8)


def test_ssim_and_psnr_of_identical_and_different_planes() -> None:
    a, b = _frames(2)
    assert ssim(a, a) == pytest.approx(1.0)
    assert psnr_db(a, a) == PSNR_CAP_DB
    assert ssim(a, b) < 0.1  # independent noise
    noisy = np.clip(a.astype(int) + 4, 0, 255).astype(np.uint8)
    assert 0.9 < ssim(a, noisy) < 1.0
    assert psnr_db(a, noisy) == pytest.approx(10 * np.log10(255**2 / 16), abs=0.3)
    with pytest.raises(ValueError, match="shapes"):
        ssim(a, a[:-1])


def _ssim_by_definition(a: np.ndarray, b: np.ndarray) -> float:
    """Wang et al.'s SSIM window by window: means, variances and covariance of each 8 × 8
    window (population moments), the mean over every position."""
    x, y = a.astype(np.float64), b.astype(np.float64)
    vals = []
    for i in range(x.shape[0] - WINDOW + 1):
        for j in range(x.shape[1] - WINDOW + 1):
            wx, wy = x[i : i + WINDOW, j : j + WINDOW], y[i : i + WINDOW, j : j + WINDOW]
            mx, my = wx.mean(), wy.mean()
            cov = ((wx - mx) * (wy - my)).mean()
            vals.append(
                (2 * mx * my + C1)
                * (2 * cov + C2)
                / ((mx * mx + my * my + C1) * (wx.var() + wy.var() + C2))
            )
    return float(np.mean(vals))


@pytest.mark.parametrize("case", ["noise", "shifted", "extremes", "black"])
def test_ssim_equals_the_windowed_definition(case: str) -> None:
    """The fast window sums (int32, doubling) give the same SSIM as the definition, also
    where the int32 terms are largest (planes of 0 and 255)."""
    a, b = _frames(2, h=20, w=27, seed=11)
    if case == "shifted":
        b = np.clip(a.astype(int) + np.arange(27) - 13, 0, 255).astype(np.uint8)
    elif case == "extremes":
        a = np.where(a > 127, 255, 0).astype(np.uint8)
        b = np.where(b > 60, 255, 0).astype(np.uint8)
    elif case == "black":
        b = np.zeros_like(a)
    assert ssim(a, b) == pytest.approx(_ssim_by_definition(a, b), rel=1e-12, abs=1e-12)
    d = a.astype(float) - b.astype(float)
    mse = float(np.mean(d * d))
    assert psnr_db(a, b) == pytest.approx(10 * np.log10(255**2 / mse), rel=1e-12)


def test_align_picks_the_last_picture_at_or_before_each_timestamp() -> None:
    sent = np.array([0, 3600, 7200, 10800, 14400])
    decoded = np.array([3600, 10800, 14400])  # 0 and 7200 never decoded
    assert align(sent, decoded).tolist() == [-1, 0, 0, 1, 2]


def test_a_dropped_frame_scores_the_frozen_picture() -> None:
    src = _frames(4)
    sent_ts = np.arange(5) * 3600
    src_idx = np.arange(5) % 4  # the source loops: frame 4 is source frame 0
    # frame 2 was lost: the receiver decoded 0, 1, 3, 4 (perfectly)
    dec_ts = np.array([0, 3600, 10800, 14400])
    dec = src[[0, 1, 3, 0]]
    s = score_frames(sent_ts, src_idx, src, dec_ts, dec)
    assert s["decoded"].tolist() == [True, True, False, True, True]
    assert s["shown_rtp_ts"].tolist() == [0, 3600, 3600, 10800, 14400]
    assert s["ssim"][[0, 1, 3, 4]].tolist() == pytest.approx([1, 1, 1, 1])
    # the lost frame is counted, with frame 1's picture against source frame 2
    assert len(s) == 5
    assert s["ssim"][2] == pytest.approx(ssim(src[1], src[2]))
    assert s["ssim"][2] < 0.1


def test_nothing_decoded_yet_is_black_and_a_stopped_stream_scores_low() -> None:
    src = _frames(3)
    sent_ts = np.arange(6) * 3600
    s = score_frames(sent_ts, np.arange(6) % 3, src, np.array([3600]), src[[1]])
    assert s["shown_rtp_ts"].tolist() == [-1, 3600, 3600, 3600, 3600, 3600]
    black = np.zeros_like(src[0])
    assert s["ssim"][0] == pytest.approx(ssim(black, src[0]))
    frames = pd.DataFrame(
        {
            **{c: s[c] for c in s.columns},
            "latency_ms": [np.nan, 40, np.nan, np.nan, np.nan, np.nan],
            "capture_ms": sent_ts / 90.0,
        }
    )
    rate = pd.DataFrame({"target_bps": [5e5, 5e5], "send_rate_bps": [4e5, 4e5]})
    m = metrics(frames, rate, {"rtp_packets_sent": 60}, {"rtp_packets_received": 15})
    assert m["decoded_pct"] == pytest.approx(100 / 6)
    assert m["frozen_pct"] == pytest.approx(500 / 6)
    assert m["rtp_loss_pct"] == pytest.approx(75.0)
    assert m["ssim_decoded_mean"] == pytest.approx(1.0)
    assert m["ssim_mean"] < 0.5  # the frozen frames count: the stopped stream cannot look good
    assert m["target_mean_kbps"] == pytest.approx(500)
