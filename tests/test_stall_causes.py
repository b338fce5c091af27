"""priolab.workloads.rise.stall_causes: each stall with the Host packets lost around its start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from priolab.workloads.rise.stall_causes import explain, main

T0 = 1_700_000_000_000_000


def _run(tmp_path: Path) -> Path:
    """10 s at 30 fps; no display from 5.0 s to 6.0 s; the Host loses 40 packets at 5.05 s
    (a key frame at 5.02 s) and 3 more at 8.0 s, where nothing stalls."""
    d = tmp_path / "r1"
    (d / "guest").mkdir(parents=True)
    (d / "host").mkdir()
    shown = [T0 + int(i * 1e6 / 30) for i in range(300)]
    shown = [t for t in shown if not (T0 + 5.0e6 < t < T0 + 6.0e6)]
    rows = ["frame_id,frame_type,display_time_us,tracking_sample_id,tracking_gen_time_us,mtp_ms"]
    rows += [f"{i},delta,{t},{i},{t - 20_000},20.0" for i, t in enumerate(shown)]
    (d / "guest" / "frames_displayed.csv").write_text("\n".join(rows) + "\n")
    sent = ["frame_id,frame_type,size_bytes,frag_cnt,encode_time_us,tracking_sample_id"]
    for i, t in enumerate((0.0, 5.02)):
        sent.append(f"{i},key,999999,719,{T0 + int(t * 1e6)},{i}")
    (d / "host" / "frames_sent.csv").write_text("\n".join(sent) + "\n")
    ps = ["time_us,rtt_ms,cwnd_bytes,lost_packets,sent_packets,bytes_sent,bytes_received,"
          "congestion_events"]  # fmt: skip
    for k in range(101):
        lost = (40 if k >= 51 else 0) + (3 if k >= 80 else 0)
        ps.append(f"{T0 + k * 100_000},21.0,700000,{lost},{k * 500},{k * 700000},0,0")
    (d / "host" / "path_stats.csv").write_text("\n".join(ps) + "\n")
    m = {
        "run": {"workload": {"fps": 30.0}},
        "analysis": {"windows_us": {"guest": [T0, T0 + 3_000_000, T0 + 10_000_000]}},
        "metrics": {
            "lost_packets_host": 43.0,
            "linkem_drops_queue_down": 0.0,
            "evicted_ack_guest": 1000.0,
            "deadline_expirations_host": 2.0,
        },
    }
    (d / "metrics.json").write_text(json.dumps(m))
    return d


def test_a_stall_names_the_losses_at_its_start_and_the_link_that_did_not_drop(
    tmp_path: Path,
) -> None:
    lines = explain(_run(tmp_path))
    assert lines[0].endswith("1 stalls after the warm-up")
    assert "stall   5.00 s +1.000 s" in lines[1]
    assert "Host packets lost around its start: 40;" in lines[1]  # not the 3 at 8 s
    assert "nearest Host key frame +20 ms" in lines[1]
    assert "ended by frame" in lines[1] and "(delta)" in lines[1]
    assert "Host packets lost (quinn): 43; dropped by the downlink emulator: 0" in lines[2]


def test_a_run_without_metrics_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2
    assert "no metrics.json" in capsys.readouterr().err
