"""analysis.predictor_agreement: real runs' metrics.json against a (fake) rise-sim."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from analysis.predictor_agreement import COLUMNS, POINTS, cell, main, real_run

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


def _run(root: Path, point: str, scheme: str, rep: int, valid: bool, mtp: float) -> None:
    d = root / point / scheme / f"r{rep}"
    d.mkdir(parents=True)
    m = {"valid": valid, "metrics": {**METRICS, "mtp_median_ms": mtp}}
    (d / "metrics.json").write_text(json.dumps(m))
    (root / point / scheme / f"r{rep}.loadavg").write_text(f"0.{rep}5 0.50 0.40 1/100 99\n")


def _fake_sim(tmp_path: Path) -> Path:
    """A rise-sim stand-in: the seed as the median MTP, so the table's mean is predictable."""
    out = {
        "guest": {"mtp_median_ms": "SEED", "mtp_p99_ms": None, "stall_s": 2.7, "displayed_fps": 30},
        "guest_endpoint": {
            "cwnd_bytes_p50": 75_000,
            "channels": {"ack": {"evicted": 5}, "video": {"dropped_ingress": 7}},
        },
        "host": {"deadline_expirations": 20, "lost_packets": 0, "cwnd_bytes_p50": 1.3e6},
    }
    src = json.dumps({"metrics": out}).replace('"SEED"', "%s")
    p = tmp_path / "rise-sim"
    p.write_text(
        f"#!{sys.executable}\nimport sys\na = sys.argv\nprint({src!r} % a[a.index('--seed') + 1])\n"
    )
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return p


def test_invalid_and_missing_runs_are_left_out(tmp_path: Path) -> None:
    _run(tmp_path, "quick", "pri", 1, True, 40.0)
    _run(tmp_path, "quick", "pri", 2, False, 900.0)
    assert real_run(tmp_path / "quick" / "pri" / "r1") is not None
    assert real_run(tmp_path / "quick" / "pri" / "r2") is None  # judged invalid
    assert real_run(tmp_path / "quick" / "pri" / "r3") is None  # never ran


def test_cell_is_mean_with_bootstrap_ci() -> None:
    assert cell([]) == "–"
    assert cell([40.0]) == "40"
    assert cell([30.0, 50.0]) == "40 [30, 50]"


def test_table_has_real_and_predicted_rows_per_point_and_scheme(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(tmp_path, "quick-loss005", "pri", 1, True, 40.0)
    _run(tmp_path, "quick-loss005", "pri", 2, True, 44.0)
    _run(tmp_path, "quick-loss005", "pri", 3, False, 900.0)
    assert main([str(tmp_path), "--rise-sim", str(_fake_sim(tmp_path)), "--seeds", "3"]) == 0
    out = capsys.readouterr().out
    rows = [r for r in out.splitlines() if r.startswith("| quick")]
    assert len(rows) == len(POINTS) * 2 * 2
    real = next(r for r in rows if r.startswith("| quick-loss005 | pri | real"))
    cells = [c.strip() for c in real.split("|")[1:-1]]
    assert cells[3] == "2 valid of 3"
    assert cells[4] == "42 [40, 44]"  # the invalid run's 900 ms is not averaged in
    pred = next(r for r in rows if r.startswith("| quick-loss005 | pri | predicted"))
    pcells = [c.strip() for c in pred.split("|")[1:-1]]
    assert len(pcells) == 4 + len(COLUMNS)
    assert pcells[4].startswith("2 [")  # seeds 1..3 -> mean 2
    assert pcells[5] == "–"  # no p99 from the predictor: shown as missing, not 0
    assert pcells[6] == "10"  # 2.7 s of 27 s after the warm-up
    assert "load average at the real runs' start: 0.15–0.25 (2 valid runs)" in out


def test_missing_binary_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path), "--rise-sim", str(tmp_path / "nope")]) == 2
    assert "no rise-sim binary" in capsys.readouterr().err
