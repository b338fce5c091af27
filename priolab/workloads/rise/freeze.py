"""Freeze detection exactly as libwebrtc's VideoQualityObserver (video_quality_observer2.cc).

On every rendered frame after the first, libwebrtc
1. takes the inter-frame interval in integer milliseconds (timestamps converted to ms with
   rounding to the nearest ms, as webrtc::Timestamp::ms() does),
2. adds it to a moving window of the last 30 intervals (kAvgInterframeDelaysWindowSizeFrames)
   — *before* judging it, so the interval being judged is part of its own average, and a
   freeze interval stays in the window afterwards,
3. if the window holds at least 5 samples (kMinFrameSamplesToDetectFreeze), takes the window
   average rounded down to an integer ms (MovingAverage::GetAverageRoundedDown) and calls the
   interval a freeze if interval ≥ max(3 × avg, avg + 150 ms) (kMinIncreaseForFreezeMs),
4. adds a freeze's interval to the total freeze duration.
We have no pauses (libwebrtc's is_paused_), so that branch does not exist here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

WINDOW_FRAMES = 30
MIN_SAMPLES = 5
MIN_INCREASE_MS = 150


@dataclass(frozen=True)
class Freezes:
    intervals_ms: np.ndarray  # int64, one per displayed frame after the first
    is_freeze: np.ndarray  # bool, same length
    n_displayed: int

    @property
    def count(self) -> int:
        return int(self.is_freeze.sum())

    @property
    def duration_ms(self) -> int:
        return int(self.intervals_ms[self.is_freeze].sum())

    @property
    def rate_pct(self) -> float:
        """Freezes per displayed frame × 100; NaN with no displayed frame."""
        return float("nan") if self.n_displayed == 0 else 100.0 * self.count / self.n_displayed


def to_ms(times_us: np.ndarray) -> np.ndarray:
    """µs → integer ms, rounding half up (webrtc DivideRoundToNearest for positive values)."""
    t = np.asarray(times_us, dtype=np.int64)
    return (t + 500) // 1000


def detect_freezes(display_times_us: np.ndarray) -> Freezes:
    """Display times (µs, any order; sorted here) → the libwebrtc freeze decisions."""
    t_ms = np.sort(to_ms(display_times_us))
    intervals = np.diff(t_ms)
    flags = np.zeros(len(intervals), dtype=bool)
    window: deque[int] = deque(maxlen=WINDOW_FRAMES)
    total = 0
    for i, d in enumerate(intervals.tolist()):
        if len(window) == WINDOW_FRAMES:
            total -= window[0]
        window.append(d)
        total += d
        if len(window) >= MIN_SAMPLES:
            avg = total // len(window)
            flags[i] = d >= max(3 * avg, avg + MIN_INCREASE_MS)
    return Freezes(intervals.astype(np.int64), flags, len(t_ms))
