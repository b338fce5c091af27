"""Metrics that cannot flatter a broken run (stalls, displayed fps, frames never displayed,
tracking delivery) and the regime diagnostics, on hand-made logs with worked answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.logs import LINKEM_SCHEMA, empty_frame
from priolab.workloads.rise.logs import CSV_SCHEMAS
from priolab.workloads.rise.metrics import compute_metrics, endpoint_window
from priolab.workloads.rise.regime import (
    cwnd_metrics,
    sender_metrics,
    tracking_delays,
    tracking_metrics,
)
from priolab.workloads.rise.stalls import Window, stall_threshold_ms, stalls, undisplayed

T0 = 1_700_000_000_000_000
S = 1_000_000


def _tables(**per_ep: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Every table of a run: the given {table: {endpoint: rows}} and empty ones elsewhere."""
    out = {}
    for csv, schema in CSV_SCHEMAS.items():
        name = csv.removesuffix(".csv")
        parts = [empty_frame(schema).assign(endpoint=pd.Series(dtype=object))]
        for ep, df in per_ep.get(name, {}).items():
            parts.append(df.assign(endpoint=ep))
        out[name] = pd.concat(parts, ignore_index=True)
    lk = empty_frame(LINKEM_SCHEMA)
    lk["direction"] = pd.Series(dtype=object)
    out["linkem"] = lk
    return out


def _tracking(n: int, hz: float = 60.0) -> pd.DataFrame:
    t = T0 + np.round(np.arange(n) * S / hz).astype(np.int64)
    z = np.zeros(n)
    return pd.DataFrame({"sample_id": np.arange(n), "gen_time_us": t, "yaw_rad": z,
                         "pitch_rad": z, "roll_rad": z})  # fmt: skip


def _displays(times_us: np.ndarray) -> pd.DataFrame:
    n = len(times_us)
    return pd.DataFrame({"frame_id": np.arange(n), "frame_type": ["delta"] * n,
                         "display_time_us": times_us, "tracking_sample_id": np.full(n, -1),
                         "tracking_gen_time_us": np.full(n, np.nan),
                         "mtp_ms": np.full(n, np.nan)})  # fmt: skip


def _summary(duration_s: float) -> dict:
    return {"start_time_us": T0, "end_time_us": T0 + int(duration_s * S)}


# ------------------------------------------------------------------ stalls


def test_a_stream_that_stops_displaying_has_stall_time_equal_to_its_tail():
    # 30 fps for 10 s, then nothing until the end of a 30 s run; warm-up 3 s
    disp = T0 + np.round(np.arange(300) * S / 30).astype(np.int64)
    tables = _tables(frames_displayed={"guest": _displays(disp)},
                     tracking_sent={"guest": _tracking(1800)})  # fmt: skip
    m, _, info = compute_metrics(tables, {"guest": _summary(30), "host": None}, 30.0,
                                 {"warmup_s": 3.0, "fps": 30})  # fmt: skip
    tail_s = (T0 + 30 * S - int(disp[-1])) / 1e6
    assert m["stall_time_s"] == pytest.approx(tail_s)  # 20.03 s
    assert m["stall_pct"] == pytest.approx(100 * tail_s / 27.0)
    assert m["longest_gap_s"] == pytest.approx(tail_s)
    assert m["stall_count"] == 1
    assert m["displayed_fps"] == pytest.approx(210 / 27.0)  # displays in [3 s, 30 s]
    # what the freeze rate alone would have said: nothing wrong
    assert m["freeze_rate_pct"] == 0
    assert info["warmup_s"] == 3.0 and info["warmup_source"] == "workload.warmup_s"


def test_no_display_at_all_is_a_stall_of_the_whole_window():
    w = Window(T0, T0 + 3 * S, T0 + 30 * S)
    r = stalls(np.array([], dtype=np.int64), w, 30)
    assert r["stall_time_s"] == pytest.approx(27.0) and r["stall_pct"] == pytest.approx(100)
    assert r["displayed_fps"] == 0 and r["longest_gap_s"] == pytest.approx(27.0)


def test_regular_display_has_no_stall_and_a_gap_is_counted_whole_in_the_window():
    w = Window(T0, T0 + 1 * S, T0 + 10 * S)
    t = T0 + np.round(np.arange(300) * S / 30).astype(np.int64)
    assert stalls(t, w, 30)["stall_time_s"] == 0
    # a 0.53 s gap inside the window, and one of 0.13 s (below the 183.3 ms threshold)
    assert stall_threshold_ms(30) == pytest.approx(1000 / 30 + 150)
    gap = t[(t < T0 + 4 * S) | (t >= T0 + int(4.5 * S))]
    gap = gap[(gap < T0 + 6 * S) | (gap > T0 + 6 * S + 100_000)]
    r = stalls(gap, w, 30)
    assert r["stall_count"] == 1
    assert r["stall_time_s"] == pytest.approx(0.5 + 1 / 30, abs=1e-3)
    # a gap straddling the window start counts only its part inside the window
    late = t[t >= T0 + 2 * S]
    r = stalls(late, w, 30)
    assert r["stall_time_s"] == pytest.approx(1.0) and r["longest_gap_s"] == pytest.approx(1.0)


def test_window_never_comes_from_display_times():
    # no summary.json: the end is start + duration, not the last display
    track = _tracking(600)
    w = endpoint_window(None, track, 30.0, 3.0)
    assert (w.run_start_us, w.start_us, w.end_us) == (T0, T0 + 3 * S, T0 + 30 * S)
    # no duration either: the last tracking sample (generated whatever the network does)
    w = endpoint_window(None, track, None, 3.0)
    assert w.end_us == int(track["gen_time_us"].iloc[-1])


def test_frames_never_displayed_leave_out_the_last_deadline():
    w = Window(T0, T0 + 1 * S, T0 + 10 * S)
    enc_t = T0 + np.arange(10) * S  # frames 0..9 at 0..9 s
    n, pct = undisplayed(np.arange(10), enc_t, np.array([1, 2, 3, 9]), w, S)
    # judged: frames 1..9 (≥ 1 s, ≤ 9 s); missing: 4, 5, 6, 7, 8
    assert (n, pct) == (5, pytest.approx(100 * 5 / 9))


# ------------------------------------------------------------------ tracking


def test_tracking_delivery_and_one_way_delay_per_sample():
    sent = _tracking(600)  # 10 s at 60 Hz
    recv = sent[sent["sample_id"] % 4 != 0][["sample_id", "gen_time_us"]].copy()
    recv.insert(1, "recv_time_us", recv["gen_time_us"] + 12_000 + 1000 * (recv["sample_id"] % 3))
    w = Window(T0, T0 + 2 * S, T0 + 10 * S)
    d = tracking_delays(sent, recv, w, S)
    # samples generated in [2 s, 9 s]
    assert d["gen_time_us"].min() >= T0 + 2 * S and d["gen_time_us"].max() <= T0 + 9 * S
    assert len(d) == 421
    m = tracking_metrics(d, "up")
    assert m["tracking_delivery_pct_up"] == pytest.approx(100 * d["owd_ms"].notna().mean())
    assert 74 < m["tracking_delivery_pct_up"] < 76
    assert m["tracking_owd_median_ms_up"] == 13.0 and m["tracking_owd_p99_ms_up"] == 14.0
    # nothing received: 0 % delivered, delays unknown (NaN, never 0)
    m = tracking_metrics(tracking_delays(sent, recv.iloc[:0], w, S), "up")
    assert m["tracking_delivery_pct_up"] == 0 and math.isnan(m["tracking_owd_median_ms_up"])


# ------------------------------------------------------------------ regime diagnostics


def test_sender_diagnostics_from_hand_made_sender_log():
    # rows every 100 ms for 10 s; transport-limited 60 ms of every 100 ms after 5 s only
    t = T0 + np.arange(1, 101) * 100_000
    limited = np.cumsum(np.where(t > T0 + 5 * S, 60_000, 0))
    queued = np.where(np.arange(100) % 10 == 0, 900_000, 1000)
    df = pd.DataFrame({"time_us": t, "queued_bytes_mean": queued,
                       "queued_bytes_max": queued + 5, "limited_us": limited})  # fmt: skip
    m = sender_metrics(df, Window(T0, T0 + 5 * S, T0 + 10 * S), "guest")
    # rows 5.0 s .. 10.0 s: 5 s apart, 50 × 60 ms limited
    assert m["transport_limited_pct_guest"] == pytest.approx(60.0)
    assert m["buffer_queued_p50_bytes_guest"] == 1000
    assert m["buffer_queued_max_bytes_guest"] == 900_005
    # the warm-up hides nothing it should not: before 5 s the sender was never limited
    m = sender_metrics(df, Window(T0, T0, T0 + 5 * S), "guest")
    assert m["transport_limited_pct_guest"] == 0


def test_cwnd_against_video_bitrate_times_rtt():
    t = T0 + np.arange(1, 51) * 100_000
    ps = pd.DataFrame({"time_us": t, "rtt_ms": np.full(50, 20.0),
                       "cwnd_bytes": np.full(50, 150_000)})  # fmt: skip
    m = cwnd_metrics(ps, Window(T0, T0, T0 + 5 * S), "guest", 30.0)
    # 30 Mbit/s × 20 ms = 75 kB: the window is twice what the video needs
    assert m["cwnd_to_video_bdp_guest"] == pytest.approx(2.0)
    assert m["cwnd_median_bytes_guest"] == 150_000
