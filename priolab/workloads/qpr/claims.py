"""The mechanism behind a verdict on [QPR]'s claims (paper.py's `why`, analysis/why.py
`Why`; the verdict is analysis/verdicts.py's): per scheme, what the player got and what the
path did, read off the runs of the claim's point — throughput, freezes, media played,
objects that arrived incomplete, unreliable bytes lost, the server's packet losses and the
window of a second (datagram) connection. Nothing here is typed for a result."""

from __future__ import annotations

import math

import pandas as pd

from analysis.why import mean_of, per_scheme, quoted, scheme_of


def session(runs: pd.DataFrame) -> str:
    """One scheme's sessions in numbers (means over runs)."""
    name = scheme_of(runs)
    thr = mean_of(runs, "throughput_mean_mbps")
    if math.isnan(thr):
        return f"{name}: no throughput"
    parts = [f"{thr:.3g} Mbit/s per segment (rescaled units)"]
    freezes, tfd = mean_of(runs, "freezes"), mean_of(runs, "freeze_total_s")
    if math.isfinite(freezes):
        parts.append(f"{freezes:.1f} freezes" + (f" ({tfd:.1f} s)" if math.isfinite(tfd) else ""))
    parts += quoted(runs, "played_pct", "{:.0f} % of the session played")
    parts += quoted(runs, "objects_incomplete_pct", "{:.1f} % of objects incomplete")
    parts += quoted(runs, "unreliable_bytes_lost_pct", "{:.1f} % of unreliable bytes lost")
    lost, sent = mean_of(runs, "lost_packets"), mean_of(runs, "sent_packets")
    if math.isfinite(lost) and math.isfinite(sent) and sent > 0:
        parts.append(f"server lost {100.0 * lost / sent:.1f} % of {sent:.0f} packets")
    parts += quoted(runs, "unreliable_conn_cwnd_bytes",
                    "datagram connection's window {:.0f} bytes at the end")  # fmt: skip
    return f"{name}: " + ", ".join(parts)


def what_the_player_got(num: pd.DataFrame, den: pd.DataFrame) -> str:
    """analysis.why.Why for QPR: each scheme's sessions in numbers."""
    return "; ".join(per_scheme(num, den, session))
