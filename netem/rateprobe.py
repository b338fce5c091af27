"""The calibrator's load probe: where the `lkprobe` binary is (a batched, multi-flow UDP
sender and receiver in the linkem crate, netem/linkem/src/bin/lkprobe; the probe workload,
priolab/workloads/probe, runs and reads it), and the verdict on what limited the highest
loss-free rate.

iperf3 sends one datagram per system call from one thread: on this 2-core machine it stops
at 350–500 Mbit/s even without an emulator, so it cannot find linkem's ceiling. lkprobe sends
every due packet of a wake-up in one `sendmmsg`, from one thread per flow, and receives with
`recvmmsg`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from netem.probe import REPO_ROOT

# A ladder step counts as "offered" when the sender reached this share of the target.
OFFERED_SHARE_MIN = 0.97
# Loss-free ceilings within this share of each other are "the same".
SAME_SHARE = 0.95


def lkprobe_path() -> Path:
    """The lkprobe binary: $PRIOLAB_LKPROBE, else <repo>/target/release/lkprobe."""
    env = os.environ.get("PRIOLAB_LKPROBE")
    return Path(env) if env else REPO_ROOT / "target" / "release" / "lkprobe"


def limited_by(
    emulator_best: float, direct_best: float, emulator_steps: list[dict[str, Any]],
    direct_steps: list[dict[str, Any]],
) -> str:  # fmt: skip
    """What capped the emulator's highest loss-free rate: `emulator` when the direct path
    (same probe, no emulator) went clearly higher; otherwise the probe or the path, and why."""
    if direct_best > 0 and emulator_best < SAME_SHARE * direct_best:
        return "emulator"
    top = max((s["offered_target_mbps"] for s in direct_steps + emulator_steps), default=0.0)
    short = [
        s for s in direct_steps
        if s["offered_mbps"] < OFFERED_SHARE_MIN * s["offered_target_mbps"]
    ]  # fmt: skip
    if short:
        s = short[0]
        return (f"probe: the sender offered only {s['offered_mbps']:.0f} of "
                f"{s['offered_target_mbps']:.0f} Mbit/s on the direct path")  # fmt: skip
    if direct_best >= SAME_SHARE * top:
        return f"probe ladder: both passed its top step ({top:.0f} Mbit/s)"
    return (f"path: the direct path (no emulator) lost >= 0.1 % above "
            f"{direct_best:.0f} Mbit/s with the probe offering the full rate")  # fmt: skip
