"""The trace window (`trace: {start_s, end_s}`, `priolab trace … --start-s/--end-s`) and the
idle-start warning of `priolab check`. Synthetic traces are written to tmp; the real-data
tests read the datasets of data/manifest.toml and skip when they are absent."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from ground import data
from netem.idle_start import (
    IDLE_START_THRESHOLD_BPS,
    IDLE_START_WINDOW_S,
    first_busy_start_s,
    idle_start_warning,
    start_mean_bps,
)
from netem.linkem_config import linkem_config
from netem.model import Direction, Link, TraceRate
from netem.resolve import ResolveError, resolve_direction, resolve_link
from netem.tc import trace_steps
from priolab.cli import main
from priolab.scenario import link_warnings, load
from tests.conftest import dataset
from traces.cli import main as trace_main
from traces.errors import TraceWindowError
from traces.throughput import RateSchedule, read_mahimahi
from traces.throughput_ops import window

IDLE_THEN_BUSY = "".join(f"{t} {0 if t < 5 else 10 * (t - 4)}\n" for t in range(10))
"""10 one-second steps: 0 Mbit/s for 5 s (an idle log's start), then 10, 20, ... 50."""


@pytest.fixture
def idle_trace(tmp_path: Path) -> Path:
    p = tmp_path / "idle.txt"
    p.write_text(IDLE_THEN_BUSY)
    return p


def _direction(trace: dict) -> Direction:
    return Direction.model_validate({"trace": trace, "delay_ms": 10})


# --------------------------------------------------------------------------- the model


@pytest.mark.parametrize(
    ("window_keys", "needle"),
    [
        ({"start_s": -1}, "start_s"),
        ({"end_s": 0}, "end_s"),
        ({"start_s": 5, "end_s": 5}, "end_s 5 must be greater than start_s 5"),
        ({"start_s": 6, "end_s": 5}, "must be greater than start_s"),
        ({"end_s": float("inf")}, "end_s"),
        ({"start_s": float("nan")}, "start_s"),
    ],
)
def test_window_keys_are_validated(window_keys, needle):
    with pytest.raises(ValidationError) as ei:
        TraceRate.model_validate({"file": "x", "format": "schedule", **window_keys})
    assert needle in str(ei.value)


# --------------------------------------------------------------------------- the cut


def test_window_cuts_a_schedule_and_rebases_it():
    x = RateSchedule(np.arange(10.0), np.arange(10.0), 10.0)
    w = window(x, 2.5, 7.0)
    assert isinstance(w, RateSchedule)
    assert list(w.times_s) == [0.0, 0.5, 1.5, 2.5, 3.5]
    assert list(w.rate_mbps) == [2, 3, 4, 5, 6]
    assert w.duration_s == 4.5
    assert w.rate_at(4.5 + 0.1) == 2.0  # a loop wraps within the window
    assert window(x) is x  # no window: the trace as read
    assert window(x, 3.0).duration_s == 7.0  # no end: to the trace's end


def test_window_cuts_mahimahi_opportunities(tmp_path):
    p = tmp_path / "t.mm"
    p.write_text("\n".join(str(t) for t in [0, 100, 1500, 1500, 2200, 2999, 4000]) + "\n")
    w = window(read_mahimahi(p), 1.5, 3.0)
    assert list(w.times_ms) == [0, 0, 700, 1500]  # 1500, 1500, 2200 re-based; last moved
    assert w.period_ms == 1500


@pytest.mark.parametrize(
    ("start_s", "end_s", "key", "needle"),
    [
        (10.0, None, "start_s", "10 s is not within the trace: the trace lasts 10 s"),
        (2.0, 10.5, "end_s", "10.5 s is past the trace's end: the trace lasts 10 s"),
    ],
)
def test_a_window_outside_the_trace_names_file_key_and_length(
    idle_trace, start_s, end_s, key, needle
):
    from traces.throughput import read_schedule

    with pytest.raises(TraceWindowError) as ei:
        window(read_schedule(idle_trace), start_s, end_s, idle_trace)
    assert ei.value.key == key
    assert str(idle_trace) in str(ei.value) and needle in str(ei.value)


def test_a_mahimahi_window_without_opportunities_is_named(tmp_path):
    p = tmp_path / "t.mm"
    p.write_text("0\n5000\n")
    with pytest.raises(TraceWindowError) as ei:
        window(read_mahimahi(p), 1.0, 2.0, p)
    assert "no delivery opportunity" in str(ei.value) and "the trace lasts 5 s" in str(ei.value)


# --------------------------------------------------------------------------- both replayers


def test_both_replayers_get_the_window_from_resolution(idle_trace):
    d = _direction({"file": str(idle_trace), "format": "schedule", "start_s": 5, "end_s": 8})
    r = resolve_direction(d, Path("."))
    expected = [(0, 10_000_000), (1000, 20_000_000), (2000, 30_000_000)]
    assert trace_steps(r) == (expected, 3000, True)  # tc's replayer
    link = Link(uplink=d, downlink=Direction(rate_mbps=10, delay_ms=10))
    cfg = linkem_config(resolve_link(link, Path(".")), seed=1)["a_to_b"]["rate"]
    assert cfg == {  # linkem's config: the same cut points, wrapping at the window's length
        "kind": "schedule",
        "points": [list(p) for p in expected],
        "period_ms": 3000,
        "loop": True,
    }
    assert r.mean_rate_bps == 20e6  # the BDP queue is sized on the window's mean


def test_target_mean_scales_the_window(idle_trace):
    d = _direction({"file": str(idle_trace), "format": "schedule", "start_s": 5,
                    "target_mean_mbps": 3})  # fmt: skip
    r = resolve_direction(d, Path("."))
    assert r.mean_rate_bps == pytest.approx(3e6)
    assert r.rate.points[0] == (0, 1_000_000)  # 10 of a 30 Mbit/s mean → 1 of 3


def test_resolve_error_names_the_window_key(idle_trace):
    link = Link(
        uplink=Direction(rate_mbps=10, delay_ms=10),
        downlink=_direction({"file": str(idle_trace), "format": "schedule", "end_s": 12}),
    )
    with pytest.raises(ResolveError) as ei:
        resolve_link(link, Path("."))
    (key, msg), *_ = ei.value.problems
    assert key == "downlink.trace.end_s"
    assert str(idle_trace) in msg and "the trace lasts 10 s" in msg and "end_s <= 10" in msg


# --------------------------------------------------------------------------- priolab trace


def test_trace_info_takes_the_window(idle_trace, capsys):
    assert trace_main(["trace", "info", str(idle_trace), "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    args = ["trace", "info", str(idle_trace), "--start-s", "5", "--end-s", "8", "--json"]
    assert trace_main(args) == 0
    cut = json.loads(capsys.readouterr().out)
    assert (whole["duration_s"], whole["min_mbps"]) == (10.0, 0.0)
    assert (cut["duration_s"], cut["mean_mbps"], cut["min_mbps"]) == (3.0, 20.0, 10.0)


def test_trace_convert_scale_and_plot_take_the_window(idle_trace, tmp_path, capsys):
    out = tmp_path / "w.txt"
    conv = ["trace", "convert", str(idle_trace), str(out), "--to", "schedule", "--start-s", "5"]
    assert trace_main(conv) == 0
    assert out.read_text().split() == "0.0 10.0 1.0 20.0 2.0 30.0 3.0 40.0 4.0 50.0".split()
    scaled = tmp_path / "s.txt"
    assert trace_main(["trace", "scale", str(idle_trace), str(scaled), "--factor", "2",
                       "--start-s", "5", "--end-s", "7"]) == 0  # fmt: skip
    assert "mean 15 -> 30 Mbit/s" in capsys.readouterr().out
    png = tmp_path / "w.png"
    assert trace_main(["trace", "plot", str(idle_trace), str(png), "--start-s", "5"]) == 0
    assert png.stat().st_size > 0


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--start-s", "12"], "--start-s: 12 s is not within the trace: the trace lasts 10 s"),
        (["--end-s", "11"], "--end-s: 11 s is past the trace's end: the trace lasts 10 s"),
        (["--start-s", "6", "--end-s", "4"], "--end-s 4 must be greater than --start-s 6"),
    ],
)
def test_trace_cli_window_errors_name_the_flag(idle_trace, capsys, flags, needle):
    assert trace_main(["trace", "info", str(idle_trace), *flags]) == 2
    err = capsys.readouterr().err
    assert str(idle_trace) in err and needle in err


def test_window_flags_are_refused_for_frame_traces(tmp_path, capsys):
    p = tmp_path / "f.csv"
    p.write_text("frame_type,size_bytes\nI,5000\nP,1000\n")
    assert trace_main(["trace", "info", str(p), "--start-s", "1"]) == 2
    assert "only for throughput traces" in capsys.readouterr().err


# --------------------------------------------------------------------------- the idle start


def test_start_mean_and_first_busy_start(idle_trace):
    d = resolve_direction(_direction({"file": str(idle_trace), "format": "schedule"}), Path("."))
    assert start_mean_bps(d.rate) == 0.0
    assert first_busy_start_s(d.rate) == 5.0  # not 4.x: a start inside the idle stretch
    assert idle_start_warning(d) is not None


def test_short_looping_window_counts_its_wrap(tmp_path):
    p = tmp_path / "w.txt"
    p.write_text("0 0\n1 0.2\n")  # 2 s: 0 then 0.2 Mbit/s; 3 s = 0, 0.2, 0 → 0.067 Mbit/s
    d = resolve_direction(_direction({"file": str(p), "format": "schedule"}), Path("."))
    assert start_mean_bps(d.rate) == pytest.approx(0.2e6 / 3)
    assert first_busy_start_s(d.rate) == 1.0  # 0.2, 0 (wrapped), 0.2: 0.133 Mbit/s
    nonloop = _direction({"file": str(p), "format": "schedule", "loop": False})
    assert first_busy_start_s(resolve_direction(nonloop, Path(".")).rate) is None


def test_mahimahi_idle_start(tmp_path):
    p = tmp_path / "t.mm"
    # one lone opportunity at 1 s, then 100 per second from 4 s to 8 s
    busy = [4000 + 10 * i for i in range(400)]
    p.write_text("\n".join(str(t) for t in [1000, *busy, 8000]) + "\n")
    d = resolve_direction(_direction({"file": str(p), "format": "mahimahi"}), Path("."))
    assert start_mean_bps(d.rate) == pytest.approx(12_000 / 3)
    assert first_busy_start_s(d.rate) == 4.0  # the lone packet at 1 s is no wake-up


def test_constants_are_what_the_docs_say():
    assert (IDLE_START_WINDOW_S, IDLE_START_THRESHOLD_BPS) == (3.0, 100_000.0)
    readme = (Path(__file__).resolve().parent.parent / "netem" / "README.md").read_text()
    assert "first 3 s" in readme and "0.1 Mbit/s" in readme


def _idle_scenario(standin_dict, trace_file: Path) -> dict:
    dn = standin_dict["link"]["downlink"]
    dn.pop("rate_mbps")
    dn["trace"] = {"file": str(trace_file), "format": "schedule"}
    standin_dict["settings"] = {
        "whole": {},
        "windowed": {"link": {"downlink": {"trace": {"start_s": 5}}}},
        "slow-up": {"link": {"uplink": {"rate_mbps": 0.05}}},
    }
    return standin_dict


def test_check_warns_about_an_idle_start_and_names_the_key(
    idle_trace, standin_dict, write_scenario, capsys
):
    path = write_scenario(_idle_scenario(standin_dict, idle_trace))
    warnings = dict(link_warnings(load(path), path))
    assert set(warnings) == {"link.downlink.trace", "settings.slow-up.link.uplink.rate_mbps"}
    assert "set start_s: 5" in warnings["link.downlink.trace"]
    assert "give the link a higher rate" in warnings["settings.slow-up.link.uplink.rate_mbps"]
    assert main(["check", str(path)]) == 0  # a warning, not an error
    err = capsys.readouterr().err
    assert f"warning: {path}: link.downlink.trace: carries 0 Mbit/s" in err
    assert "below 0.1 Mbit/s" in err and "first 3 s" in err


def test_check_is_quiet_once_the_window_skips_the_idle_start(
    idle_trace, standin_dict, write_scenario
):
    sc = _idle_scenario(standin_dict, idle_trace)
    sc["link"]["downlink"]["trace"]["start_s"] = 5
    del sc["settings"]["slow-up"]
    path = write_scenario(sc)
    assert link_warnings(load(path), path) == []


def test_check_suggests_a_start_in_the_traces_own_time(tmp_path, standin_dict, write_scenario):
    p = tmp_path / "late.txt"
    p.write_text("".join(f"{t} {0 if t < 7 else 5}\n" for t in range(12)))
    sc = _idle_scenario(standin_dict, p)
    sc["settings"] = {"w": {"link": {"downlink": {"trace": {"start_s": 2}}}}}
    path = write_scenario(sc)
    (key, msg), *rest = link_warnings(load(path), path)
    assert key == "link.downlink.trace" and "set start_s: 7" in msg and rest == []


def test_check_reports_a_window_past_the_end(idle_trace, standin_dict, write_scenario, capsys):
    sc = _idle_scenario(standin_dict, idle_trace)
    sc["settings"]["windowed"]["link"]["downlink"]["trace"]["end_s"] = 30
    path = write_scenario(sc)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"settings.windowed.link.downlink.trace.end_s: {idle_trace}" in err
    assert "the trace lasts 10 s" in err


# --------------------------------------------------------------------------- real traces

UCC_TIME_FORMATS = ("%Y.%m.%d_%H.%M.%S", "%Y-%m-%d %H:%M:%S")


def _ucc_files() -> list[Path]:
    """The UCC 5G logs (Raca et al.): CSVs with a `Timestamp` and a `DL_bitrate` (kbit/s)
    column, anywhere under a data folder's traces/ (PRIOLAB_DATA, data/; no manifest entry
    lists them yet)."""
    found = []
    for f in sorted(f for r in data.roots() if (r / "traces").is_dir()
                    for f in (r / "traces").rglob("*.csv")):  # fmt: skip
        with f.open(errors="replace") as fh:
            header = fh.readline()
        if "Timestamp" in header and "DL_bitrate" in header:
            found.append(f)
    return found


UCC = _ucc_files()


def test_real_trace_window_replays_the_rows_it_names():
    """5g_trace_1_driving: rows at 1, 2, ... s; the window [5, 65) replays rows 6-65."""
    f = dataset("sigcomm21-5g-variegated") / "5g_trace_1_driving.txt"
    rows = np.loadtxt(f)
    d = _direction({"file": str(f), "format": "schedule", "start_s": 5, "end_s": 65})
    r = resolve_direction(d, Path("."))
    assert r.rate.period_ms == 60_000
    assert [t for t, _ in r.rate.points] == list(range(0, 60_000, 1000))
    assert [bps for _, bps in r.rate.points] == [round(x * 1e6) for x in rows[5:65, 1]]


def _ucc_trace(f: Path) -> dict:
    with f.open() as fh:
        fh.readline()
        stamp = fh.readline().split(",")[0].strip()
    from datetime import datetime

    fmt = next(
        (x for x in UCC_TIME_FORMATS if not _fails(lambda x=x: datetime.strptime(stamp, x))),
        None,
    )
    assert fmt is not None, f"{f}: time stamp {stamp!r} matches none of {UCC_TIME_FORMATS}"
    return {"file": str(f), "format": "csv", "time_column": "Timestamp",
            "rate_column": "DL_bitrate", "rate_unit": "kbps", "time_format": fmt,
            "duplicates": "mean", "gap": "hold"}  # fmt: skip


def _fails(fn) -> bool:
    try:
        fn()
    except ValueError:
        return True
    return False


@pytest.mark.skipif(
    not UCC,
    reason="no UCC 5G logs (CSV with Timestamp and DL_bitrate) under the traces/ of "
    f"{' or '.join(map(str, data.roots()))}: no manifest entry fetches them",
)
@pytest.mark.parametrize("f", UCC, ids=[f.name for f in UCC])
def test_real_ucc_logs_idle_start_is_found_and_skipped(f):
    """A UCC log that starts idle warns; the suggested start_s silences the warning, and the
    window then begins with the rate the log had at that second."""
    trace = _ucc_trace(f)
    d = resolve_direction(_direction(trace), Path("."))
    msg = idle_start_warning(d)
    if msg is None:
        pytest.skip(f"{f.name} does not start idle (mean over 3 s: {start_mean_bps(d.rate):g})")
    busy = first_busy_start_s(d.rate)
    assert busy is not None and f"set start_s: {busy:g}" in msg
    w = resolve_direction(_direction({**trace, "start_s": busy}), Path("."))
    assert idle_start_warning(w, busy) is None
    assert w.rate.points[0][1] >= IDLE_START_THRESHOLD_BPS
