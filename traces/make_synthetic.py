"""Regenerate the small synthetic traces shipped in traces/synthetic/, or check them.

    python -m traces.make_synthetic [OUT_DIR]      (default: traces/synthetic)
    python -m traces.make_synthetic --check        regenerate into a temporary folder and
                                                   compare with the shipped files; exit 1
                                                   naming every value that moved

Every file is made by a `priolab trace ...` command listed in SYNTHETIC, seeded. Its numbers
are the same on every CPU to the precision it prints (`CPU_TOLERANCE`): a value that comes
from exp, sin or cos can move by one unit in its last printed place where it lies within a
few ULPs of a rounding boundary, because glibc and numpy pick their math kernels (FMA, AVX2,
AVX-512) by CPU. `--check` allows that and nothing more: every other token (times, counts,
comments) must match exactly. The ffmpeg files depend on the x264 build; they are skipped
when ffmpeg is absent and never compared.
"""

from __future__ import annotations

import math
import re
import sys
import tempfile
from pathlib import Path

from traces.cli import main as cli_main
from traces.frames import ffmpeg_available
from traces.generate import RATE_DECIMALS

HERE = Path(__file__).resolve().parent / "synthetic"

# file name -> `trace` arguments (the output path is appended where {out} stands)
SYNTHETIC: dict[str, list[str]] = {
    "constant-2mbps-10s.mm": ["generate", "constant", "{out}", "--rate-mbps", "2",
                              "--duration-s", "10", "--to", "mahimahi"],
    "steps-rfc8867-style-90s.txt": ["generate", "steps", "{out}", "--spec", "0:1,30:0.5,60:1",
                                    "--duration-s", "90"],
    "steps-rfc8867-tc1-120s.txt": ["generate", "steps", "{out}", "--spec", "0:1,60:0.5,90:1",
                                   "--duration-s", "120"],
    # [DTP Fig. 4] (scenarios/dtp-dynamic.yaml): 12 -> 4 -> 12 MB/s = 96/32/96 Mbit/s
    "steps-dtp-12-4-12MBps-20s.txt": ["generate", "steps", "{out}", "--spec", "0:96,5:32,10:96",
                                      "--duration-s", "20"],
    # scenarios/dtp-quick.yaml: the same steps compressed to 3 s phases for a 10 s run
    "steps-dtp-12-4-12MBps-3s-10s.txt": ["generate", "steps", "{out}",
                                         "--spec", "0:96,3:32,6:96", "--duration-s", "10"],
    "cellular-markov-seed1-120s.txt": ["generate", "markov", "{out}", "--duration-s", "120",
                                       "--seed", "1"],
    "tracking-slow-5s.csv": ["tracking", "--synthetic", "slow", "{out}", "--duration-s", "5"],
    "tracking-moderate-5s.csv": ["tracking", "--synthetic", "moderate", "{out}",
                                 "--duration-s", "5"],
    "tracking-fast-5s.csv": ["tracking", "--synthetic", "fast", "{out}", "--duration-s", "5"],
    "frames-x264-1mbps-30fps-2s.csv": ["video", "{out}", "--bitrate-mbps", "1", "--fps", "30",
                                       "--duration-s", "2", "--width", "320", "--height", "180"],
    "gop-x264-720p25-g50-bf2-2.7mbps-20s.csv": ["gop", "{out}", "--bitrate-mbps", "2.7",
                                                "--fps", "25", "--duration-s", "20",
                                                "--gop-frames", "50", "--b-frames", "2"],
}  # fmt: skip
NEEDS_FFMPEG = {"frames-x264-1mbps-30fps-2s.csv", "gop-x264-720p25-g50-bf2-2.7mbps-20s.csv"}

CPU_TOLERANCE: dict[str, float] = {
    # exp of the lognormal noise, rounded to RATE_DECIMALS (traces/generate.py)
    "cellular-markov-seed1-120s.txt": 10.0**-RATE_DECIMALS,
    # sin and cos along the head's path, angles printed to 9 decimals (traces/tracking.py)
    "tracking-slow-5s.csv": 1e-9,
    "tracking-moderate-5s.csv": 1e-9,
    "tracking-fast-5s.csv": 1e-9,
}
"""The most a number of each file may move between CPUs: one unit in its last printed place.
A file not named here is made by exact arithmetic and must match byte for byte."""

_TOKEN = re.compile(r"[^\s,]+")


def regenerate(out_dir: Path, names: list[str] | None = None) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    made = []
    for name, argv in SYNTHETIC.items():
        if names is not None and name not in names:
            continue
        if name in NEEDS_FFMPEG and not ffmpeg_available():
            print(f"skip {name}: ffmpeg not installed", file=sys.stderr)
            continue
        out = out_dir / name
        rc = cli_main(["trace", *[str(out) if a == "{out}" else a for a in argv]])
        if rc != 0:
            raise SystemExit(f"failed to make {name}")
        made.append(out)
    return made


def _number(token: str) -> float | None:
    try:
        x = float(token)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def differences(shipped: Path, made: Path, tolerance: float) -> list[str]:
    """What moved between two versions of one trace file: a line per token that differs by
    more than `tolerance` (numbers) or at all (anything else), naming the line and column."""
    a, b = shipped.read_text().splitlines(), made.read_text().splitlines()
    if len(a) != len(b):
        return [f"{shipped.name}: {len(b)} lines, the shipped file has {len(a)}"]
    out = []
    for i, (la, lb) in enumerate(zip(a, b, strict=True), 1):
        ta, tb = _TOKEN.findall(la), _TOKEN.findall(lb)
        if len(ta) != len(tb):
            out.append(f"{shipped.name}, line {i}: {lb!r}, shipped {la!r}")
            continue
        for col, (xa, xb) in enumerate(zip(ta, tb, strict=True), 1):
            na, nb = _number(xa), _number(xb)
            # one unit of the last place, with room for that unit's own binary rounding
            slack = tolerance * (1 + 1e-6)
            same = xa == xb or (na is not None and nb is not None and abs(na - nb) <= slack)
            if not same:
                out.append(f"{shipped.name}, line {i}, column {col}: {xb}, shipped {xa}")
    return out


def check(names: list[str] | None = None) -> list[str]:
    """Regenerate the comparable files (not the ffmpeg ones) and list what moved."""
    names = [n for n in (names or SYNTHETIC) if n not in NEEDS_FFMPEG]
    with tempfile.TemporaryDirectory(prefix="priolab-synthetic-") as tmp:
        regenerate(Path(tmp), names)
        return [
            line
            for n in names
            for line in differences(HERE / n, Path(tmp) / n, CPU_TOLERANCE.get(n, 0.0))
        ]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        moved = check()
        for line in moved:
            print(line)
        return 1 if moved else 0
    for p in regenerate(Path(argv[0]) if argv else HERE):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
