"""The raw source video of the `roq` workload: a synthetic clip made by ffmpeg (lavfi), raw
I420, cached by its parameters under `.cache/roq/` in the checkout (PRIOLAB_ROQ_CACHE
overrides), looped by the sender, and the reference the analysis compares against.

assumption: no real clip ships with the project (size, licence); `testsrc2-noise` follows the
`moq` clip's recipe (testsrc2 plus temporal noise: moving detail that costs bits), and
`mandelbrot` (a zoom: fine detail everywhere) is the alternative.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from priolab.paths import REPO_ROOT

if TYPE_CHECKING:
    from priolab.workloads.roq.workload import RoqParams

# name -> lavfi graph ({w}, {h}, {fps} filled in)
SOURCES: dict[str, str] = {
    "testsrc2-noise": "testsrc2=size={w}x{h}:rate={fps},noise=alls=12:allf=t+u",
    "mandelbrot": "mandelbrot=size={w}x{h}:rate={fps}",
}


def cache_dir() -> Path:
    return Path(os.environ.get("PRIOLAB_ROQ_CACHE", str(REPO_ROOT / ".cache" / "roq")))


def source_path(p: RoqParams) -> Path:
    return cache_dir() / f"{p.source}-{p.width}x{p.height}-{p.fps}fps-{p.source_s:g}s.yuv"


def ffmpeg_argv(p: RoqParams, out: Path) -> list[str]:
    graph = SOURCES[p.source].format(w=p.width, h=p.height, fps=p.fps)
    return [
        "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", graph,
        "-t", f"{p.source_s:g}", "-pix_fmt", "yuv420p", "-f", "rawvideo", str(out),
    ]  # fmt: skip


def ensure_source(p: RoqParams) -> Path:
    """The source file, made once (atomically: written beside, then renamed)."""
    out = source_path(p)
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    subprocess.run(ffmpeg_argv(p, tmp), check=True)
    frame = p.width * p.height * 3 // 2
    n = tmp.stat().st_size // frame
    if n * frame != tmp.stat().st_size or n == 0:
        tmp.unlink()
        raise RuntimeError(f"ffmpeg made {out.name} with a partial frame")
    tmp.rename(out)
    return out


def frame_count(p: RoqParams) -> int:
    return source_path(p).stat().st_size // (p.width * p.height * 3 // 2)
