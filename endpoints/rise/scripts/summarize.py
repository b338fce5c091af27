"""Prints frames displayed, MTP median/p95/p99 and the in-quinn wait of a rise run folder."""

import json
import sys
from pathlib import Path

import pandas as pd


def main(out: Path) -> None:
    for side in ("guest", "host"):
        d = out / side
        shown = pd.read_csv(d / "frames_displayed.csv")
        s = json.loads((d / "summary.json").read_text())
        mtp = shown["mtp_ms"].dropna()
        print(
            f"{side}: displayed {len(shown)} / encoded-by-peer, "
            f"MTP median {mtp.median():.1f} ms p95 {mtp.quantile(0.95):.1f} p99 {mtp.quantile(0.99):.1f}; "
            f"sent {s['video_datagrams_sent']} video dgrams, retx {s['video_datagrams_retransmitted']}, "
            f"key {s['key_frames']}/{s['frames_encoded']}, freezes {s['freezes']}; "
            f"quinn wait p50 {s['quinn_wait_us_p50']} p99 {s['quinn_wait_us_p99']} "
            f"max {s['quinn_wait_us_max']} us, waited {s['quinn_waited_datagrams']}/{s['quinn_datagrams']}; "
            f"exit {s['exit_reason']}"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
