"""The calibrator's load probe: `lkprobe` (a batched, multi-flow UDP sender and receiver in
the linkem crate, netem/linkem/src/bin/lkprobe) offered at a wire rate, and the verdict on
what limited the highest loss-free rate.

iperf3 sends one datagram per system call from one thread: on this 2-core machine it stops
at 350–500 Mbit/s even without an emulator, so it cannot find linkem's ceiling. lkprobe sends
every due packet of a wake-up in one `sendmmsg`, from one thread per flow, and receives with
`recvmmsg`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from netem.backend import NodeExec
from netem.probe import REPO_ROOT

WIRE_OVERHEAD_BYTES = 42
FLOWS = 2
# A ladder step counts as "offered" when the sender reached this share of the target.
OFFERED_SHARE_MIN = 0.97
# Loss-free ceilings within this share of each other are "the same".
SAME_SHARE = 0.95


def lkprobe_path() -> Path:
    """The lkprobe binary: $PRIOLAB_LKPROBE, else <repo>/target/release/lkprobe."""
    env = os.environ.get("PRIOLAB_LKPROBE")
    return Path(env) if env else REPO_ROOT / "target" / "release" / "lkprobe"


def blast(
    sender: NodeExec,
    receiver: NodeExec,
    dst_ip: str,
    port: int,
    wire_mbps: float,
    seconds: float,
    payload_bytes: int = 1400,
    flows: int = FLOWS,
) -> dict[str, Any]:
    """Offer `wire_mbps` (frames on the wire) for `seconds` from sender to receiver; the
    receiver's figures in the keys `Bench.iperf_udp` returns, plus the sender's."""
    exe = str(lkprobe_path())
    recv = receiver.popen(
        [exe, "recv", "--port", str(port), "--flows", str(flows), "--idle", "1",
         "--seconds", str(seconds + 15)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        time.sleep(0.3)
        sent_p = sender.run(
            [exe, "send", "--dst", dst_ip, "--port", str(port), "--rate-mbps", str(wire_mbps),
             "--seconds", str(seconds), "--flows", str(flows),
             "--payload-bytes", str(payload_bytes)], check=False,
        )  # fmt: skip
        out, err = recv.communicate(timeout=seconds + 30)
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()
    if sent_p.returncode != 0 or recv.returncode != 0:
        raise RuntimeError(
            f"lkprobe failed: send {sent_p.returncode} {sent_p.stderr[-300:]!r}, "
            f"recv {recv.returncode} {err.decode(errors='replace')[-300:]!r}"
        )
    sent, got = json.loads(sent_p.stdout), json.loads(out)
    n_sent = int(sent["sent_packets"])
    span_s = max(seconds, float(sent["elapsed_s"]))
    return {
        "offered_mbps": float(sent["offered_mbps"]),
        "achieved_mbps": got["received_wire_bytes"] * 8 / span_s / 1e6,
        "loss_pct": 100.0 * (1 - got["received_packets"] / n_sent) if n_sent else 100.0,
        "packets": n_sent,
        "send_errors": int(sent["send_errors"]),
        "sender_elapsed_s": float(sent["elapsed_s"]),
        "flows": flows,
        "probe": "lkprobe",
    }


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
