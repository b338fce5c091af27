"""Why each endpoint encoded its key frames (issue 25 item 4; frames_sent.csv `key_cause`).

Every key frame the rise sender asks for itself follows a frame-deadline expiry (ringmaster:
no periodic key frames, no loss-triggered request from the receiver). The endpoint names, at
the expiry, what held the oldest unacked datagram (endpoints/README.md, rise-core
`KeyCause`): `deadline-queued` (a copy still waiting in the sender buffer B: delay),
`deadline-dropped` (never sent: dropped at ingress or evicted from B, no copy waiting),
`deadline-lost` (every allowed copy sent, none acknowledged: loss of the datagram or of all
its ACKs), `deadline-unacked` (sent, retransmissions left, but no ACK of a later datagram came
back to trigger one in time: feedback lost or held back); besides those `start` (the first
frame) and `trace` (a replayed frame-size trace's own key frame).
"""

from __future__ import annotations

import pandas as pd

from priolab.workloads.rise.logs import KEY_CAUSES, UNRECORDED

NAN = float("nan")
DEADLINE_CAUSES = tuple(c for c in KEY_CAUSES if c.startswith("deadline-"))


def metric_name(cause: str, endpoint: str) -> str:
    """keyframes_<cause>_<endpoint>, the cause's dashes as underscores."""
    return f"keyframes_{cause.replace('-', '_')}_{endpoint}"


def keyframe_causes(frames_sent: pd.DataFrame, endpoint: str) -> dict[str, float]:
    """Per cause, the endpoint's key frames of that cause over the whole run
    (`keyframes_<cause>_<ep>`), and `keyframes_deadline_<ep>`, their sum over the deadline
    causes. NaN for all when the endpoint encoded nothing or its log predates the cause
    column: an old run must not read as "no deadline key frames"."""
    f = frames_sent[frames_sent["endpoint"] == endpoint]
    names = [metric_name(c, endpoint) for c in KEY_CAUSES] + [f"keyframes_deadline_{endpoint}"]
    if f.empty or "key_cause" not in f or (f["key_cause"] == UNRECORDED).any():
        return dict.fromkeys(names, NAN)
    counts = f.loc[f["frame_type"] == "key", "key_cause"].value_counts()
    out = {metric_name(c, endpoint): float(counts.get(c, 0)) for c in KEY_CAUSES}
    out[f"keyframes_deadline_{endpoint}"] = float(sum(counts.get(c, 0) for c in DEADLINE_CAUSES))
    return out
