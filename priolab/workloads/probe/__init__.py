"""The probe workload: one measurement of the emulated link (the calibration's steps).

Guest → Host, one of three probes (their programs stay where they are):
- `iperf3`: iperf3 UDP at a wire rate (payload rate scaled by payload/frame, so frames arrive
  at exactly the configured rate); the receiver's JSON report;
- `lkprobe`: the batched multi-flow UDP probe (netem/linkem/src/bin/lkprobe; netem/rateprobe.py
  reads it), for rates iperf3 cannot offer;
- `udpprobe`: paced, sequence-numbered, send-time-stamped datagrams (netem/udpprobe.py) whose
  receiver stores every arrival with the kernel's receive stamp (`probe.npz`), optionally
  behind a background load of iperf3 UDP (`load_mbps`), paced in ticks of
  `LOAD_PACING_TIMER_US` (iperf3's default 1 ms tick sends 50 Mbit/s as bursts of ~4.5 frames,
  and a probe packet behind such a burst waits in the model's queue: queueing the model owes,
  which the delay-error figure would count as the emulator's error; netem/README.md "How the
  bound was chosen").

`priolab calibrate` (calibrate.py) plans a series of these runs on one Mininet network through
the engine and reads them with analysis.py; a scenario may run one too (`workload.kind: probe`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from netem.rateprobe import lkprobe_path
from priolab.paths import REPO_ROOT
from priolab.workloads.base import ProcessSpec, RunContext

PAYLOAD_BYTES = 1400
FRAME_OVERHEAD_BYTES = 8 + 20 + 14  # UDP + IPv4 + Ethernet: rates are counted on the wire
SERVER_BIND_S = 0.3
LOAD_PACING_TIMER_US = 100
"""iperf3 `--pacing-timer` of the background load: at 50 Mbit/s one 1442-byte frame is due every
0.23 ms, so a 100 µs tick sends them one by one instead of in 1 ms bursts."""
"""A receiver is started this long before its sender (assumption: binding a UDP or TCP
socket takes well under 0.3 s; the calibrator has always used it)."""
LOAD_SETTLE_S = 1.0
"""With a background load, the probe's receiver starts this long after the load's sender,
so the queue has reached its steady state."""
PROBE_RECV_LEAD_S = 0.5
PROBE_FILE = "probe.npz"


class ProbeParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: Literal["iperf3", "lkprobe", "udpprobe"]
    wire_mbps: float = Field(default=10.0, gt=0.0, le=100_000.0, description="iperf3, lkprobe")
    seconds: float = Field(default=4.0, gt=0.0, le=3600.0, description="iperf3, lkprobe")
    payload_bytes: int = Field(default=PAYLOAD_BYTES, ge=64, le=1472)
    flows: int = Field(default=2, ge=1, le=64, description="lkprobe")
    pps: float = Field(default=200.0, gt=0.0, le=1_000_000.0, description="udpprobe")
    count: int = Field(default=1000, ge=1, le=100_000_000, description="udpprobe")
    size_bytes: int = Field(default=64, ge=16, le=1472, description="udpprobe")
    idle_s: float = Field(default=2.0, ge=0.1, le=60.0, description="udpprobe: end after idle")
    load_mbps: float = Field(default=0.0, ge=0.0, le=100_000.0, description="udpprobe: "
                             "iperf3 UDP load on the wire behind the probe")  # fmt: skip
    port: int = Field(default=5271, ge=1024, le=65535)
    probe_port: int = Field(default=5272, ge=1024, le=65535)


def payload_bps(wire_bps: float, payload: int = PAYLOAD_BYTES) -> float:
    """The payload rate iperf3 must be given so its frames cross the wire at `wire_bps`."""
    return wire_bps * payload / (payload + FRAME_OVERHEAD_BYTES)


def num(x: float) -> str:
    """A number as a command-line argument: integers without a decimal point."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def probe_seconds(p: ProbeParams) -> float:
    """How long the probe sends (the run's duration)."""
    return p.count / p.pps if p.tool == "udpprobe" else p.seconds


class Probe:
    kind = "probe"
    params_model = ProbeParams

    def check(self, params: BaseModel, base_dir: Path) -> list[tuple[str, str]]:
        return []

    def prepare(self, params: BaseModel, ctx: RunContext) -> dict[str, str]:
        return {}

    def plan(self, params: BaseModel, ctx: RunContext) -> list[ProcessSpec]:
        assert isinstance(params, ProbeParams)
        p, pair = params, ctx.pairs[0]
        if p.tool == "iperf3":
            bps = payload_bps(p.wire_mbps * 1e6, p.payload_bytes)
            return [
                ProcessSpec("iperf3-server", pair.host,
                            ["iperf3", "-s", "-1", "-J", "-p", str(p.port)]),
                ProcessSpec("iperf3-client", pair.guest,
                            ["iperf3", "-c", pair.host_ip, "-p", str(p.port), "-u", "-b",
                             f"{bps:.0f}", "-l", str(p.payload_bytes), "-t", num(p.seconds),
                             "-J"], start_delay_s=SERVER_BIND_S),
            ]  # fmt: skip
        if p.tool == "lkprobe":
            exe = str(lkprobe_path())
            return [
                ProcessSpec("lkprobe-recv", pair.host,
                            [exe, "recv", "--port", str(p.port), "--flows", str(p.flows),
                             "--idle", "1", "--seconds", num(p.seconds + 15)]),
                ProcessSpec("lkprobe-send", pair.guest,
                            [exe, "send", "--dst", pair.host_ip, "--port", str(p.port),
                             "--rate-mbps", num(p.wire_mbps), "--seconds", num(p.seconds),
                             "--flows", str(p.flows), "--payload-bytes", str(p.payload_bytes)],
                            start_delay_s=SERVER_BIND_S),
            ]  # fmt: skip
        specs: list[ProcessSpec] = []
        env = {"PYTHONPATH": str(REPO_ROOT)}
        py = [sys.executable, "-m", "netem.udpprobe"]
        lead = 0.0
        if p.load_mbps > 0:
            bps = payload_bps(p.load_mbps * 1e6)
            specs += [
                ProcessSpec("load-server", pair.host, ["iperf3", "-s", "-1", "-p", str(p.port)]),
                ProcessSpec("load-client", pair.guest,
                            ["iperf3", "-c", pair.host_ip, "-p", str(p.port), "-u", "-b",
                             f"{bps:.0f}", "-l", str(PAYLOAD_BYTES), "--pacing-timer",
                             str(LOAD_PACING_TIMER_US), "-t",
                             num(p.count / p.pps + 3)], start_delay_s=SERVER_BIND_S),
            ]  # fmt: skip
            lead = LOAD_SETTLE_S
        out = str(ctx.run_dir / PROBE_FILE)
        specs += [
            ProcessSpec("udpprobe-recv", pair.host,
                        [*py, "recv", "--port", str(p.probe_port), "--out", out, "--duration",
                         num(p.count / p.pps + p.idle_s + 5), "--idle", num(p.idle_s)],
                        start_delay_s=lead, env=env),
            ProcessSpec("udpprobe-send", pair.guest,
                        [*py, "send", "--dst", pair.host_ip, "--port", str(p.probe_port),
                         "--pps", num(p.pps), "--count", str(p.count), "--size",
                         str(p.size_bytes)], start_delay_s=PROBE_RECV_LEAD_S, env=env),
        ]  # fmt: skip
        return specs

    def tools(self) -> list[list[str]]:
        return [["iperf3", "--version"]]

    def binaries(self) -> dict[str, str]:
        return {"lkprobe": str(lkprobe_path()), "python": sys.executable}


WORKLOAD = Probe()
