"""The `moq` workload's analysis on hand-made run folders: metrics, aggregate, figures, table;
and its plan (argv) and parameter checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.aggregate import aggregate
from analysis.figures import make_figures
from analysis.metrics import run_metrics
from priolab.workloads.base import Pair, RunContext
from priolab.workloads.moq.workload import SHIPPED_CLIP, Moq, MoqParams

# decode order of one GoP: I P B B P (display I B B P P), 40 ms per frame
GOP = [("I", 0), ("P", 120), ("B", 40), ("B", 80), ("P", 160)]


def _write_run(d: Path, scheme: str, latency_ms: dict[str, float], lost: set[int]) -> None:
    (d / "host").mkdir(parents=True)
    (d / "guest").mkdir()
    t0 = 1_700_000_000_000_000
    sent, got = [], []
    for g in range(2):
        for t, pts in GOP:
            fid = len(sent)
            cap = t0 + (g * 200 + pts) * 1000
            sent.append(f"{fid},{fid % 5},{t},{g},1000,all,{cap},{cap},{cap}")
            if fid not in lost:
                arr = cap + int(latency_ms[t] * 1000)
                got.append(f"{fid},{t},{g},1000,0,{cap},{arr},{latency_ms[t]}")
    (d / "host" / "frames_sent.csv").write_text(
        "frame_id,clip_index,pict_type,group,size_bytes,stream,capture_us,release_us,written_us\n"
        + "\n".join(sent) + "\n"
    )  # fmt: skip
    (d / "guest" / "frames_received.csv").write_text(
        "frame_id,pict_type,group,size_bytes,stream,capture_us,arrival_us,latency_ms\n"
        + "\n".join(got) + "\n"
    )  # fmt: skip
    meta = {"valid": True, "invalid_reasons": [], "run": {
        "duration_s": 0.4, "setting": "2.7M", "scheme": scheme,
        "workload": {"kind": "moq", "scheme": scheme}}}  # fmt: skip
    (d / "metadata.json").write_text(json.dumps(meta))


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    root = tmp_path / "moq-sports"
    fast = {"I": 100.0, "P": 300.0, "B": 900.0}
    slow = {"I": 800.0, "P": 800.0, "B": 800.0}
    for rep in (1, 2):
        _write_run(root / "2.7M" / "ft" / "default" / f"r{rep}", "ft", fast, set())
        # FEFS, second run: the second GoP's first P (frame 6) never arrives
        lost = {6} if rep == 2 else set()
        _write_run(root / "2.7M" / "fefs" / "default" / f"r{rep}", "fefs", slow, lost)
    return root


def test_metrics_known_answers(scenario: Path) -> None:
    m = run_metrics(scenario / "2.7M" / "ft" / "default" / "r1")["metrics"]
    assert m["frames_sent"] == 10 and m["received_pct"] == 100
    # I 100 ms; P 300 ms (its references were earlier); B 900 ms: on time from 900 ms
    assert m["otdr_I_500ms"] == 1 and m["otdr_P_500ms"] == 1 and m["otdr_B_500ms"] == 0
    assert m["otdr_500ms"] == pytest.approx(6 / 10)
    assert m["otdr_1000ms"] == 1
    assert m["i_all_on_time_budget_ms"] == pytest.approx(100)
    assert m["latency_B_median_ms"] == pytest.approx(900)
    m = run_metrics(scenario / "2.7M" / "fefs" / "default" / "r2")["metrics"]
    # frame 6 (P of GoP 2) lost: it, the two B frames and the next P (7, 8, 9) are never on time
    assert m["otdr_1000ms"] == pytest.approx(6 / 10)
    assert m["otdr_700ms"] == 0
    assert m["lost_P_pct"] == pytest.approx(25)
    assert m["otdr_I_1000ms"] == 1 and m["i_all_on_time_budget_ms"] == pytest.approx(800)


def test_aggregate_figures_and_table(scenario: Path) -> None:
    res = aggregate(scenario)
    assert res["valid"] == 4
    s = pd.read_csv(scenario / "summary.csv")
    row = s[(s["metric"] == "otdr_I_700ms") & (s["scheme"] == "ft")].iloc[0]
    assert row["value"] == 1 and row["n_runs"] == 2
    assert "mtp_median_ms" not in set(s["metric"])  # no RISE metrics for a moq scenario
    # the summary's header is the workload's: moq's metrics and delivery schemes, no RISE terms
    md = (scenario / "summary.md").read_text()
    head = md.split("\n## ", 1)[0]
    assert "otdr_<b>ms" in head and "- ft: delivery ft" in head
    for rise_term in ("Guest", "warm-up", "sender buffer B", "stall"):
        assert rise_term not in head, rise_term
    made, _ = make_figures(scenario)
    names = {p.stem for p in made}
    assert names == {"moq_latency_I", "moq_latency_P", "moq_latency_B", "moq_latency_all",
                     "moq_otdr", "moq_otdr_by_type"}  # fmt: skip
    table = (scenario / "otdr_table.md").read_text()
    assert "| 2.7M | ft | 700 | 0.600 [0.600, 0.600] (2) | 1.000 [1.000, 1.000] (2)" in table
    t = pd.read_csv(scenario / "otdr_table.csv")
    fefs = t[(t["scheme"] == "fefs") & (t["budget_ms"] == 1000) & (t["frames"] == "all")]
    assert fefs["otdr"].iloc[0] == pytest.approx((1.0 + 0.6) / 2)


def test_a_broken_log_marks_the_run_invalid(scenario: Path) -> None:
    d = scenario / "2.7M" / "ft" / "default" / "r1"
    (d / "guest" / "frames_received.csv").write_text("frame_id,nonsense\n1,2\n")
    out = run_metrics(d)
    assert out["valid"] is False
    assert "frames_received.csv" in out["invalid_reasons"][-1]


def test_plan_and_check(tmp_path: Path) -> None:
    w = Moq()
    p = MoqParams(scheme="ft")
    ctx = RunContext(tmp_path, 120.0, 1, tmp_path, (Pair("guest", "host", "10.0.0.1", "10.0.0.2"),))
    specs = w.plan(p, ctx)
    assert [s.name for s in specs] == ["moq-publisher", "moq-subscriber"]
    pub, sub = specs
    assert pub.node == "host" and sub.node == "guest"
    a = pub.argv
    assert a[a.index("--scheme") + 1] == "ft"
    assert a[a.index("--duration-s") + 1] == "120"
    assert a[a.index("--frame-trace") + 1] == str(SHIPPED_CLIP)
    assert sub.argv[sub.argv.index("--connect") + 1] == "10.0.0.2:4443"
    assert sub.wait_for_file == tmp_path / "host" / "cert.der"
    assert w.check(p, tmp_path) == []
    bad = tmp_path / "plain.csv"
    bad.write_text("frame_type,size_bytes\nkey,100\n")
    problems = w.check(MoqParams(frame_trace=bad), tmp_path)
    assert problems and problems[0][0] == "frame_trace" and "not a GoP trace" in problems[0][1]
    assert w.check(MoqParams(frame_trace=Path("nope.csv")), tmp_path)[0][1].startswith("file")
    with pytest.raises(ValueError):
        MoqParams(scheme="lifo")  # type: ignore[arg-type]


def test_scenario_file_is_valid() -> None:
    from priolab.scenario import expand, load

    path = Path(__file__).resolve().parents[1] / "scenarios" / "moq-sports.yaml"
    runs = expand(load(path), path)
    rates = {r.link.downlink.rate_mbps for r in runs}
    assert rates == {2.7, 2.85, 3.0}
    assert {r.params.scheme for r in runs} == {"fefs", "ft", "group"}  # type: ignore[attr-defined]
    assert np.isclose(runs[0].duration_s, 120)
