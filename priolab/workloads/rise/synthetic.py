"""Synthetic run directories that follow the documented log schemas exactly.

For tests and for trying the analysis without the endpoints:

    python -m priolab.workloads.rise.synthetic OUT_RESULTS_DIR [--scenario NAME]

writes OUT/<scenario>/<setting>/<scheme>/<speed>/r<rep>/ for a small matrix. The numbers are
a toy model (constant one-way delay plus jitter, an optional stall), not a simulation.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ground import rundir

T0_US = 1_700_000_000_000_000  # an arbitrary epoch start, µs


@dataclass
class SynthRun:
    scenario: str = "synth"
    setting: str = "FB-4K-Low"
    scheme: str = "pri"
    speed: str = "moderate"
    rep: int = 1
    seed: int = 1
    duration_s: float = 4.0
    fps: float = 30.0
    video_bitrate_mbps: float = 30.0
    tracking_hz: float = 60.0
    tracking_speed_deg_s: float = 40.0
    delay_ms: float = 30.0  # capture → display at the Guest, on top of the tracking age
    jitter_ms: float = 3.0
    stall_after_frame: int | None = None  # Guest display stalls after this frame index
    stall_ms: float = 400.0
    key_every: int = 60
    retx_fraction: float = 0.02
    warmup_s: float = 0.5  # excluded from the metrics (workload.warmup_s)
    valid: bool = True
    invalid_reasons: list[str] = field(default_factory=list)


def _write_csv(path: Path, df: pd.DataFrame) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False)


def _tracking(r: SynthRun, speed_deg_s: float) -> pd.DataFrame:
    n = int(r.duration_s * r.tracking_hz)
    t_us = T0_US + np.round(np.arange(n) * 1e6 / r.tracking_hz).astype(np.int64)
    yaw = np.radians(speed_deg_s) * (t_us - T0_US) / 1e6
    yaw = np.mod(yaw + np.pi, 2 * np.pi) - np.pi
    return pd.DataFrame(
        {"sample_id": np.arange(n), "gen_time_us": t_us, "yaw_rad": yaw,
         "pitch_rad": np.zeros(n), "roll_rad": np.zeros(n)}
    )  # fmt: skip


def _frames(r: SynthRun, rng: np.random.Generator, peer_track: pd.DataFrame) -> pd.DataFrame:
    n = int(r.duration_s * r.fps)
    enc = T0_US + 20_000 + np.round(np.arange(n) * 1e6 / r.fps).astype(np.int64)
    mean = r.video_bitrate_mbps * 1e6 / 8 / r.fps
    key = np.arange(n) % r.key_every == 0
    size = np.where(key, 5 * mean, mean * rng.lognormal(0, 0.2, n)).astype(np.int64)
    # toy causes: the first frame starts the stream, the later key frames follow a deadline
    cause = np.where(key, "deadline-unacked", "none")
    cause[:1] = "start"  # frame 0 is always a key frame (0 % key_every == 0)
    # the peer's latest sample, 10 ms of uplink delay before encoding
    idx = np.searchsorted(peer_track["gen_time_us"].to_numpy(), enc - 10_000, side="right") - 1
    return pd.DataFrame(
        {"frame_id": np.arange(n), "frame_type": np.where(key, "key", "delta"),
         "size_bytes": size, "frag_cnt": -(-size // 1200), "encode_time_us": enc,
         "tracking_sample_id": idx, "key_cause": cause}
    )  # fmt: skip


def _displayed(r: SynthRun, rng: np.random.Generator, sent: pd.DataFrame,
               own_track: pd.DataFrame, stall: bool) -> pd.DataFrame:  # fmt: skip
    ok = sent[sent["tracking_sample_id"] >= 0]
    disp = ok["encode_time_us"].to_numpy() + np.round(
        1000 * (r.delay_ms + rng.uniform(0, r.jitter_ms, len(ok)))
    ).astype(np.int64)
    if stall and r.stall_after_frame is not None:
        # frames encoded during the stall arrive together at its end, then playback catches up
        enc = ok["encode_time_us"].to_numpy()
        t_stall = int(sent.loc[sent["frame_id"] == r.stall_after_frame, "encode_time_us"].iloc[0])
        end = t_stall + int(r.stall_ms * 1000)
        hit = (enc > t_stall) & (enc <= end)
        disp[hit] = end + int(r.delay_ms * 1000)
    disp = np.maximum.accumulate(disp)
    ids = ok["tracking_sample_id"].to_numpy()
    gen = own_track.set_index("sample_id").loc[ids, "gen_time_us"].to_numpy()
    return pd.DataFrame(
        {"frame_id": ok["frame_id"].to_numpy(), "frame_type": ok["frame_type"].to_numpy(),
         "display_time_us": disp, "tracking_sample_id": ids, "tracking_gen_time_us": gen,
         "mtp_ms": (disp - gen) / 1000.0}
    )  # fmt: skip


def _channels(r: SynthRun, sent: pd.DataFrame) -> pd.DataFrame:
    rows = []
    secs = int(np.ceil(r.duration_s))
    frags = sent["frag_cnt"].to_numpy()
    enc_s = (sent["encode_time_us"].to_numpy() - T0_US) / 1e6
    for s in range(1, secs + 1):
        video = int(frags[enc_s < s].sum())
        retx = int(round(video * r.retx_fraction))
        tracking = int(s * r.tracking_hz)
        for ch, enq, rt in (("tracking", tracking, 0), ("video", video + retx, retx),
                            ("ack", video, 0)):  # fmt: skip
            rows.append({"time_us": T0_US + s * 1_000_000, "channel": ch, "enqueued": enq,
                         "sent": enq, "dropped_ingress": 0, "evicted": 0, "retransmitted": rt,
                         "bytes_sent": enq * 1200})  # fmt: skip
    return pd.DataFrame(rows)


def _path_stats(r: SynthRun, rng: np.random.Generator) -> pd.DataFrame:
    n = int(r.duration_s * 10)
    t = T0_US + np.arange(1, n + 1) * 100_000
    sent = np.cumsum(rng.integers(200_000, 500_000, n))
    return pd.DataFrame(
        {"time_us": t, "rtt_ms": 21 + rng.uniform(0, 5, n), "cwnd_bytes": np.full(n, 200_000),
         "lost_packets": np.cumsum(rng.integers(0, 2, n)), "sent_packets": sent // 1200,
         "bytes_sent": sent, "bytes_received": sent // 2, "congestion_events": np.arange(n) // 7}
    )  # fmt: skip


def _sender(r: SynthRun, rng: np.random.Generator) -> pd.DataFrame:
    n = int(r.duration_s * 10)
    t = T0_US + np.arange(1, n + 1) * 100_000
    q = rng.integers(0, 200_000 if r.scheme == "nopri" else 20_000, n)
    limited = np.cumsum(rng.integers(0, 60_000 if r.scheme == "nopri" else 5_000, n))
    return pd.DataFrame(
        {"time_us": t, "queued_bytes_mean": q, "queued_bytes_max": q + rng.integers(0, 50_000, n),
         "limited_us": limited}
    )  # fmt: skip


def write_run(run_dir: Path, r: SynthRun) -> Path:
    """One synthetic run directory (metadata.json, guest/, host/, linkem-stats.jsonl, logs/)."""
    rng = np.random.default_rng(r.seed)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / rundir.LOGS).mkdir(exist_ok=True)
    track = {"guest": _tracking(r, r.tracking_speed_deg_s), "host": _tracking(r, 0.0)}
    sent = {"host": _frames(r, rng, track["guest"]), "guest": _frames(r, rng, track["host"])}
    peer = {"guest": "host", "host": "guest"}
    for ep in ("guest", "host"):
        d = run_dir / ep
        disp = _displayed(r, rng, sent[peer[ep]], track[ep], stall=ep == "guest")
        _write_csv(d / "frames_sent.csv", sent[ep])
        _write_csv(d / "frames_displayed.csv", disp)
        _write_csv(d / "tracking_sent.csv", track[ep])
        recv = track[peer[ep]][["sample_id", "gen_time_us"]].copy()
        recv.insert(1, "recv_time_us", recv["gen_time_us"] + 10_500)
        _write_csv(d / "tracking_received.csv", recv)
        _write_csv(d / "channels.csv", _channels(r, sent[ep]))
        _write_csv(d / "path_stats.csv", _path_stats(r, rng))
        _write_csv(d / "sender.csv", _sender(r, rng))
        prio = r.scheme in (("pri", "pri-u") if ep == "guest" else ("pri", "pri-d"))
        summary = {
            "role": ep, "exit_reason": "duration", "frames_encoded": len(sent[ep]),
            "start_time_us": T0_US, "end_time_us": T0_US + int(r.duration_s * 1e6),
            "buffer_scheme": "prio" if prio else "fifo-head-drop",
            "deadline_expirations": 0 if prio else 1,
            "key_frames": int((sent[ep]["frame_type"] == "key").sum()),
            "frames_displayed": len(disp), "quinn_wait_us_p50": 0, "quinn_wait_us_p99": 12,
            "quinn_wait_us_max": 40, "quinn_waited_datagrams": 3,
        }  # fmt: skip
        (d / "summary.json").write_text(json.dumps(summary))
    lines = []
    for s in range(int(np.ceil(r.duration_s))):
        for dr, rate in (("a_to_b", 60e6), ("b_to_a", 30e6)):
            b = int(rate / 8 * rng.uniform(0.8, 1.0))
            lines.append({"t_s": float(s + 1), "dir": dr, "arrivals": b // 1200,
                          "departures": b // 1200, "bytes_out": b, "drops_queue": 0,
                          "drops_loss": 0, "drops_police": 0, "oversized": 0,
                          "queue_bytes": int(rng.integers(0, 100_000)),
                          "queue_delay_ms_mean": 2.0, "queue_delay_ms_max": 9.0,
                          "final": False})  # fmt: skip
    (run_dir / rundir.LINK_STATS).write_text("".join(json.dumps(x) + "\n" for x in lines))
    meta = {
        "run": {
            "scenario": r.scenario, "setting": r.setting, "scheme": r.scheme, "speed": r.speed,
            "rep": r.rep, "seed": r.seed, "duration_s": r.duration_s,
            "topology": {"kind": "access", "pairs": 1}, "link": {},
            "workload": {"kind": "rise", "video_bitrate_mbps": r.video_bitrate_mbps,
                         "fps": r.fps, "tracking_speed_deg_s": r.tracking_speed_deg_s,
                         "prio_guest": r.scheme in ("pri", "pri-u"),
                         "prio_host": r.scheme in ("pri", "pri-d"), "fifo_drop": "head",
                         "warmup_s": r.warmup_s, "deadline_ms": 1000.0},
            "compare": {"reference": "pri", "order": ["nopri", "pri-d", "pri-u", "pri"],
                        "labels": {"nopri": "w/o Pri", "pri": "w/ Pri"}},
        },
        "valid": r.valid, "invalid_reasons": r.invalid_reasons,
        "start_time": T0_US / 1e6, "stop_time": T0_US / 1e6 + r.duration_s,
    }  # fmt: skip
    (run_dir / rundir.METADATA).write_text(json.dumps(meta, indent=2))
    return run_dir


def run_path(results: Path, r: SynthRun) -> Path:
    return rundir.run_dir(results, r.scenario, r.setting, r.scheme, r.speed, r.rep)


def write_tree(results: Path, scenario: str = "synth", reps: int = 2) -> Path:
    """A small matrix: 2 settings × {nopri, pri} × 2 speeds × reps; nopri stalls more."""
    for si, setting in enumerate(("5G-FHD-Low", "FB-4K-Low")):
        for scheme in ("nopri", "pri"):
            for speed, deg in (("slow", 10.0), ("fast", 90.0)):
                for rep in range(1, reps + 1):
                    r = SynthRun(
                        scenario=scenario, setting=setting, scheme=scheme, speed=speed,
                        rep=rep, seed=100 * si + 10 * rep + (scheme == "pri"),
                        video_bitrate_mbps=10.0 if si == 0 else 30.0,
                        tracking_speed_deg_s=deg,
                        delay_ms=60.0 if scheme == "nopri" else 25.0,
                        stall_after_frame=40 + 10 * rep if scheme == "nopri" else None,
                        retx_fraction=0.05 if scheme == "nopri" else 0.01,
                    )  # fmt: skip
                    write_run(run_path(results, r), r)
    return results / scenario


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m priolab.workloads.rise.synthetic", description=__doc__
    )
    ap.add_argument("results", type=Path)
    ap.add_argument("--scenario", default="synth")
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args(argv)
    print(write_tree(args.results, args.scenario, args.reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
