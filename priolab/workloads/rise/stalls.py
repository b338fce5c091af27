"""Display gaps that the freeze rate cannot see: stalls, longest gap, displayed fps, frames
never displayed. Pure functions; definitions in priolab/workloads/rise/README.md.

The freeze rate judges only intervals *between displayed frames*, so a stream that stops
displaying scores 0 %. Here the run's start and end are display "boundaries" too: the gap from
the start to the first display and from the last display to the end of the run count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NAN = float("nan")

# libwebrtc's freeze rule, max(3·avg, avg + 150 ms) (video_quality_observer2.cc), applied to
# the *nominal* frame interval 1/fps instead of the running average, so that a run of long
# gaps cannot raise its own threshold
STALL_FACTOR = 3.0
STALL_MIN_INCREASE_MS = 150.0


@dataclass(frozen=True)
class Window:
    """The analysed part of a run, µs on the endpoints' clock: [start + warm-up, end]."""

    run_start_us: int
    start_us: int
    end_us: int

    @property
    def length_s(self) -> float:
        return max(0, self.end_us - self.start_us) / 1e6

    def contains(self, t_us: np.ndarray) -> np.ndarray:
        t = np.asarray(t_us, dtype=np.int64)
        return (t >= self.start_us) & (t <= self.end_us)


def stall_threshold_ms(fps: float) -> float:
    """A display gap at least this long is a stall: max(3 / fps, 1 / fps + 150 ms)."""
    t = 1000.0 / fps
    return max(STALL_FACTOR * t, t + STALL_MIN_INCREASE_MS)


def display_gaps(display_times_us: np.ndarray, w: Window) -> np.ndarray:
    """(n, 4) gaps between consecutive boundaries (the run start, every display, the window
    end): [from, to, from clipped to the window, to clipped]; gaps outside it are dropped."""
    t = np.sort(np.asarray(display_times_us, dtype=np.int64))
    t = t[(t >= w.run_start_us) & (t <= w.end_us)]
    pts = np.concatenate([[w.run_start_us], t, [w.end_us]])
    a, b = pts[:-1], pts[1:]
    a_c, b_c = np.maximum(a, w.start_us), np.minimum(b, w.end_us)
    keep = b_c > a_c
    return np.stack([a[keep], b[keep], a_c[keep], b_c[keep]], axis=1)


def stalls(display_times_us: np.ndarray, w: Window, fps: float) -> dict[str, float]:
    """Stall metrics of one endpoint's displays in the window.

    - stall_time_s: total time of display gaps ≥ stall_threshold_ms(fps), counted inside the
      window; the gap from the last display to the end of the run counts (a stream that stops
      has a stall time equal to its tail); with no display at all it is the whole window;
    - stall_pct: stall_time_s / window length × 100;
    - stall_count: such gaps overlapping the window;
    - longest_gap_s: the longest gap between boundaries inside the window (clipped);
    - displayed_fps: displays inside the window / window length.
    NaN everywhere if the window is empty.
    """
    if w.length_s <= 0:
        keys = ("stall_time_s", "stall_pct", "stall_count", "longest_gap_s", "displayed_fps")
        return dict.fromkeys(keys, NAN)
    g = display_gaps(display_times_us, w)
    full_ms = (g[:, 1] - g[:, 0]) / 1000.0
    clipped_s = (g[:, 3] - g[:, 2]) / 1e6
    is_stall = full_ms >= stall_threshold_ms(fps)
    stall_s = float(clipped_s[is_stall].sum())
    n_disp = int(w.contains(display_times_us).sum())
    return {
        "stall_time_s": stall_s,
        "stall_pct": 100.0 * stall_s / w.length_s,
        "stall_count": float(is_stall.sum()),
        "longest_gap_s": float(clipped_s.max()) if len(clipped_s) else 0.0,
        "displayed_fps": n_disp / w.length_s,
    }


def stall_spans_us(display_times_us: np.ndarray, w: Window, fps: float) -> np.ndarray:
    """(n, 2) stall gaps clipped to the window, µs (for figures)."""
    g = display_gaps(display_times_us, w)
    is_stall = (g[:, 1] - g[:, 0]) / 1000.0 >= stall_threshold_ms(fps)
    return g[is_stall][:, 2:4]


def undisplayed(
    encoded: np.ndarray, encode_time_us: np.ndarray, displayed_ids: np.ndarray, w: Window,
    guard_us: int,
) -> tuple[float, float]:  # fmt: skip
    """Frames the sender encoded inside [window start, window end − guard] that the receiver
    never displayed: (count, % of those encoded). The guard (the frame deadline) leaves out
    frames that could still be in flight when the run ended. NaN with no such frame."""
    t = np.asarray(encode_time_us, dtype=np.int64)
    sel = (t >= w.start_us) & (t <= w.end_us - guard_us)
    ids = np.asarray(encoded, dtype=np.int64)[sel]
    if len(ids) == 0:
        return NAN, NAN
    missing = ~np.isin(ids, np.asarray(displayed_ids, dtype=np.int64))
    return float(missing.sum()), 100.0 * float(missing.sum()) / len(ids)
