"""`priolab check` catches what a run would: links resolved as a run resolves them, every trace
read, and every bad input reported as one family of errors (file, key, what is allowed; exit 2)."""

from __future__ import annotations

import numpy as np
import pytest

from ground import data
from ground.errors import ScenarioError, UserError, shorten
from netem.resolve import ResolveError
from priolab.cli import main
from priolab.scenario import expand, input_files, load
from tests.conftest import REPO, dataset
from traces.errors import TraceError


def _problems(path) -> dict[str, str]:
    with pytest.raises(ScenarioError) as ei:
        load(path)
    assert ei.value.file == str(path)
    return dict(ei.value.problems)


def test_mean_gilbert_elliott_with_p_above_one_fails_at_check(write_scenario, standin_dict):
    # loss 60 % in bursts of 1 packet needs p = 1.5
    standin_dict["link"]["uplink"]["loss"] = {
        "model": "gilbert_elliott_mean",
        "loss_pct": 60,
        "burst_pkts": 1,
    }
    problems = _problems(write_scenario(standin_dict))
    msg = problems["link.uplink.loss"]
    assert "p = 1.5 > 1" in msg and "allowed" in msg and "burst_pkts" in msg


def test_bdp_queue_without_delay_names_the_setting(write_scenario, standin_dict):
    standin_dict["settings"]["nodelay"] = {
        "link": {"uplink": {"delay_ms": 0}, "downlink": {"delay_ms": 0}}
    }
    problems = _problems(write_scenario(standin_dict))
    assert set(problems) == {
        "settings.nodelay.link.uplink.queue.bdp_factor",
        "settings.nodelay.link.downlink.queue.bdp_factor",
    }
    assert "set queue.rtt_ms" in problems["settings.nodelay.link.uplink.queue.bdp_factor"]


def test_bdp_queue_with_rtt_ms_but_no_delay_is_fine(write_scenario, standin_dict):
    for d in ("uplink", "downlink"):
        standin_dict["link"][d]["delay_ms"] = 0
        standin_dict["link"][d]["queue"] = {"bdp_factor": 1.0, "rtt_ms": 20}
    load(write_scenario(standin_dict))


def _with_trace(standin_dict, trace: dict) -> dict:
    up = standin_dict["link"]["uplink"]
    up.pop("rate_mbps", None)
    up["trace"] = trace
    return standin_dict


def test_binary_trace_fails_at_check(tmp_path, write_scenario, standin_dict):
    (tmp_path / "t.bin").write_bytes(bytes(range(256)) * 4)
    d = _with_trace(standin_dict, {"file": "t.bin", "format": "mahimahi"})
    problems = _problems(write_scenario(d))
    assert "not a text file" in problems["link.uplink.trace.file"]
    assert "t.bin" in problems["link.uplink.trace.file"]


def test_unparsable_trace_names_key_and_line(tmp_path, write_scenario, standin_dict):
    (tmp_path / "t.txt").write_text("0 10\n1 ten\n2 30\n")
    d = _with_trace(standin_dict, {"file": "t.txt", "format": "schedule"})
    msg = _problems(write_scenario(d))["link.uplink.trace.file"]
    assert "t.txt, line 2: rate 'ten' is not a number" in msg


def test_trace_in_one_setting_is_named_under_that_setting(tmp_path, write_scenario, standin_dict):
    (tmp_path / "t.mm").write_text("0\n5\nx\n")
    standin_dict["settings"]["tr"] = {
        "link": {"uplink": {"trace": {"file": "t.mm", "format": "mahimahi"}}}
    }
    msg = _problems(write_scenario(standin_dict))["settings.tr.link.uplink.trace.file"]
    assert "line 3" in msg and "integer millisecond" in msg


def test_long_values_are_cut(tmp_path, write_scenario, standin_dict):
    header = ",".join(f"{i * 0.016:.3f}" for i in range(1650))  # a wide layout's time row
    (tmp_path / "wide.csv").write_text(header + "\n" + ",".join(["1"] * 1650) + "\n")
    d = _with_trace(
        standin_dict,
        {
            "file": "wide.csv",
            "format": "csv",
            "time_column": "t",
            "rate_column": "r",
            "rate_unit": "mbps",
        },
    )
    msg = _problems(write_scenario(d))["link.uplink.trace.file"]
    assert "no column 't'" in msg
    assert "chars)" in msg and len(msg) < 300, msg


def test_shorten_keeps_short_text_and_cuts_long_text():
    assert shorten("abc") == "abc"
    cut = shorten("x" * 1000, 80)
    assert len(cut) <= 100 and "(1000 chars)" in cut


def _rise_scenario(params: dict) -> dict:
    link = {"rate_mbps": 10, "delay_ms": 5}
    return {
        "name": "r",
        "duration_s": 5,
        "link": {"uplink": dict(link), "downlink": dict(link)},
        "workload": {"kind": "rise", "params": params},
        "settings": {"a": {}},
    }


def test_rise_tracking_trace_that_does_not_parse_fails_at_check(tmp_path, write_scenario):
    (tmp_path / "head.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    sc = _rise_scenario({"tracking_trace": "head.csv"})
    problems = _problems(write_scenario(sc))
    (key, msg), *_ = problems.items()
    assert key.endswith("workload.tracking_trace")
    assert "head.csv" in msg and "not a text file" in msg


def test_errors_are_one_family():
    for cls in (ScenarioError, TraceError, ResolveError):
        assert issubclass(cls, UserError)
    e = ResolveError("uplink.loss: p too large")
    assert e.problems == [("uplink.loss", "p too large")] and str(e) == "uplink.loss: p too large"


def test_yaml_syntax_error_exits_2_naming_file_and_line(tmp_path, capsys):
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nlink:\n  uplink: {rate_mbps: 1\n  downlink: []\n")
    assert main(["check", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}: (line " in err and "not valid YAML" in err
    assert "Traceback" not in err


def test_run_one_with_unknown_setting_exits_2_naming_option(capsys):
    # fails while choosing the run: nothing is built (no lock needed)
    quick = REPO / "scenarios" / "quick.yaml"
    argv = ["run-one", str(quick), "--setting", "nope", "--scheme", "pri"]
    assert main([*argv, "--speed", "moderate"]) == 2
    err = capsys.readouterr().err
    assert (
        f"{quick}: --setting: 'nope' is not in the matrix; allowed: FB-4K-Low, FB-4K-Low-L0.05"
        in err
    )
    assert "--scheme" not in err and "Traceback" not in err


def test_trace_cli_bad_file_exits_2(tmp_path, capsys):
    (tmp_path / "x.mm").write_bytes(b"\xff\xfe\x00")
    assert main(["trace", "info", str(tmp_path / "x.mm")]) == 2
    assert "not a text file" in capsys.readouterr().err


def test_input_files_lists_resolved_paths_even_when_missing(tmp_path, write_scenario, standin_dict):
    standin_dict["settings"]["tr"] = {
        "link": {"downlink": {"trace": {"file": "../elsewhere/d.mm", "format": "mahimahi"}}}
    }
    standin_dict["settings"]["tr2"] = {
        "link": {"downlink": {"trace": {"file": str(tmp_path / "abs.mm"), "format": "mahimahi"}}}
    }
    path = write_scenario(standin_dict)
    assert input_files(path) == sorted(
        [(tmp_path.parent / "elsewhere" / "d.mm").resolve(), (tmp_path / "abs.mm").resolve()]
    )


def test_input_files_of_a_rise_scenario_with_real_traces():
    f = REPO / "scenarios" / "rise-content-traces.yaml"
    files = input_files(f)
    refs = [f"data:corbillon-multiviewpoint360-mmsys18/user{u}_euler.txt" for u in (1, 2, 3)]
    assert files == sorted(data.resolve(r).path for r in refs)  # present or not
    assert input_files(REPO / "scenarios" / "quick.yaml") == []


# --------------------------------------------------------------------------- trace options


def test_schedule_duplicates_merged_by_mean(tmp_path):
    from traces.throughput import read_schedule

    p = tmp_path / "s.txt"
    p.write_text("0 10\n1 20\n1 40\n3 5\n")
    with pytest.raises(TraceError) as e:
        read_schedule(p)
    assert e.value.line == 3 and "duplicates: mean" in str(e.value)
    s = read_schedule(p, duplicates="mean")
    assert list(s.times_s) == [0, 1, 3] and list(s.rate_mbps) == [10, 30, 5]
    # the missing t=2 is no error: t=1's step lasts 2 s; the last row the median step (1.5 s)
    assert s.duration_s == 4.5


def test_csv_date_time_column_with_duplicates(tmp_path):
    from traces.throughput import read_csv

    p = tmp_path / "c.csv"
    p.write_text(
        "when,thr\n2020-03-29 00:59:59,10\n2020-03-29 00:59:59,20\n2020-03-29 01:00:00,30\n"
    )
    fmt = "%Y-%m-%d %H:%M:%S"
    with pytest.raises(TraceError, match="line 3.*duplicates: mean"):
        read_csv(p, "when", "thr", "mbps", time_format=fmt)
    s = read_csv(p, "when", "thr", "mbps", time_format=fmt, duplicates="mean")
    assert list(s.rate_mbps) == [15, 30] and s.duration_s == 2
    with pytest.raises(TraceError) as e:
        read_csv(p, "when", "thr", "mbps", time_format="%H:%M")
    assert e.value.line == 2 and "does not match time_format '%H:%M'" in str(e.value)


def _trace_scenario(write_scenario, standin_dict, trace: dict):
    return write_scenario(_with_trace(standin_dict, trace))


def test_scenario_accepts_what_the_trace_commands_accept(tmp_path, write_scenario, standin_dict):
    from netem.resolve import resolve_link

    (tmp_path / "mp.txt").write_text("1.0\t300\t40\n2.0\t500\t60\n2.0\t500\t80\n4.0\t0\t20\n")
    path = _trace_scenario(
        write_scenario,
        standin_dict,
        {"file": "mp.txt", "format": "schedule", "rate_column": 3, "duplicates": "mean"},
    )
    run = expand(load(path), path)[0]
    up = resolve_link(run.link, run.base_dir).uplink
    # 40 Mbit/s for 1 s, (60+80)/2 for 2 s, 20 for 1.5 s (the median step): 210 Mbit in 4.5 s
    assert up.mean_rate_bps == pytest.approx(210e6 / 4.5)
    r = main(["trace", "info", str(tmp_path / "mp.txt"), "--column", "3", "--duplicates", "mean"])
    assert r == 0


@pytest.mark.parametrize(
    ("trace", "key", "needle"),
    [
        (
            {"format": "schedule", "time_column": "t"},
            "link.uplink.trace.time_column",
            "only for format 'csv'",
        ),
        ({"format": "schedule", "rate_column": "thr"}, "link.uplink.trace.rate_column", "number"),
        ({"format": "schedule", "rate_column": 1}, "link.uplink.trace.rate_column", "2 or more"),
        ({"format": "mahimahi", "row_step_s": 1}, "link.uplink.trace", "not for format"),
        ({"format": "csv", "time_column": "t", "rate_unit": "mbps"}, "link.uplink.trace", "needs"),
        ({"format": "schedule", "gap": "hold"}, "link.uplink.trace.gap", "only for format"),
        ({"format": "schedule", "duplicates": "sum"}, "link.uplink.trace.duplicates", "'mean'"),
    ],
)
def test_trace_options_are_checked_by_key(
    tmp_path, write_scenario, standin_dict, trace, key, needle
):
    (tmp_path / "t.txt").write_text("0 1\n")
    problems = _problems(_trace_scenario(write_scenario, standin_dict, {"file": "t.txt", **trace}))
    assert key in problems, problems
    assert needle in problems[key]


def test_csv_gap_policy_in_a_scenario(tmp_path, write_scenario, standin_dict):
    (tmp_path / "g.csv").write_text("t,r\n0,8\n1,8\n2,8\n30,8\n31,8\n")
    base = {"file": "g.csv", "format": "csv", "time_column": "t", "rate_column": "r"}
    base["rate_unit"] = "mbps"
    msg = _problems(_trace_scenario(write_scenario, standin_dict, dict(base)))[
        "link.uplink.trace.file"
    ]
    assert "line 5: gap of 28 s" in msg
    load(_trace_scenario(write_scenario, standin_dict, {**base, "gap": "zero"}))


def test_irregular_real_file_policies():
    """4g_trace_walking_50007_c skips t=85 and repeats t=156. row_step_s: 1 replays its 800
    rows as 800 s (as the SIGCOMM'21 artifact does); duplicates: mean merges t=156 into one
    row and holds t=84 for 2 s (799 rows over 800 s)."""
    from traces.throughput import read_schedule
    from traces.throughput_ops import mean_mbps

    f = dataset("sigcomm21-5g-variegated") / "4g_trace_walking_50007_c.txt"
    rows = read_schedule(f, step_s=1.0)
    merged = read_schedule(f, duplicates="mean")
    assert len(rows.times_s) == 800 and rows.duration_s == 800
    assert len(merged.times_s) == 799 and merged.duration_s == 800
    i84 = int(np.flatnonzero(merged.times_s == 84)[0])
    assert merged.times_s[i84 + 1] == 86
    i156 = int(np.flatnonzero(merged.times_s == 156)[0])
    assert merged.rate_mbps[i156] == pytest.approx((119.0 + 93.5) / 2)
    assert abs(mean_mbps(merged) - mean_mbps(rows)) < 0.1


# --------------------------------------------------------------------------- tracking layouts


def _speeds(trace) -> np.ndarray:
    from traces.tracking import angular_speed_deg_s

    return angular_speed_deg_s(trace)


def test_rows_layout_euler_in_degrees(tmp_path):
    from traces.tracking import read_tracking

    p = tmp_path / "h.csv"
    p.write_text("frame,time_ms,yaw_deg,pitch_deg\n0,0,0,0\n1,100,10,0\n2,200,20,0\n")
    t = read_tracking(p)
    assert list(t.times_s) == pytest.approx([0, 0.1, 0.2])
    assert _speeds(t) == pytest.approx([100, 100])  # 10 degrees per 0.1 s


def test_rows_layout_needs_an_angle_unit_when_names_do_not_say(tmp_path):
    from traces.tracking import read_tracking
    from traces.tracking_layouts import TrackingSource

    p = tmp_path / "h.txt"
    p.write_text("t yaw pitch roll\n0 0 0 0\n0.5 0.1 0 0\n")
    with pytest.raises(TraceError, match="give angle_unit: deg or rad"):
        read_tracking(p)
    t = read_tracking(p, TrackingSource(file=p, angle_unit="rad"))
    assert _speeds(t) == pytest.approx([np.degrees(0.1) / 0.5])


def test_rows_layout_quaternions_with_date_time_stamps(tmp_path):
    """Wu et al. MMSys'17 style: date-time Timestamp, quaternion and position columns."""
    from traces.tracking import read_tracking
    from traces.tracking_layouts import TrackingSource

    h = np.sqrt(0.5)
    p = tmp_path / "video_0.csv"
    p.write_text(
        "Timestamp,PlaybackTime,UnitQuaternion.x,UnitQuaternion.y,UnitQuaternion.z,"
        "UnitQuaternion.w,HmdPosition.x,HmdPosition.y,HmdPosition.z\n"
        "2016-12-07 10:58:58.000,0.0,0,0,0,1,0,0,0\n"
        f"2016-12-07 10:58:58.500,0.5,0,{h},0,{h},0,0,0\n"
    )
    src = TrackingSource(file=p, time_format="%Y-%m-%d %H:%M:%S.%f")
    t = read_tracking(p, src)
    assert list(t.times_s) == pytest.approx([0, 0.5])
    assert _speeds(t) == pytest.approx([180.0])  # 90 degrees about y in 0.5 s
    by_playback = read_tracking(p, TrackingSource(file=p, columns={"time": "PlaybackTime"}))
    assert list(by_playback.times_s) == pytest.approx([0, 0.5])


def test_wide_layout_one_row_per_signal(tmp_path):
    from traces.tracking import read_tracking

    n = 1650
    times = ",".join(f"{i / 60:.5f}" for i in range(n))
    yaw = ",".join(f"{i * 0.5:.3f}" for i in range(n))  # 0.5 degree per sample at 60 Hz
    zeros = ",".join(["0"] * n)
    p = tmp_path / "wide.csv"
    p.write_text(f"time,{times}\nyaw_deg,{yaw}\npitch_deg,{zeros}\nroll_deg,{zeros}\n")
    t = read_tracking(p)
    assert len(t.times_s) == n
    assert np.median(_speeds(t)) == pytest.approx(30.0, rel=1e-3)
    bad = tmp_path / "bad.csv"
    bad.write_text(f"time,{times}\nyaw_deg,{yaw.replace('1.000', 'x', 1)}\npitch_deg,{zeros}\n")
    with pytest.raises(TraceError) as e:
        read_tracking(bad)
    assert e.value.line == 2 and "'x' is not a number" in str(e.value)
    assert len(str(e.value)) < 300


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("time,a,b\n0,1,2\n1,2,3\n", "no orientation among"),
        ("when,yaw_deg,pitch_deg\n0,1,2\n", "no time column"),
        ("t,yaw_deg,pitch_rad\n0,1,2\n1,1,2\n", "mix deg and rad"),
        ("t,yaw_deg,yaw_rate,pitch_deg\n0,1,2,3\n", "several columns match"),
        ("t,yaw_deg,pitch_deg\n0,1,2\n0,1,2\n", "line 3: time 0 does not increase"),
        ("t,w,x,y,z\n0,2,0,0,0\n", "quaternion norm 2.0000 is not 1"),
    ],
)
def test_bad_tracking_tables_are_named(tmp_path, text, needle):
    from traces.tracking import read_tracking

    p = tmp_path / "h.csv"
    p.write_text(text)
    with pytest.raises(TraceError, match=needle):
        read_tracking(p)


def test_scenario_tracking_trace_with_reading_options(tmp_path, write_scenario):
    (tmp_path / "head.txt").write_text("t yaw pitch\n0 0 0\n0.5 10 0\n1.0 20 0\n")
    sc = _rise_scenario({"tracking_trace": {"file": "head.txt"}})
    sc["settings"]["deg"] = {"workload": {"tracking_trace": {"file": "head.txt"}}}
    sc["settings"]["deg"]["workload"]["tracking_trace"]["angle_unit"] = "deg"
    path = write_scenario(sc)
    problems = _problems(path)
    assert list(problems) == [
        "workload.params + settings.a + schemes.default + speeds.default → workload.tracking_trace"
    ]
    assert "give angle_unit" in next(iter(problems.values()))
    sc["workload"]["params"]["tracking_trace"]["angle_unit"] = "deg"
    path = write_scenario(sc)
    assert len(expand(load(path), path)) == 2
    assert input_files(path) == [(tmp_path / "head.txt").resolve()]


def test_real_corbillon_file_read_as_a_generic_table_matches_its_own_reader(tmp_path):
    """user1_euler.txt through the generic rows reader (angle unit given) equals the dedicated
    Corbillon reader: the generic path reads a real public layout correctly."""
    from traces.tracking import read_corbillon, read_tracking
    from traces.tracking_layouts import TrackingSource

    f = dataset("corbillon-multiviewpoint360-mmsys18") / "user1_euler.txt"
    own = read_corbillon(f)
    generic = read_tracking(f, TrackingSource(file=f, layout="rows", angle_unit="rad"))
    np.testing.assert_allclose(generic.times_s, own.times_s)
    np.testing.assert_allclose(np.abs(np.sum(generic.quats * own.quats, axis=1)), 1, atol=1e-9)


def test_tracking_command_takes_the_same_options(tmp_path, capsys):
    src = tmp_path / "h.txt"
    src.write_text("t yaw pitch\n0 0 0\n0.5 10 0\n1.0 20 0\n")
    out = tmp_path / "h.csv"
    assert main(["trace", "tracking", str(src), str(out)]) == 2
    assert "give angle_unit" in capsys.readouterr().err
    assert main(["trace", "tracking", str(src), str(out), "--angle-unit", "deg"]) == 0
    from traces.tracking import read_tracking

    assert np.median(_speeds(read_tracking(out))) == pytest.approx(20.0, rel=1e-3)
    assert main(["trace", "tracking", str(src), str(out), "--column", "bogus=t"]) == 2
    assert "--columns: " in capsys.readouterr().err


def test_check_inputs_lists_the_files(capsys):
    f = REPO / "scenarios" / "rise-content-traces.yaml"
    assert main(["check", str(f), "--inputs"]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(p) for p in input_files(f)] and printed


def test_union_members_give_one_problem_at_the_key(write_scenario, standin_dict, tmp_path):
    (tmp_path / "t.txt").write_text("0 1\n")
    d = _with_trace(standin_dict, {"file": "t.txt", "format": "schedule", "rate_column": 2.5})
    problems = _problems(write_scenario(d))
    assert list(problems) == ["link.uplink.trace.rate_column"]
    sc = _rise_scenario({"tracking_trace": {"file": "h.txt", "angle_unit": "grad"}})
    problems = _problems(write_scenario(sc))
    (key, msg), *rest = problems.items()
    assert not rest and key.endswith("workload.tracking_trace.angle_unit")
    assert "'deg' or 'rad'" in msg


def test_rise_frame_trace_must_be_the_form_the_endpoint_reads(tmp_path, write_scenario):
    (tmp_path / "gop.csv").write_text(
        "frame_type,size_bytes,pict_type,pts_ms,dts_ms,refs\nkey,1000,I,0,0,\n"
    )
    (tmp_path / "bad.csv").write_text("frame_type,size_bytes\nkey,0\n")
    (tmp_path / "ok.csv").write_text("frame_type,size_bytes\nkey,1000\ndelta,100\n")
    params = {"tracking_speed_deg_s": 10, "frame_trace": "gop.csv"}
    (key, msg), *_ = _problems(write_scenario(_rise_scenario(params))).items()
    assert key.endswith("workload.frame_trace") and "line 1" in msg
    assert "allowed exactly frame_type,size_bytes" in msg and "--frame-trace" in msg
    params["frame_trace"] = "bad.csv"
    (key, msg), *_ = _problems(write_scenario(_rise_scenario(params))).items()
    assert "line 2: size_bytes 0; allowed an integer >= 1" in msg
    params["frame_trace"] = "ok.csv"
    load(write_scenario(_rise_scenario(params)))
