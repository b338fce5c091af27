"""The `moq` workload (seeds/004): the `moq` publisher in the host (QUIC server, the video
source) and the subscriber in the guest; the video flows host → guest (the downlink).

Schemes of the paper map to `scheme`: fefs (one stream in encode order), ft (one stream per
frame type, I > P > B); beyond it, group (newest group first, older groups abandoned).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from priolab.paths import REPO_ROOT
from priolab.workloads.base import ProcessSpec, RunContext, all_in_sim

SHIPPED_CLIP = REPO_ROOT / "traces" / "synthetic" / "gop-x264-720p25-g50-bf2-2.7mbps-20s.csv"


class MoqParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    frame_trace: Path | None = Field(
        default=None,
        description="GoP CSV (traces/README.md), looped; default: the shipped 720p25 encode",
    )
    scheme: Literal["fefs", "ft", "group"] = "fefs"
    max_group_lag: int = Field(default=1, ge=1, le=1000, description="scheme group only")
    drain_s: float = Field(
        default=3.5, ge=0.0, le=60.0, description="publisher stays connected after the last frame"
    )
    cc: Literal["cubic", "newreno", "bbr"] = "cubic"
    port: int = Field(default=4443, ge=1024, le=65535)


def moq_binary() -> str:
    return os.environ.get("PRIOLAB_MOQ", str(REPO_ROOT / "target" / "release" / "moq"))


def clip_path(params: MoqParams, base_dir: Path) -> Path:
    p = params.frame_trace
    if p is None:
        return SHIPPED_CLIP
    return p if p.is_absolute() else (base_dir / p).resolve()


class Moq:
    kind = "moq"
    params_model = MoqParams

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

    def plan(self, params: BaseModel, ctx: RunContext) -> list[ProcessSpec]:
        assert isinstance(params, MoqParams)
        specs: list[ProcessSpec] = []
        binary = moq_binary()
        for i, pair in enumerate(ctx.pairs):
            tag = "" if len(ctx.pairs) == 1 else f"-{i + 1}"
            host_dir, guest_dir = ctx.run_dir / f"host{tag}", ctx.run_dir / f"guest{tag}"
            cert = host_dir / "cert.der"
            common = ["--cc", params.cc, "--duration-s", f"{ctx.duration_s:g}",
                      "--drain-s", f"{params.drain_s:g}"]  # fmt: skip
            publisher = [
                binary, "--role", "publisher", "--bind", f"0.0.0.0:{params.port}",
                "--cert-out", str(cert), "--log-dir", str(host_dir),
                "--frame-trace", str(clip_path(params, ctx.base_dir)),
                "--scheme", params.scheme, "--max-group-lag", str(params.max_group_lag),
                *common,
            ]  # fmt: skip
            subscriber = [
                binary, "--role", "subscriber", "--connect", f"{pair.host_ip}:{params.port}",
                "--cert", str(cert), "--log-dir", str(guest_dir), *common,
            ]  # fmt: skip
            specs.append(ProcessSpec(f"moq-publisher{tag}", pair.host, publisher))
            specs.append(
                ProcessSpec(f"moq-subscriber{tag}", pair.guest, subscriber, wait_for_file=cert)
            )
        return specs

    sim_problems = staticmethod(all_in_sim)  # Rust endpoints only

    def tools(self) -> list[list[str]]:
        return [[moq_binary(), "--version"]]

    def binaries(self) -> dict[str, str]:
        return {"moq": moq_binary()}
