"""The stand-in workload: real tools (iperf3 UDP and ping) through the same interface as RISE.

It exercises the whole run of one experiment (topology, link, processes, logs, metadata)
without the QUIC endpoints, and doubles as a quick sanity check of an emulated link.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from priolab.workloads.base import ProcessSpec, RunContext


class IperfPingParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    udp_rate_mbps: float = Field(default=5.0, gt=0.0, le=10_000.0)
    payload_bytes: int = Field(default=1400, ge=64, le=1472)
    direction: Literal["up", "down"] = Field(
        default="up", description="up: guest sends to host; down: host sends to guest"
    )
    ping_interval_s: float = Field(default=0.2, ge=0.01, le=10.0)
    port: int = Field(default=5201, ge=1024, le=65535)


class IperfPing:
    kind = "iperf-ping"
    params_model = IperfPingParams

    def check(self, params: BaseModel, base_dir: Path) -> list[tuple[str, str]]:
        return []

    def prepare(self, params: BaseModel, ctx: RunContext) -> dict[str, str]:
        return {}

    def plan(self, params: BaseModel, ctx: RunContext) -> list[ProcessSpec]:
        assert isinstance(params, IperfPingParams)
        specs: list[ProcessSpec] = []
        secs = max(1, round(ctx.duration_s))
        for i, pair in enumerate(ctx.pairs):
            tag = "" if len(ctx.pairs) == 1 else f"-{i + 1}"
            server_argv = ["iperf3", "-s", "-1", "-p", str(params.port)]
            client_argv = [
                "iperf3", "-c", pair.host_ip, "-p", str(params.port), "-u",
                "-b", f"{params.udp_rate_mbps}M", "-l", str(params.payload_bytes),
                "-t", str(secs), "--json",
            ]  # fmt: skip
            if params.direction == "down":
                client_argv.append("-R")
            specs.append(
                ProcessSpec(f"iperf3-server{tag}", pair.host, server_argv, runs_to_end=True)
            )
            specs.append(
                ProcessSpec(f"iperf3-client{tag}", pair.guest, client_argv, start_delay_s=0.5)
            )
            ping_argv = [
                "ping", "-n", "-D", "-i", str(params.ping_interval_s), "-w", str(secs),
                pair.host_ip,
            ]  # fmt: skip
            specs.append(ProcessSpec(f"ping{tag}", pair.guest, ping_argv))
        return specs

    def tools(self) -> list[list[str]]:
        return [["iperf3", "--version"], ["ping", "-V"]]

    def binaries(self) -> dict[str, str]:
        return {}  # Debian's, on every node's PATH


WORKLOAD = IperfPing()
