"""The `roq` workload ([RoQ]): RTP over QUIC. The sender (`roq --role sender`) runs in the
host and the receiver in the guest; the video flows host → guest (the downlink), the
feedback guest → host. Over QUIC the sender is the server (it writes the certificate the
receiver waits for); over UDP the receiver binds first and the sender starts 0.5 s later.

A configuration of the paper is a combination of `transport`, `rate`, `cc`, `feedback` and
`competing_stream` (scenarios/roq-rfc8867.yaml names the 14).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ground import rundir
from priolab.paths import REPO_ROOT
from priolab.workloads.base import PEER_LOST_EXIT, ProcessSpec, RunContext, all_in_sim, no_quic
from priolab.workloads.roq.source import SOURCES, source_path

UDP_START_DELAY_S = 0.5  # assumption: ample for the receiver to bind its socket


class RoqParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    transport: Literal["quic", "udp"] = "quic"
    rate: Literal["scream", "trivial", "gcc", "fixed"] = "scream"
    cc: Literal["none", "newreno"] = Field(
        default="newreno", description="QUIC congestion control (none = pass-through)"
    )
    feedback: Literal["rtcp", "quic"] = Field(
        default="rtcp", description="SCReAM's feedback: RTCP (RFC 8888) or inferred from QUIC"
    )
    competing_stream: bool = Field(
        default=False, description="a QUIC stream sending as fast as it can beside the RTP"
    )
    source: Literal[tuple(SOURCES)] = Field(  # type: ignore[valid-type]
        default="testsrc2-noise",
        description="the source clip (source.py): photo-pans (natural: pans and zooms over "
        "photographs), testsrc2-noise or mandelbrot (synthetic)",
    )
    source_s: float = Field(default=10.0, gt=0.0, le=60.0, description="source length, looped")
    width: int = Field(default=640, ge=64, le=1920, multiple_of=8)
    height: int = Field(default=360, ge=64, le=1080, multiple_of=2)
    fps: int = Field(default=25, ge=1, le=60)
    start_kbps: int = Field(default=300, ge=50, le=20_000)
    min_kbps: int = Field(default=100, ge=10, le=20_000)
    max_kbps: int = Field(default=2000, ge=50, le=50_000)
    key_int_frames: int = Field(default=50, ge=1, le=10_000)
    x264_preset: Literal["ultrafast", "superfast", "veryfast", "faster", "fast", "medium"] = (
        "veryfast"
    )
    feedback_interval_ms: int = Field(default=20, ge=1, le=1000)
    loss_recovery: Literal["pli", "next-idr"] = Field(
        default="pli",
        description="after a lost frame the receiver asks for an IDR with an RTCP PLI "
        "(RFC 4585 §6.3.1), or (next-idr, the behaviour before PLI) waits for the encoder's next",
    )
    pli_repeat_ms: int = Field(
        default=1000, ge=1, le=60_000, description="an unanswered PLI is sent again after this"
    )
    drain_s: float = Field(default=1.0, ge=0.0, le=30.0)
    keep_decoded: bool = Field(
        default=False,
        description="keep guest/decoded.y (690 MB per 2 min at 360p) after the analysis "
        "wrote the per-frame SSIM table",
    )
    port: int = Field(default=4450, ge=1024, le=65535)

    @model_validator(mode="after")
    def _consistent(self) -> RoqParams:
        if not (self.min_kbps <= self.start_kbps <= self.max_kbps):
            raise ValueError("allowed: min_kbps <= start_kbps <= max_kbps")
        if 90_000 % self.fps:
            raise ValueError(f"fps {self.fps}: must divide 90000 (the RTP clock)")
        if self.transport == "udp" and (self.feedback == "quic" or self.competing_stream):
            raise ValueError("transport udp: feedback quic and competing_stream need QUIC")
        return self


NODE_PACKAGES = (
    "libgstreamer1.0-0", "libgstreamer-plugins-base1.0-0", "gstreamer1.0-plugins-base",
    "gstreamer1.0-plugins-ugly", "gstreamer1.0-libav",
)  # fmt: skip
"""The GStreamer runtime roq needs on a node, Debian's names: the libraries it links (the
Makefile installs their -dev packages on the build machine) and the plugins with x264enc
(ugly), avdec_h264 (libav), appsrc/appsink/videoconvert (base)."""


def roq_binary() -> str:
    return os.environ.get("PRIOLAB_ROQ", str(REPO_ROOT / "target" / "release" / "roq"))


class Roq:
    kind = "roq"
    params_model = RoqParams

    def check(self, params: BaseModel, base_dir: Path) -> list[tuple[str, str]]:
        assert isinstance(params, RoqParams)
        from priolab.workloads.roq.source import source_problem

        why = source_problem(params)
        return [("source", why)] if why else []

    def prepare(self, params: BaseModel, ctx: RunContext) -> dict[str, str]:
        assert isinstance(params, RoqParams)
        from priolab.workloads.roq.source import ensure_source

        return {"source": str(ensure_source(params))}

    def plan(self, params: BaseModel, ctx: RunContext) -> list[ProcessSpec]:
        assert isinstance(params, RoqParams)
        specs: list[ProcessSpec] = []
        binary = roq_binary()
        for i, pair in enumerate(ctx.pairs):
            tag = "" if len(ctx.pairs) == 1 else f"-{i + 1}"
            host_dir, guest_dir = ctx.run_dir / f"host{tag}", ctx.run_dir / f"guest{tag}"
            common = [
                "--transport", params.transport, "--duration-s", f"{ctx.duration_s:g}",
                "--width", str(params.width), "--height", str(params.height),
                "--fps", str(params.fps), "--feedback", params.feedback,
                "--drain-s", f"{params.drain_s:g}",
            ]  # fmt: skip
            sender = [
                binary, "--role", "sender", "--log-dir", str(host_dir), *common,
                "--source", str(source_path(params)), "--rate", params.rate, "--cc", params.cc,
                "--start-kbps", str(params.start_kbps), "--min-kbps", str(params.min_kbps),
                "--max-kbps", str(params.max_kbps), "--key-int-frames", str(params.key_int_frames),
                "--x264-preset", params.x264_preset,
            ]  # fmt: skip
            if params.competing_stream:
                sender.append("--competing-stream")
            receiver = [
                binary, "--role", "receiver", "--log-dir", str(guest_dir), *common,
                "--feedback-interval-ms", str(params.feedback_interval_ms),
                "--loss-recovery", params.loss_recovery,
                "--pli-repeat-ms", str(params.pli_repeat_ms),
            ]  # fmt: skip
            if params.transport == "quic":
                cert = host_dir / "cert.der"
                sender += ["--bind", f"0.0.0.0:{params.port}", "--cert-out", str(cert)]
                receiver += ["--connect", f"{pair.host_ip}:{params.port}", "--cert", str(cert)]
                if ctx.tls_keylog:  # SSLKEYLOGFILE format, beside the pcaps (as QuicPair)
                    receiver += ["--keylog", str(ctx.run_dir / f"{rundir.TLS_KEYLOG}{tag}")]
                if ctx.qlog:
                    sender += ["--qlog-dir", str(rundir.qlog_dir(host_dir))]
                    receiver += ["--qlog-dir", str(rundir.qlog_dir(guest_dir))]
                specs.append(ProcessSpec(f"roq-sender{tag}", pair.host, sender,
                                         lost_exit_codes=(PEER_LOST_EXIT,)))  # fmt: skip
                specs.append(
                    # quicsetup::connect waits for --cert itself (see QuicPair)
                    ProcessSpec(
                        f"roq-receiver{tag}",
                        pair.guest,
                        receiver,
                        wait_for_file=cert,
                        waits_itself=True,
                        lost_exit_codes=(PEER_LOST_EXIT,),
                    )  # fmt: skip
                )
            else:
                sender += ["--connect", f"{pair.guest_ip}:{params.port}"]
                receiver += ["--bind", f"0.0.0.0:{params.port}"]
                specs.append(ProcessSpec(f"roq-receiver{tag}", pair.guest, receiver))
                specs.append(
                    ProcessSpec(
                        f"roq-sender{tag}", pair.host, sender, start_delay_s=UDP_START_DELAY_S
                    )
                )
        return specs

    def qlog_problems(self, params: BaseModel) -> list[tuple[str, str]]:
        """Plain UDP opens no QUIC connection to trace."""
        assert isinstance(params, RoqParams)
        return no_quic("transport", params.transport) if params.transport == "udp" else []

    def sim_problems(self, params: BaseModel) -> list[tuple[str, str]]:
        """None: every parameter runs on the sim site. There the sender encodes each frame
        inside its task at the frame's tick on the virtual clock and a picture counts as
        decoded when its access unit reached the decoder, so coding takes no virtual time
        (endpoints/README.md, "roq and virtual time"); plain UDP uses the sim's sockets."""
        return all_in_sim(params)

    def tools(self) -> list[list[str]]:
        # the GStreamer version is in the sender's summary.json (the library it linked)
        return [[roq_binary(), "--version"]]

    def binaries(self) -> dict[str, str]:
        return {"roq": roq_binary()}

    node_packages = NODE_PACKAGES
    # the analysis scores with the Rust kernel (kernel.py), on the machine that runs the workflow
    analysis_crates = ("roq-score",)
