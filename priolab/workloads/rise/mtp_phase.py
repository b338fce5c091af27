"""Where the Guest's motion-to-photon delay goes in a real rise run: one line per run.

    python -m priolab.workloads.rise.mtp_phase RUN_DIR [RUN_DIR ...]

MTP = (the Host's encode time of the frame - the generation time of the Guest's tracking sample
it carries) + (the Guest's display time - that encode time). Per displayed frame after the
warm-up (metrics.json's Guest window) the line gives the medians of both parts, the Guest's
tracking one-way delay up (host/tracking_received.csv), the phase of the two endpoints' clocks
(the Host's session start - the Guest's, summary.json `start_time_us`: each endpoint's tracking
and frame ticks count from it) and how many frames carried a sample older than one tracking
period. endpoints/README.md ("The 16 ms step") uses it: the sample's age at encode is quantised
by the tracking period, and whether a sample makes the next frame tick depends on its uplink
delay against that phase.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from analysis.metrics import per_run_main
from priolab.engine import rundir
from priolab.workloads.rise.logs import read_log_csv


def phase(run_dir: Path) -> dict[str, float]:
    """The run's MTP split (ms, medians over the frames displayed after the warm-up)."""
    m = json.loads((run_dir / rundir.METRICS).read_text())
    _, win_start, end = m["analysis"]["windows_us"]["guest"]
    hz = float(m["run"]["workload"]["tracking_hz"])
    shown = read_log_csv(run_dir / "guest" / "frames_displayed.csv")
    sent = read_log_csv(run_dir / "host" / "frames_sent.csv")
    recv = read_log_csv(run_dir / "host" / "tracking_received.csv")
    j = shown.merge(sent[["frame_id", "encode_time_us"]], on="frame_id", how="inner")
    j = j[(j["tracking_sample_id"] >= 0) & j["tracking_gen_time_us"].notna()]
    j = j[(j["display_time_us"] >= win_start) & (j["display_time_us"] <= end)]
    age = (
        j["encode_time_us"].to_numpy(np.float64) - j["tracking_gen_time_us"].to_numpy(np.float64)
    ) / 1e3
    deliver = (
        j["display_time_us"].to_numpy(np.float64) - j["encode_time_us"].to_numpy(np.float64)
    ) / 1e3
    r = recv[recv["gen_time_us"] >= win_start]
    up = (r["recv_time_us"].to_numpy(np.float64) - r["gen_time_us"].to_numpy(np.float64)) / 1e3
    starts = {
        ep: float(json.loads((run_dir / ep / "summary.json").read_text())["start_time_us"])
        for ep in ("guest", "host")
    }
    period_ms = 1e3 / hz
    nan = float("nan")
    return {
        "frames": float(len(j)),
        "mtp_ms": float(np.median(j["mtp_ms"].to_numpy(np.float64))) if len(j) else nan,
        "age_ms": float(np.median(age)) if len(age) else nan,
        "deliver_ms": float(np.median(deliver)) if len(deliver) else nan,
        "up_ms": float(np.median(up)) if len(up) else nan,
        "phase_ms": (starts["host"] - starts["guest"]) / 1e3,
        "older_frames": float(np.sum(age > period_ms)),
        "period_ms": period_ms,
    }


def line(run_dir: Path) -> str:
    p = phase(run_dir)
    return (
        f"{run_dir}: MTP p50 {p['mtp_ms']:.1f} ms = sample age at encode {p['age_ms']:.1f}"
        f" + encode->display {p['deliver_ms']:.1f}; tracking up p50 {p['up_ms']:.1f} ms;"
        f" Host starts {p['phase_ms']:+.2f} ms after the Guest; {p['older_frames']:.0f} of"
        f" {p['frames']:.0f} frames carried a sample older than {p['period_ms']:.1f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    return per_run_main("python -m priolab.workloads.rise.mtp_phase", __doc__, line, argv)


if __name__ == "__main__":
    sys.exit(main())
