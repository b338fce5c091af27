"""Calibrator pieces that run without Mininet: the UDP probe on loopback, the probe
workload's plan, the figures from hand-made arrivals, the verdicts against TARGETS."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from netem import udpprobe
from priolab.workloads.probe import payload_bps
from priolab.workloads.probe.analysis import verdicts
from tests.conftest import needs_root


def test_udpprobe_loopback(tmp_path):
    out = tmp_path / "p.npz"
    t = threading.Thread(target=udpprobe.recv, args=(47123, str(out), 10.0, 0.5))
    t.start()
    import time

    time.sleep(0.2)
    udpprobe.send("127.0.0.1", 47123, pps=2000, count=300, size=100)
    t.join()
    with np.load(out) as z:
        assert list(z["seq"]) == list(range(300))
        assert set(z["size"]) == {100}
        owd = z["recv_ns"] - z["send_ns"]
        assert (owd > 0).all() and np.median(owd) < 50e6  # kernel stamp after the send stamp
        span_s = (z["send_ns"][-1] - z["send_ns"][0]) / 1e9
        assert 0.10 < span_s < 0.5  # paced: 300 packets at 2000/s take ~0.15 s


def test_payload_rate_matches_wire_rate():
    assert payload_bps(1442e6) == 1400e6


def test_verdicts():
    res = {
        "rate": [{"configured_mbps": 10, "achieved_mbps": 9.85},
                 {"configured_mbps": 500, "achieved_mbps": 480.0},
                 {"configured_mbps": 1000, "achieved_mbps": 960.0}],
        "delay": [{"load_pct": 0, "median_error_ms": 0.1, "p99_error_ms": 1.5}],
        "loss": {"measured_loss_pct": 2.08, "expected_loss_pct": 2.0,
                 "measured_burst_pkts": 3.5, "expected_burst_pkts": 3.0,
                 "same_seed_same_pattern": True},
        "trace": {"correlation": 0.97},
    }  # fmt: skip
    got = {v["name"]: v["pass"] for v in verdicts(res)}
    assert got == {
        "rate 10 Mbit/s error %": True,
        "rate 500 Mbit/s error %": False,
        "rate 1000 Mbit/s fraction": True,
        "delay median error ms (load 0 %)": True,
        "delay p99 error ms (load 0 %)": False,
        "GE loss rate rel. error %": True,
        "GE burst length rel. error %": False,
        "same seed, same pattern": True,
        "trace correlation": False,
    }


def test_probe_plans_every_tool_guest_to_host():
    from priolab.workloads.base import Pair, RunContext
    from priolab.workloads.probe import WORKLOAD, ProbeParams

    ctx = RunContext(
        Path("/run"), 5.0, 1, Path("."), (Pair("guest", "host", "10.0.0.1", "10.0.0.2"),)
    )

    def plan(**kw):
        return {s.name: s for s in WORKLOAD.plan(ProbeParams.model_validate(kw), ctx)}

    ip = plan(tool="iperf3", wire_mbps=70, seconds=4)
    assert ip["iperf3-server"].node == "host" and ip["iperf3-client"].node == "guest"
    # the payload rate that puts 70 Mbit/s of frames on the wire
    assert (
        ip["iperf3-client"].argv[ip["iperf3-client"].argv.index("-b") + 1]
        == f"{70e6 * 1400 / 1442:.0f}"
    )
    lk = plan(tool="lkprobe", wire_mbps=1500, seconds=3)
    assert lk["lkprobe-send"].argv[-8:-6] == ["--rate-mbps", "1500"]
    up = plan(tool="udpprobe", pps=200, count=1000, load_mbps=50, idle_s=1.0)
    assert list(up) == ["load-server", "load-client", "udpprobe-recv", "udpprobe-send"]
    assert up["udpprobe-recv"].start_delay_s == 1.0  # the load's queue settles first
    # the load is paced in 100 µs ticks, not iperf3's 1 ms bursts (the probe would queue behind)
    load = up["load-client"].argv
    assert load[load.index("--pacing-timer") + 1] == "100"
    assert "/run/probe.npz" in up["udpprobe-recv"].argv
    assert list(plan(tool="udpprobe")) == ["udpprobe-recv", "udpprobe-send"]


def test_figures_from_hand_made_arrivals():
    from priolab.workloads.probe.analysis import (
        delay_row,
        loss_figures,
        received_pattern,
        trace_correlation,
    )

    send = np.arange(100, dtype=np.int64) * 5_000_000
    z = {"seq": np.arange(100), "send_ns": send, "recv_ns": send + 10_600_000,
         "size": np.full(100, 64)}  # fmt: skip
    row = delay_row(z, 10.5, 0, 100)
    assert row["median_error_ms"] == pytest.approx(0.1) and row["samples"] == 100
    # packets 3-5 and 10 lost: 4 of 20 (20 %), 2 bursts (mean length 2)
    seq = np.array([i for i in range(20) if i not in (3, 4, 5, 10)])
    got = received_pattern({"seq": seq}, 20)
    f = loss_figures([got, got[:10]])
    assert f["measured_loss_pct"] == pytest.approx(20) and f["measured_burst_pkts"] == 2
    assert f["same_seed_same_pattern"] and f["same_seed_compared_packets"] == 10
    assert not loss_figures([got, ~got[:10]])["same_seed_same_pattern"]
    # a schedule 10, 30, 20, 40 Mbit/s, received exactly (1400-byte payloads), 0.1 s late
    steps, rows = [10, 30, 20, 40], []
    for sec, mbps in enumerate(steps * 2):
        n = round(mbps * 1e6 / ((1400 + 42) * 8))
        rows.append(np.linspace(sec, sec + 1, n, endpoint=False) + 0.1)
    t = np.concatenate(rows)
    zz = {"recv_ns": (t * 1e9).astype(np.int64), "size": np.full(len(t), 1400)}
    best = trace_correlation(zz, 0, steps, 8, skip_s=1)
    assert best is not None and best["correlation"] > 0.99 and best["lag_ms"] == 100


@needs_root
def test_calibration_steps_run_on_the_engine(tmp_path: Path):
    """Two probe runs on one Mininet network through the engine (plan, agents, judge): a rate
    and a delay step on linkem, read by the probe's analysis; while the network exists its
    state record (what `priolab clean` reads) names it and each plan; afterwards nothing is
    left."""
    import json

    from netem.probe import choose_backend, probe_kernel
    from priolab import clean as cleaning
    from priolab.workloads.probe.calibrate import Calibration, calibrate_session

    name, why = choose_backend("userspace", probe_kernel())
    with calibrate_session(tmp_path) as network:
        cal = Calibration(("userspace", name, why), True, tmp_path, print, network)
        rate = {
            d: {"rate_mbps": 10, "queue": {"limit_bytes": 64_000}} for d in ("uplink", "downlink")
        }
        r, meta = cal.iperf_udp("rate-10", rate, 10, 2)
        assert r["achieved_mbps"] == pytest.approx(10, rel=0.05)
        assert meta["link_final"]["uplink"]["departures"] > 0
        delay = {d: {"rate_mbps": 100, "delay_ms": 10.5} for d in ("uplink", "downlink")}
        z, run, _ = cal.probe("delay-0", delay, 200, 200, 64, idle_s=0.5)
        owd_ms = (z["recv_ns"] - z["send_ns"]) / 1e6
        assert len(owd_ms) == 200 and 10.5 <= np.median(owd_ms) < 11.5
        state = json.loads((cleaning.STATE_DIR / f"{network.state_id}.json").read_text())
        assert set(state["nodes"]) == {"guest", "emu", "host"}
        assert [Path(p).parent.name for p in state["plans"]] == ["rate-10", "delay-0"]
        assert json.loads((run / "plan.json").read_text())["run"]["workload"]["kind"] == "probe"
    assert not (cleaning.STATE_DIR / f"{network.state_id}.json").exists()
