"""The tc backend: HTB for the rate, netem for delay/jitter/loss, a FIFO as the bottleneck queue.

Per direction, on the egress of the interface the direction leaves through (uplink: the
host-facing `iface_up_out`; downlink: the guest-facing `iface_up_in`):

    root 1:   netem  delay/jitter/loss, seed, limit NETEM_LIMIT_PACKETS  (only if needed)
      1:1 → 2:    htb default 1                                          (only if rate-limited)
        2:1        class rate R ceil R burst B cburst B
          → 3:     bfifo limit BYTES | pfifo limit N | pfifo_head_drop limit N   (the queue)

Why netem first: netem is the only place for delay on an egress-only kernel path, and a qdisc
below HTB only gets packets handed out when HTB has tokens. With netem *below* HTB, netem's
own delay line would hold the waiting packets and its `limit` (packets, counting the delay
line) would act as the queue. With netem at the root and the HTB+FIFO below it, a packet
enters the FIFO the moment its delay expires, so the FIFO is the only queue that fills:
delay → queue → rate is a pure time shift of the model's queue → rate → delay for a
constant delay. netem's limit is set far above anything the FIFO holds so it never drops
first. The differences to the model: loss is applied before the queue (a lost packet does
not use link capacity), and jitter is applied before the queue (a busy queue smooths it).

A policer direction has no HTB and no FIFO: a `clsact` qdisc on the same interface carries an
egress u32 filter matching every frame with `action police rate R burst B mtu 1514
conform-exceed drop/ok`. clsact's egress hook runs before the root qdisc, so the order is
policer → netem (delay, loss), as in linkem. At the egress hook the kernel counts the whole
Ethernet frame (`qdisc_pkt_len`: header + IP packet, no FCS), as linkem does.

See netem/README.md ("The tc backend") for drop-head, jitter ordering and traces.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ground import rundir
from netem.backend import NodeExec
from netem.model import Link
from netem.replay import Replayer
from netem.resolve import (
    MAX_FRAME_BYTES,
    ConstantRate,
    OpportunitiesRate,
    PolicerRate,
    ResolvedDirection,
    ResolvedLoss,
    ScheduleRate,
    UnlimitedRate,
    resolve_link,
)

NETEM_LIMIT_PACKETS = 1_000_000
"""netem's limit counts packets in its delay line: 10^6 holds 1.2 s of 10 Gbit/s of 1500-byte
frames, far more than any bottleneck FIFO, so drops happen in the FIFO."""
NO_REORDER_RATE = "100gbit"
"""With jitter but no reordering, netem's `rate` option makes it keep FIFO order
(send time = max(arrival + delay, previous send time) + size/rate); at 100 Gbit/s the added
serialisation time is 0.12 µs per 1500-byte frame."""
HTB_BURST_S = 0.001
"""HTB burst/cburst: 1 ms worth of the rate, at least one full frame."""
HTB_QUANTUM_BYTES = MAX_FRAME_BYTES
TRACE_INTERVAL_MS = 100
"""Mahimahi traces on tc: opportunities are averaged over 100 ms bins into a rate schedule."""
MIN_TRACE_RATE_BPS = 10_000
"""HTB cannot run at 0 bit/s: trace steps below 10 kbit/s run at 10 kbit/s."""
BRIDGE_NAME = "nebr0"
"""The bridge the tc backend creates inside the middlebox node to forward between its two
interfaces (linkem bridges them itself)."""

NETEM_HANDLE = "1:"
NETEM_CHILD = "1:1"
HTB_HANDLE = "2:"
HTB_CLASS = "2:1"
QUEUE_HANDLE = "3:"


def _pct(p: float) -> str:
    """A probability (0..1) as a tc percentage."""
    return f"{p * 100.0:.10g}%"


def needs_netem(d: ResolvedDirection) -> bool:
    return d.delay_us > 0 or d.jitter_us > 0 or d.loss.kind != "none"


def loss_args(loss: ResolvedLoss) -> list[str]:
    q = loss.params
    if loss.kind == "none":
        return []
    if loss.kind == "iid":
        return ["loss", "random", _pct(q["p"])]
    if loss.kind == "gilbert_elliott":
        # netem: gemodel p r 1-h 1-k (h, k here are probabilities of *no* loss)
        return [
            "loss",
            "gemodel",
            _pct(q["p"]),
            _pct(q["r"]),
            _pct(1.0 - q["h"]),
            _pct(1.0 - q["k"]),
        ]
    if loss.kind == "four_state":
        return ["loss", "state"] + [_pct(q[k]) for k in ("p13", "p31", "p32", "p23", "p14")]
    raise ValueError(f"unknown loss kind {loss.kind}")  # pragma: no cover


NO_SEED_NOTE = (
    "this tc has no netem `seed` (iproute2 < 6.4, e.g. Debian 12's 6.1): netem's losses and "
    "jitter are random, not reproducible from the scenario's seed"
)


def seed_in_usage(usage: str) -> bool:
    """Whether netem's usage text (`tc qdisc add dev lo root netem help`) offers `seed`."""
    return "seed" in usage.split("netem", 1)[-1]


def netem_usage_argv() -> list[str]:
    """Prints netem's usage and changes nothing (tc parses `help` before any netlink call)."""
    return ["tc", "qdisc", "add", "dev", "lo", "root", "netem", "help"]


@functools.cache
def local_netem_seed() -> bool:
    """Whether this machine's tc knows netem's `seed`."""
    try:
        res = subprocess.run(netem_usage_argv(), capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return seed_in_usage(res.stdout + res.stderr)


def netem_args(d: ResolvedDirection, seed: int | None) -> list[str]:
    """netem's arguments; `seed` None: no `seed` option (a tc that does not know it)."""
    args = ["netem", "limit", str(NETEM_LIMIT_PACKETS)]
    if d.delay_us or d.jitter_us:
        args += ["delay", f"{d.delay_us}us"]
        if d.jitter_us:
            args.append(f"{d.jitter_us}us")
            if not d.jitter_reorder:
                args += ["rate", NO_REORDER_RATE]
    args += loss_args(d.loss)
    if seed is not None:
        args += ["seed", str(seed)]
    return args


def queue_args(d: ResolvedDirection) -> tuple[list[str], list[str]]:
    """The FIFO qdisc arguments and notes on anything approximated."""
    q = d.queue
    assert q is not None, "a policer has no queue"
    if q.drop == "tail":
        if q.limit_bytes is not None:
            return ["bfifo", "limit", str(q.limit_bytes)], []
        return ["pfifo", "limit", str(q.limit_packets)], []
    if q.limit_packets is not None:
        return ["pfifo_head_drop", "limit", str(q.limit_packets)], []
    assert q.limit_bytes is not None
    n = max(1, q.limit_bytes // MAX_FRAME_BYTES)
    note = (
        f"drop-head with a byte limit: tc has no byte-limited head-drop FIFO; used "
        f"pfifo_head_drop limit {n} (= {q.limit_bytes} bytes / {MAX_FRAME_BYTES}-byte frames)"
    )
    return ["pfifo_head_drop", "limit", str(n)], [note]


def htb_burst_bytes(rate_bps: float) -> int:
    return max(MAX_FRAME_BYTES, math.ceil(rate_bps / 8.0 * HTB_BURST_S))


def htb_class_args(rate_bps: int) -> list[str]:
    burst = str(htb_burst_bytes(rate_bps))
    return [
        "htb",
        "rate",
        f"{rate_bps}bit",
        "ceil",
        f"{rate_bps}bit",
        "burst",
        burst,
        "cburst",
        burst,
        "quantum",
        str(HTB_QUANTUM_BYTES),
    ]


def trace_steps(d: ResolvedDirection) -> tuple[list[tuple[int, int]], int, bool] | None:
    """(points [(t_ms, rate_bps)], period_ms, loop) for a trace-driven direction, else None.
    Mahimahi opportunities become TRACE_INTERVAL_MS bins; rates are floored at
    MIN_TRACE_RATE_BPS."""
    rate = d.rate
    if isinstance(rate, ScheduleRate):
        pts = [(t, max(r, MIN_TRACE_RATE_BPS)) for t, r in rate.points]
        return pts, rate.period_ms, rate.loop
    if isinstance(rate, OpportunitiesRate):
        n_bins = max(1, math.ceil(rate.period_ms / TRACE_INTERVAL_MS))
        counts = [0] * n_bins
        for t in rate.times_ms:
            counts[min(t // TRACE_INTERVAL_MS, n_bins - 1)] += 1
        pts = []
        for i, c in enumerate(counts):
            start = i * TRACE_INTERVAL_MS
            length_ms = min(TRACE_INTERVAL_MS, rate.period_ms - start) or TRACE_INTERVAL_MS
            bps = round(c * rate.bytes_per_opportunity * 8 * 1000 / length_ms)
            pts.append((start, max(bps, MIN_TRACE_RATE_BPS)))
        return pts, rate.period_ms, rate.loop
    return None


def police_commands(dev: str, rate: PolicerRate) -> list[list[str]]:
    """A clsact qdisc and an egress filter that polices every frame leaving `dev`."""
    return [
        ["tc", "qdisc", "add", "dev", dev, "clsact"],
        ["tc", "filter", "add", "dev", dev, "egress", "protocol", "all", "prio", "1",
         "u32", "match", "u32", "0", "0",
         "action", "police", "rate", f"{rate.rate_bps}bit", "burst", str(rate.burst_bytes),
         "mtu", str(MAX_FRAME_BYTES), "conform-exceed", "drop/ok"],
    ]  # fmt: skip


def initial_rate_bps(d: ResolvedDirection) -> int | None:
    if isinstance(d.rate, ConstantRate):
        return d.rate.rate_bps
    if isinstance(d.rate, UnlimitedRate | PolicerRate):
        return None
    steps = trace_steps(d)
    assert steps is not None
    return steps[0][0][1]


def direction_commands(
    dev: str, d: ResolvedDirection, seed: int | None
) -> tuple[list[list[str]], list[str]]:
    """The `tc` argv lists that set up one direction on the egress of `dev`, and notes."""
    cmds: list[list[str]] = []
    parent = ["root"]
    if needs_netem(d):
        cmds.append(
            ["tc", "qdisc", "add", "dev", dev, "root", "handle", NETEM_HANDLE] + netem_args(d, seed)
        )
        parent = ["parent", NETEM_CHILD]
    if isinstance(d.rate, PolicerRate):
        return cmds + police_commands(dev, d.rate), []
    rate = initial_rate_bps(d)
    if rate is not None:
        cmds.append(
            ["tc", "qdisc", "add", "dev", dev, *parent, "handle", HTB_HANDLE, "htb", "default", "1"]
        )
        cmds.append(
            [
                "tc",
                "class",
                "add",
                "dev",
                dev,
                "parent",
                HTB_HANDLE,
                "classid",
                HTB_CLASS,
                *htb_class_args(rate),
            ]
        )
        parent = ["parent", HTB_CLASS]
    qargs, notes = queue_args(d)
    cmds.append(["tc", "qdisc", "add", "dev", dev, *parent, "handle", QUEUE_HANDLE, *qargs])
    return cmds, notes  # fmt: skip


def class_change_argv(dev: str, rate_bps: int) -> list[str]:
    return ["tc", "class", "change", "dev", dev, "parent", HTB_HANDLE, "classid", HTB_CLASS,
            *htb_class_args(rate_bps)]  # fmt: skip


def teardown_argv(dev: str) -> list[str]:
    return ["tc", "qdisc", "del", "dev", dev, "root"]


def teardown_police_argv(dev: str) -> list[str]:
    """Removes the clsact qdisc and with it the police filter."""
    return ["tc", "qdisc", "del", "dev", dev, "clsact"]


def replay_schedule(
    dev: str, points: Sequence[tuple[int, int]], period_ms: int, loop: bool
) -> dict[str, Any]:
    """A trace's schedule for the replayer (netem/replay.py): at each point's time, the HTB
    class's rate changes to the point's (`class_change_argv`); the first point is applied with
    the class itself."""
    steps = [{"t_ms": t, "argv": class_change_argv(dev, r)} for t, r in points]
    return {"dev": dev, "period_ms": period_ms, "loop": loop, "skip_first": True, "steps": steps}


class TcError(RuntimeError):
    """A tc command failed; the message holds the command, tc's error and a hint."""


def _run_or_explain(node: NodeExec, argv: list[str]) -> None:
    res = node.run(argv, check=False)
    if res.returncode == 0:
        return
    hint = ""
    if "police" in argv:
        hint = (
            " (a policer needs the kernel's act_police, CONFIG_NET_ACT_POLICE, and clsact; "
            "without them use `backend: userspace`)"
        )
    raise TcError(f"{' '.join(argv)}: exit {res.returncode}: {res.stderr.strip()}{hint}")


def _master(node: NodeExec, dev: str) -> str | None:
    """The bridge (or bond) `dev` is enslaved to, if any."""
    res = node.run(["ip", "-j", "link", "show", "dev", dev], check=False)
    try:
        info = json.loads(res.stdout) if res.returncode == 0 else []
    except json.JSONDecodeError:
        return None
    return info[0].get("master") if info else None


class TcBackend:
    """LinkBackend on tc. `make_bridge`: create a Linux bridge between the two interfaces in the
    node (the tc backend only shapes; something has to forward), unless one of them already
    has a master (the topology bridged them)."""

    name = "tc"

    def __init__(self, make_bridge: bool = True, *, defer_traces: bool = False) -> None:
        """`defer_traces`: apply() sets each trace's first rate but its schedule starts only
        at start_traces() (a test starts it once its probe is ready, not when the link is up)."""
        self.make_bridge = make_bridge
        self.defer_traces = defer_traces
        self._node: NodeExec | None = None
        self._devs: list[str] = []
        self._replayers: list[Replayer] = []
        self._bridge = False

    def plan(
        self,
        iface_up_in: str,
        iface_up_out: str,
        link: Link,
        *,
        base_dir: Path,
        seed: int,
        netem_seed: bool | None = None,
    ) -> dict[str, Any]:
        """The tc argv lists for both directions. `netem_seed`: whether the tc that runs them
        knows netem's `seed` option (None: ask this machine's tc)."""
        resolved = resolve_link(link, base_dir)
        if netem_seed is None:
            netem_seed = local_netem_seed()
        up_seed, down_seed = (seed, seed + 1) if netem_seed else (None, None)
        up_cmds, up_notes = direction_commands(iface_up_out, resolved.uplink, up_seed)
        down_cmds, down_notes = direction_commands(iface_up_in, resolved.downlink, down_seed)
        if not netem_seed and any(needs_netem(d) for d in (resolved.uplink, resolved.downlink)):
            up_notes.append(NO_SEED_NOTE)
        return {
            "backend": "tc",
            "resolved": resolved,
            "uplink": {"dev": iface_up_out, "commands": up_cmds, "seed": seed,
                       "trace": trace_steps(resolved.uplink)},
            "downlink": {"dev": iface_up_in, "commands": down_cmds, "seed": seed + 1,
                         "trace": trace_steps(resolved.downlink)},
            "notes": up_notes + down_notes
            + (["packet_log: the tc backend writes no packet log"] if link.packet_log else []),
        }  # fmt: skip

    def apply(
        self,
        node: NodeExec,
        iface_up_in: str,
        iface_up_out: str,
        link: Link,
        *,
        base_dir: Path,
        run_dir: Path,
        seed: int,
    ) -> dict[str, Any]:
        usage = node.run(netem_usage_argv(), check=False)
        plan = self.plan(iface_up_in, iface_up_out, link, base_dir=base_dir, seed=seed,
                         netem_seed=seed_in_usage(usage.stdout + usage.stderr))  # fmt: skip
        self._node = node
        commands: list[list[str]] = []
        if self.make_bridge and not any(_master(node, d) for d in (iface_up_in, iface_up_out)):
            for argv in (
                ["ip", "link", "add", "name", BRIDGE_NAME, "type", "bridge"],
                ["ip", "link", "set", iface_up_in, "master", BRIDGE_NAME],
                ["ip", "link", "set", iface_up_out, "master", BRIDGE_NAME],
                ["ip", "link", "set", BRIDGE_NAME, "up"],
            ):
                self._bridge = True
                node.run(argv)
                commands.append(argv)
        for key in ("uplink", "downlink"):
            dev = plan[key]["dev"]
            node.run(teardown_argv(dev), check=False)  # no stale root qdisc
            node.run(teardown_police_argv(dev), check=False)  # nor a stale policer
            self._devs.append(dev)  # stop() cleans up even if a command below fails
            for argv in plan[key]["commands"]:
                _run_or_explain(node, argv)
                commands.append(argv)
        for key in ("uplink", "downlink"):
            tr = plan[key]["trace"]
            if tr is not None:
                schedule = replay_schedule(plan[key]["dev"], *tr)
                self._replayers.append(Replayer(schedule, functools.partial(node.run, check=False)))
        if not self.defer_traces:
            self.start_traces()
        applied = {
            "backend": "tc",
            "commands": commands,
            "resolved": plan["resolved"].to_json(),
            "seed_uplink": seed,
            "seed_downlink": seed + 1,
            "notes": plan["notes"],
        }
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / rundir.TC_APPLIED).write_text(json.dumps(applied, indent=1))
        return applied

    def start_traces(self) -> float | None:
        """Start every trace schedule now, at one t0 (time.monotonic(), returned; None when
        the link has no trace). apply() calls it unless the backend defers traces."""
        if not self._replayers:
            return None
        t0 = time.monotonic()
        for rep in self._replayers:
            rep.start(t0)
        return t0

    def stop(self) -> dict[str, Any]:
        out: dict[str, Any] = {"oversized_frames": None, "oversized_note": "tc cannot count them"}
        errors: list[str] = []
        for rep in self._replayers:
            rep.stop()
            errors += rep.errors
        out["trace_rate_changes"] = sum(r.changes for r in self._replayers)
        self._replayers = []
        node = self._node
        if node is not None:
            stats: dict[str, Any] = {}
            for dev in self._devs:
                res = node.run(["tc", "-s", "-j", "qdisc", "show", "dev", dev], check=False)
                try:
                    stats[dev] = json.loads(res.stdout) if res.returncode == 0 else res.stderr
                except json.JSONDecodeError:
                    stats[dev] = res.stdout
                res = node.run(["tc", "-s", "-j", "filter", "show", "dev", dev, "egress"],
                               check=False)  # fmt: skip
                if res.returncode == 0 and res.stdout.strip() not in ("", "[]"):
                    try:
                        stats[f"{dev} egress filters"] = json.loads(res.stdout)
                    except json.JSONDecodeError:
                        stats[f"{dev} egress filters"] = res.stdout
                node.run(teardown_argv(dev), check=False)
                node.run(teardown_police_argv(dev), check=False)
            out["qdisc_stats"] = stats
            if self._bridge:
                node.run(["ip", "link", "del", BRIDGE_NAME], check=False)
                self._bridge = False
        self._devs = []
        self._node = None
        out["errors"] = errors
        return out
