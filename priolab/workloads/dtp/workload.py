"""The `dtp` workload (seeds/001): the `dtp` sender in the host (QUIC server, the block
source) and the receiver in the guest; blocks flow host → guest (the downlink).

The paper's schemes map to `scheme` and `alpha`: QUIC = `quic`, SCTP' = `fcfs`, DTP-D =
`ads` with α 0, DTP-P = `ads` with α 1, DTP = `ads` with α 0.5 (endpoints/README.md "dtp").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from priolab.paths import REPO_ROOT
from priolab.workloads.base import ProcessSpec, RunContext, all_in_sim
from priolab.workloads.rise import TLS_KEYLOG


class DtpParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scheme: Literal["quic", "fcfs", "ads"] = "ads"
    alpha: float = Field(default=0.5, ge=0.0, le=1.0, description="ADS: priority weight (Eq. 3)")
    beta: float | None = Field(
        default=None, ge=0.0, le=1000.0, description="ADS: overdue penalty; default pmax"
    )
    interval_ms: float = Field(default=100.0, gt=0.0, le=60_000.0)
    block_bytes: list[int] = Field(
        default=[200_000, 200_000, 200_000],
        min_length=1,
        max_length=64,
        description="payload of each block of a round; priority 1, 2, ... in this order",
    )
    deadline_ms: float = Field(default=200.0, gt=0.0, le=60_000.0)
    send_window_bytes: int = Field(
        default=150_000, ge=1200, le=1 << 30, description="quinn's send window (> BDP)"
    )
    chunk_bytes: int = Field(default=1200, ge=1, le=1 << 20)
    redundancy: bool = Field(
        default=False, description="Reed-Solomon parity for data with < 2 RTT left (datagrams)"
    )
    initial_bw_mbyte_s: float = Field(default=1.0, gt=0.0, le=10_000.0)
    drain_s: float = Field(default=1.0, ge=0.0, le=60.0)
    cc: Literal["cubic", "newreno", "bbr"] = "cubic"
    port: int = Field(default=4444, ge=1024, le=65535)


def dtp_binary() -> str:
    return os.environ.get("PRIOLAB_DTP", str(REPO_ROOT / "target" / "release" / "dtp"))


class Dtp:
    kind = "dtp"
    params_model = DtpParams

    def check(self, params: BaseModel, base_dir: Path) -> list[tuple[str, str]]:
        assert isinstance(params, DtpParams)
        problems = []
        if any(b <= 0 for b in params.block_bytes):
            problems.append(("block_bytes", f"{params.block_bytes}: every size must be > 0"))
        if params.drain_s * 1000 < params.deadline_ms:
            # The last blocks' fate is decided only after their deadline: a shorter drain
            # would close the connection on blocks that could still be on time.
            problems.append(
                (
                    "drain_s",
                    f"{params.drain_s:g} s: allowed >= deadline_ms / 1000 "
                    f"({params.deadline_ms / 1000:g} s)",
                )  # fmt: skip
            )
        if params.send_window_bytes < params.chunk_bytes:
            problems.append(("send_window_bytes", "allowed >= chunk_bytes"))
        return problems

    def prepare(self, params: BaseModel, ctx: RunContext) -> dict[str, str]:
        return {}

    def plan(self, params: BaseModel, ctx: RunContext) -> list[ProcessSpec]:
        assert isinstance(params, DtpParams)
        specs: list[ProcessSpec] = []
        binary = dtp_binary()
        pattern = [
            "--interval-ms", f"{params.interval_ms:g}",
            "--block-bytes", ",".join(str(b) for b in params.block_bytes),
            "--deadline-ms", f"{params.deadline_ms:g}",
            "--duration-s", f"{ctx.duration_s:g}", "--drain-s", f"{params.drain_s:g}",
            "--cc", params.cc,
        ]  # fmt: skip
        for i, pair in enumerate(ctx.pairs):
            tag = "" if len(ctx.pairs) == 1 else f"-{i + 1}"
            host_dir, guest_dir = ctx.run_dir / f"host{tag}", ctx.run_dir / f"guest{tag}"
            cert = host_dir / "cert.der"
            sender = [
                binary, "--role", "sender", "--bind", f"0.0.0.0:{params.port}",
                "--cert-out", str(cert), "--log-dir", str(host_dir),
                "--scheme", params.scheme, "--alpha", f"{params.alpha:g}",
                *(["--beta", f"{params.beta:g}"] if params.beta is not None else []),
                "--send-window-bytes", str(params.send_window_bytes),
                "--chunk-bytes", str(params.chunk_bytes),
                "--redundancy", "on" if params.redundancy else "off",
                "--initial-bw-mbyte-s", f"{params.initial_bw_mbyte_s:g}",
                *pattern,
            ]  # fmt: skip
            receiver = [
                binary, "--role", "receiver", "--connect", f"{pair.host_ip}:{params.port}",
                "--cert", str(cert), "--log-dir", str(guest_dir), *pattern,
            ]  # fmt: skip
            if ctx.tls_keylog:  # SSLKEYLOGFILE format, beside the pcaps (engine/plan.py)
                receiver += ["--keylog", str(ctx.run_dir / f"{TLS_KEYLOG}{tag}")]
            specs.append(ProcessSpec(f"dtp-sender{tag}", pair.host, sender))
            specs.append(
                ProcessSpec(f"dtp-receiver{tag}", pair.guest, receiver, wait_for_file=cert)
            )
        return specs

    sim_problems = staticmethod(all_in_sim)  # Rust endpoints only

    def tools(self) -> list[list[str]]:
        return [[dtp_binary(), "--version"]]

    def binaries(self) -> dict[str, str]:
        return {"dtp": dtp_binary()}
