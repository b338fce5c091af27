"""The `roq` analysis through analysis/ on hand-made run folders: metrics (decoded.y replaced
by the frames table), aggregate, figures and the SSIM table beside the paper's number."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.aggregate import aggregate
from analysis.figures import make_figures
from analysis.metrics import run_metrics

W, H, N = 48, 32, 4  # tiny video: 4 source frames, 8 sent


def _source(d: Path) -> tuple[Path, np.ndarray]:
    rng = np.random.default_rng(1)
    luma = rng.integers(0, 256, size=(N, H, W), dtype=np.uint8)
    buf = b"".join(f.tobytes() + bytes(W * H // 2) for f in luma)
    p = d / "src.yuv"
    p.write_bytes(buf)
    return p, luma


def _write_run(
    d: Path, scheme: str, lost: set[int], src: Path, luma: np.ndarray, guest: dict | None = None
) -> None:
    (d / "host").mkdir(parents=True)
    (d / "guest").mkdir()
    t0 = 1_700_000_000_000_000
    sent = [f"{i},{i * 3600},1000,1,500,{t0 + i * 40_000}" for i in range(8)]
    (d / "host" / "frames_sent.csv").write_text(
        "frame_index,rtp_ts,size_bytes,packets,target_kbps,capture_us\n" + "\n".join(sent) + "\n"
    )
    rate = [f"{t0 + k * 100_000},{500_000 + k},{450_000},0,0,0,0,0,0" for k in range(4)]
    (d / "host" / "rate.csv").write_text(
        "time_us,target_bps,send_rate_bps,rtp_queue_pkts,scream_cwnd_bytes,scream_qdelay_us,"
        "quic_cwnd_bytes,rtt_us,quic_lost_packets\n" + "\n".join(rate) + "\n"
    )
    kept = [i for i in range(8) if i not in lost]
    (d / "guest" / "decoded_frames.csv").write_text(
        "decoded_index,rtp_ts,decoded_us\n"
        + "\n".join(f"{k},{i * 3600},{t0 + i * 40_000 + 30_000}" for k, i in enumerate(kept))
        + "\n"
    )
    (d / "guest" / "decoded.y").write_bytes(b"".join(luma[i % N].tobytes() for i in kept))
    (d / "host" / "summary.json").write_text(json.dumps({"rtp_packets_sent": 8}))
    summary = {"rtp_packets_received": len(kept), **(guest or {})}
    (d / "guest" / "summary.json").write_text(json.dumps(summary))
    meta = {"valid": True, "invalid_reasons": [], "inputs": {"source": str(src)},
            "run": {"duration_s": 0.32, "setting": "d50", "scheme": scheme,
                    "workload": {"kind": "roq", "width": W, "height": H}}}  # fmt: skip
    (d / "metadata.json").write_text(json.dumps(meta))


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    root = tmp_path / "roq-rfc8867"
    src, luma = _source(tmp_path)
    for rep in (1, 2):
        _write_run(root / "d50" / "scream" / "default" / f"r{rep}", "scream", set(), src, luma)
        lost = {5} if rep == 2 else set()  # frame 5 never decoded: frame 4's picture stays
        run = root / "d50" / "udp-scream" / "default" / f"r{rep}"
        _write_run(run, "udp-scream", lost, src, luma)
    return root


def test_metrics_aggregate_figures_and_ssim_table(scenario: Path) -> None:
    r = scenario / "d50" / "udp-scream" / "default" / "r2"
    m = run_metrics(r)["metrics"]
    assert m["frames_sent"] == 8 and m["decoded_pct"] == pytest.approx(87.5)
    assert m["ssim_decoded_mean"] == pytest.approx(1.0)
    assert m["ssim_mean"] < 0.9  # the frozen frame 5 counts
    assert m["rtp_loss_pct"] == pytest.approx(12.5)
    assert not (r / "guest" / "decoded.y").exists()
    # a second analysis reads the frames table
    assert run_metrics(r)["metrics"]["ssim_mean"] == pytest.approx(m["ssim_mean"])
    res = aggregate(scenario)
    assert res["valid"] == 4
    s = pd.read_csv(scenario / "summary.csv")
    assert {"ssim_mean", "target_mean_kbps"} <= set(s["metric"])
    made, _ = make_figures(scenario)
    names = {p.stem for p in made}
    assert {"roq_target_d50", "roq_ssim_time_d50"} <= names
    t = pd.read_csv(scenario / "ssim_table.csv")
    scream = t[t["scheme"] == "scream"].iloc[0]
    assert scream["ssim_mean"] == pytest.approx(1.0) and scream["paper_ssim"] == 0.87
    md = (scenario / "ssim_table.md").read_text()
    assert "| udp-scream | d50 |" in md or "UDP" in md


def test_ssim_table_gives_one_run_no_interval(scenario: Path) -> None:
    for rep in ("r2",):
        shutil.rmtree(scenario / "d50" / "scream" / "default" / rep)
    aggregate(scenario)
    make_figures(scenario)
    t = pd.read_csv(scenario / "ssim_table.csv")
    one = t[t["scheme"] == "scream"].iloc[0]
    assert one["runs"] == 1 and math.isnan(one["ci_low"]) and math.isnan(one["ci_high"])
    two = t[t["scheme"] == "udp-scream"].iloc[0]
    assert two["runs"] == 2 and two["ci_low"] < two["ci_high"]
    md = (scenario / "ssim_table.md").read_text()
    assert "(n=1, no CI)" in md and md.count("(n=1, no CI)") == 1


def test_capacity_line_reads_a_trace_named_relative_to_scenarios() -> None:
    from priolab.workloads.roq.figure_data import capacity

    trace = {"file": "../traces/synthetic/steps-rfc8867-style-90s.txt", "format": "schedule"}
    cap = capacity({"run": {"link": {"downlink": {"trace": trace}}}})
    assert cap is not None
    assert cap["time_s"] == [0.0, 30.0, 60.0, 90.0]
    assert cap["rate_mbps"] == [1.0, 0.5, 1.0, 1.0]


def test_capacity_line_reads_a_trace_relative_to_the_runs_scenario_folder(tmp_path: Path) -> None:
    from priolab.workloads.roq.figure_data import capacity

    (tmp_path / "sc").mkdir()
    (tmp_path / "sc" / "dip.txt").write_text("0 1.0\n10 0.25\n")
    trace = {"file": "dip.txt", "format": "schedule"}
    cap = capacity({"run": {"link": {"downlink": {"trace": trace}},
                            "base_dir": str(tmp_path / "sc")}})  # fmt: skip
    assert cap is not None
    assert cap["rate_mbps"][:2] == [1.0, 0.25]


def test_a_run_that_decoded_nothing_scores_every_frame_black(tmp_path: Path) -> None:
    """decoded.y empty (no picture decoded, a real outcome with a competing stream): the run
    is scored, every frame against black, not an analysis error."""
    src, luma = _source(tmp_path)
    run = tmp_path / "roq-rfc8867" / "d50" / "trivial" / "default" / "r1"
    _write_run(run, "trivial", set(range(8)), src, luma)
    assert (run / "guest" / "decoded.y").stat().st_size == 0
    m = run_metrics(run)["metrics"]
    assert m["decoded_pct"] == 0.0
    black = np.zeros((H, W), dtype=np.uint8)
    from priolab.workloads.roq.quality import ssim

    expect = np.mean([ssim(luma[i % N], black) for i in range(8)])
    assert m["ssim_mean"] == pytest.approx(expect, abs=1e-6)


def _decoder_fields(errors: int, keys: int) -> dict:
    return {"frames_complete": 8, "frames_pushed_to_decoder": 8, "key_frames_complete": keys,
            "decoder_errors": errors, "decoder_errors_at_eos": int(keys == 0),
            "decoder_warnings": 0, "decoder_messages": []}  # fmt: skip


def test_ssim_table_says_when_a_decoder_stopped_or_decoded_nothing(tmp_path: Path) -> None:
    """A run whose decoder pipeline posted an ERROR, or that decoded no picture, is named in
    the SSIM table's decoder column, not left to look like a low-SSIM run; a healthy
    configuration reads "ok", and one whose receiver did not report errors says so."""
    src, luma = _source(tmp_path)
    root = tmp_path / "roq-rfc8867"

    def run(scheme: str, rep: int, lost: set[int], guest: dict | None) -> Path:
        d = root / "d50" / scheme / "default" / f"r{rep}"
        _write_run(d, scheme, lost, src, luma, guest)
        return d

    run("scream", 1, set(), _decoder_fields(0, 2))
    run("scream", 2, set(), _decoder_fields(0, 4))
    stopped = run("scream-newreno", 1, {6, 7}, _decoder_fields(1, 2))
    run("scream-newreno", 2, set(), _decoder_fields(0, 2))
    nothing = run("trivial+stream", 1, set(range(8)), _decoder_fields(0, 0))
    run("udp-scream", 1, set(), None)  # a receiver from before these fields
    m = run_metrics(stopped)["metrics"]
    assert m["decoder_stopped"] == 1.0 and m["no_picture"] == 0.0 and m["pictures_decoded"] == 6
    m = run_metrics(nothing)["metrics"]
    assert m["no_picture"] == 1.0 and m["decoder_stopped"] == 0.0  # its ERROR came at the end
    assert m["decoder_errors_at_eos"] == 1.0
    assert m["key_frames_complete"] == 0.0 and m["frames_pushed"] == 8.0
    aggregate(root)
    make_figures(root)
    t = pd.read_csv(root / "ssim_table.csv").set_index("scheme")
    assert t.loc["scream-newreno", "decoder_stopped_runs"] == 1
    assert t.loc["trivial+stream", "no_picture_runs"] == 1
    assert t.loc["scream", "key_frames_complete_mean"] == 3.0
    rows = {line.split(" | ")[0].lstrip("| "): line for line in
            (root / "ssim_table.md").read_text().splitlines()}  # fmt: skip
    decoder = {k: v.split(" | ")[5] for k, v in rows.items() if " | d50 | " in v}
    assert decoder["scream"] == "ok; 3.0 complete key frames/run", rows
    assert decoder["scream-newreno"].startswith("decoder stopped (ERROR) in 1/2")
    assert decoder["trivial+stream"].startswith("no picture decoded in 1/1 runs")
    assert decoder["udp-scream"] == "errors not recorded in 1/1"


def test_loss_recovery_counts_come_from_both_summaries() -> None:
    """PLIs sent (receiver) and received, IDRs forced (sender), undecodable frames; NaN from
    endpoints older than PLI."""
    from priolab.workloads.roq.analysis import decoder_metrics

    host = {"key_frames_sent": 9, "pli_received": 2, "key_frames_forced": 2}
    guest = {**_decoder_fields(0, 3), "pli_sent": 3, "undecodable_frames": 5}
    m = decoder_metrics(host, guest, 6)
    got = (m["pli_sent"], m["pli_received"], m["key_frames_forced"], m["undecodable_frames"])
    assert got == (3.0, 2.0, 2.0, 5.0)
    m = decoder_metrics({"key_frames_sent": 9}, _decoder_fields(0, 3), 6)
    assert all(np.isnan(m[k]) for k in ("pli_sent", "pli_received", "key_frames_forced"))
