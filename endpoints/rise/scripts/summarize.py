"""Prints frames displayed, MTP median/p95/p99 and the in-quinn wait of a rise run folder.

Usage: summarize.py RUN_DIR   (RUN_DIR holds host/ and guest/ log folders)
"""

import json
import sys
from pathlib import Path

import pandas as pd


def describe(side: str, log_dir: Path) -> str:
    shown = pd.read_csv(log_dir / "frames_displayed.csv")
    s = json.loads((log_dir / "summary.json").read_text())
    mtp = shown["mtp_ms"].dropna()
    parts = [
        f"{side}: displayed {len(shown)}",
        f"MTP median {mtp.median():.1f} ms p95 {mtp.quantile(0.95):.1f} "
        f"p99 {mtp.quantile(0.99):.1f}",
        f"video dgrams {s['video_datagrams_sent']} retx {s['video_datagrams_retransmitted']}",
        f"key {s['key_frames']}/{s['frames_encoded']} freezes {s['freezes']}",
        f"quinn wait p50 {s['quinn_wait_us_p50']} p99 {s['quinn_wait_us_p99']} "
        f"max {s['quinn_wait_us_max']} us",
        f"waited {s['quinn_waited_datagrams']}/{s['quinn_datagrams']}",
        f"exit {s['exit_reason']}",
    ]
    return "; ".join(parts)


def main(run_dir: Path) -> None:
    for side in ("guest", "host"):
        print(describe(side, run_dir / side))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: summarize.py RUN_DIR")
    main(Path(sys.argv[1]))
