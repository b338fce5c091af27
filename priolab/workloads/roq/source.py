"""The raw source video of the `roq` workload, raw I420, cached by its parameters under
`.cache/roq/` in the checkout (PRIOLAB_ROQ_CACHE overrides), looped by the sender, and the
reference the analysis compares against.

- `photo-pans`: natural content, pans and zooms over real photographs that Debian's
  `mate-backgrounds` package ships (GPL-2+; photos.py). Its cache name carries a digest of
  the shot list and Pillow's version, so a changed recipe makes a new file.
- `testsrc2-noise` (synthetic, ffmpeg lavfi): the `moq` clip's recipe, testsrc2 plus temporal
  noise (moving detail that costs bits). Its SSIM spans only 0.79-0.85 from 256 to 1280
  kbit/s (docs/investigations/2026-11-26-roq-measurements.md), too narrow to separate the
  controllers (issue 24).
- `mandelbrot` (synthetic, ffmpeg lavfi): a zoom with fine detail everywhere.

No clip file ships with the project (size, licence): the photographs stay in the Debian
package, the synthetic clips are made by ffmpeg.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from priolab.paths import REPO_ROOT
from priolab.workloads.roq import photos

if TYPE_CHECKING:
    from priolab.workloads.roq.workload import RoqParams

# name -> lavfi graph ({w}, {h}, {fps} filled in)
LAVFI_SOURCES: dict[str, str] = {
    "testsrc2-noise": "testsrc2=size={w}x{h}:rate={fps},noise=alls=12:allf=t+u",
    "mandelbrot": "mandelbrot=size={w}x{h}:rate={fps}",
}
PHOTO_SOURCE = "photo-pans"
SOURCES: tuple[str, ...] = (*LAVFI_SOURCES, PHOTO_SOURCE)


def photo_recipe_id() -> str:
    """8 hex digits naming the photo clip's recipe: the shot list and Pillow's version."""
    import hashlib

    import numpy as np
    import PIL

    text = repr((photos.SHOTS, photos.SHAKE_PX, photos.GRAIN_SIGMA, photos.GRAIN_SEED))
    text += PIL.__version__ + np.__version__
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def cache_dir() -> Path:
    return Path(os.environ.get("PRIOLAB_ROQ_CACHE", str(REPO_ROOT / ".cache" / "roq")))


def source_path(p: RoqParams) -> Path:
    name = p.source if p.source != PHOTO_SOURCE else f"{p.source}-{photo_recipe_id()}"
    return cache_dir() / f"{name}-{p.width}x{p.height}-{p.fps}fps-{p.source_s:g}s.yuv"


def source_problem(p: RoqParams) -> str | None:
    """Why the source cannot be made here, or None."""
    from traces.frames import ffmpeg_available

    if source_path(p).is_file():
        return None
    if p.source == PHOTO_SOURCE:
        missing = photos.missing_photos()
        if missing:
            return (
                f"{missing[0]} is missing: '{PHOTO_SOURCE}' needs Debian's "
                f"{photos.PACKAGE} package (apt-get install {photos.PACKAGE})"
            )
        return None
    if not ffmpeg_available():
        return f"{source_path(p)} is not made yet and ffmpeg is not installed"
    return None


def ffmpeg_argv(p: RoqParams, out: Path) -> list[str]:
    graph = LAVFI_SOURCES[p.source].format(w=p.width, h=p.height, fps=p.fps)
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
    if p.source == PHOTO_SOURCE:
        photos.write(tmp, p.width, p.height, p.fps, p.source_s)
    else:
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
