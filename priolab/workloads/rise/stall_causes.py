"""What started each of the Guest's stalls in a real rise run: one line per stall.

    python -m priolab.workloads.rise.stall_causes RUN_DIR [RUN_DIR ...]

For every stall after the warm-up (analysis/stalls.py's rule; it begins at the last display),
the line names the Host's QUIC packets declared lost from `LOSS_LEAD_S` before the stall's
beginning until `LOSS_LAG_S` after it (path_stats.csv `lost_packets`, sampled every 100 ms, so
the window is widened to whole rows), the Host's key frame encoded nearest to that beginning
(its offset, + = after the last display), and the frame whose display ended the stall. The
footer compares what the Host's quinn declared lost with what the downlink emulator dropped:
a difference is packets lost after the link (e.g. in the Guest's UDP socket buffer, which the
sim site models only when a node is given `recv_buffer_bytes`: endpoints/sim/README.md). The
history of how it found those losses: docs/investigations/
2026-11-26-rise-sim-predictor-and-real-runs.md ("Why the predictor missed w/ Pri's stalls").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from analysis.metrics import per_run_main
from ground import rundir
from priolab.workloads.rise.logs import read_log_csv
from priolab.workloads.rise.stalls import Window, stall_spans_us

# the Host's path_stats row that shows a loss comes up to one 100 ms row plus its loss
# detection (≈ 9/8 RTT) after the packet was sent
LOSS_LEAD_S = 0.1
LOSS_LAG_S = 0.3


def explain(run_dir: Path) -> list[str]:
    m = json.loads((run_dir / rundir.METRICS).read_text())
    start, win_start, end = m["analysis"]["windows_us"]["guest"]
    fps = float(m["run"]["workload"]["fps"])
    shown = read_log_csv(run_dir / "guest" / "frames_displayed.csv")
    sent = read_log_csv(run_dir / "host" / "frames_sent.csv")
    path = read_log_csv(run_dir / "host" / "path_stats.csv")
    spans = stall_spans_us(shown["display_time_us"].to_numpy(), Window(start, win_start, end), fps)
    keys = sent[sent["frame_type"] == "key"]["encode_time_us"].to_numpy(np.int64)
    t_ps = path["time_us"].to_numpy(np.int64)
    lost = path["lost_packets"].to_numpy(np.int64)
    disp_t = shown["display_time_us"].to_numpy(np.int64)
    out = [f"{run_dir}: {len(spans)} stalls after the warm-up"]
    for a, b in spans:
        key_t = int(keys[np.argmin(np.abs(keys - a))]) if len(keys) else int(start)
        i0 = np.searchsorted(t_ps, a - LOSS_LEAD_S * 1e6, side="right") - 1
        i1 = np.searchsorted(t_ps, a + LOSS_LAG_S * 1e6, side="left")
        i1 = min(i1, len(t_ps) - 1)
        n_lost = int(lost[i1] - lost[max(i0, 0)]) if i1 >= 0 else 0
        ender = shown[disp_t == b]
        ended = (
            f"frame {int(ender['frame_id'].iloc[0])} ({ender['frame_type'].iloc[0]})"
            if len(ender)
            else "the end of the run"
        )
        out.append(
            f"  stall {(a - start) / 1e6:6.2f} s +{(b - a) / 1e6:.3f} s: Host packets lost around"
            f" its start: {n_lost}; nearest Host key frame {(key_t - a) / 1e3:+.0f} ms;"
            f" ended by {ended}"
        )
    met = m["metrics"]
    host_lost = float(met.get("lost_packets_host", float("nan")))
    link = float(met.get("linkem_drops_queue_down", 0.0)) + float(
        met.get("linkem_drops_loss_down", 0.0)
    )
    out.append(
        f"  Host packets lost (quinn): {host_lost:.0f}; dropped by the downlink emulator:"
        f" {link:.0f}; Guest ACKs evicted: {met.get('evicted_ack_guest', float('nan')):.0f};"
        f" Host deadline expirations: {met.get('deadline_expirations_host', float('nan')):.0f}"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    return per_run_main(
        "python -m priolab.workloads.rise.stall_causes",
        __doc__,
        lambda run: "\n".join(explain(run)),
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
