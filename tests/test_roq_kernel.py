"""The roq scoring kernel (endpoints/roq-score through priolab/workloads/roq/kernel.py) gives
the scores the numpy code gave, to the last bit: against golden scores that code computed
before the kernel existed (tests/roq_golden.py), and against quality.py's numpy definition on
random planes, in a strided source view as the analysis reads it, with black pictures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from priolab.workloads.roq import kernel
from priolab.workloads.roq.quality import psnr_db, ssim
from tests import roq_golden

needs_kernel = pytest.mark.skipif(
    not kernel.library_path().is_file(),
    reason=f"the roq scoring kernel is not built ({kernel.library_path()}): "
    "`cargo build --release -p roq-score` builds it",
)


def _golden() -> dict:
    return json.loads(roq_golden.GOLDEN.read_text())


def _kernel_scores(d: np.ndarray, s: np.ndarray) -> tuple[str, str]:
    ssim_k, sse = kernel.score_pairs(d[None], s[None], np.array([0]), np.array([0]))
    return float(ssim_k[0]).hex(), float(kernel.psnrs_db(sse, d.size)[0]).hex()


@needs_kernel
def test_the_kernel_gives_the_golden_scores_of_every_pair() -> None:
    golden = {p["case"]: (p["ssim"], p["psnr_db"]) for p in _golden()["pairs"]}
    cases = roq_golden.pair_cases()
    assert [c[0] for c in cases] == list(golden)
    for name, d, s in cases:
        assert _kernel_scores(d, s) == golden[name], name


@needs_kernel
def test_the_analysis_gives_the_golden_scores_of_a_run() -> None:
    """score_frames (the kernel) on a run with black, frozen and looped frames: every frame's
    SSIM and PSNR the numpy code's, to the bit."""
    assert roq_golden.compute()["frames"] == _golden()["frames"]


def test_the_golden_scores_are_the_numpy_definitions() -> None:
    """quality.py's numpy code, kept as the definition, still gives the golden scores."""
    golden = {p["case"]: (p["ssim"], p["psnr_db"]) for p in _golden()["pairs"]}
    for name, d, s in roq_golden.pair_cases():
        assert (float(ssim(d, s)).hex(), float(psnr_db(d, s)).hex()) == golden[name], name


@pytest.mark.parametrize(("h", "w"), [(8, 8), (33, 17), (120, 200), (360, 640)])
@needs_kernel
def test_the_kernel_equals_numpy_on_random_planes(h: int, w: int) -> None:
    """Random decoded planes against source planes read as the analysis reads the source:
    the luma of raw I420 frames (a strided view), including a black picture (−1)."""
    rng = np.random.default_rng(h * 1000 + w)
    frame = h * w * 3 // 2
    i420 = rng.integers(0, 256, 3 * frame, dtype=np.uint8).reshape(3, frame)
    source = i420[:, : h * w].reshape(3, h, w)
    decoded = rng.integers(0, 256, (2, h, w), dtype=np.uint8)
    decoded[1] = np.clip(source[2].astype(int) + rng.integers(-9, 10, (h, w)), 0, 255)
    pairs_d, pairs_s = np.array([0, 1, -1, 1]), np.array([0, 2, 1, 1])
    got_ssim, got_sse = kernel.score_pairs(decoded, source, pairs_d, pairs_s)
    black = np.zeros((h, w), dtype=np.uint8)
    for k, (j, s) in enumerate(zip(pairs_d, pairs_s, strict=True)):
        pic = decoded[j] if j >= 0 else black
        assert got_ssim[k] == ssim(pic, source[s])  # exact, not approx
        d = pic.astype(np.int64) - source[s]
        assert int(got_sse[k]) == int((d * d).sum())
        assert kernel.psnrs_db(got_sse[k : k + 1], h * w)[0] == psnr_db(pic, source[s])


@needs_kernel
def test_bad_pairs_are_refused_naming_what_is_wrong() -> None:
    src = np.zeros((2, 16, 16), dtype=np.uint8)
    dec = np.zeros((1, 16, 16), dtype=np.uint8)
    with pytest.raises(ValueError, match="decoded index outside -1..0"):
        kernel.score_pairs(dec, src, np.array([1]), np.array([0]))
    with pytest.raises(ValueError, match="source index outside 0..1"):
        kernel.score_pairs(dec, src, np.array([0]), np.array([2]))
    with pytest.raises(ValueError, match="shapes"):
        kernel.score_pairs(dec, src[:, :8], np.array([0]), np.array([0]))
    with pytest.raises(ValueError, match="uint8"):
        kernel.score_pairs(dec.astype(np.int32), src, np.array([0]), np.array([0]))
    with pytest.raises(ValueError, match="at least 8 x 8"):
        kernel.score_pairs(dec[:, :7, :7], src[:, :7, :7], np.array([0]), np.array([0]))
    # one picture repeated by broadcasting (stride 0) or a reversed stack: copied, then scored
    same = np.broadcast_to(src[:1] + 7, (3, 16, 16))
    got = kernel.score_pairs(same, src[::-1], np.array([2, 0]), np.array([0, 1]))
    assert got[1].tolist() == [49 * 256] * 2
    none = kernel.score_pairs(dec[:0], src, np.array([-1, -1]), np.array([0, 1]))
    assert none[0].tolist() == [ssim(src[0], src[0])] * 2 and none[1].tolist() == [0, 0]


def test_a_missing_library_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PRIOLAB_ROQ_SCORE", str(tmp_path / "libnone.so"))
    plane = np.zeros((1, 8, 8), np.uint8)
    with pytest.raises(kernel.KernelMissing, match=r"libnone\.so.*build --release -p roq-score"):
        kernel.score_pairs(plane, plane, np.array([0]), np.array([0]))


def test_a_missing_library_stops_the_tables_step_before_it_writes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The metrics rule's first step on a roq run fails naming the library, and leaves no
    tables folder behind (nothing half-written)."""
    from priolab.workloads.roq.analysis import RoqAnalysis

    monkeypatch.setenv("PRIOLAB_ROQ_SCORE", str(tmp_path / "libgone.so"))
    with pytest.raises(kernel.KernelMissing, match=r"libgone\.so"):
        RoqAnalysis().write_tables(tmp_path, tmp_path / "tables")
    assert not (tmp_path / "tables").exists()
