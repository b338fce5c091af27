"""The `roq` analysis: SSIM/PSNR, and per-frame alignment by RTP timestamp where a dropped
frame is scored as the frozen picture before it, not skipped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from priolab.workloads.roq.analysis import align, metrics, score_frames
from priolab.workloads.roq.quality import C1, C2, PSNR_CAP_DB, WINDOW, psnr_db, ssim
from tests.conftest import REPO


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


def test_the_capacity_dip_is_read_from_the_runs_link() -> None:
    """roq-rfc8867's downlink trace drops from 1 to 0.5 Mbit/s at 60 s and rises at 90 s; a
    constant-rate link has no dip."""
    from priolab import scenario
    from priolab.workloads.roq.analysis import capacity_dip

    path = REPO / "scenarios" / "roq-rfc8867.yaml"
    spec = scenario.expand(scenario.load(path), path)[0]
    assert capacity_dip({"run": spec.to_json()}) == (60.0, 90.0)
    flat = spec.to_json()
    flat["link"]["downlink"] = {"rate_mbps": 1.0, "delay_ms": 50}
    assert capacity_dip({"run": flat}) is None
    assert capacity_dip({}) is None


def test_the_targets_shape_over_time() -> None:
    """A target that climbs 100 kbit/s a second to 1000 (90 % of it, 900, at 8 s), holds it,
    drops to 100 in the dip (60-90 s) and is back at 900 20 s after it; the trivial levels'
    share and the changes per second."""
    from priolab.workloads.roq.analysis import shape_metrics

    t = np.arange(0.0, 120.0, 1.0)
    target = np.where(t < 10, 100e3 * (t + 1), 1000e3)
    target = np.where((t >= 60) & (t < 90), 100e3, target)
    target = np.where((t >= 90) & (t < 110), 500e3, target)
    target = np.where(t >= 110, 900e3, target)
    rate = pd.DataFrame({"time_s": t, "target_bps": target, "send_rate_bps": target * 0.9})
    m = shape_metrics(rate, (60.0, 90.0))
    assert m["ramp_up_s"] == 8.0
    assert m["recovery_s"] == 20.0 and m["target_min_dip_kbps"] == 100.0
    assert m["send_rate_pre_dip_kbps"] == pytest.approx(900.0)  # 30-60 s, 90 % of 1000
    assert m["target_changes_per_s"] == pytest.approx(12 / 119)  # 9 steps up, 3 jumps
    assert m["target_top_bottom_pct"] == 0.0
    never = rate.assign(target_bps=np.where(t >= 90, 100e3, target))
    assert shape_metrics(never, (60.0, 90.0))["recovery_s"] == 29.0  # to the last sample
    trivial = pd.DataFrame({"time_s": [0.0, 1.0, 2.0, 3.0],
                            "target_bps": [256e3, 1280e3, 768e3, 1280e3],
                            "send_rate_bps": [0.0] * 4})  # fmt: skip
    tm = shape_metrics(trivial, None)
    assert tm["target_top_bottom_pct"] == 75.0 and tm["ramp_up_s"] != tm["ramp_up_s"]  # NaN
