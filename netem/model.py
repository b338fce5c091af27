"""The link model: what one direction of an emulated link does to packets.

These pydantic models are the configuration language of a link, shared by the scenario files,
both backends (tc and the userspace emulator linkem) and the calibrator. They hold values as
the user wrote them (units in names); backends convert them to what they need.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from traces.config import TraceRate as TraceRate  # re-exported: the link model's rate

Percent = Annotated[float, Field(ge=0.0, le=100.0)]

ETH_HEADER_BYTES = 14
MTU_BYTES = 1500
MAX_FRAME_BYTES = MTU_BYTES + ETH_HEADER_BYTES
"""A full-size frame as both backends count it: Ethernet header + IP packet (no FCS)."""


# the link backends a scenario may ask for (`auto`: tc where the kernel has netem, else linkem)
BackendName = Literal["auto", "tc", "userspace"]


class Strict(BaseModel):
    """Base for config models: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- rate


# TraceRate (a throughput trace as the service rate) is defined with its reader in
# traces/config.py, below this model in the import order.


# --------------------------------------------------------------------------- loss


class NoLoss(Strict):
    model: Literal["none"] = "none"


class IidLoss(Strict):
    model: Literal["iid"]
    loss_pct: Percent


class GilbertElliottLoss(Strict):
    """netem's `loss gemodel p r 1-h 1-k`, all in percent.

    p: good→bad transition probability; r: bad→good; one_minus_h: loss probability in the bad
    state; one_minus_k: loss probability in the good state.
    """

    model: Literal["gilbert_elliott"]
    p_pct: Percent
    r_pct: Percent | None = Field(default=None, description="None: 100 - p_pct (netem)")
    one_minus_h_pct: Percent = 100.0
    one_minus_k_pct: Percent = 0.0

    @property
    def r_effective_pct(self) -> float:
        return 100.0 - self.p_pct if self.r_pct is None else self.r_pct


class GilbertElliottMeanLoss(Strict):
    """Convenience form: mean loss rate and mean burst length (packets), converted exactly to
    the simple Gilbert model (1-h = 100 %, 1-k = 0 %): r = 1/burst, p = r·loss/(1-loss)."""

    model: Literal["gilbert_elliott_mean"]
    loss_pct: Annotated[float, Field(ge=0.0, lt=100.0)]
    burst_pkts: Annotated[float, Field(ge=1.0)]


class FourStateLoss(Strict):
    """netem's `loss state p13 p31 p32 p23 p14` (percent), the 4-state Markov model."""

    model: Literal["four_state"]
    p13_pct: Percent
    p31_pct: Percent = 100.0
    p32_pct: Percent = 0.0
    p23_pct: Percent = 100.0
    p14_pct: Percent = 0.0


Loss = Annotated[
    NoLoss | IidLoss | GilbertElliottLoss | GilbertElliottMeanLoss | FourStateLoss,
    Field(discriminator="model"),
]


# --------------------------------------------------------------------------- policer


class Policer(Strict):
    """A token-bucket policer in place of a shaper: no queue. The bucket holds up to
    burst_bytes, fills at rate_mbps and starts full; a frame passes at once if the bucket
    holds at least its bytes (which it then takes), else it is dropped (taking nothing).
    Bytes are Ethernet frames (header + IP packet, no FCS), in linkem and in tc alike."""

    rate_mbps: float = Field(gt=0.0, le=100_000.0, description="token fill rate (Mbit/s)")
    burst_bytes: int = Field(
        description=f"bucket size in frame bytes, at least one full frame ({MAX_FRAME_BYTES})"
    )

    @model_validator(mode="after")
    def _burst_holds_a_frame(self) -> Policer:
        if self.burst_bytes < MAX_FRAME_BYTES:
            raise ValueError(
                f"burst_bytes {self.burst_bytes} must be at least one full frame, "
                f"{MAX_FRAME_BYTES} bytes (a smaller bucket never passes a full-size packet)"
            )
        return self


# --------------------------------------------------------------------------- queue


class Queue(Strict):
    """The bottleneck queue. Exactly one of limit_bytes, limit_packets, bdp_factor.

    The limit counts the frames waiting, not the one being serialised; a frame that does not
    fit is dropped on arrival, even on an idle link (it enters the queue before the server
    takes it; Linux's bfifo under HTB does the same). So limit_bytes must hold one full frame,
    and a BDP below one frame resolves to one frame."""

    limit_bytes: int | None = Field(
        default=None,
        ge=MAX_FRAME_BYTES,
        description=f"bytes of waiting frames, at least one full frame ({MAX_FRAME_BYTES})",
    )
    limit_packets: int | None = Field(default=None, gt=0)
    bdp_factor: float | None = Field(
        default=None, gt=0.0, description="limit = factor × rate × rtt_ms (bytes)"
    )
    rtt_ms: float | None = Field(
        default=None, gt=0.0, description="RTT for the BDP; default: uplink delay + downlink delay"
    )
    drop: Literal["tail", "head"] = "tail"

    @model_validator(mode="after")
    def _one_limit(self) -> Queue:
        given = [x for x in (self.limit_bytes, self.limit_packets, self.bdp_factor) if x]
        if len(given) != 1:
            raise ValueError("give exactly one of limit_bytes, limit_packets, bdp_factor")
        if self.rtt_ms is not None and self.bdp_factor is None:
            raise ValueError("rtt_ms is only used with bdp_factor")
        return self


# --------------------------------------------------------------------------- a direction


class Direction(Strict):
    """One direction of an emulated link: queue → rate server → delay line → loss, or
    policer → delay line → loss."""

    rate_mbps: float | None = Field(
        default=None, gt=0.0, le=100_000.0, description="constant rate (Mbit/s)"
    )
    trace: TraceRate | None = None
    unlimited: bool = Field(default=False, description="no rate limit (delay/loss only)")
    delay_ms: float = Field(default=0.0, ge=0.0, le=10_000.0)
    jitter_ms: float = Field(default=0.0, ge=0.0, le=10_000.0)
    jitter_reorder: bool = Field(
        default=False, description="let jitter reorder packets (netem's default); off: FIFO"
    )
    policer: Policer | None = Field(
        default=None, description="a token-bucket policer instead of a shaper (no queue)"
    )
    loss: Loss = Field(default_factory=NoLoss)
    queue: Queue | None = Field(
        default=None, description="the bottleneck queue; default one BDP; none with a policer"
    )

    @property
    def effective_queue(self) -> Queue | None:
        """The queue in force: as given, one BDP by default, None for a policer."""
        if self.policer is not None:
            return None
        return self.queue if self.queue is not None else Queue(bdp_factor=1.0)

    @model_validator(mode="after")
    def _one_rate(self) -> Direction:
        given = sum(
            [
                self.rate_mbps is not None,
                self.trace is not None,
                self.unlimited,
                self.policer is not None,
            ]
        )
        if given != 1:
            raise ValueError("give exactly one of rate_mbps, trace, unlimited: true, policer")
        if self.policer is not None and self.queue is not None:
            raise ValueError("a policer has no queue: remove queue (burst_bytes is its buffer)")
        q = self.effective_queue
        if self.unlimited and q is not None and q.bdp_factor is not None:
            raise ValueError("an unlimited link has no BDP: give queue.limit_bytes/limit_packets")
        return self


class Link(Strict):
    """A bidirectional emulated link. In the access topology uplink is guest→host."""

    backend: BackendName = "auto"
    packet_log: bool = Field(
        default=False,
        description="userspace backend: linkem writes RUN_DIR/linkem-packets.log, one JSON line "
        "per packet (about 90 bytes each; the input of analysis.microbursts); tc has none",
    )
    uplink: Direction
    downlink: Direction
