"""On-time display ratio ([MoQ Fig. 5]): a frame is displayed on time under a latency
budget if it *and every frame it depends on* have arrived by its presentation deadline,
capture time + budget. Pure functions of the frames in decode order.

`ready_ms[i]` is when frame i becomes decodable: the latest arrival among itself and its
transitive references (infinite if one never arrived). Since references point to earlier
frames (decode order), one pass suffices: ready[i] = max(arrival[i], ready[r] for r in refs[i]).
Then frame i is on time under budget b iff ready_ms[i] - capture_ms[i] <= b, and
OTDR(b) is the fraction of all frames the publisher released that are on time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from traces.gop import references


def ready_ms(arrival_ms: np.ndarray, refs: Sequence[Sequence[int]]) -> np.ndarray:
    """When each frame (decode order) becomes decodable; NaN arrival = never (inf)."""
    a = np.asarray(arrival_ms, dtype=float)
    if len(a) != len(refs):
        raise ValueError(f"{len(a)} arrival times for {len(refs)} frames")
    out = np.where(np.isnan(a), np.inf, a)
    for i, rs in enumerate(refs):
        for r in rs:
            if not 0 <= r < i:
                raise ValueError(f"frame {i}: reference {r} is not an earlier frame")
            out[i] = max(out[i], out[r])
    return out


def display_delay_ms(
    pict_types: Sequence[str], capture_ms: np.ndarray, arrival_ms: np.ndarray
) -> np.ndarray:
    """Per frame (decode order): decodable time − capture time, inf if never decodable. The
    references come from the I/P/B model (traces/gop.py)."""
    return ready_ms(arrival_ms, references(pict_types)) - np.asarray(capture_ms, dtype=float)


def otdr(delay_ms: np.ndarray, budgets_ms: np.ndarray) -> np.ndarray:
    """OTDR(b) for each budget b: the fraction of frames with delay ≤ b (0 for no frames)."""
    d = np.sort(np.asarray(delay_ms, dtype=float))
    b = np.asarray(budgets_ms, dtype=float)
    if len(d) == 0:
        return np.zeros_like(b)
    return np.searchsorted(d, b, side="right") / len(d)
