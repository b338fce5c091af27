"""Golden scores of the roq analysis (tests/test_roq_kernel.py): pictures made by integer
arithmetic from seeded integer draws (the same bytes on any machine), and the SSIM and PSNR
that the numpy scoring code (quality.py, score_frames scoring pair by pair) gave them before
the Rust kernel existed, as exact floats (float.hex) in roq_golden_scores.json.

`compute()` scores the same inputs with whatever code is imported: the test requires its
result to equal the file. Regenerate the file only with the code that defines the scores,
never with the code under test, e.g. the commit before the kernel:

    git worktree add --detach /tmp/old <commit>
    PYTHONPATH=/tmp/old .venv/bin/python tests/roq_golden.py --write
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

GOLDEN = Path(__file__).with_name("roq_golden_scores.json")
H, W = 360, 640  # the scenarios' size: the window count decides the order of numpy's sum


def _smooth(a: np.ndarray, times: int) -> np.ndarray:
    """A 1-2-1 filter down and across, `times` over, in integers (edges repeated)."""
    for _ in range(times):
        p = np.pad(a, 1, mode="edge")
        a = (p[:-2, 1:-1] + 2 * p[1:-1, 1:-1] + p[2:, 1:-1]) // 4
        p = np.pad(a, 1, mode="edge")
        a = (p[1:-1, :-2] + 2 * p[1:-1, 1:-1] + p[1:-1, 2:]) // 4
    return a


def pictures(seed: int, n: int, h: int = H, w: int = W) -> np.ndarray:
    """`n` picture-like planes: smooth shapes (blocks of random grey, smoothed) with fine
    texture whose strength grows picture by picture."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, h, w), dtype=np.uint8)
    for k in range(n):
        blocks = rng.integers(0, 256, (h // 16 + 1, w // 16 + 1), dtype=np.int64)
        base = _smooth(blocks.repeat(16, 0).repeat(16, 1)[:h, :w], 4)
        texture = rng.integers(-(4 + 6 * k), 5 + 6 * k, (h, w), dtype=np.int64)
        out[k] = np.clip(base + texture, 0, 255)
    return out


def degraded(src: np.ndarray, kind: str) -> np.ndarray:
    """What a decoder might show for `src`: coarse levels and blur (a low bitrate), moved by a
    few pixels, or pushed to black and white (the extremes of the int32 terms)."""
    a = src.astype(np.int64)
    if kind == "coarse":
        a = _smooth((a // 12) * 12 + 6, 1)
    elif kind == "moved":
        a = np.roll(a, (1, 3), axis=(0, 1))
    elif kind == "extremes":
        a = np.where(a > 127, 255, 0)
    else:
        raise ValueError(kind)
    return np.clip(a, 0, 255).astype(np.uint8)


def pair_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, decoded plane, source plane): every kind of pair at the scenarios' size, and a
    few odd sizes down to one window."""
    src = pictures(1, 4)
    cases = [
        ("same", src[0], src[0]),
        ("coarse", degraded(src[1], "coarse"), src[1]),
        ("moved", degraded(src[2], "moved"), src[2]),
        ("frozen", src[1], src[2]),
        ("black", np.zeros_like(src[3]), src[3]),
        ("extremes", degraded(src[3], "extremes"), degraded(src[0], "extremes")),
    ]
    for h, w in ((8, 8), (9, 15), (20, 27), (71, 130)):
        small = pictures(h * w, 2, h, w)
        cases.append((f"{w}x{h}", degraded(small[0], "coarse"), small[1]))
    return cases


def frames_run() -> dict[str, np.ndarray]:
    """A run for score_frames: 24 frames sent of a 6-frame source (looped); the first two and
    four later ones never decoded (black, then frozen pictures), the rest decoded coarse."""
    src = pictures(2, 6)
    sent_ts = np.arange(24, dtype=np.int64) * 3600
    lost = {0, 1, 7, 8, 15, 23}
    got = [k for k in range(24) if k not in lost]
    dec = np.stack([degraded(src[k % 6], "coarse" if k % 3 else "moved") for k in got])
    return {
        "sent_ts": sent_ts,
        "source_index": np.arange(24, dtype=np.int64) % 6,
        "source_luma": src,
        "decoded_ts": sent_ts[got],
        "decoded_luma": dec,
    }


def compute() -> dict[str, Any]:
    """The golden inputs scored with the code imported now (floats as float.hex)."""
    from priolab.workloads.roq.analysis import score_frames
    from priolab.workloads.roq.quality import psnr_db, ssim

    pairs = [
        {"case": name, "ssim": float(ssim(d, s)).hex(), "psnr_db": float(psnr_db(d, s)).hex()}
        for name, d, s in pair_cases()
    ]
    f = score_frames(**frames_run())
    frames = {
        "decoded": [bool(v) for v in f["decoded"]],
        "shown_rtp_ts": [int(v) for v in f["shown_rtp_ts"]],
        "ssim": [float(v).hex() for v in f["ssim"]],
        "psnr_db": [float(v).hex() for v in f["psnr_db"]],
    }
    return {"pairs": pairs, "frames": frames}


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {sys.argv[0]} --write (the module docstring says with which code)")
    GOLDEN.write_text(json.dumps(compute(), indent=1) + "\n")
    print(GOLDEN)
