"""The `qpr` workload ([QPR]): the `qpr` segment server in the host (QUIC server, the
content) and the headless player in the guest; the media flows host → guest (the downlink).

Schemes of the paper map to `q_pct`, the unreliable share of the four objects: Q0 (all
reliable, the paper's "reliable QUIC"), Q50 (QPR: the top two by viewport priority
reliable), Q75, Q100 (all datagrams); and `transport: h2`, the HTTP/2-over-TCP baseline.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from priolab.workloads.base import QuicPair, RunContext, no_quic

Q_LEVELS = (0, 25, 50, 75, 100)
# quinn's minimum congestion window is two 1200-byte packets: a smaller initial window
# (a BDP of a near-zero trace rate) is raised to it.
MIN_WINDOW_BYTES = 2400


class InitialWindow(BaseModel):
    """[QPR §IV-B]: the initial window is the BDP at the lowest bandwidth of the trace."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lowest_rate_mbps: float = Field(gt=0.0, description="the trace's lowest (non-zero) rate")
    rtt_ms: float = Field(gt=0.0, description="the path's round-trip time")

    def bytes(self) -> int:
        bdp = self.lowest_rate_mbps * 1e6 / 8 * self.rtt_ms / 1e3
        return max(MIN_WINDOW_BYTES, round(bdp))


class QprParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    q_pct: int = Field(default=50, description="unreliable share of the objects: 0/25/50/75/100")
    transport: Literal["quic", "h2"] = Field(
        default="quic", description="QUIC, or the HTTP/2-over-TCP baseline (q_pct 0)"
    )
    scale: float = Field(
        default=1.0, gt=0.0, le=1.0, description="Table 2 bitrates × this (rescaled with the link)"
    )
    initial_window: InitialWindow | None = Field(
        default=None, description="BDP initial window; none = quinn's default"
    )
    buffer_segments: int = Field(default=1, ge=1, le=30, description="[QPR]: 1 s = 1 segment")
    abr_safety: float = Field(default=1.0, gt=0.0, le=2.0, description="ABR budget factor")
    lap_s: float = Field(default=60.0, gt=0.0, description="one lap of the viewer (s)")
    eod_grace_ms: float = Field(
        default=5.0, ge=0.0, le=1000.0, description="wait after an end-of-data for datagrams"
    )
    cc: Literal["cubic", "newreno", "bbr"] = "cubic"
    unreliable_path: Literal["shared", "fixed_window_connection", "loss_blind_connection"] = Field(
        default="shared",
        description="datagrams on the one connection under `cc` (quinn's loss response), or "
        "on a second connection whose window stays at `initial_window` or that runs `cc` "
        "without its loss response (README: unreliable path)",
    )
    fec_repair_pct: int = Field(
        default=0, ge=0, le=700,
        description="FEC repair datagrams per 100 source datagrams of an unreliable object "
        "(QPR(F), [QPR §IV-E]); 0 = none",
    )  # fmt: skip
    fec_block: int = Field(
        default=32, ge=1, le=255, description="source datagrams per FEC block (assumption)"
    )
    idle_timeout_s: float = Field(default=10.0, gt=0.0, description="[QPR]: 10 s")
    port: int = Field(default=4443, ge=1024, le=65535)

    @field_validator("q_pct")
    @classmethod
    def _q_level(cls, v: int) -> int:
        if v not in Q_LEVELS:
            raise ValueError(f"{v}: allowed {', '.join(map(str, Q_LEVELS))}")
        return v

    @model_validator(mode="after")
    def _h2_is_reliable(self) -> QprParams:
        if self.transport == "h2" and self.q_pct != 0:
            raise ValueError(f"q_pct {self.q_pct}: transport h2 is reliable, allowed q_pct 0")
        if self.transport == "h2" and self.unreliable_path != "shared":
            raise ValueError(f"unreliable_path {self.unreliable_path}: transport h2 has no "
                             "datagrams, allowed shared")  # fmt: skip
        if self.fec_block * (100 + self.fec_repair_pct) > 25600:  # GF(2^8): 256 symbols
            raise ValueError(f"fec_block {self.fec_block} with fec_repair_pct "
                             f"{self.fec_repair_pct}: a block and its repair datagrams must "
                             "number at most 256")  # fmt: skip
        if self.transport == "h2" and self.fec_repair_pct:
            raise ValueError(f"fec_repair_pct {self.fec_repair_pct}: transport h2 has no "
                             "datagrams to protect, allowed 0")  # fmt: skip
        if self.unreliable_path == "fixed_window_connection" and self.initial_window is None:
            raise ValueError("unreliable_path fixed_window_connection: the fixed window is "
                             "initial_window, which is not set")  # fmt: skip
        return self


class Qpr(QuicPair):
    kind = "qpr"
    params_model = QprParams
    program, listener, connector = "qpr", "server", "player"

    def _common(self, params: QprParams, ctx: RunContext) -> list[str]:
        return ["--scale", f"{params.scale:g}", "--seed", str(ctx.seed), "--cc", params.cc,
                "--transport", params.transport,
                "--unreliable-path", params.unreliable_path.replace("_", "-"),
                "--fec-repair-pct", str(params.fec_repair_pct),
                "--fec-block", str(params.fec_block),
                "--idle-timeout-s", f"{params.idle_timeout_s:g}"]  # fmt: skip

    def listener_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        assert isinstance(params, QprParams)
        iw = params.initial_window.bytes() if params.initial_window else 0
        return ["--initial-window-bytes", str(iw), *self._common(params, ctx)]

    def connector_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        assert isinstance(params, QprParams)
        return [
            "--duration-s", f"{ctx.duration_s:g}", "--q-pct", str(params.q_pct),
            "--buffer-segments", str(params.buffer_segments),
            "--abr-safety", f"{params.abr_safety:g}", "--lap-s", f"{params.lap_s:g}",
            "--eod-grace-ms", f"{params.eod_grace_ms:g}", *self._common(params, ctx),
        ]  # fmt: skip

    def qlog_problems(self, params: BaseModel) -> list[tuple[str, str]]:
        """The HTTP/2 baseline opens no QUIC connection to trace."""
        assert isinstance(params, QprParams)
        return no_quic("transport", params.transport) if params.transport == "h2" else []

    def sim_problems(self, params: BaseModel) -> list[tuple[str, str]]:
        """What the sim site cannot run: the HTTP/2 baseline (kernel TCP)."""
        assert isinstance(params, QprParams)
        if params.transport == "h2":
            return [("transport", "'h2' is HTTP/2 over the kernel's TCP and the sim site has "
                     "no TCP; allowed there: quic")]  # fmt: skip
        return []
