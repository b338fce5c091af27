"""The roq analysis's scoring kernel: SSIM and the squared error of many (decoded picture,
source picture) pairs in one call to `endpoints/roq-score` (a Rust library, loaded with
ctypes; it reads the planes where numpy holds them, memory maps included, without a copy).

It gives the same bits as quality.py's numpy definition: the same integer window sums, the
same float operations in the same order, the windows' mean summed in numpy's pairwise order
(endpoints/roq-score/src/lib.rs says how). tests/test_roq_kernel.py holds it to both that
definition and per-frame scores the numpy code computed before the kernel existed.

The library is `target/release/libroq_score.so` (`cargo build --release -p roq-score`; the
workflow's build rule makes it); PRIOLAB_ROQ_SCORE names another. Missing, scoring stops with
KernelMissing, which names it: never a fallback that would score a run some other way.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import numpy as np

from priolab.paths import REPO_ROOT
from priolab.workloads.roq.quality import C1, C2, WINDOW, psnr_of_mse

_N = WINDOW * WINDOW
# as quality.ssim's expression evaluates them: (C1 · N) · N
K1 = C1 * _N * _N
K2 = C2 * _N * _N
_OK = 0  # roq_score_pairs's return value when it scored every pair


class KernelMissing(RuntimeError):
    """The scoring library is not built or not loadable (the message names it)."""


def library_path() -> Path:
    return Path(
        os.environ.get(
            "PRIOLAB_ROQ_SCORE", str(REPO_ROOT / "target" / "release" / "libroq_score.so")
        )
    )


@functools.cache
def _load(path: Path) -> ctypes.CDLL:
    if not path.is_file():
        raise KernelMissing(
            f"{path}: the roq scoring kernel is not built "
            "(`cargo build --release -p roq-score` builds it; PRIOLAB_ROQ_SCORE names another)"
        )
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        raise KernelMissing(f"{path}: the roq scoring kernel cannot be loaded: {e}") from None
    size, ptr, f64 = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_double
    fn = lib.roq_score_pairs
    fn.argtypes = [ptr, size, size, ptr, size, size, size, size, f64, f64,
                   ptr, ptr, size, ptr, ptr]  # fmt: skip
    fn.restype = ctypes.c_int32
    return lib


def load_kernel() -> None:
    """Loads the library now (raises KernelMissing naming it), so that a step can stop before
    it writes anything."""
    _load(library_path())


def _planes(name: str, a: np.ndarray) -> np.ndarray:
    """`a` as pictures the kernel can read: uint8, (count, height, width), each picture's rows
    contiguous and pictures apart (a view when they are, else a copy: a broadcast or reversed
    stack is copied)."""
    if a.dtype != np.uint8 or a.ndim != 3:
        raise ValueError(f"{name}: pictures of shape (count, height, width) in uint8, "
                         f"not {a.dtype} {a.shape}")  # fmt: skip
    h, w = a.shape[1:]
    if a.strides[1:] != (w, 1) or a.strides[0] < h * w:
        a = np.ascontiguousarray(a)
    return a


def score_pairs(
    decoded: np.ndarray,
    source: np.ndarray,
    pair_decoded: np.ndarray,
    pair_source: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(SSIM, Σ(x − y)²) of decoded picture `pair_decoded[k]` (−1: a black picture) against
    source picture `pair_source[k]`, for every k; float64 and uint64 arrays. Equal to
    quality.ssim and the integer squared error of quality.psnr_db, bit for bit."""
    decoded, source = _planes("decoded", decoded), _planes("source", source)
    if decoded.shape[1:] != source.shape[1:]:
        raise ValueError(f"pictures of shapes {decoded.shape[1:]} and {source.shape[1:]}")
    h, w = source.shape[1:]
    if h < WINDOW or w < WINDOW:
        raise ValueError(f"pictures of {w} x {h}: SSIM needs at least {WINDOW} x {WINDOW}")
    pd_ = np.ascontiguousarray(pair_decoded, dtype=np.int64)
    ps = np.ascontiguousarray(pair_source, dtype=np.int64)
    if pd_.shape != ps.shape or pd_.ndim != 1:
        raise ValueError(f"pairs: two equal 1-d index arrays, not {pd_.shape} and {ps.shape}")
    n = len(pd_)
    if n and not (-1 <= pd_.min() and pd_.max() < len(decoded)):
        raise ValueError(f"pairs: a decoded index outside -1..{len(decoded) - 1}")
    if n and not (0 <= ps.min() and ps.max() < len(source)):
        raise ValueError(f"pairs: a source index outside 0..{len(source) - 1}")
    ssim = np.empty(n, dtype=np.float64)
    sse = np.empty(n, dtype=np.uint64)
    if n == 0:
        return ssim, sse
    rc = _load(library_path()).roq_score_pairs(
        decoded.ctypes.data if len(decoded) else None, len(decoded), decoded.strides[0],
        source.ctypes.data, len(source), source.strides[0], w, h, K1, K2,
        pd_.ctypes.data, ps.ctypes.data, n, ssim.ctypes.data, sse.ctypes.data,
    )  # fmt: skip
    if rc != _OK:  # every argument was checked above: the library and this file disagree
        raise KernelMissing(f"{library_path()}: roq_score_pairs refused its arguments ({rc})")
    return ssim, sse


def psnrs_db(sse: np.ndarray, pixels: int) -> np.ndarray:
    """PSNR of each squared error of `score_pairs` over pictures of `pixels` pixels: the same
    floats as quality.psnr_db (psnr_of_mse says why)."""
    return np.array([psnr_of_mse(float(e) / pixels) for e in sse.tolist()], dtype=float)
