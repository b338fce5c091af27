"""The mechanism behind a verdict on [DTP]'s claims (paper.py's `why`, analysis/why.py
`Why`; the verdict is analysis/verdicts.py's): where each scheme's blocks went, read off the
runs of the claim's point — on time, dropped by the sender, sent but late or never
complete, still queued at the end — with the median completion time against the deadline,
the packets the link lost and the parity sent. Nothing here is typed for a result."""

from __future__ import annotations

import math

import pandas as pd

from analysis.why import mean_of, per_scheme, scheme_of


def fates(runs: pd.DataFrame) -> str:
    """One scheme's blocks by fate, as percentages of the blocks released (means over runs)."""
    name = scheme_of(runs)
    on = 100.0 * mean_of(runs, "deadline_ratio")
    dropped, pending = mean_of(runs, "dropped_pct"), mean_of(runs, "pending_pct")
    if math.isnan(on):
        return f"{name}: no deadline ratio"
    gone = sum(x for x in (dropped, pending) if math.isfinite(x))
    late = max(0.0, 100.0 - on - gone)  # outcome "sent" (in full) but not on time
    parts = [
        f"{on:.1f} % of blocks on time",
        f"{dropped:.1f} % dropped by the sender",
        f"{late:.1f} % sent but late or never complete",
        f"{pending:.1f} % still queued at the end",
    ]
    done, deadline = mean_of(runs, "completion_median_ms"), mean_of(runs, "deadline_ms")
    if math.isfinite(done):
        p95 = mean_of(runs, "completion_p95_ms")
        tail = f", p95 {p95:.0f} ms" if math.isfinite(p95) else ""
        of = f" (deadline {deadline:g} ms)" if math.isfinite(deadline) else ""
        parts.append(f"completion median {done:.0f} ms{tail}{of}")
    parity = mean_of(runs, "redundancy_overhead_pct")
    if math.isfinite(parity) and parity > 0:
        parts.append(f"parity {parity:.1f} % of the block bytes")
    return f"{name}: " + ", ".join(parts)


def where_blocks_went(num: pd.DataFrame, den: pd.DataFrame) -> str:
    """analysis.why.Why for DTP: each scheme's blocks by fate and what the link lost."""
    both = per_scheme(num, den, fates)
    lost = mean_of(pd.concat([num, den]), "lost_packets_pct")
    if not math.isfinite(lost):
        return "; ".join(both)
    return "; ".join(both) + f"; quinn counted {lost:.3g} % of the sender's packets lost"
