"""The `dtp` workload ([DTP]): the `dtp` sender in the host (QUIC server, the block
source) and the receiver in the guest; blocks flow host → guest (the downlink).

The paper's schemes map to `scheme` and `alpha`: QUIC = `quic` (round robin over the blocks,
as quiche 0.2.0, the release DTP extends, schedules streams by default; `quic-fifo` is a QUIC
that sends its blocks one after another), SCTP' = `fcfs`, DTP-D = `ads` with α 0, DTP-P =
`ads` with α 1, DTP = `ads` with α 0.5 (endpoints/README.md "dtp").
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from priolab.workloads.base import QuicPair, RunContext


class DtpParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scheme: Literal["quic", "quic-fifo", "fcfs", "ads"] = Field(
        default="ads",
        description="quic: quiche's round robin; quic-fifo: blocks in turn; fcfs: SCTP'; ads: DTP",
    )
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


class Dtp(QuicPair):
    kind = "dtp"
    params_model = DtpParams
    program, listener, connector = "dtp", "sender", "receiver"

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

    def _pattern(self, params: DtpParams, ctx: RunContext) -> list[str]:
        return [
            "--interval-ms", f"{params.interval_ms:g}",
            "--block-bytes", ",".join(str(b) for b in params.block_bytes),
            "--deadline-ms", f"{params.deadline_ms:g}",
            "--duration-s", f"{ctx.duration_s:g}", "--drain-s", f"{params.drain_s:g}",
            "--cc", params.cc,
        ]  # fmt: skip

    def listener_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        assert isinstance(params, DtpParams)
        return [
            "--scheme", params.scheme, "--alpha", f"{params.alpha:g}",
            *(["--beta", f"{params.beta:g}"] if params.beta is not None else []),
            "--send-window-bytes", str(params.send_window_bytes),
            "--chunk-bytes", str(params.chunk_bytes),
            "--redundancy", "on" if params.redundancy else "off",
            "--initial-bw-mbyte-s", f"{params.initial_bw_mbyte_s:g}",
            *self._pattern(params, ctx),
        ]  # fmt: skip

    def connector_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        assert isinstance(params, DtpParams)
        return self._pattern(params, ctx)
