"""The SSIM span of a `roq` source: the clip encoded offline at fixed bitrates by the `roq`
sender's own encoder and decoded by the receiver's decoder (`roq-encode`: x264enc tune
zerolatency, the workload's preset and key interval; avdec_h264), no network, each decoded
frame scored against its source frame with the analysis's SSIM (quality.py; the kernel,
kernel.py). It says whether the source can show the quality differences the paper reports
(issue 24): its SSIM must run from at most the paper's lowest mean (at the lowest bitrate) to
at least its highest (at the highest).

    .venv/bin/python -m priolab.workloads.roq.span --source photo-pans
    .venv/bin/python -m priolab.workloads.roq.span --source testsrc2-noise --kbps 100,2000

One line per bitrate (SSIM mean and 5th percentile, PSNR, the bitrate x264 achieved, IDR
frames), then the span and the verdict; `--json FILE` writes the same. CPU: one core for
about 10 s per bitrate for a 10 s source at 360p (encode + decode + SSIM).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from priolab.workloads.roq.kernel import psnrs_db, score_pairs
from priolab.workloads.roq.source import SOURCES, ensure_source
from priolab.workloads.roq.workload import RoqParams, roq_binary

DEFAULT_KBPS = (100, 200, 300, 500, 700, 1000, 1500, 2000)
# [RoQ §6]: the lowest mean SSIM the paper reports is 0.69 (trivial controller with
# NewReno and a competing stream, §6.2), the highest 0.87 (SCReAM over QUIC, §6.4)
PAPER_SSIM_LO = 0.69
PAPER_SSIM_HI = 0.87


@dataclass(frozen=True)
class Row:
    kbps: int
    kbps_achieved: float
    idr_frames: int
    ssim_mean: float
    ssim_p5: float
    psnr_mean_db: float


def encode_binary() -> str:
    """`roq-encode`, beside the `roq` binary (PRIOLAB_ROQ_ENCODE overrides)."""
    return os.environ.get("PRIOLAB_ROQ_ENCODE", str(Path(roq_binary()).with_name("roq-encode")))


def encode_argv(p: RoqParams, source: Path, kbps: int, out_y: Path) -> list[str]:
    return [
        encode_binary(), "--source", str(source), "--width", str(p.width),
        "--height", str(p.height), "--fps", str(p.fps), "--kbps", str(kbps),
        "--key-int-frames", str(p.key_int_frames), "--x264-preset", p.x264_preset,
        "--out-y", str(out_y),
    ]  # fmt: skip


def score(decoded_y: Path, source: Path, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """SSIM and PSNR of each decoded luma frame against the source frame of the same index."""
    luma = width * height
    frame = luma * 3 // 2
    dec = np.fromfile(decoded_y, np.uint8)
    src = np.fromfile(source, np.uint8)
    n = src.size // frame
    if dec.size != n * luma:
        raise ValueError(f"{decoded_y}: {dec.size} bytes, expected {n} frames of {luma}")
    planes = src[: n * frame].reshape(n, frame)[:, :luma].reshape(n, height, width)
    k = np.arange(n)
    s, sse = score_pairs(dec.reshape(n, height, width), planes, k, k)
    return s, psnrs_db(sse, luma)


def measure(p: RoqParams, kbps: int, source: Path, work: Path) -> Row:
    out_y = work / f"decoded-{kbps}.y"
    r = subprocess.run(encode_argv(p, source, kbps, out_y), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"roq-encode at {kbps} kbit/s: {r.stderr.strip()}")
    info = json.loads(r.stdout)
    s, q = score(out_y, source, p.width, p.height)
    out_y.unlink()
    return Row(
        kbps=kbps,
        kbps_achieved=float(info["kbps_achieved"]),
        idr_frames=int(info["idr_frames"]),
        ssim_mean=float(s.mean()),
        ssim_p5=float(np.percentile(s, 5)),
        psnr_mean_db=float(q.mean()),
    )


def verdict(rows: list[Row]) -> dict[str, object]:
    """The span from the lowest to the highest bitrate and whether it covers the paper's."""
    lo, hi = min(rows, key=lambda r: r.kbps), max(rows, key=lambda r: r.kbps)
    return {
        "ssim_at_lowest": lo.ssim_mean,
        "ssim_at_highest": hi.ssim_mean,
        "lowest_kbps": lo.kbps,
        "highest_kbps": hi.kbps,
        "paper_range": [PAPER_SSIM_LO, PAPER_SSIM_HI],
        "covers_paper_range": lo.ssim_mean <= PAPER_SSIM_LO and hi.ssim_mean >= PAPER_SSIM_HI,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", choices=SOURCES, default="photo-pans")
    ap.add_argument("--source-s", type=float, default=10.0)
    ap.add_argument("--kbps", default=",".join(map(str, DEFAULT_KBPS)))
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    try:
        kbps = sorted({int(k) for k in a.kbps.split(",")})
    except ValueError:
        ap.error(f"--kbps {a.kbps!r}: allowed comma-separated integers (kbit/s)")
    p = RoqParams(source=a.source, source_s=a.source_s)
    src = ensure_source(p)
    print(f"source {a.source}: {src} ({p.width}x{p.height}, {p.fps} fps, {p.source_s:g} s); "
          f"x264 {p.x264_preset} zerolatency, key-int {p.key_int_frames}; "
          f"load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")  # fmt: skip
    rows = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="roq-span-") as d:
        for k in kbps:
            r = measure(p, k, src, Path(d))
            rows.append(r)
            print(f"{r.kbps:5d} kbit/s (x264 {r.kbps_achieved:6.0f}): SSIM {r.ssim_mean:.3f} "
                  f"(p5 {r.ssim_p5:.3f}), PSNR {r.psnr_mean_db:5.2f} dB, "
                  f"{r.idr_frames} IDR frames", flush=True)  # fmt: skip
    v = verdict(rows)
    print(f"SSIM span {v['ssim_at_lowest']:.3f} at {v['lowest_kbps']} kbit/s .. "
          f"{v['ssim_at_highest']:.3f} at {v['highest_kbps']} kbit/s; the paper's means "
          f"{PAPER_SSIM_LO}-{PAPER_SSIM_HI}: "
          f"{'covered' if v['covers_paper_range'] else 'NOT covered'} "
          f"({time.monotonic() - t0:.0f} s)")  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps({"source": a.source, "rows": [asdict(r) for r in rows],
                                      **v}, indent=1) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
