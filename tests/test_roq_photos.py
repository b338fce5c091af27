"""The `roq` workload's natural source (photos.py: pans and zooms over the photographs of
Debian's mate-backgrounds) and its SSIM-span measurement (span.py): the colour conversion,
the moving window, the clip's frames and cuts on stand-in photographs, the missing-package
error, and the span's scoring and verdict; with `roq-encode` built, a real offline encode."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from priolab.workloads.roq import RoqParams, photos, span
from priolab.workloads.roq.source import (
    PHOTO_SOURCE,
    SOURCES,
    photo_recipe_id,
    source_path,
    source_problem,
)


def test_bt601_limited_range_colours() -> None:
    rgb = np.array([[[255, 255, 255], [0, 0, 0]], [[255, 0, 0], [0, 0, 255]]], np.uint8)
    b = np.frombuffer(photos.rgb_to_i420(rgb), np.uint8)
    assert b.size == 4 + 1 + 1  # one 2 × 2 block: four luma samples, one U, one V
    assert list(b[:4]) == [235, 16, 81, 41]  # white, black, red, blue (BT.601 studio range)
    # chroma: the mean of the four pixels' (white and black: 128; red: 90.2 and 240; blue:
    # 240 and 109.8)
    assert (b[4], b[5]) == (
        round((128 + 128 + 90.203 + 240.0) / 4),
        round((128 + 128 + 240.0 + 109.786) / 4),
    )


def test_window_moves_linearly_zooms_geometrically_and_stays_inside() -> None:
    shot = photos.Shot("x.jpg", 3.0, (0.0, 0.5, 0.8), (1.0, 0.5, 0.2))
    size, aspect = (2000, 1000), 16 / 9
    mid = photos._window(shot, 0.5, size, aspect)
    assert math.isclose(mid[3] - mid[1], 1000 * math.sqrt(0.8 * 0.2))
    for t in np.linspace(0, 1, 11):
        left, top, right, bottom = photos._window(shot, float(t), size, aspect)
        assert 0 <= left < right <= 2000 and 0 <= top < bottom <= 1000
        assert math.isclose((right - left) / (bottom - top), aspect)
    # the centre is pushed inside at the start (x = 0) and moves right
    assert photos._window(shot, 0.0, size, aspect)[0] == 0.0
    assert photos._window(shot, 1.0, size, aspect)[2] == 2000


def test_a_window_wider_than_the_photograph_is_refused_naming_it() -> None:
    shot = photos.Shot("Narrow.jpg", 1.0, (0.5, 0.5, 1.0), (0.5, 0.5, 1.0))
    with pytest.raises(photos.PhotoSourceError, match="Narrow.jpg"):
        photos._window(shot, 0.0, (1000, 1000), 16 / 9)


def _stand_in_photos(d: Path) -> Path:
    """A textured picture of each photograph's real size under its name, one tint each."""
    sizes = {
        "GreenMeadow.jpg": (1280, 1024), "LadyBird.jpg": (2560, 1600), "Dune.jpg": (1680, 1050),
    }  # fmt: skip
    rng = np.random.default_rng(5)
    for k, p in enumerate(dict.fromkeys(s.photo for s in photos.SHOTS)):
        w, h = sizes.get(p, (1920, 1200))
        base = rng.integers(0, 255, (h // 16, w // 16, 3), dtype=np.uint8)
        im = Image.fromarray(base).resize((w, h), Image.Resampling.BICUBIC)
        tint = Image.new("RGB", (w, h), ((60 * k) % 256, (110 * k) % 256, (170 * k) % 256))
        Image.blend(im, tint, 0.5).save(d / p, quality=90)
    return d


def test_clip_has_its_frames_and_cuts_where_the_shots_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _stand_in_photos(tmp_path)
    monkeypatch.setattr(photos, "GRAIN_SIGMA", 0.0)
    w, h, fps = 160, 96, 25
    fr = list(photos.frames(w, h, fps, 10.0, d))
    assert len(fr) == 250 and all(len(f) == w * h * 3 // 2 for f in fr)
    luma = np.stack([np.frombuffer(f, np.uint8)[: w * h].astype(float) for f in fr])
    # each stand-in has its own tint: the mean luma jumps at a cut, drifts within a shot
    step = np.abs(np.diff(luma.mean(axis=1)))  # step[k]: frame k → k + 1
    cuts = [round(t * fps) for t in photos.shot_starts_s(10.0)][1:]
    assert cuts == [50, 100, 150, 200]  # shots of 2 s
    within = np.delete(step, [c - 1 for c in cuts])
    assert min(step[c - 1] for c in cuts) > 3 * within.max()
    # deterministic
    assert list(photos.frames(w, h, fps, 0.4, d)) == fr[:10]


def test_every_frame_carries_the_sensor_grain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _stand_in_photos(tmp_path)
    w, h, sigma = 160, 96, photos.GRAIN_SIGMA
    grainy = [np.frombuffer(f, np.uint8)[: w * h] for f in photos.frames(w, h, 25, 0.2, d)]
    monkeypatch.setattr(photos, "GRAIN_SIGMA", 0.0)
    clean = [np.frombuffer(f, np.uint8)[: w * h] for f in photos.frames(w, h, 25, 0.2, d)]
    for a, b in zip(grainy, clean, strict=True):
        # luma = 0.859 × the noise added alike to R, G and B (BT.601 limited range)
        std = float(np.std(a.astype(float) - b))
        assert abs(std - 0.859 * sigma) < 0.25, std


def test_missing_photographs_name_the_debian_package(tmp_path: Path) -> None:
    with pytest.raises(photos.PhotoSourceError, match="apt-get install mate-backgrounds"):
        next(photos.frames(160, 96, 25, 1.0, tmp_path))


def test_check_reports_the_missing_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(photos, "PHOTO_DIR", tmp_path / "none")
    monkeypatch.setenv("PRIOLAB_ROQ_CACHE", str(tmp_path / "cache"))
    p = RoqParams(source=PHOTO_SOURCE)
    why = source_problem(p)
    assert why is not None and "mate-backgrounds" in why and "Dune" not in why.split(":")[1]
    from priolab.workloads.roq import Roq

    assert Roq().check(p, tmp_path) == [("source", why)]


def test_photo_source_is_named_by_its_recipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIOLAB_ROQ_CACHE", str(tmp_path))
    assert PHOTO_SOURCE in SOURCES and "testsrc2-noise" in SOURCES
    name = source_path(RoqParams(source=PHOTO_SOURCE)).name
    assert name == f"photo-pans-{photo_recipe_id()}-640x360-25fps-10s.yuv"
    monkeypatch.setattr(photos, "SHOTS", photos.SHOTS[1:])
    assert photo_recipe_id() not in name


@pytest.mark.skipif(
    bool(photos.missing_photos()), reason="Debian's mate-backgrounds is not installed"
)
def test_every_shot_fits_its_photograph_at_16_9() -> None:
    for s in photos.SHOTS:
        with Image.open(photos.PHOTO_DIR / s.photo) as im:
            size = im.size
        for t in (0.0, 0.5, 1.0):
            photos._window(s, t, size, 16 / 9)


def _row(kbps: int, s: float) -> span.Row:
    return span.Row(kbps, float(kbps), 3, s, s - 0.05, 30.0)


def test_verdict_needs_the_lowest_rate_below_and_the_highest_above_the_paper() -> None:
    assert span.verdict([_row(100, 0.60), _row(2000, 0.93)])["covers_paper_range"]
    # testsrc2-noise's measured ends (0.79 .. 0.85) do not cover 0.69 .. 0.87
    assert not span.verdict([_row(2000, 0.85), _row(100, 0.79)])["covers_paper_range"]
    assert not span.verdict([_row(100, 0.60), _row(2000, 0.86)])["covers_paper_range"]


def test_score_compares_each_decoded_frame_with_its_source_frame(tmp_path: Path) -> None:
    w, h = 64, 48
    rng = np.random.default_rng(1)
    y = rng.integers(0, 255, (3, h, w), dtype=np.uint8)
    src = b"".join(f.tobytes() + bytes(w * h // 2) for f in y)
    (tmp_path / "s.yuv").write_bytes(src)
    dec = y.copy()
    dec[1] = 255 - dec[1]
    dec.tofile(tmp_path / "d.y")
    s, q = span.score(tmp_path / "d.y", tmp_path / "s.yuv", w, h)
    assert s[0] == s[2] == 1.0 and s[1] < 0.5 and q[0] == 100.0
    dec[:2].tofile(tmp_path / "short.y")
    with pytest.raises(ValueError, match="expected 3 frames"):
        span.score(tmp_path / "short.y", tmp_path / "s.yuv", w, h)


@pytest.mark.skipif(
    not os.access(span.encode_binary(), os.X_OK), reason="roq-encode is not built (make build)"
)
def test_offline_encode_scores_higher_at_a_higher_bitrate(tmp_path: Path) -> None:
    p = RoqParams(width=160, height=96, source_s=2.0)
    w, h = p.width, p.height
    yy, xx = np.mgrid[0:h, 0:w]
    frames = []
    for k in range(50):  # a moving textured pattern
        y = (128 + 60 * np.sin((xx + 3 * k) / 5.0) * np.cos(yy / 7.0)).astype(np.uint8)
        frames.append(y.tobytes() + bytes([128]) * (w * h // 2))
    src = tmp_path / "src.yuv"
    src.write_bytes(b"".join(frames))
    lo, hi = (span.measure(p, k, src, tmp_path) for k in (30, 1000))
    assert lo.ssim_mean < hi.ssim_mean and hi.ssim_mean > 0.9
    assert lo.idr_frames >= 1 and not list(tmp_path.glob("decoded-*"))
