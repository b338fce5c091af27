"""Where the Guest's motion-to-photon delay goes in a real rise run: one line per run.

    python -m priolab.workloads.rise.mtp_phase RUN_DIR [RUN_DIR ...]

MTP = (the Host's encode time of the frame - the generation time of the Guest's tracking sample
it carries) + (the Guest's display time - that encode time). Per displayed frame after the
warm-up (metrics.json's Guest window) the line gives the medians of both parts, the Guest's
tracking one-way delay up (host/tracking_received.csv), the phase of the two endpoints' clocks
(the Host's session start - the Guest's, summary.json `start_time_us`: each endpoint's tracking
and frame ticks count from it) and how many frames carried a sample older than one tracking
period. docs/investigations/2026-11-26-rise-sim-predictor-and-real-runs.md ("The 16 ms step")
uses it: the sample's age at encode is quantised
by the tracking period, and whether a sample makes the next frame tick depends on its uplink
delay against that phase.

`tick_phase` is the per-run metric the same split gives (metrics.json, runs.csv; issue 25 item
5): MTP = the sample's uplink delay + its wait at the Host for the next frame tick (the
*phase*) + ticks that passed with no newer sample (staleness) + frame delivery. The phase is
set by where the Host's frame clock sits against the sample's arrival, a quantisation of up to
one frame period that no scheme controls; MTP net of it keeps everything else.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.metrics import per_run_main
from ground import rundir
from priolab.workloads.rise.logs import read_log_csv

NAN = float("nan")
PHASE_METRICS = (
    "tick_phase_median_ms", "tick_phase_mean_ms", "tick_stale_median_ms",
    "mtp_net_median_ms", "mtp_net_p95_ms", "mtp_net_p99_ms",
)  # fmt: skip


def frame_ticks(
    shown: pd.DataFrame, host_sent: pd.DataFrame, host_recv: pd.DataFrame
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """The displayed frames of `shown` rendered from a sample, and per frame, on the Host's
    clock (µs): its own encode tick, its sample's first receipt, and the first Host frame tick
    at or after that receipt. ValueError naming the first frame whose tick or sample the
    Host's frames_sent / tracking_received lack."""
    f = shown[(shown["tracking_sample_id"] >= 0) & shown["mtp_ms"].notna()]
    enc_by_id = host_sent.drop_duplicates("frame_id", keep="last").set_index("frame_id")
    recv_by_id = host_recv.groupby("sample_id")["recv_time_us"].min()
    ids = f["frame_id"].to_numpy(np.int64)
    samples = f["tracking_sample_id"].to_numpy(np.int64)
    missing = ~(np.isin(ids, enc_by_id.index) & np.isin(samples, recv_by_id.index))
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"frame {ids[i]} (sample {samples[i]}): not in the Host's frames_sent.csv or"
            " tracking_received.csv"
        )
    enc = enc_by_id.loc[ids, "encode_time_us"].to_numpy(np.int64)
    recv = recv_by_id.loc[samples].to_numpy(np.int64)
    ticks = np.sort(host_sent["encode_time_us"].to_numpy(np.int64))
    nxt = ticks[np.minimum(np.searchsorted(ticks, recv, side="left"), len(ticks) - 1)]
    return f, enc, recv, nxt


def tick_phase(
    shown: pd.DataFrame, host_sent: pd.DataFrame, host_recv: pd.DataFrame
) -> dict[str, float]:
    """The frame-tick phase of the Guest's displayed frames `shown` (frames_displayed rows,
    already cut to the analysed window), from the Host's frames_sent (its frame ticks: every
    tick encodes one frame) and tracking_received (first receipt per sample), all times on
    the Host's clock but MTP's. Per frame rendered from a sample: phase = the first Host frame
    tick at or after the sample's receipt − that receipt; stale = the frame's own tick − that
    first tick (> 0 only when later ticks found no newer sample); MTP net = MTP − phase.
    Medians / percentiles over the frames, ms. NaN for all with no such frame, or when any
    frame's sample or tick is missing from the Host's logs (a partial answer could leave out
    exactly the frames that waited longest)."""
    out = dict.fromkeys(PHASE_METRICS, NAN)
    f = shown[(shown["tracking_sample_id"] >= 0) & shown["mtp_ms"].notna()]
    if f.empty or host_sent.empty:
        return out
    try:
        f, enc, recv, nxt = frame_ticks(shown, host_sent, host_recv)
    except ValueError:
        return out
    if (recv > enc).any() or (nxt > enc).any():
        return out  # a frame rendered from a sample the Host had not yet received: bad logs
    phase = (nxt - recv) / 1e3
    stale = (enc - nxt) / 1e3
    net = f["mtp_ms"].to_numpy(np.float64) - phase
    out["tick_phase_median_ms"] = float(np.median(phase))
    out["tick_phase_mean_ms"] = float(np.mean(phase))
    out["tick_stale_median_ms"] = float(np.median(stale))
    out["mtp_net_median_ms"], out["mtp_net_p95_ms"], out["mtp_net_p99_ms"] = (
        float(x) for x in np.percentile(net, (50, 95, 99))
    )
    return out


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
