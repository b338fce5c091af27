"""Calibrator pieces that run without Mininet: the UDP probe on loopback, the verdicts."""

from __future__ import annotations

import threading

import numpy as np

from netem import udpprobe
from netem.calibrate import payload_bps, verdicts


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
