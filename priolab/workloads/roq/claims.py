"""The mechanism behind a verdict on [RoQ]'s claims (paper.py's `why`, analysis/why.py
`Why`; the verdict is analysis/verdicts.py's): per configuration, what the receiver saw, read
off the runs of the claim's point.

A run's mean SSIM is over every frame the sender encoded: a frame the receiver decoded
scores its own picture, one it did not scores the picture still on screen (or black). So the
mean splits into the quality of the decoded pictures (the clip's at the rate the controller
chose) and what frozen pictures pull it down by; beside them the controller's target and
the rate it sent, the RTP packets lost, the key frames that arrived whole (after a loss the
receiver shows nothing new until one does), the latency, and a competing stream's rate. Nothing
here is typed for a result."""

from __future__ import annotations

import math

import pandas as pd

from analysis.why import mean_of, per_scheme, quoted, scheme_of


def receiver(runs: pd.DataFrame) -> str:
    """One configuration's runs in numbers (means over runs)."""
    name = scheme_of(runs)
    ssim, dec_ssim = mean_of(runs, "ssim_mean"), mean_of(runs, "ssim_decoded_mean")
    if math.isnan(ssim):
        return f"{name}: no SSIM"
    parts = [f"SSIM {ssim:.3f}", *quoted(runs, "decoded_pct", "{:.0f} % of frames decoded")]
    if math.isfinite(dec_ssim):
        parts.append(f"decoded pictures {dec_ssim:.3f}, frozen ones pull the mean down by "
                     f"{dec_ssim - ssim:.3f}")  # fmt: skip
    target, sent = mean_of(runs, "target_mean_kbps"), mean_of(runs, "send_rate_mean_kbps")
    if math.isfinite(target):
        parts.append(f"target {target:.0f} kbit/s, sent {sent:.0f} kbit/s")
    parts += quoted(runs, "rtp_loss_pct", "{:.1f} % of RTP packets lost")
    keys, keys_sent = mean_of(runs, "key_frames_complete"), mean_of(runs, "key_frames_sent")
    if math.isfinite(keys) and math.isfinite(keys_sent):
        parts.append(f"{keys:.1f} of {keys_sent:.1f} key frames arrived whole")
    parts += quoted(runs, "latency_median_ms", "latency median {:.0f} ms")
    competing = mean_of(runs, "competing_mbps")
    if math.isfinite(competing) and competing > 0:
        parts.append(f"competing stream {competing:.2f} Mbit/s")
    return f"{name}: " + ", ".join(parts)


def what_the_receiver_got(num: pd.DataFrame, den: pd.DataFrame) -> str:
    """analysis.why.Why for RoQ: each configuration's receiver in numbers."""
    return "; ".join(per_scheme(num, den, receiver))
