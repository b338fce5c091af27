"""The `moq` workload ([MoQ]): the `moq` publisher in the host (QUIC server, the video
source) and the subscriber in the guest; the video flows host → guest (the downlink).

Schemes of the paper map to `scheme`: fefs (one stream in encode order), ft (one stream per
frame type, I > P > B); beyond it, group (newest group first, older groups abandoned).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from priolab.paths import REPO_ROOT
from priolab.workloads.base import QuicPair, RunContext

SHIPPED_CLIP = REPO_ROOT / "traces" / "synthetic" / "gop-x264-720p25-g50-bf2-2.7mbps-ip-20s.csv"


class MoqParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    frame_trace: Path | None = Field(
        default=None,
        description="GoP CSV (traces/README.md), looped; default: the clip of clip.py",
    )
    scheme: Literal["fefs", "ft", "group"] = "fefs"
    max_group_lag: int = Field(default=1, ge=1, le=1000, description="scheme group only")
    drain_s: float = Field(
        default=3.5, ge=0.0, le=60.0, description="publisher stays connected after the last frame"
    )
    cc: Literal["cubic", "newreno", "bbr"] = "cubic"
    port: int = Field(default=4443, ge=1024, le=65535)


def clip_path(params: MoqParams, base_dir: Path) -> Path:
    p = params.frame_trace
    if p is None:
        return SHIPPED_CLIP
    return p if p.is_absolute() else (base_dir / p).resolve()


class Moq(QuicPair):
    kind = "moq"
    params_model = MoqParams
    program, listener, connector = "moq", "publisher", "subscriber"

    def check(self, params: BaseModel, base_dir: Path) -> list[tuple[str, str]]:
        assert isinstance(params, MoqParams)
        from traces.errors import TraceError
        from traces.frames import read_frames

        p = clip_path(params, base_dir)
        if not p.is_file():
            return [("frame_trace", f"file not found: {p}")]
        try:
            f = read_frames(p)
        except TraceError as e:
            return [("frame_trace", str(e))]
        if f.gop is None:
            return [("frame_trace", f"{p}: not a GoP trace (header of traces/README.md)")]
        return []

    def prepare(self, params: BaseModel, ctx: RunContext) -> dict[str, str]:
        assert isinstance(params, MoqParams)
        return {"frame_trace": str(clip_path(params, ctx.base_dir))}

    def _common(self, params: MoqParams, ctx: RunContext) -> list[str]:
        return ["--cc", params.cc, "--duration-s", f"{ctx.duration_s:g}",
                "--drain-s", f"{params.drain_s:g}"]  # fmt: skip

    def listener_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        assert isinstance(params, MoqParams)
        return [
            "--frame-trace", str(clip_path(params, ctx.base_dir)),
            "--scheme", params.scheme, "--max-group-lag", str(params.max_group_lag),
            *self._common(params, ctx),
        ]  # fmt: skip

    def connector_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        assert isinstance(params, MoqParams)
        return self._common(params, ctx)
