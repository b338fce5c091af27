"""A small bench for link-emulation tests inside the VM: three network namespaces

    vma (10.79.0.1) —veth— [vmm: the backend between vmm0 and vmm1] —veth— vmb (10.79.0.2)

with offloads and IPv6 off and static neighbours, so the only packets on the link are the
probe's own. A backend (`tc` or `userspace`) applies a `netem.model.Link` in vmm (uplink =
vma → vmb); `probe()` sends numbered, timestamped UDP packets (netem/udpprobe.py) and returns
what arrived. The statistics helpers turn that into what the link model promises: delay
distribution, loss rate, loss bursts, received rate.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from netem.backend import LinkBackend
from netem.model import Link
from netem.nsexec import NetnsExec, add_netns, del_netns
from netem.probe import get_backend
from netem.tc import TcBackend
from netem.udpprobe import FIRST_LINE, READY_LINE

IP_A, IP_B = "10.79.0.1", "10.79.0.2"
NS_A, NS_M, NS_B = "vma", "vmm", "vmb"
IF_A, IF_MA, IF_MB, IF_B = "vma0", "vmm0", "vmm1", "vmb0"
PROBE_PORT = 5391
STARTUP_TIMEOUT_S = 60.0
"""How long a probe process may take to bind or to send its first packet (TCG on a busy host
took over 1 s; a broken one never does)."""
ARRIVAL_SLACK_MS = 20.0
"""assumption: under TCG the guest's softirqs spread a burst's arrival at the bottleneck qdisc
up to this much beyond the sender's own timestamps (measured: tc delivered limit + 4 packets
of a 200-packet burst sent within 8 ms into a 2 Mbit/s link, while its queueing delay stayed
within the limit); packets the link serves meanwhile are not queue overflow."""
FRAME_OVERHEAD_BYTES = 8 + 20 + 14
"""UDP + IPv4 + Ethernet header bytes around a probe's payload (the rate counts frames)."""


@dataclass
class Probe:
    """What arrived: arrays in arrival order, and how many were sent."""

    sent: int
    seq: np.ndarray
    send_ns: np.ndarray
    recv_ns: np.ndarray
    size: np.ndarray

    @property
    def delay_ms(self) -> np.ndarray:
        return (self.recv_ns - self.send_ns) / 1e6

    def received_mask(self) -> np.ndarray:
        got = np.zeros(self.sent, dtype=bool)
        got[self.seq[self.seq < self.sent]] = True
        return got


def loss_bursts(received: np.ndarray) -> np.ndarray:
    """Lengths of the runs of consecutive losses in a received/lost pattern."""
    lost = np.concatenate([[False], ~received, [False]]).astype(np.int8)
    edges = np.diff(lost)
    return np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)


def reorderings(p: Probe) -> int:
    """Packets that arrived after a packet sent later than them."""
    if len(p.seq) == 0:
        return 0
    return int(np.count_nonzero(p.seq < np.maximum.accumulate(p.seq)))


def fifo_reorder_bound(p: Probe) -> int:
    """Reorderings a FIFO link may show in the VM: 1 % of the packets received.

    A FIFO emulator keeps order, but the probe's own path under TCG (two vCPUs, veth, a
    bridge: a packet handed on by the other vCPU can overtake one) reorders a few by itself,
    1 to 6 of 600-1,500 in fresh-clone runs on an idle host. An emulator that ignored FIFO
    order under jitter reorders most packets, an order of magnitude above this bound."""
    return len(p.seq) // 100


def binomial_interval(n: int, p: float, z: float = 4.0) -> tuple[float, float]:
    """Bounds on the number of successes of n Bernoulli(p) trials, z standard deviations
    wide (normal approximation; z = 4: a correct emulator fails 6 times in 100 000)."""
    sd = math.sqrt(n * p * (1.0 - p))
    return n * p - z * sd, n * p + z * sd


def wire_mbps(p: Probe, t0_ns: int, t1_ns: int) -> float:
    """Received rate in frames on the wire between two receive times."""
    sel = (p.recv_ns >= t0_ns) & (p.recv_ns < t1_ns)
    bits = float(np.sum(p.size[sel] + FRAME_OVERHEAD_BYTES)) * 8
    return bits / ((t1_ns - t0_ns) / 1e9) / 1e6


def policer_pass_bounds(
    burst_bytes: int, rate_mbps: float, frame_bytes: int, burst_ms: float
) -> tuple[int, float]:
    """How many frames of a back-to-back burst a token bucket (starting full) passes: at least
    what the bucket holds, at most that plus one plus what the rate refills while the burst
    arrives (its send time plus ARRIVAL_SLACK_MS of TCG's spread)."""
    bucket = burst_bytes // frame_bytes
    refill = (burst_ms + ARRIVAL_SLACK_MS) * rate_mbps * 1e3 / 8 / frame_bytes
    return bucket, bucket + 1 + refill


def delay_summary(p: Probe) -> dict[str, float | int]:
    d = p.delay_ms
    if len(d) == 0:
        return {"received": 0}
    return {
        "received": int(len(d)),
        "min_ms": float(d.min()),
        "p50_ms": float(np.median(d)),
        "p99_ms": float(np.percentile(d, 99)),
        "max_ms": float(d.max()),
        "mean_ms": float(d.mean()),
        "std_ms": float(d.std()),
    }


def _await_line(recv: subprocess.Popen[bytes], want: str, timeout_s: float) -> None:
    """Wait until the udpprobe receiver prints `want` (or fail, saying why). Reads a line at a
    time after select(): safe because the receiver prints its bound line before the sender
    starts and its first-packet line after, so two lines never wait in the buffer at once."""
    assert recv.stdout is not None and recv.stderr is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([recv.stdout], [], [], 0.5)
        if ready:
            line = recv.stdout.readline().decode(errors="replace").strip()
            if line == want:
                return
            if not line and recv.poll() is not None:
                break
        elif recv.poll() is not None:
            break
    err = recv.stderr.read().decode(errors="replace")[-800:] if recv.poll() is not None else ""
    raise RuntimeError(f"udpprobe recv did not print {want!r} within {timeout_s:g} s: {err}")


@contextlib.contextmanager
def _reaped(proc: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """Kill and wait for `proc` on leaving the block if it still runs (every exit path)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _finish(proc: subprocess.Popen[bytes], what: str, timeout_s: float) -> None:
    """Wait for a probe process to end; raise with its stderr if it failed."""
    _, err = proc.communicate(timeout=timeout_s)
    if proc.returncode != 0:
        raise RuntimeError(f"udpprobe {what} failed: {err.decode(errors='replace')[-800:]}")


STARTUP_FILE = "probe-startup.json"
"""In $PRIOLAB_VM_OUT: each probe's start-up seconds (receiver spawned → socket bound), written
after every probe so the host sees it while the job runs (vm/run.py scales its budget by it)."""


class Bench:
    """The three namespaces; `link()` applies a backend for the length of a with-block."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.startup_s: list[float] = []  # per probe: receiver spawned → socket bound
        workdir.mkdir(parents=True, exist_ok=True)
        self.close()
        self.a, self.m, self.b = add_netns(NS_A), add_netns(NS_M), add_netns(NS_B)
        subprocess.run(["ip", "link", "add", IF_A, "netns", NS_A, "type", "veth", "peer",
                        "name", IF_MA, "netns", NS_M], check=True)  # fmt: skip
        subprocess.run(["ip", "link", "add", IF_MB, "netns", NS_M, "type", "veth", "peer",
                        "name", IF_B, "netns", NS_B], check=True)  # fmt: skip
        for node, devs in ((self.a, [IF_A]), (self.m, [IF_MA, IF_MB]), (self.b, [IF_B])):
            node.run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])
            node.run(["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"])
            for dev in devs:
                for feature in ("tx", "rx", "sg", "gso", "tso", "gro"):
                    node.run(["ethtool", "-K", dev, feature, "off"], check=False)
                node.run(["ip", "link", "set", dev, "up"])
        self.a.run(["ip", "addr", "add", f"{IP_A}/24", "dev", IF_A])
        self.b.run(["ip", "addr", "add", f"{IP_B}/24", "dev", IF_B])
        mac_a = self._mac(self.a, IF_A)
        mac_b = self._mac(self.b, IF_B)
        self.a.run(["ip", "neigh", "replace", IP_B, "lladdr", mac_b, "dev", IF_A])
        self.b.run(["ip", "neigh", "replace", IP_A, "lladdr", mac_a, "dev", IF_B])

    @staticmethod
    def _mac(node: NetnsExec, dev: str) -> str:
        info = json.loads(node.run(["ip", "-j", "link", "show", "dev", dev]).stdout)
        return str(info[0]["address"])

    def close(self) -> None:
        for ns in (NS_A, NS_M, NS_B):
            del_netns(ns)

    @contextlib.contextmanager
    def link(
        self,
        backend_name: str,
        link: dict[str, Any] | Link,
        *,
        seed: int = 1,
        tag: str = "link",
        defer_traces: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Apply `link` with backend `tc` or `userspace` in vmm; yields what apply returned,
        with `stop` (the backend's final counters) added when the block ends.
        `defer_traces` (tc only): the trace schedule starts when `applied["start_traces"]()` is
        called (pass it to probe() as on_first_packet), which records `t_trace_start_ns`."""
        backend: LinkBackend = get_backend(backend_name)
        if defer_traces:
            if not isinstance(backend, TcBackend):
                raise ValueError("defer_traces: only the tc backend replays traces on demand")
            backend.defer_traces = True
        model = link if isinstance(link, Link) else Link.model_validate(link)
        run_dir = self.workdir / f"{tag}-{backend_name}"
        applied = backend.apply(
            self.m, IF_MA, IF_MB, model, base_dir=self.workdir, run_dir=run_dir, seed=seed
        )
        applied["t_applied_ns"] = time.time_ns()
        if defer_traces:
            assert isinstance(backend, TcBackend)
            tc = backend

            def start_traces() -> None:
                applied["t_trace_start_ns"] = time.time_ns()
                tc.start_traces()

            applied["start_traces"] = start_traces
        try:
            yield applied
        finally:
            applied["stop"] = backend.stop()

    def tc_json(self, *what: str) -> Any:
        """`tc -s -j WHAT` in vmm, parsed (e.g. tc_json("qdisc", "show", "dev", "vmm1"))."""
        return json.loads(self.m.run(["tc", "-s", "-j", *what]).stdout)

    def probe(
        self,
        pps: float,
        count: int,
        size: int = 64,
        *,
        tag: str = "probe",
        idle_s: float = 2.0,
        on_first_packet: Callable[[], None] | None = None,
    ) -> Probe:
        """Send `count` UDP packets of `size` payload bytes at `pps` from vma to vmb.
        `on_first_packet` is called when the receiver gets the first packet (a schedule that
        must run with the probe starts there, not at a time guessed in advance)."""
        out = self.workdir / f"{tag}.npz"
        out.unlink(missing_ok=True)
        py = [sys.executable, "-m", "netem.udpprobe"]
        limit_s = count / pps + idle_s + 30
        t_spawn = time.monotonic()
        recv = self.b.popen(
            py + ["recv", "--port", str(PROBE_PORT), "--out", str(out),
                  "--duration", str(limit_s), "--idle", str(idle_s)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        send_argv = py + ["send", "--dst", IP_B, "--port", str(PROBE_PORT), "--pps", str(pps),
                          "--count", str(count), "--size", str(size)]  # fmt: skip
        with _reaped(recv):
            # Not a fixed sleep: under TCG on a busy host python took over 1 s to bind, the
            # burst was sent to no socket and a queue test received nothing.
            _await_line(recv, READY_LINE, timeout_s=STARTUP_TIMEOUT_S)
            self._record_startup(time.monotonic() - t_spawn)
            if on_first_packet is None:
                self.a.run(send_argv)
            else:
                sender = self.a.popen(send_argv, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE)  # fmt: skip
                with _reaped(sender):
                    _await_line(recv, FIRST_LINE, timeout_s=STARTUP_TIMEOUT_S)
                    on_first_packet()
                    _finish(sender, "send", limit_s + 30)
            _finish(recv, "recv", limit_s + 30)
        with np.load(out) as z:
            return Probe(count, z["seq"], z["send_ns"], z["recv_ns"], z["size"])

    def _record_startup(self, seconds: float) -> None:
        """Keep the start-up time and rewrite $PRIOLAB_VM_OUT/probe-startup.json (atomically)."""
        self.startup_s.append(round(seconds, 3))
        out = Path(os.environ.get("PRIOLAB_VM_OUT", self.workdir))
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / (STARTUP_FILE + ".tmp")
        tmp.write_text(json.dumps({"startup_s": self.startup_s}))
        tmp.replace(out / STARTUP_FILE)
