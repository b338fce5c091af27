"""Per-run metrics of a `rise` run ([RISE setup]; Guest's perspective unless the name says
otherwise): the pure metric functions and `rise_metrics`, which analysis.metrics calls
through the workload's analysis (analysis.py) to write metrics.json and
tables/guest_frames.parquet.

A metric with no data is NaN (written as null in metrics.json), never 0. Definitions are in
priolab/workloads/rise/README.md; each function below states its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.link import linkem_metrics
from analysis.logs import read_json
from priolab.workloads.rise.freeze import detect_freezes
from priolab.workloads.rise.keyframes import keyframe_causes
from priolab.workloads.rise.logs import ENDPOINTS
from priolab.workloads.rise.mtp_phase import tick_phase
from priolab.workloads.rise.regime import (
    DIRECTIONS,
    cwnd_metrics,
    sender_metrics,
    summary_counts,
    tracking_delays,
    tracking_metrics,
)
from priolab.workloads.rise.stalls import Window, stalls, undisplayed
from priolab.workloads.rise.tables import TABLES_DIR, load_tables
from traces.orientation import euler_to_quat, geodesic_angle
from traces.tracking import TrackingTrace

NAN = float("nan")
CHANNELS = ("tracking", "video", "ack")
QUINN_KEYS = ("quinn_wait_us_p50", "quinn_wait_us_p99", "quinn_wait_us_max")
QUINN_COUNT_KEY = "quinn_waited_datagrams"

# warm-up excluded when the run's workload does not say (runs before issue 10): the RISE
# workload's default, priolab/workloads/rise/__init__.py DEFAULT_WARMUP_S, where its reason is given
DEFAULT_WARMUP_S = 3.0
DEFAULT_FPS = 30.0
DEFAULT_DEADLINE_MS = 1000.0
# tracking samples generated this close to the end may be in flight when the run stops
TRACKING_GUARD_US = 1_000_000

# the metrics every run reports (aggregate/figures rely on these names); stalls and displayed
# fps stand right beside the freeze rate, which cannot see a stream that stops
CORE_METRICS = (
    "mtp_median_ms",
    "mtp_p95_ms",
    "mtp_p99_ms",
    "freeze_rate_pct",
    "freeze_duration_s",
    "stall_pct",
    "stall_time_s",
    "longest_gap_s",
    "displayed_fps",
    "frames_undisplayed_pct",
    "retx_rate_pct_guest",
    "retx_rate_pct_host",
    "keyframe_rate_pct_guest",
    "keyframe_rate_pct_host",
    "mismatch_median_deg",
    "mismatch_p95_deg",
)


# ------------------------------------------------------------------ pure functions


def percentiles(values: np.ndarray, qs: tuple[float, ...] = (50, 95, 99)) -> list[float]:
    """Percentiles with numpy's default linear interpolation; NaN for no finite value."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return [NAN] * len(qs)
    return [float(x) for x in np.percentile(v, qs)]


def mtp_ms(displays: pd.DataFrame) -> np.ndarray:
    """MTP of each displayed frame: display_time_us − tracking_gen_time_us (one clock), in ms.
    Frames rendered from no sample (tracking_sample_id < 0) get NaN."""
    gen = displays["tracking_gen_time_us"].to_numpy(np.float64, na_value=np.nan)
    # µs since the epoch (< 2**53) are exact in float64
    out = (displays["display_time_us"].to_numpy(np.float64) - gen) / 1000.0
    out[displays["tracking_sample_id"].to_numpy(np.int64) < 0] = NAN
    return out


def tracking_trace(tracking_sent: pd.DataFrame) -> tuple[TrackingTrace, int] | None:
    """The endpoint's own orientation over time (times in s relative to t0 µs, returned)."""
    t = tracking_sent.sort_values("gen_time_us", kind="stable")
    t = t.drop_duplicates("gen_time_us", keep="last")
    if t.empty:
        return None
    t0 = int(t["gen_time_us"].iloc[0])
    times_s = (t["gen_time_us"].to_numpy(np.int64) - t0) / 1e6
    q = euler_to_quat(
        t["yaw_rad"].to_numpy(np.float64),
        t["pitch_rad"].to_numpy(np.float64),
        t["roll_rad"].to_numpy(np.float64),
    )
    return TrackingTrace(times_s, q), t0


def orientation_pairs(
    displays: pd.DataFrame, tracking_sent: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per displayed frame, the receiver's orientation in the tracking sample the frame was
    rendered from (tracking_sent row with that sample_id) and its orientation at display time
    (slerp between the neighbouring samples of tracking_sent; held constant outside the
    sampled span): (known, q_used, q_now), quaternions of the frames where `known` (a mask
    over `displays`: the sample id is in tracking_sent)."""
    known = np.zeros(len(displays), bool)
    none = np.zeros((0, 4))
    tr = tracking_trace(tracking_sent)
    if tr is None or displays.empty:
        return known, none, none
    trace, t0 = tr
    by_id = tracking_sent.drop_duplicates("sample_id", keep="last").set_index("sample_id")
    ids = displays["tracking_sample_id"].to_numpy(np.int64)
    known = np.isin(ids, by_id.index.to_numpy())
    if not known.any():
        return known, none, none
    rows = by_id.loc[ids[known]]
    q_used = euler_to_quat(
        rows["yaw_rad"].to_numpy(np.float64),
        rows["pitch_rad"].to_numpy(np.float64),
        rows["roll_rad"].to_numpy(np.float64),
    )
    t_disp = (displays["display_time_us"].to_numpy(np.int64)[known] - t0) / 1e6
    return known, q_used, trace.orientation_at(t_disp)


def mismatch_deg(displays: pd.DataFrame, tracking_sent: pd.DataFrame) -> np.ndarray:
    """Per displayed frame: geodesic angle (deg) between the two orientations of
    `orientation_pairs`. NaN where the sample id is unknown."""
    out = np.full(len(displays), NAN)
    known, q_used, q_now = orientation_pairs(displays, tracking_sent)
    if known.any():
        out[known] = np.degrees(geodesic_angle(q_used, q_now))
    return out


def final_channel_rows(channels: pd.DataFrame, endpoint: str) -> pd.DataFrame:
    """The last (cumulative) row per channel of one endpoint, indexed by channel."""
    c = channels[channels["endpoint"] == endpoint]
    if c.empty:
        return c.set_index("channel")
    return c.sort_values("time_us", kind="stable").groupby("channel").tail(1).set_index("channel")


def retx_rate_pct(channels: pd.DataFrame, endpoint: str) -> float:
    """Retransmitted / sent video datagrams × 100 (final row of the video channel)."""
    f = final_channel_rows(channels, endpoint)
    if "video" not in f.index or f.loc["video", "sent"] <= 0:
        return NAN
    return 100.0 * float(f.loc["video", "retransmitted"]) / float(f.loc["video", "sent"])


def keyframe_rate_pct(frames_sent: pd.DataFrame, endpoint: str) -> float:
    """Key frames / frames encoded × 100 (frames_sent.csv of that endpoint)."""
    f = frames_sent[frames_sent["endpoint"] == endpoint]
    if f.empty:
        return NAN
    return 100.0 * float((f["frame_type"] == "key").sum()) / len(f)


def goodput_mbps(
    displayed: pd.DataFrame, sender_frames: pd.DataFrame, duration_s: float | None
) -> float:
    """Bytes of the frames the receiver displayed (sizes from the sender's frames_sent.csv,
    matched by frame_id) × 8 / duration / 1e6. duration: the run's duration_s, else the span of
    the display times. NaN with no displayed frame."""
    if displayed.empty or sender_frames.empty:
        return NAN
    sizes = sender_frames.drop_duplicates("frame_id", keep="last").set_index("frame_id")
    ids = displayed["frame_id"].drop_duplicates()
    total = float(sizes["size_bytes"].reindex(ids).fillna(0).sum())
    if duration_s is None or not duration_s > 0:
        t = displayed["display_time_us"]
        duration_s = (int(t.max()) - int(t.min())) / 1e6
    if not duration_s > 0:
        return NAN
    return total * 8 / duration_s / 1e6


def channel_counters(channels: pd.DataFrame, endpoint: str) -> dict[str, float]:
    """dropped_ingress_<ch>_<ep>, evicted_<ch>_<ep> from the final rows; NaN if no row."""
    f = final_channel_rows(channels, endpoint)
    out: dict[str, float] = {}
    for ch in CHANNELS:
        for col in ("dropped_ingress", "evicted"):
            out[f"{col}_{ch}_{endpoint}"] = float(f.loc[ch, col]) if ch in f.index else NAN
    return out


def path_metrics(path_stats: pd.DataFrame, endpoint: str) -> dict[str, float]:
    p = path_stats[path_stats["endpoint"] == endpoint].sort_values("time_us", kind="stable")
    if p.empty:
        return {f"rtt_median_ms_{endpoint}": NAN, f"lost_packets_{endpoint}": NAN}
    return {
        f"rtt_median_ms_{endpoint}": float(p["rtt_ms"].median()),
        f"lost_packets_{endpoint}": float(p["lost_packets"].iloc[-1]),
    }


def quinn_metrics(summary: dict[str, Any] | None, endpoint: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in (*QUINN_KEYS, QUINN_COUNT_KEY):
        v = (summary or {}).get(k)
        out[f"{k}_{endpoint}"] = float(v) if isinstance(v, int | float) else NAN
    return out


def endpoint_window(
    summary: dict[str, Any] | None,
    tracking_sent: pd.DataFrame,
    duration_s: float | None,
    warmup_s: float,
) -> Window:
    """An endpoint's analysed window [start + warm-up, end], µs. start: summary.json's
    start_time_us, else its first tracking sample (generated at 60 Hz from the start whatever
    the network does). end: summary.json's end_time_us, else start + the run's duration_s,
    else its last tracking sample. Never the display times: a stream that stops displaying
    must not shorten its own window. An empty window if nothing is known."""
    sm = summary or {}
    gen = tracking_sent["gen_time_us"].to_numpy(np.int64)
    start = sm.get("start_time_us")
    if not isinstance(start, int):
        start = int(gen.min()) if len(gen) else None
    if start is None:
        return Window(0, 0, 0)
    end = sm.get("end_time_us")
    if not isinstance(end, int):
        if duration_s:
            end = start + int(duration_s * 1e6)
        else:
            end = int(gen.max()) if len(gen) else start
    return Window(start, min(end, start + int(warmup_s * 1e6)), end)


def _ep(df: pd.DataFrame, ep: str) -> pd.DataFrame:
    return df[df["endpoint"] == ep]


def guest_frames(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per frame displayed at the Guest, in display order: display_time_us, frame_id,
    frame_type, mtp_ms, mismatch_deg, interval_ms (since the previous display, in libwebrtc's
    integer ms), freeze (that interval was a freeze)."""
    disp = tables["frames_displayed"]
    disp = disp[disp["endpoint"] == "guest"].sort_values("display_time_us", kind="stable")
    track = tables["tracking_sent"]
    track = track[track["endpoint"] == "guest"]
    fr = detect_freezes(disp["display_time_us"].to_numpy(np.int64))
    interval = np.concatenate([[np.nan], fr.intervals_ms.astype(np.float64)])[: len(disp)]
    freeze = np.concatenate([[False], fr.is_freeze])[: len(disp)]
    return pd.DataFrame(
        {
            "display_time_us": disp["display_time_us"].to_numpy(np.int64),
            "frame_id": disp["frame_id"].to_numpy(np.int64),
            "frame_type": disp["frame_type"].to_numpy(object),
            "mtp_ms": mtp_ms(disp),
            "mismatch_deg": mismatch_deg(disp, track),
            "interval_ms": interval,
            "freeze": freeze,
        }
    )


def compute_metrics(
    tables: dict[str, pd.DataFrame],
    summaries: dict[str, dict[str, Any] | None],
    duration_s: float | None,
    workload: dict[str, Any] | None = None,
) -> tuple[dict[str, float], pd.DataFrame, dict[str, Any]]:
    """All per-run metrics, the Guest's per-frame table (every display, with `in_window`) and
    what the analysis assumed (warm-up, windows), recorded in metrics.json."""
    wl = workload or {}
    warmup_s = float(wl.get("warmup_s", DEFAULT_WARMUP_S))
    fps = float(wl.get("fps") or DEFAULT_FPS)
    deadline_us = int(1000 * float(wl.get("deadline_ms") or DEFAULT_DEADLINE_MS))
    bitrate = wl.get("video_bitrate_mbps")
    win = {
        ep: endpoint_window(summaries.get(ep), _ep(tables["tracking_sent"], ep), duration_s,
                            warmup_s)
        for ep in ENDPOINTS
    }  # fmt: skip
    gw = win["guest"]
    gf = guest_frames(tables)
    t_disp = gf["display_time_us"].to_numpy(np.int64)
    gf["in_window"] = gw.contains(t_disp)
    inw = gf[gf["in_window"]]
    m: dict[str, float] = {}
    m["mtp_median_ms"], m["mtp_p95_ms"], m["mtp_p99_ms"] = percentiles(inw["mtp_ms"].to_numpy())
    # the same frames' MTP with the Host's frame-tick phase taken out (mtp_phase.py)
    shown = _ep(tables["frames_displayed"], "guest")
    shown = shown[gw.contains(shown["display_time_us"].to_numpy(np.int64))].copy()
    shown["mtp_ms"] = mtp_ms(shown)
    m.update(
        tick_phase(
            shown, _ep(tables["frames_sent"], "host"), _ep(tables["tracking_received"], "host")
        )
    )
    # the freeze rule's 30-interval average runs over every display; freezes are counted
    # where the frame ending them was displayed inside the window
    n_in = len(inw)
    fz = inw["freeze"].to_numpy(bool)
    m["freeze_rate_pct"] = NAN if n_in == 0 else 100.0 * fz.sum() / n_in
    m["freeze_duration_s"] = NAN if n_in == 0 else float(inw["interval_ms"][fz].sum()) / 1000.0
    m["freeze_count"] = NAN if n_in == 0 else float(fz.sum())
    m["frames_displayed_guest"] = float(n_in)
    m.update(stalls(t_disp, gw, fps))
    host_sent = _ep(tables["frames_sent"], "host")
    m["frames_undisplayed_guest"], m["frames_undisplayed_pct"] = undisplayed(
        host_sent["frame_id"].to_numpy(), host_sent["encode_time_us"].to_numpy(),
        gf["frame_id"].to_numpy(), gw, deadline_us,
    )  # fmt: skip
    for ep in ENDPOINTS:
        m[f"retx_rate_pct_{ep}"] = retx_rate_pct(tables["channels"], ep)
        m[f"keyframe_rate_pct_{ep}"] = keyframe_rate_pct(tables["frames_sent"], ep)
        m.update(keyframe_causes(tables["frames_sent"], ep))
    m["mismatch_median_deg"], m["mismatch_p95_deg"], m["mismatch_p99_deg"] = percentiles(
        inw["mismatch_deg"].to_numpy(), (50, 95, 99)
    )
    disp, sent = tables["frames_displayed"], tables["frames_sent"]
    m["goodput_down_mbps"] = goodput_mbps(_ep(disp, "guest"), _ep(sent, "host"), duration_s)
    m["goodput_up_mbps"] = goodput_mbps(_ep(disp, "host"), _ep(sent, "guest"), duration_s)
    for direction, (snd, rcv) in DIRECTIONS.items():
        d = tracking_delays(
            _ep(tables["tracking_sent"], snd), _ep(tables["tracking_received"], rcv),
            win[snd], TRACKING_GUARD_US,
        )  # fmt: skip
        m.update(tracking_metrics(d, direction))
    for ep in ENDPOINTS:
        m.update(channel_counters(tables["channels"], ep))
        m.update(path_metrics(tables["path_stats"], ep))
        m.update(quinn_metrics(summaries.get(ep), ep))
        m.update(sender_metrics(_ep(tables["sender"], ep), win[ep], ep))
        m.update(cwnd_metrics(_ep(tables["path_stats"], ep), win[ep], ep, bitrate))
        m.update(summary_counts(summaries.get(ep), ep))
    m.update(linkem_metrics(tables["linkem"]))
    info: dict[str, Any] = {
        "warmup_s": warmup_s,
        "warmup_source": "workload.warmup_s" if "warmup_s" in wl else "default",
        "stall_fps": fps,
        "windows_us": {ep: [w.run_start_us, w.start_us, w.end_us] for ep, w in win.items()},
        "buffer_scheme": {
            ep: (summaries.get(ep) or {}).get("buffer_scheme", "unknown") for ep in ENDPOINTS
        },
    }
    return m, gf, info


def rise_metrics(run_dir: Path, meta: dict[str, Any]) -> tuple[dict[str, float], dict[str, Any]]:
    """(metrics, analysis info) of one run; writes tables/guest_frames.parquet (the CDF
    figures read it). Unreadable logs raise AnalysisError."""
    tables = load_tables(run_dir)
    summaries = {ep: read_json(run_dir / ep / "summary.json") for ep in ENDPOINTS}
    duration = meta["run"].get("duration_s")
    m, gf, info = compute_metrics(
        tables, summaries, float(duration) if duration else None, meta["run"].get("workload")
    )
    (run_dir / TABLES_DIR).mkdir(exist_ok=True)
    gf.to_parquet(run_dir / TABLES_DIR / "guest_frames.parquet", index=False)
    return m, info
