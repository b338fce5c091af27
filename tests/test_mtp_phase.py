"""rise.mtp_phase: the MTP split into the sample's age at encode and frame delivery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from priolab.workloads.rise.mtp_phase import main, phase

T0 = 1_700_000_000_000_000


def _run(tmp_path: Path, late_frames: set[int]) -> Path:
    """10 s: the Guest's tracking at 60 Hz from T0, the Host's frames at 30 fps from T0 + 11 ms
    (its session starts 11 ms later); each sample reaches the Host 10.7 ms after it was made,
    so frame k carries sample 2k (age 11 ms), except the frames in `late_frames`, which carry
    sample 2k - 1 (age 27.67 ms); every frame is displayed 12 ms after its encode."""
    d = tmp_path / "r1"
    (d / "guest").mkdir(parents=True)
    (d / "host").mkdir()
    period = 1e6 / 60
    gen = [T0 + round(i * period) for i in range(600)]
    recv = ["sample_id,recv_time_us,gen_time_us"]
    recv += [f"{i},{g + 10_700},{g}" for i, g in enumerate(gen)]
    (d / "host" / "tracking_received.csv").write_text("\n".join(recv) + "\n")
    sent = ["frame_id,frame_type,size_bytes,frag_cnt,encode_time_us,tracking_sample_id"]
    shown = ["frame_id,frame_type,display_time_us,tracking_sample_id,tracking_gen_time_us,mtp_ms"]
    for k in range(1, 300):
        enc = T0 + 11_000 + round(k * 1e6 / 30)
        s = 2 * k - 1 if k in late_frames else 2 * k
        disp = enc + 12_000
        sent.append(f"{k},delta,1000,1,{enc},{s}")
        shown.append(f"{k},delta,{disp},{s},{gen[s]},{(disp - gen[s]) / 1e3:.3f}")
    (d / "host" / "frames_sent.csv").write_text("\n".join(sent) + "\n")
    (d / "guest" / "frames_displayed.csv").write_text("\n".join(shown) + "\n")
    for ep, start in (("guest", T0), ("host", T0 + 11_000)):
        (d / ep / "summary.json").write_text(json.dumps({"start_time_us": start}))
    m = {
        "run": {"workload": {"tracking_hz": 60}},
        "analysis": {"windows_us": {"guest": [T0, T0 + 3_000_000, T0 + 10_000_000]}},
    }
    (d / "metrics.json").write_text(json.dumps(m))
    return d


def test_on_time_samples_split_mtp_into_age_and_delivery(tmp_path: Path) -> None:
    p = phase(_run(tmp_path, late_frames=set()))
    assert p["age_ms"] == pytest.approx(11.0, abs=0.01)
    assert p["deliver_ms"] == pytest.approx(12.0, abs=0.01)
    assert p["mtp_ms"] == pytest.approx(23.0, abs=0.01)
    assert p["up_ms"] == pytest.approx(10.7, abs=0.01)
    assert p["phase_ms"] == pytest.approx(11.0)
    assert p["older_frames"] == 0
    # frames displayed from 3 s on only: 90 of the 299 fall in the warm-up
    assert p["frames"] == pytest.approx(299 - 89, abs=1)


def test_a_late_sample_costs_one_tracking_period_in_age_not_in_delivery(
    tmp_path: Path,
) -> None:
    p = phase(_run(tmp_path, late_frames=set(range(1, 300))))
    assert p["age_ms"] == pytest.approx(11.0 + 1e3 / 60, abs=0.01)
    assert p["deliver_ms"] == pytest.approx(12.0, abs=0.01)
    assert p["older_frames"] == p["frames"]


def test_main_needs_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == 2
    assert "no metrics.json" in capsys.readouterr().err
    run = _run(tmp_path, late_frames={100, 101})
    assert main([str(run)]) == 0
    assert "2 of" in capsys.readouterr().out
