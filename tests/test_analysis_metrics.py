"""Per-run metric functions on hand-made logs with answers worked out from the inputs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.logs import empty_frame
from priolab.workloads.rise.freeze import detect_freezes
from priolab.workloads.rise.logs import CSV_SCHEMAS
from priolab.workloads.rise.metrics import (
    channel_counters,
    compute_metrics,
    goodput_mbps,
    keyframe_rate_pct,
    mismatch_deg,
    mtp_ms,
    percentiles,
    retx_rate_pct,
)

T0 = 1_700_000_000_000_000


def times_from_intervals(intervals_ms: list[int]) -> np.ndarray:
    return T0 + 1000 * np.concatenate([[0], np.cumsum(intervals_ms)]).astype(np.int64)


# ------------------------------------------------------------------ freezes


def test_exactly_two_freezes():
    intervals = [33] * 10 + [300] + [33] * 10 + [500] + [33] * 5
    fr = detect_freezes(times_from_intervals(intervals))
    assert fr.count == 2
    assert list(np.flatnonzero(fr.is_freeze)) == [10, 21]
    assert fr.duration_ms == 300 + 500
    n_displayed = len(intervals) + 1
    assert fr.n_displayed == n_displayed
    assert fr.rate_pct == pytest.approx(100 * 2 / n_displayed)


def test_judged_interval_is_part_of_its_own_average():
    """libwebrtc adds the interval to the window before judging it."""
    base = [33] * 5
    # threshold if the interval were NOT in the average: max(3*33, 33+150) = 183
    assert detect_freezes(times_from_intervals(base + [183])).count == 0
    # with it: avg = (165 + x) // 6; freeze iff x >= max(3*avg, avg + 150)
    for x in (211, 212):
        avg = (sum(base) + x) // 6
        expect = x >= max(3 * avg, avg + 150)
        assert detect_freezes(times_from_intervals(base + [x])).count == int(expect)
    assert detect_freezes(times_from_intervals(base + [212])).count == 1  # 377//6=62, 62+150


def test_needs_five_samples_and_freeze_stays_in_window():
    # a huge 4th interval: only 4 samples in the window, not judged
    assert detect_freezes(times_from_intervals([33, 33, 33, 1000])).count == 0
    # after a freeze the window holds it: the next equal interval is no longer a freeze
    base = [33] * 5
    fr = detect_freezes(times_from_intervals(base + [250, 250]))
    win1 = base + [250]
    avg1 = sum(win1) // len(win1)
    win2 = base + [250, 250]
    avg2 = sum(win2) // len(win2)
    assert fr.is_freeze[-2] == (250 >= max(3 * avg1, avg1 + 150))
    assert fr.is_freeze[-1] == (250 >= max(3 * avg2, avg2 + 150))
    assert fr.is_freeze[-2] and not fr.is_freeze[-1]


def test_window_is_last_30_intervals():
    # 30 slow intervals then 30 fast ones push the slow ones out of the window
    intervals = [100] * 30 + [10] * 30 + [180]
    fr = detect_freezes(times_from_intervals(intervals))
    window = intervals[-30:]
    avg = sum(window) // 30
    assert fr.is_freeze[-1] == (180 >= max(3 * avg, avg + 150))
    assert fr.is_freeze[-1]  # with all 61 intervals in the average it would not be


def test_no_display_is_nan():
    fr = detect_freezes(np.array([], dtype=np.int64))
    assert math.isnan(fr.rate_pct) and fr.count == 0


# ------------------------------------------------------------------ MTP, mismatch


def displays(rows: list[tuple[int, int, int, int]]) -> pd.DataFrame:
    """(frame_id, display_time_us, tracking_sample_id, tracking_gen_time_us)."""
    df = pd.DataFrame(
        rows, columns=["frame_id", "display_time_us", "tracking_sample_id", "tracking_gen_time_us"]
    )
    df["frame_type"] = "delta"
    df["mtp_ms"] = (df["display_time_us"] - df["tracking_gen_time_us"]) / 1000
    return df


def test_mtp_percentiles_of_known_list():
    values_ms = np.arange(1, 102)  # 101 values: linear-interpolation percentiles fall on them
    rng = np.random.default_rng(3)
    order = rng.permutation(len(values_ms))
    rows = [(i, T0 + 1000 * int(values_ms[k]), i, T0) for i, k in enumerate(order)]
    rows.append((999, T0 + 5_000_000, -1, T0))  # no tracking sample: not an MTP sample
    m = mtp_ms(displays(rows))
    assert math.isnan(m[-1])
    med, p95, p99 = percentiles(m)
    assert med == 51 and p95 == 96 and p99 == 100  # values at ranks 50, 95, 99 of 0..100
    assert percentiles(np.array([np.nan])) == [pytest.approx(np.nan, nan_ok=True)] * 3


def tracking(rows: list[tuple[int, int, float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        rows, columns=["sample_id", "gen_time_us", "yaw_rad", "pitch_rad", "roll_rad"]
    )


def test_mismatch_of_known_rotations():
    tr = tracking([(0, T0, 0.0, 0.0, 0.0), (1, T0 + 1_000_000, math.pi / 2, 0.0, 0.0)])
    d = displays(
        [
            (1, T0 + 1_000_000, 0, T0),  # yaw 0 → 90°: 90°
            (2, T0 + 500_000, 0, T0),  # halfway: slerp gives yaw 45°
            (3, T0 + 1_000_000, 1, T0 + 1_000_000),  # same sample: 0°
            (4, T0 + 9_000_000, 0, T0),  # after the last sample: held at 90°
            (5, T0 + 1_000_000, 7, T0),  # unknown sample id: NaN
        ]
    )
    m = mismatch_deg(d, tr)
    assert m[:4] == pytest.approx([90.0, 45.0, 0.0, 90.0], abs=1e-9)
    assert math.isnan(m[4])
    # yaw a and pitch b together: R = Ry(a)·Rx(b) has trace cos a + cos b + cos a·cos b,
    # and its angle is acos((trace − 1) / 2)
    a, b = 0.4, 0.3
    tr2 = tracking([(0, T0, 0.0, 0.0, 0.0), (1, T0 + 1_000_000, a, b, 0.0)])
    tr_ = math.cos(a) + math.cos(b) + math.cos(a) * math.cos(b)
    expect = math.degrees(math.acos((tr_ - 1) / 2))
    assert mismatch_deg(displays([(1, T0 + 1_000_000, 0, T0)]), tr2)[0] == pytest.approx(expect)


# ------------------------------------------------------------------ rates, counters


def channels_df(rows: list[tuple]) -> pd.DataFrame:
    cols = ["endpoint", *CSV_SCHEMAS["channels.csv"]]
    return pd.DataFrame(rows, columns=cols)


def test_retx_rate_uses_final_video_row():
    ch = channels_df(
        [
            ("guest", T0 + 2_000_000, "video", 150, 140, 3, 4, 7, 168_000),  # final (later)
            ("guest", T0 + 1_000_000, "video", 50, 40, 0, 0, 1, 48_000),
            ("guest", T0 + 2_000_000, "tracking", 120, 120, 0, 0, 0, 9_600),
            ("host", T0 + 1_000_000, "video", 10, 0, 0, 0, 0, 0),  # nothing sent: NaN
        ]
    )
    assert retx_rate_pct(ch, "guest") == pytest.approx(100 * 7 / 140)
    assert math.isnan(retx_rate_pct(ch, "host"))
    c = channel_counters(ch, "guest")
    assert c["dropped_ingress_video_guest"] == 3 and c["evicted_video_guest"] == 4
    assert c["dropped_ingress_tracking_guest"] == 0
    assert math.isnan(c["evicted_ack_guest"])  # no ack row: no data, not 0


def test_keyframe_rate():
    types = ["key"] + ["delta"] * 19 + ["key"] + ["delta"] * 18 + ["key"]
    fs = pd.DataFrame({"endpoint": "host", "frame_type": types, "frame_id": range(len(types))})
    assert keyframe_rate_pct(fs, "host") == pytest.approx(100 * 3 / len(types))
    assert math.isnan(keyframe_rate_pct(fs, "guest"))


def test_goodput_counts_displayed_frames_once():
    sent = pd.DataFrame({"frame_id": [0, 1, 2, 3], "size_bytes": [1000, 2000, 3000, 4000]})
    disp = pd.DataFrame({"frame_id": [0, 2, 2], "display_time_us": [T0, T0 + 1, T0 + 2]})
    assert goodput_mbps(disp, sent, 2.0) == pytest.approx((1000 + 3000) * 8 / 2.0 / 1e6)
    assert math.isnan(goodput_mbps(disp.iloc[:0], sent, 2.0))


def test_run_with_no_logs_gives_nan_not_zero():
    tables = {n.removesuffix(".csv"): empty_frame(s) for n, s in CSV_SCHEMAS.items()}
    for t in tables.values():
        t.insert(0, "endpoint", pd.Series(dtype=object))
    from analysis.logs import LINKEM_SCHEMA

    lk = empty_frame(LINKEM_SCHEMA)
    lk["direction"] = pd.Series(dtype=object)
    tables["linkem"] = lk
    m, gf, _ = compute_metrics(tables, {"guest": None, "host": None}, 10.0)
    assert gf.empty
    for k in ("mtp_median_ms", "freeze_rate_pct", "freeze_duration_s", "retx_rate_pct_guest",
              "keyframe_rate_pct_host", "mismatch_p95_deg", "mismatch_p99_deg",
              "goodput_down_mbps", "quinn_wait_us_p99_guest", "linkem_drops_queue_up",
              "stall_time_s",
              "displayed_fps", "tracking_delivery_pct_up", "transport_limited_pct_guest",
              "cwnd_to_video_bdp_guest", "deadline_expirations_host"):  # fmt: skip
        assert math.isnan(m[k]), k
