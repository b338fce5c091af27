"""The `roq` analysis: SSIM/PSNR, and per-frame alignment by RTP timestamp where a dropped
frame is scored as the frozen picture before it, not skipped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from priolab.workloads.roq.analysis import align, metrics, score_frames
from priolab.workloads.roq.quality import PSNR_CAP_DB, psnr_db, ssim


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
