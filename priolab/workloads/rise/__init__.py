"""The RISE workload: one `rise` endpoint per host (Host = QUIC server, Guest = client).

Schemes of [RISE setup] map to the two per-endpoint switches: nopri (both off), pri (both
on), pri-u (Guest only: the uplink sender), pri-d (Host only). An endpoint without
prioritisation uses one FIFO of B bytes whose overflow policy is `fifo_drop`: `head` (default)
drops the oldest datagrams as vanilla quinn's datagram send buffer does (the paper's baseline
QUIC), `tail` drops the new one (priolab's behaviour before issue 10). Each endpoint's
summary.json names what ran (`buffer_scheme`: prio, fifo-head-drop or fifo-tail-drop).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ground import rundir
from priolab.workloads.base import QuicPair, RunContext
from traces.tracking_layouts import TrackingSource

# ringmaster's decoder rejects frames of 1,000,000 bytes or more (MAX_DECODING_BUF,
# src/app/decoder.cc): the endpoint caps every frame one byte below (rise-core MAX_FRAME_BYTES)
MAX_FRAME_BYTES = 999_999
# warm-up excluded from the metrics (this folder's README.md): assumption, 3 s = 10 % of a
# 30 s run; it covers the handshake, slow start (~10 RTTs = 0.2 s at 21 ms to the cwnd the quick
# runs reach) and the first key frame (≤ 1 MB: ≥ 0.27 s at 30 Mbit/s) with its one-second
# payback, the start-up transient in which the quick runs' only p99 difference appeared
DEFAULT_WARMUP_S = 3.0


class RiseParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    video_bitrate_mbps: float = Field(default=30.0, gt=0.0, le=1000.0)
    fps: float = Field(default=30.0, gt=0.0, le=240.0)
    frame_size_sigma: float = Field(default=0.2, ge=0.0, le=3.0)
    keyframe_factor: float = Field(default=9.0, ge=1.0, le=9.0)
    frame_trace: Path | None = None
    tracking_hz: float = Field(default=60.0, gt=0.0, le=1000.0)
    tracking_speed_deg_s: float | None = Field(default=None, ge=0.0, le=1000.0)
    tracking_trace: Path | TrackingSource | None = None
    prio_guest: bool = True
    prio_host: bool = True
    buffer_bytes: int = Field(default=1_048_576, ge=1500, le=1 << 30)
    fifo_drop: Literal["head", "tail"] = "head"
    processing_delay_ms: float = Field(default=0.0, ge=0.0, le=60_000.0)
    warmup_s: float = Field(default=DEFAULT_WARMUP_S, ge=0.0, le=3600.0)
    quinn_datagram_buffer_bytes: int = Field(default=1500, ge=1200, le=1 << 30)
    cc: Literal["cubic", "newreno", "bbr"] = "cubic"
    deadline_ms: float = Field(default=1000.0, gt=0.0, le=60_000.0)
    max_retx: int = Field(default=3, ge=0, le=100)
    port: int = Field(default=4433, ge=1024, le=65535)

    @model_validator(mode="after")
    def _one_tracking(self) -> RiseParams:
        if (self.tracking_speed_deg_s is None) == (self.tracking_trace is None):
            raise ValueError("give exactly one of tracking_speed_deg_s, tracking_trace")
        return self


def _resolve(p: Path, base_dir: Path) -> Path:
    return p if p.is_absolute() else (base_dir / p).resolve()


def _endpoint_frames(path: Path) -> None:
    """What `rise --frame-trace` accepts: exactly the plain `frame_type,size_bytes` CSV (a GoP
    trace, which traces/ also reads, has more columns and is refused by the endpoint)."""
    from ground.errors import show
    from traces.errors import TraceError
    from traces.frames import FRAME_HEADER, read_frame_csv
    from traces.textlines import data_lines

    lineno, head = data_lines(path)[0]
    if [h.strip() for h in head.split(",")] != FRAME_HEADER:
        raise TraceError(
            path,
            f"header {show(head)}; allowed exactly {','.join(FRAME_HEADER)} "
            "(what the rise endpoint's --frame-trace reads)",
            lineno,
        )
    read_frame_csv(path)


class Rise(QuicPair):
    kind = "rise"
    params_model = RiseParams
    program, listener, connector = "rise", "host", "guest"

    def check(self, params: BaseModel, base_dir: Path) -> list[tuple[str, str]]:
        """Each trace file exists and parses with the reader its run uses."""
        assert isinstance(params, RiseParams)
        from traces.errors import TraceError
        from traces.tracking_layouts import load_tracking

        out = []
        for key in ("frame_trace", "tracking_trace"):
            p = getattr(params, key)
            if p is None:
                continue
            f = _resolve(p.file if isinstance(p, TrackingSource) else p, base_dir)
            if not f.is_file():
                out.append((key, f"file not found: {f}"))
                continue
            try:  # the readers the run uses (prepare; the endpoint reads this CSV form)
                load_tracking(p, base_dir) if key == "tracking_trace" else _endpoint_frames(f)
            except TraceError as e:
                out.append((key, str(e)))
        return out

    def warnings(self, params: BaseModel, base_dir: Path) -> list[tuple[str, str]]:
        """Valid but suspicious settings: (key, message). A key frame larger than B cannot be
        queued whole: its tail is dropped at ingress (or, with head drop, pushes out its own
        head) and only retransmission can complete it."""
        assert isinstance(params, RiseParams)
        if params.frame_trace is not None:
            return []  # key-frame sizes come from the trace
        mean = params.video_bitrate_mbps * 1e6 / 8 / params.fps
        key = min(params.keyframe_factor * mean, MAX_FRAME_BYTES)
        if key <= params.buffer_bytes:
            return []
        return [
            (
                "buffer_bytes",
                f"a key frame of {key:,.0f} B (min(keyframe_factor × video_bitrate_mbps / 8 / "
                f"fps = {params.keyframe_factor:g} × {mean:,.0f} B, the 1 MB decoder cap "
                f"{MAX_FRAME_BYTES:,} B)) does not fit in B = {params.buffer_bytes:,} B: its "
                "tail is dropped at ingress (head drop: it pushes out its own head) and only "
                "retransmission can complete it",
            )
        ]

    def prepare(self, params: BaseModel, ctx: RunContext) -> dict[str, str]:
        """A tracking trace in any format traces/ reads (e.g. the Corbillon MMSys'18 files)
        is resampled to tracking_hz over the run and written as the endpoint's CSV."""
        assert isinstance(params, RiseParams)
        if params.tracking_trace is None:
            return {}
        from traces.tracking import resample, write_tracking_csv
        from traces.tracking_layouts import load_tracking

        src, trace = load_tracking(params.tracking_trace, ctx.base_dir)
        out = ctx.run_dir / rundir.INPUTS / "tracking.csv"
        out.parent.mkdir(parents=True, exist_ok=True)
        write_tracking_csv(resample(trace, params.tracking_hz), out)
        return {"tracking_trace": str(out), "tracking_trace_source": str(src)}

    def _common(self, params: RiseParams, ctx: RunContext, prio: bool) -> list[str]:
        argv = [
            "--duration-s", f"{ctx.duration_s:g}",
            "--seed", str(ctx.seed),
            "--video-bitrate-mbps", f"{params.video_bitrate_mbps:g}",
            "--fps", f"{params.fps:g}",
            "--frame-size-sigma", f"{params.frame_size_sigma:g}",
            "--keyframe-factor", f"{params.keyframe_factor:g}",
            "--tracking-hz", f"{params.tracking_hz:g}",
            "--prio", "on" if prio else "off",
            "--buffer-bytes", str(params.buffer_bytes),
            "--fifo-drop", params.fifo_drop,
            "--processing-delay-ms", f"{params.processing_delay_ms:g}",
            "--quinn-datagram-buffer-bytes", str(params.quinn_datagram_buffer_bytes),
            "--cc", params.cc,
            "--deadline-ms", f"{params.deadline_ms:g}",
            "--max-retx", str(params.max_retx),
        ]  # fmt: skip
        if params.frame_trace is not None:
            argv += ["--frame-trace", str(_resolve(params.frame_trace, ctx.base_dir))]
        if params.tracking_trace is not None:  # converted by prepare()
            argv += ["--tracking-trace", str(ctx.run_dir / rundir.INPUTS / "tracking.csv")]
        else:
            argv += ["--tracking-speed-deg-s", f"{params.tracking_speed_deg_s:g}"]
        return argv

    def listener_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        assert isinstance(params, RiseParams)
        return self._common(params, ctx, params.prio_host)

    def connector_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        assert isinstance(params, RiseParams)
        return self._common(params, ctx, params.prio_guest)


WORKLOAD = Rise()
