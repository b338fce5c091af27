"""Natural content for the `roq` workload: pans and zooms over real photographs (issue 24).

The photographs are the nature set of Debian's `mate-backgrounds` package (1.26, GPL-2+;
the copyright file `/usr/share/doc/mate-backgrounds/copyright` names each photographer):
1280 × 1024 to 2560 × 1920 JPEGs of grass, leaves, water drops, wood, flowers and a storm.
They are read where the package installs them and never copied into the project.

The clip is a list of shots ([`SHOTS`]), each one photograph seen through a 16:9 window that
moves in a straight line (a pan) with a handheld shake and changes size at a constant rate
(a zoom) over the shot, with a hard cut between shots, as an edited camera clip has, and a
camera's temporal sensor noise on every frame. The window is given in the
photograph's own coordinates (centre as a fraction of its width and height, height as a
fraction of its height), so one shot list serves every output size. Each frame is the window
resampled to the output size with Pillow's antialiasing bicubic filter at sub-pixel
positions (no jitter), then converted to I420 (BT.601, limited range, 2 × 2 chroma means).

A source of `source_s` seconds takes the shots in order and cuts the last one short; the
sender loops it (one more cut). Deterministic: the same Pillow and the same photographs give
the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PACKAGE = "mate-backgrounds"
LICENCE = "GPL-2+"
PHOTO_DIR = Path("/usr/share/backgrounds/mate/nature")


@dataclass(frozen=True)
class Shot:
    """One photograph, the window's centre (fractions of width, height) and height (fraction
    of the photograph's height) at the shot's start and end."""

    photo: str
    duration_s: float
    start: tuple[float, float, float]
    end: tuple[float, float, float]


# assumption: shots of 2 s (a fast-cut edit), windows 30-55 % of the photograph's height (so
# a 360p frame is a 1.3-2.4× downscale: the photograph's own detail, not an upscaled
# picture), pans of about one window width over a shot and zooms of up to 25 %/s: a
# handheld camera moving fast over texture. The detailed photographs first (grass, dune
# grass, wood grain, leaf veins), so a 10 s source (the default) holds five of them. The
# slower first recipe (shots of 3-4.5 s, windows 45-85 %, a tenth of the width per second)
# spanned only 0.86-0.99 SSIM over 100-2000 kbit/s (span.py): too easy to encode.
SHOTS: tuple[Shot, ...] = (
    Shot("GreenMeadow.jpg", 2.0, (0.20, 0.55, 0.36), (0.80, 0.45, 0.32)),
    Shot("Dune.jpg", 2.0, (0.20, 0.62, 0.40), (0.80, 0.55, 0.45)),
    Shot("Wood.jpg", 2.0, (0.30, 0.75, 0.30), (0.70, 0.35, 0.36)),
    Shot("Blinds.jpg", 2.0, (0.25, 0.40, 0.35), (0.75, 0.60, 0.30)),
    Shot("LadyBird.jpg", 2.0, (0.55, 0.40, 0.45), (0.75, 0.55, 0.30)),
    Shot("RainDrops.jpg", 2.0, (0.30, 0.45, 0.40), (0.70, 0.55, 0.50)),
    Shot("Storm.jpg", 2.0, (0.25, 0.55, 0.45), (0.75, 0.60, 0.55)),
    Shot("Garden.jpg", 2.0, (0.35, 0.60, 0.50), (0.55, 0.50, 0.40)),
    Shot("Aqua.jpg", 2.0, (0.50, 0.55, 0.45), (0.70, 0.60, 0.55)),
    Shot("TwoWings.jpg", 2.0, (0.40, 0.45, 0.50), (0.60, 0.50, 0.40)),
    Shot("YellowFlower.jpg", 2.0, (0.55, 0.65, 0.45), (0.75, 0.70, 0.50)),
    Shot("FreshFlower.jpg", 2.0, (0.40, 0.50, 0.55), (0.55, 0.50, 0.45)),
)
# assumption: handheld shake, two sines per axis (1.3 and 3.1 Hz across, 1.7 and 2.3 Hz up
# and down) of this amplitude in output pixels at 640 wide, scaled with the window
SHAKE_PX = 10.0
# assumption: a camera's temporal sensor noise, Gaussian, this standard deviation in 8-bit
# levels on all three colours alike, from a fixed seed; it costs bits as a camera's does
GRAIN_SIGMA = 3.5
GRAIN_SEED = 7


class PhotoSourceError(RuntimeError):
    """A photograph is missing or a shot does not fit it."""


def photo_paths(photo_dir: Path | None = None) -> list[Path]:
    """Every photograph the shot list uses, in shot order, without repeats."""
    d = photo_dir or PHOTO_DIR
    return [d / p for p in dict.fromkeys(s.photo for s in SHOTS)]


def missing_photos(photo_dir: Path | None = None) -> list[Path]:
    return [p for p in photo_paths(photo_dir) if not p.is_file()]


def _window(
    shot: Shot, t: float, size: tuple[int, int], aspect: float
) -> tuple[float, float, float, float]:
    """The window (left, top, right, bottom) in the photograph's pixels `t` ∈ [0, 1] through
    the shot: centre linear in t, height geometric (a constant zoom rate), kept inside."""
    (x0, y0, h0), (x1, y1, h1) = shot.start, shot.end
    pw, ph = size
    hf = h0 * (h1 / h0) ** t
    wh = hf * ph
    ww = wh * aspect
    if ww > pw or wh > ph:
        raise PhotoSourceError(
            f"{shot.photo}: a window {hf:.2f} of its height is {ww:.0f} px wide at "
            f"{aspect:.3f}:1, wider than the photograph ({pw} px)"
        )
    ts = t * shot.duration_s
    k = SHAKE_PX * ww / 640
    dx = k * (math.sin(2 * math.pi * 1.3 * ts + 0.4) + 0.6 * math.sin(2 * math.pi * 3.1 * ts + 1.7))
    dy = k * (math.sin(2 * math.pi * 1.7 * ts + 2.1) + 0.6 * math.sin(2 * math.pi * 2.3 * ts + 0.3))
    cx = min(max((x0 + (x1 - x0) * t) * pw + dx, ww / 2), pw - ww / 2)
    cy = min(max((y0 + (y1 - y0) * t) * ph + dy, wh / 2), ph - wh / 2)
    return (cx - ww / 2, cy - wh / 2, cx + ww / 2, cy + wh / 2)


def rgb_to_i420(rgb: np.ndarray) -> bytes:
    """An H × W × 3 uint8 RGB picture (H, W even) as I420 bytes: BT.601 limited range (as
    ffmpeg's default RGB → yuv420p), chroma the mean of each 2 × 2 block."""
    x = rgb.astype(np.float64)
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    y = 16 + 0.256788 * r + 0.504129 * g + 0.097906 * b
    u = 128 - 0.148223 * r - 0.290993 * g + 0.439216 * b
    v = 128 + 0.439216 * r - 0.367788 * g - 0.071427 * b

    def sub(c: np.ndarray) -> np.ndarray:
        return (c[0::2, 0::2] + c[1::2, 0::2] + c[0::2, 1::2] + c[1::2, 1::2]) / 4

    planes = [y, sub(u), sub(v)]
    return b"".join(np.clip(np.rint(p), 0, 255).astype(np.uint8).tobytes() for p in planes)


def frames(
    width: int, height: int, fps: int, source_s: float, photo_dir: Path | None = None
) -> Iterator[bytes]:
    """The I420 frames of a `source_s` clip (round(source_s × fps) frames)."""
    from PIL import Image

    photo_dir = photo_dir or PHOTO_DIR
    missing = missing_photos(photo_dir)
    if missing:
        raise PhotoSourceError(
            f"{missing[0]} is missing: the photo source needs Debian's {PACKAGE} package "
            f"(apt-get install {PACKAGE}; `make apt` installs it)"
        )
    n = round(source_s * fps)
    aspect = width / height
    rng = np.random.default_rng(GRAIN_SEED)
    done = 0
    k = 0
    while done < n:
        shot = SHOTS[k % len(SHOTS)]
        k += 1
        with Image.open(photo_dir / shot.photo) as im:
            photo = im.convert("RGB")
        shot_frames = max(1, round(shot.duration_s * fps))
        for i in range(min(shot_frames, n - done)):
            t = i / (shot_frames - 1) if shot_frames > 1 else 0.0
            box = _window(shot, t, photo.size, aspect)
            pic = np.asarray(photo.resize((width, height), Image.Resampling.BICUBIC, box=box))
            grain = rng.normal(0.0, GRAIN_SIGMA, (height, width))[..., None]
            yield rgb_to_i420(np.clip(np.rint(pic + grain), 0, 255).astype(np.uint8))
        done += min(shot_frames, n - done)


def write(
    out: Path, width: int, height: int, fps: int, source_s: float, photo_dir: Path | None = None
) -> int:
    """Writes the clip to `out` (raw I420); returns the number of frames."""
    n = 0
    with out.open("wb") as f:
        for fr in frames(width, height, fps, source_s, photo_dir):
            f.write(fr)
            n += 1
    return n


def shot_starts_s(source_s: float) -> list[float]:
    """When each shot of a `source_s` clip starts (the cuts), in seconds."""
    out, t, k = [], 0.0, 0
    while t < source_s - 1e-9:
        out.append(t)
        t += SHOTS[k % len(SHOTS)].duration_s
        k += 1
    return [round(x, 6) for x in out if not math.isclose(x, source_s)]
