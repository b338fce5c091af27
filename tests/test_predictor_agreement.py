"""priolab.workloads.rise.predictor_agreement: real runs' metrics.json against a (fake) rise-sim."""

from __future__ import annotations

import copy
import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from priolab.engine.reasons import Code, Reason, verdict_fields
from priolab.workloads.rise.predictor_agreement import (
    COLUMNS,
    Unsupported,
    cell,
    label,
    main,
    sim_point,
)

METRICS = {
    "mtp_median_ms": 40.0,
    "mtp_p99_ms": 70.0,
    "stall_pct": 10.0,
    "displayed_fps": 27.0,
    "cwnd_median_bytes_guest": 60_000.0,
    "evicted_ack_guest": 64_000.0,
    "dropped_ingress_video_guest": 24_000.0,
    "deadline_expirations_host": 25.0,
    "lost_packets_host": 379.0,
    "cwnd_median_bytes_host": 700_000.0,
}
QUEUE = {"limit_bytes": None, "limit_packets": None, "bdp_factor": 1.0, "drop": "tail"}
DIRECTION = {"trace": None, "unlimited": False, "delay_ms": 10.5, "jitter_ms": 0.0, "policer": None}
RUN: dict[str, Any] = {
    "scenario": "quick",
    "setting": "FB-4K-Low",
    "duration_s": 30.0,
    "link": {
        "uplink": {**DIRECTION, "rate_mbps": 70.0, "loss": {"model": "none"}, "queue": QUEUE},
        "downlink": {**DIRECTION, "rate_mbps": 1000.0, "loss": {"model": "none"}, "queue": QUEUE},
    },
    "workload": {
        "kind": "rise",
        "video_bitrate_mbps": 30.0,
        "fps": 30.0,
        "keyframe_factor": 9.0,
        "frame_trace": None,
        "tracking_trace": None,
        "tracking_speed_deg_s": 40.0,
        "prio_guest": True,
        "prio_host": True,
        "buffer_bytes": 1048576,
        "fifo_drop": "head",
        "processing_delay_ms": 0.0,
        "warmup_s": 3.0,
        "cc": "cubic",
    },
}
TAIL = ("--speed-deg-s", "40", "--duration-s", "30", "--warmup-s", "3")


def _run_record(uplink: dict[str, Any] | None = None, **workload: Any) -> dict[str, Any]:
    r = copy.deepcopy(RUN)
    r["link"]["uplink"].update(uplink or {})
    r["workload"].update(workload)
    return r


def test_the_point_comes_from_the_runs_own_record() -> None:
    assert sim_point(_run_record()) == ("pri", TAIL)
    loss = {"loss": {"model": "iid", "loss_pct": 0.05}}
    assert sim_point(_run_record(loss, prio_guest=False, prio_host=False)) == (
        "nopri",
        ("--loss-pct", "0.05", *TAIL),
    )
    ge = {"loss": {"model": "gilbert_elliott_mean", "loss_pct": 0.05, "burst_pkts": 3.0}}
    assert sim_point(_run_record(ge, prio_host=False))[1][:4] == (
        "--loss-pct",
        "0.05",
        "--ge-burst-pkts",
        "3",
    )
    assert sim_point(_run_record(prio_host=False))[0] == "pri-u"
    tail = _run_record(prio_guest=False, prio_host=False, fifo_drop="tail")
    assert sim_point(tail)[0] == "nopri-tail"
    q = sim_point(_run_record({"queue": {**QUEUE, "bdp_factor": 0.1}}))[1]
    assert q[:2] == ("--queue-bdp", "0.1") and label(q) == "queue 0.1 BDP"
    pol = {"rate_mbps": None, "queue": None, "policer": {"rate_mbps": 70.0, "burst_bytes": 25000}}
    p = sim_point(_run_record(pol))[1]
    assert p[:2] == ("--policer-burst-bytes", "25000") and label(p) == "policer 25 kB"


@pytest.mark.parametrize(
    ("uplink", "workload", "why"),
    [
        ({"rate_mbps": 20.0}, {}, "uplink rate"),
        ({"trace": "x.csv"}, {}, "trace"),
        ({"loss": {"model": "gilbert_elliott", "p": 0.1}}, {}, "loss model"),
        ({}, {"cc": "bbr"}, "cc"),
        ({}, {"video_bitrate_mbps": 40.0}, "video"),
    ],
)
def test_points_the_predictor_cannot_express_are_refused(
    uplink: dict[str, Any], workload: dict[str, Any], why: str
) -> None:
    with pytest.raises(Unsupported, match=why):
        sim_point(_run_record(uplink, **workload))


def _write(root: Path, name: str, record: dict[str, Any], valid: bool, mtp: float) -> None:
    d = root / name
    d.mkdir(parents=True)
    m = {"run": record, "valid": valid, "metrics": {**METRICS, "mtp_median_ms": mtp}}
    (d / "metrics.json").write_text(json.dumps(m))
    (root / f"{name}.loadavg").write_text("0.25 0.50 0.40 1/100 99\n")


def _fake_sim(tmp_path: Path) -> Path:
    """A rise-sim stand-in: the seed as the median MTP, so the table's mean is predictable."""
    metrics = {
        "warmup_s": 3.0,
        "guest": {"mtp_median_ms": "SEED", "mtp_p99_ms": None, "stall_s": 2.7, "displayed_fps": 30},
        "guest_endpoint": {
            "cwnd_bytes_p50": 75_000,
            "channels": {"ack": {"evicted": 5}, "video": {"dropped_ingress": 7}},
        },
        "host": {"deadline_expirations": 20, "lost_packets": 0, "cwnd_bytes_p50": 1.3e6},
    }
    src = json.dumps({"duration_s": 30.0, "metrics": metrics}).replace('"SEED"', "%s")
    p = tmp_path / "rise-sim"
    p.write_text(
        f"#!{sys.executable}\nimport sys\na = sys.argv\nprint({src!r} % a[a.index('--seed') + 1])\n"
    )
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return p


def test_runs_of_one_point_pool_across_scenarios_and_invalid_ones_are_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loss = {"loss": {"model": "iid", "loss_pct": 0.05}}
    a, b = tmp_path / "validation", tmp_path / "map"
    _write(a, "r1", _run_record(loss), True, 40.0)
    (a / "r1.udp").write_text(  # the Guest's kernel counters during the run: the last line counts
        "guest Udp: 10 0 0 5 1 0 0 0 0\nhost Udp: 9 0 0 9 7 0 0 0 0\n"
        "guest Udp: 900 0 238 800 238 0 0 0 0\n"
    )
    _write(a, "r2", _run_record(loss), False, 900.0)  # judged invalid: not averaged in
    other = _run_record(loss)
    other["scenario"], other["setting"] = "map", "L0.05-Q1"
    _write(b, "r1", other, True, 44.0)
    (b / "r1" / "metadata.json").write_text(json.dumps({"git": {"commit": "8bf093e6ad46"}}))
    _write(b, "r9", _run_record({"rate_mbps": 20.0}), True, 30.0)
    sim = _fake_sim(tmp_path)
    assert main([str(a), str(b), "--rise-sim", str(sim), "--seeds", "3"]) == 0
    out = capsys.readouterr().out
    rows = [r.split("|")[1:-1] for r in out.splitlines() if r.startswith("| queue")]
    assert len(rows) == 2
    real, pred = ([c.strip() for c in r] for r in rows)
    assert real[:4] == [
        "queue 1 BDP, loss 0.05 % iid",
        "pri",
        "real",
        "2 valid of 3, load 0.25–0.25",
    ]
    assert real[4] == "42 [40, 44]"
    assert len(pred) == 4 + len(COLUMNS)
    assert pred[4].startswith("2 [")  # seeds 1..3 -> mean 2
    assert pred[5] == "–"  # no p99 from the predictor: shown as missing, not 0
    assert pred[6] == "10"  # 2.7 s of 27 s after the warm-up
    socket = list(COLUMNS).index("rcvbuf_drops_guest") + 4
    assert real[socket] == "238"  # one run has the counters: its value, not a mean with 0
    assert pred[socket] == "–"  # the predictor has no socket
    assert "map/L0.05-Q1@8bf093e, quick/FB-4K-Low" in out
    assert "skipped" in out and "uplink rate 20.0" in out


def test_cell_is_mean_with_bootstrap_ci() -> None:
    assert cell([]) == "–"
    assert cell([40.0]) == "40"
    assert cell([30.0, 50.0]) == "40 [30, 50]"


def test_missing_binary_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path), "--rise-sim", str(tmp_path / "nope")]) == 2
    assert "no rise-sim binary" in capsys.readouterr().err


def test_snakemake_runs_take_socket_drops_from_metadata_and_invalid_runs_say_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without validate.sh's counters the engine's record (metadata.json `udp_drops`) gives the
    Guest's socket drops; an invalid run is not averaged in but its judge's reason is listed."""
    root = tmp_path / "map"
    _write(root, "r1", _run_record(), True, 40.0)
    (root / "r1" / "metadata.json").write_text(
        json.dumps({"udp_drops": {"guest": {"RcvbufErrors": 0}, "host": {"RcvbufErrors": 0}}})
    )
    _write(root, "r2", _run_record(), False, 900.0)
    cpu = Reason(Code.CPU_SATURATED, "CPU saturated (mean 93.5 %, rule: mean >= 90 %)")
    drops = Reason(Code.RCVBUF_DROPS, "the kernel dropped 12 UDP datagrams", "guest")
    (root / "r2" / "metadata.json").write_text(json.dumps(verdict_fields([cpu, drops])))
    _write(root, "r3", _run_record(), False, 900.0)
    cpu = Reason(Code.CPU_SATURATED, "CPU saturated (mean 91.0 %, rule: mean >= 90 %)")
    (root / "r3" / "metadata.json").write_text(json.dumps(verdict_fields([cpu])))
    assert main([str(root), "--rise-sim", str(_fake_sim(tmp_path)), "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    real = next(r for r in out.splitlines() if r.startswith("| queue 1 BDP | pri | real"))
    cells = [c.strip() for c in real.split("|")[1:-1]]
    assert cells[3].startswith("1 valid of 3")
    assert cells[list(COLUMNS).index("rcvbuf_drops_guest") + 4] == "0"  # recorded, not "–"
    assert "queue 1 BDP, pri: 2 invalid, left out:" in out
    assert "cpu_saturated (2×)" in out
    assert "rcvbuf_drops (1×)" in out
