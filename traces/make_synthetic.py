"""Regenerate the small synthetic traces shipped in traces/synthetic/.

    python -m traces.make_synthetic [OUT_DIR]      (default: traces/synthetic)

Every file is made by a `priolab trace ...` command listed in SYNTHETIC, seeded, so the output
is byte-for-byte reproducible (the ffmpeg one only given the same ffmpeg/x264 build; it is
skipped when ffmpeg is absent).
"""

from __future__ import annotations

import sys
from pathlib import Path

from traces.cli import main as cli_main
from traces.frames import ffmpeg_available

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


if __name__ == "__main__":
    for p in regenerate(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(p)
