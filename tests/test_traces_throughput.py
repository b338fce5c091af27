from pathlib import Path

import numpy as np
import pytest

from ground.data import skip_reason
from netem.model import TraceRate
from tests.conftest import dataset, has_dataset
from traces.throughput import (
    DeliveryOpportunities,
    RateSchedule,
    TraceError,
    load_trace,
    read_csv,
    read_mahimahi,
    read_schedule,
    write_mahimahi,
    write_schedule,
)
from traces.throughput_ops import (
    cut,
    fraction_below,
    mean_mbps,
    scale,
    scale_to_mean,
    summary,
    to_opportunities,
    to_schedule,
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# --------------------------------------------------------------------------- Mahimahi


def test_mahimahi_round_trip(tmp_path):
    opps = DeliveryOpportunities(np.array([0, 0, 3, 7, 7, 7, 10]), 10)
    p = tmp_path / "a.trace"
    write_mahimahi(opps, p)
    back = read_mahimahi(p)
    assert back.period_ms == 10
    np.testing.assert_array_equal(back.times_ms, opps.times_ms)
    # 7 packets of 12000 bits in 10 ms = 8.4 Mbit/s
    assert mean_mbps(back) == pytest.approx(8.4)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("", None, "empty file"),
        ("\n\n", None, "empty file"),
        ("0\n5\n3\n", 3, "before the previous"),
        ("0\nabc\n", 2, "not an integer"),
        ("0\nnan\n", 2, "not an integer"),
        ("0\n-1\n", 2, "negative"),
        ("0\n0\n", None, "must be > 0"),
    ],
)
def test_mahimahi_bad_input(tmp_path, text, line, problem):
    p = _write(tmp_path, "bad.trace", text)
    with pytest.raises(TraceError) as e:
        read_mahimahi(p)
    assert str(p) in str(e.value)
    assert problem in str(e.value)
    assert e.value.line == line


def test_missing_file_names_it(tmp_path):
    with pytest.raises(TraceError, match="nope.trace"):
        read_mahimahi(tmp_path / "nope.trace")


def test_write_mahimahi_refuses_period_beyond_last(tmp_path):
    with pytest.raises(TraceError, match="period"):
        write_mahimahi(DeliveryOpportunities(np.array([1, 2]), 5), tmp_path / "x")


# --------------------------------------------------------------------------- schedule


def test_schedule_tab_and_space_and_shift(tmp_path):
    p = _write(tmp_path, "s.txt", "1.0\t10\n2.0\t20\n3.0\t30\n")
    s = read_schedule(p)
    np.testing.assert_array_equal(s.times_s, [0, 1, 2])
    assert s.duration_s == 3.0
    q = _write(tmp_path, "q.txt", "0 10\n1 20\n2 30\n")
    assert mean_mbps(read_schedule(q)) == pytest.approx(20.0)


def test_schedule_third_column(tmp_path):
    p = _write(tmp_path, "m.txt", "1.0\t100\t5\n2.0\t200\t7\n")
    np.testing.assert_array_equal(read_schedule(p, rate_column=3).rate_mbps, [5, 7])
    with pytest.raises(TraceError, match="line 1: 3 column"):
        read_schedule(p, rate_column=4)


def test_schedule_round_trip_with_odd_last_step(tmp_path):
    s = RateSchedule(np.array([0.0, 0.5, 1.0, 1.5]), np.array([1.0, 0.0, 2.5, 3.25]), 4.0)
    p = tmp_path / "s.txt"
    write_schedule(s, p)
    assert "# duration_s 4.0" in p.read_text()
    back = read_schedule(p)
    np.testing.assert_array_equal(back.times_s, s.times_s)
    np.testing.assert_array_equal(back.rate_mbps, s.rate_mbps)
    assert back.duration_s == 4.0


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("", None, "empty file"),
        ("# only a comment\n", None, "no data rows"),
        ("0 1\n2 1\n1 1\n", 3, "does not increase"),
        ("0 1\n0 1\n", 2, "does not increase"),
        ("0 1\n1 nan\n", 2, "must be finite"),
        ("0 1\n1 x\n", 2, "not a number"),
        ("0 1\n1 -3\n", 2, "negative rate"),
        ("0 1\n1\n", 2, "column(s)"),
    ],
)
def test_schedule_bad_input(tmp_path, text, line, problem):
    p = _write(tmp_path, "bad.txt", text)
    with pytest.raises(TraceError) as e:
        read_schedule(p)
    assert str(p) in str(e.value)
    assert problem in str(e.value)
    assert e.value.line == line


def test_schedule_row_by_row_ignores_duplicate_times(tmp_path):
    p = _write(tmp_path, "d.txt", "0 1\n1 2\n1 3\n3 4\n")
    s = read_schedule(p, step_s=1.0)
    np.testing.assert_array_equal(s.times_s, [0, 1, 2, 3])
    assert s.duration_s == 4.0


# --------------------------------------------------------------------------- csv


def test_csv_resamples_irregular_samples(tmp_path):
    # 1 Mbit/s for 0.5 s, 3 for 1 s, 2 for 0.5 s, then 4 for the median interval 0.5 s
    text = "t,thr,other\n10.0,1000,x\n10.5,3000,y\n11.5,2000,z\n12.0,4000,w\n"
    s = read_csv(_write(tmp_path, "c.csv", text), "t", "thr", "kbps", step_s=1.0)
    np.testing.assert_allclose(s.times_s, [0.0, 1.0, 2.0])
    # (0.5·1 + 0.5·3)/1, (0.5·3 + 0.5·2)/1, then a last, shorter step of 0.5 s
    np.testing.assert_allclose(s.rate_mbps, [2.0, 2.5, 4.0])
    assert s.duration_s == 2.5


def test_csv_units(tmp_path):
    p = _write(tmp_path, "c.csv", "t,r\n0,2000000\n1,2000000\n")
    assert mean_mbps(read_csv(p, "t", "r", "bps")) == pytest.approx(2.0)
    with pytest.raises(TraceError, match="unknown rate unit 'gbps'"):
        read_csv(p, "t", "r", "gbps")  # type: ignore[arg-type]


def test_csv_gap_policies(tmp_path):
    p = _write(tmp_path, "g.csv", "t,r\n0,1\n1,1\n2,1\n12,1\n13,1\n")
    with pytest.raises(TraceError) as e:
        read_csv(p, "t", "r", "mbps")
    assert e.value.line == 5 and "gap of 10 s" in str(e.value)
    hold = read_csv(p, "t", "r", "mbps", gap="hold")
    assert mean_mbps(hold) == pytest.approx(1.0)
    zero = read_csv(p, "t", "r", "mbps", gap="zero")
    # 3 s + 2 s of 1 Mbit/s over 14 s
    assert mean_mbps(zero) == pytest.approx(5 / 14)
    assert fraction_below(zero, 0.5) == pytest.approx(9 / 14)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("", None, "empty file"),
        ("t,r\n", None, "no data rows"),
        ("x,r\n0,1\n", 1, "no column 't'"),
        ("t,r\n0,1\n2,1\n1,1\n", 4, "does not increase"),
        ("t,r\n0,1\n1,NaN\n", 3, "must be finite"),
        ("t,r\n0,1\n1,\n", 3, "not a number"),
        ("t,r\n0,1\n1,2,3\n", 3, "3 fields"),
    ],
)
def test_csv_bad_input(tmp_path, text, line, problem):
    p = _write(tmp_path, "bad.csv", text)
    with pytest.raises(TraceError) as e:
        read_csv(p, "t", "r", "mbps")
    assert str(p) in str(e.value)
    assert problem in str(e.value)
    assert e.value.line == line


# --------------------------------------------------------------------------- ops


def test_scale_and_target_mean_on_both_forms():
    s = RateSchedule(np.array([0.0, 1.0]), np.array([2.0, 4.0]), 2.0)
    assert mean_mbps(scale(s, 0.5)) == pytest.approx(1.5)
    assert mean_mbps(scale_to_mean(s, 6.0)) == pytest.approx(6.0)
    o = to_opportunities(s)
    assert mean_mbps(o) == pytest.approx(3.0, abs=0.01)
    o3 = scale(o, 1 / 3)
    assert o3.times_ms[-1] == o3.period_ms == 2000
    assert mean_mbps(o3) == pytest.approx(1.0, abs=0.01)
    # the shape survives: more opportunities in the 4 Mbit/s second
    per_s = to_schedule(o3).rate_mbps
    assert per_s[1] == pytest.approx(2 * per_s[0], rel=0.02)


def test_cut_windows():
    s = RateSchedule(np.array([0.0, 30.0, 60.0]), np.array([1.0, 0.5, 1.0]), 90.0)
    w = cut(s, 20.0, 40.0)
    np.testing.assert_array_equal(w.times_s, [0.0, 10.0])
    np.testing.assert_array_equal(w.rate_mbps, [1.0, 0.5])
    assert w.duration_s == 20.0
    o = DeliveryOpportunities(np.array([0, 100, 500, 900, 1000]), 1000)
    c = cut(o, 0.1, 0.6)
    np.testing.assert_array_equal(c.times_ms, [0, 500])
    with pytest.raises(TraceError, match="not inside"):
        cut(s, 10.0, 100.0)


def test_schedule_to_mahimahi_timing():
    # 12 Mbit/s = one 1500-byte packet per ms
    o = to_opportunities(RateSchedule(np.array([0.0]), np.array([12.0]), 0.01))
    np.testing.assert_array_equal(o.times_ms, np.arange(1, 11))


def test_load_trace_resolves_and_scales(tmp_path):
    _write(tmp_path, "s.txt", "0 1\n1 3\n")
    tr = TraceRate(file=Path("s.txt"), format="schedule", target_mean_mbps=4.0)
    assert mean_mbps(load_trace(tr, tmp_path)) == pytest.approx(4.0)
    _write(tmp_path, "c.csv", "time,kbit\n0,500\n1,500\n")
    tr = TraceRate(
        file=tmp_path / "c.csv",
        format="csv",
        time_column="time",
        rate_column="kbit",
        rate_unit="kbps",
        scale=2.0,
    )
    assert mean_mbps(load_trace(tr, Path("/nonexistent"))) == pytest.approx(1.0)


# --------------------------------------------------------------------------- real traces


# mahimahi-cellular's statistics as its curated copy's notes give them (CI's SOURCE.md):
# duration, lines, mean, min 1 s, max 1 s, median 1 s
MM_TABLE = {
    "Verizon-LTE-short.down": (140.0, 58655, 5.03, 0.29, 16.78, 4.30),
    "Verizon-LTE-short.up": (140.0, 69367, 5.95, 0.00, 12.95, 5.69),
    "TMobile-LTE-short.down": (140.0, 194846, 16.70, 1.48, 59.11, 13.81),
    "TMobile-LTE-short.up": (140.0, 155381, 13.32, 0.61, 29.75, 11.50),
    "ATT-LTE-driving-2016.down": (120.0, 45604, 4.56, 0.23, 27.55, 3.74),
    "ATT-LTE-driving-2016.up": (120.0, 19101, 1.91, 0.00, 12.77, 1.57),
}


@pytest.mark.skipif(not has_dataset("mahimahi-cellular"), reason=skip_reason("mahimahi-cellular"))
@pytest.mark.parametrize("name", sorted(MM_TABLE))
def test_real_mahimahi_matches_source_md(name):
    dur, lines, mean, lo, hi, med = MM_TABLE[name]
    s = summary(read_mahimahi(dataset("mahimahi-cellular") / name))
    assert s.duration_s == pytest.approx(dur, abs=0.05)
    assert s.steps == lines
    assert s.mean_mbps == pytest.approx(mean, abs=0.005)
    assert s.min_mbps == pytest.approx(lo, abs=0.005)
    assert s.max_mbps == pytest.approx(hi, abs=0.005)
    assert s.median_mbps == pytest.approx(med, abs=0.005)


# sigcomm21-5g-variegated's, likewise: duration, mean, min, max, median, zero-seconds
SIG_TABLE = {
    ("5g_trace_4_walking.txt", 2): (773, 588.0, 0, 1810, 544, 7),
    ("5g_trace_1_driving.txt", 2): (230, 306.1, 0, 969, 123.5, 3),
    ("4g_trace_walking_50007_c.txt", 2): (800, 97.4, 22, 123, 99.5, 0),
    ("4g_trace_driving_50015_dr.txt", 2): (250, 40.2, 0, 130, 34.5, 3),
    ("5g_trace_4_walkingmultipath.txt", 3): (773, 55.9, 14.5, 268, 45, 0),
    ("5g_trace_1_drivingmultipath.txt", 3): (230, 53.9, 14.5, 213, 37.5, 0),
    ("5g_trace_4_walkingmultipath.txt", 2): (773, 588.0, 0, 1810, 544, 7),
}


@pytest.mark.skipif(
    not has_dataset("sigcomm21-5g-variegated"), reason=skip_reason("sigcomm21-5g-variegated")
)
@pytest.mark.parametrize(("name", "col"), sorted(SIG_TABLE))
def test_real_schedule_matches_source_md(name, col):
    dur, mean, lo, hi, med, zero_s = SIG_TABLE[(name, col)]
    # the 4G walking file repeats t=156 and skips t=85: replay it row by row, as the artifact does
    step = 1.0 if name.startswith("4g_trace_walking") else None
    x = read_schedule(dataset("sigcomm21-5g-variegated") / name, rate_column=col, step_s=step)
    s = summary(x, below_mbps=1e-9)
    assert s.duration_s == dur
    assert s.mean_mbps == pytest.approx(mean, abs=0.05)
    assert (s.min_mbps, s.max_mbps, s.median_mbps) == (lo, hi, med)
    assert s.fraction_below * dur == pytest.approx(zero_s)


def test_real_irregular_file_is_rejected_without_step():
    with pytest.raises(TraceError) as e:
        read_schedule(dataset("sigcomm21-5g-variegated") / "4g_trace_walking_50007_c.txt")
    assert e.value.line == 157


# --------------------------------------------------------------------------- properties

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.05, 3.0), st.floats(0.0, 40.0)), min_size=1, max_size=12).filter(
        lambda xs: sum(d * r for d, r in xs) * 1e6 >= 12000
    )
)
def test_schedule_to_mahimahi_keeps_the_bits(steps_):
    durs = np.array([d for d, _ in steps_])
    rates = np.array([r for _, r in steps_])
    s = RateSchedule(np.concatenate([[0.0], np.cumsum(durs)[:-1]]), rates, float(durs.sum()))
    o = to_opportunities(s)
    total_bits = float(np.sum(durs * rates)) * 1e6
    assert len(o.times_ms) == int(np.floor(total_bits / 12000 + 1e-9))
    assert o.times_ms[-1] == o.period_ms == round(s.duration_s * 1000)
    # opportunity k is at the first whole ms by which the schedule has delivered k·12000 bits
    edges = np.append(s.times_s, s.duration_s)
    cum = np.concatenate([[0.0], np.cumsum(rates * durs)]) * 1e6
    k = np.arange(1, len(o.times_ms) + 1) * 12000.0
    at = np.interp(o.times_ms / 1000.0, edges, cum)
    before = np.interp((o.times_ms - 1) / 1000.0, edges, cum)
    inside = o.times_ms < o.period_ms  # the period is rounded to ms; the last one moves there
    assert np.all(at[inside] >= k[inside] * (1 - 1e-9) - 1e-3)
    assert np.all(before[inside] < k[inside] * (1 + 1e-9) + 1e-3)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 2000), min_size=1, max_size=300),
    st.floats(0.05, 5.0),
)
def test_mahimahi_scale_counts(times, factor):
    t = np.sort(np.array(times + [2001]))
    o = DeliveryOpportunities(t, 2001)
    s = scale(o, factor)
    assert len(s.times_ms) == max(1, int(np.floor(factor * len(t) + 1e-9)))
    assert s.period_ms == 2001 and s.times_ms[-1] == 2001
    assert set(s.times_ms[:-1].tolist()) <= set(t.tolist())
