"""The `qpr` workload ([QPR]): its analysis on hand-made run folders (metrics, aggregate,
figures, Table 3), its plan (argv) and parameter checks, and its scenario files (the initial
window is the BDP at the trace's lowest rate, rescaled as the trace)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.aggregate import aggregate
from analysis.figures import make_figures
from analysis.metrics import run_metrics
from ground.data import skip_reason
from priolab.workloads.base import Pair, RunContext
from priolab.workloads.qpr.workload import InitialWindow, Qpr, QprParams
from tests.conftest import has_dataset

REPO = Path(__file__).resolve().parents[1]
T0 = 1_700_000_000_000_000


def _write_run(d: Path, scheme: str, q_pct: int, thr: list[float], lost_obj: bool) -> None:
    """Three segments; per segment objects ranked 0,1,2,3 at qualities 2,1,0,0 (0-based);
    the last `q_pct/25` ranks unreliable; with `lost_obj` the rank-4 object of segment 1
    misses half its bytes."""
    (d / "host").mkdir(parents=True)
    (d / "guest").mkdir()
    seg = ["segment,request_us,arrival_us,play_start_us,download_ms,bytes,throughput_mbps,"
           "stall_before_ms,ranking,qualities,reliable"]  # fmt: skip
    obj = ["segment,object,rank,quality,reliable,size_bytes,received_bytes,"
           "datagrams_expected,datagrams_received,complete,done_us"]  # fmt: skip
    unrel = q_pct // 25
    for k, t in enumerate(thr):
        req = T0 + k * 1_000_000
        seg.append(f"{k},{req},{req + 500_000},{req + 500_000},500,1000,{t},0,0 1 2 3,"
                   f"2 1 0 0,1 1 1 1")  # fmt: skip
        for rank, q in enumerate([2, 1, 0, 0]):
            rel = int(rank < 4 - unrel)
            got = 500 if (lost_obj and k == 1 and rank == 3) else 1000
            exp, n = (-1, -1) if rel else (1, 1 if got == 1000 else 0)
            obj.append(f"{k},{rank},{rank},{q},{rel},1000,{got},{exp},{n},{int(got == 1000)},{req}")
    (d / "guest" / "segments.csv").write_text("\n".join(seg) + "\n")
    (d / "guest" / "objects.csv").write_text("\n".join(obj) + "\n")
    player = {"role": "player", "exit_reason": "duration", "q_pct": q_pct, "segments": len(thr),
              "freezes": 2 if q_pct == 0 else 1, "freeze_total_s": 1.5 if q_pct == 0 else 0.5,
              "startup_s": 0.5, "played_s": 3.0, "objects_incomplete": int(lost_obj)}  # fmt: skip
    (d / "guest" / "summary.json").write_text(json.dumps(player))
    (d / "host" / "summary.json").write_text(json.dumps({"lost_packets": 7, "sent_packets": 100}))
    meta = {"valid": True, "invalid_reasons": [], "run": {
        "duration_s": 4.0, "setting": "driving-loss5", "scheme": scheme,
        "workload": {"kind": "qpr", "q_pct": q_pct, "scale": 0.1},
        "compare": {"reference": "q0", "order": ["q0", "q100"], "labels": {}}}}  # fmt: skip
    (d / "metadata.json").write_text(json.dumps(meta))


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    root = tmp_path / "qpr-quick"
    for rep in (1, 2):
        base = root / "driving-loss5"
        _write_run(base / "q0" / "default" / f"r{rep}", "q0", 0, [2.0, 4.0, 6.0], False)
        _write_run(base / "q100" / "default" / f"r{rep}", "q100", 100, [4.0, 8.0, 12.0], True)
    return root


def test_metrics_known_answers(scenario: Path) -> None:
    m = run_metrics(scenario / "driving-loss5" / "q100" / "default" / "r1")["metrics"]
    assert m["throughput_mean_mbps"] == pytest.approx(8.0)
    assert m["throughput_median_mbps"] == pytest.approx(8.0)
    assert m["throughput_mean_full_scale_mbps"] == pytest.approx(80.0)
    assert m["freezes"] == 1 and m["freeze_total_s"] == pytest.approx(0.5)
    assert m["played_pct"] == pytest.approx(75.0)
    assert m["quality_rank1_mean"] == 3 and m["quality_rank4_mean"] == 1  # 1-based
    # the rank-4 object of segment 1 lost data: it counts as missing (0) there
    assert m["decodable_quality_rank4_mean"] == pytest.approx(2 / 3)
    assert m["decodable_quality_rank1_mean"] == 3
    assert m["objects_incomplete_pct"] == pytest.approx(100 / 12)
    assert m["unreliable_bytes_lost_pct"] == pytest.approx(100 * 500 / 12000)
    assert m["lost_packets"] == 7
    m0 = run_metrics(scenario / "driving-loss5" / "q0" / "default" / "r1")["metrics"]
    assert m0["unreliable_bytes_lost_pct"] is None  # nothing unreliable: NaN → null
    assert m["unreliable_conn_lost_packets"] is None  # the shared path: one connection
    assert m["unreliable_conn_cwnd_bytes"] is None
    # a second-connection path: the server's packets are counted over both connections
    run = scenario / "driving-loss5" / "q100" / "default" / "r2"
    (run / "host" / "summary.json").write_text(json.dumps({
        "lost_packets": 7, "sent_packets": 100, "unreliable_conn_lost_packets": 30,
        "unreliable_conn_sent_packets": 900,
        "unreliable_conn_cwnd_bytes_at_end": 2904}))  # fmt: skip
    m2 = run_metrics(run)["metrics"]
    assert (m2["lost_packets"], m2["sent_packets"]) == (37, 1000)
    assert m2["unreliable_conn_lost_packets"] == 30
    assert m2["unreliable_conn_cwnd_bytes"] == 2904  # the datagram connection's window


def test_aggregate_figures_and_freeze_table(scenario: Path) -> None:
    res = aggregate(scenario)
    assert res["valid"] == 4
    s = pd.read_csv(scenario / "summary.csv")
    row = s[(s["metric"] == "throughput_mean_mbps") & (s["scheme"] == "q100")].iloc[0]
    assert row["value"] == pytest.approx(8.0) and row["n_runs"] == 2
    assert "mtp_median_ms" not in set(s["metric"])
    made, _ = make_figures(scenario)
    assert {p.stem for p in made} == {"qpr_throughput_cdf", "qpr_quality",
                                      "qpr_decodable_quality"}  # fmt: skip
    t = pd.read_csv(scenario / "freeze_table.csv")
    q100 = t[t["scheme"] == "q100"].iloc[0]
    assert q100["throughput_ratio"] == pytest.approx(2.0)  # 8 ÷ 4 Mbit/s
    assert q100["freezes"] == 1 and q100["n_runs"] == 2
    md = (scenario / "freeze_table.md").read_text()
    assert "| driving-loss5 | q0 | 2.0 [2.0, 2.0] (2) | 1.50 [1.50, 1.50] (2) |" in md


def test_a_broken_log_marks_the_run_invalid(scenario: Path) -> None:
    d = scenario / "driving-loss5" / "q0" / "default" / "r1"
    (d / "guest" / "objects.csv").write_text("segment,nonsense\n1,2\n")
    out = run_metrics(d)
    assert out["valid"] is False
    assert "objects.csv" in out["invalid_reasons"][-1]
    (d / "guest" / "objects.csv").unlink()
    assert "missing" in run_metrics(d)["invalid_reasons"][-1]


def test_a_lost_session_is_analysed_valid_and_says_it_failed(scenario: Path) -> None:
    """The player lost its connection mid-run (its summary says `peer_lost` and lacks the
    playout figures; the judge kept the run valid and recorded the session as failed): the
    metrics hold what arrived, NaN for what the summary lacks, and `session_failed` 1. A
    player that never wrote its logs is an empty session, not an analysis error."""
    d = scenario / "driving-loss5" / "q0" / "default" / "r1"
    (d / "guest" / "summary.json").write_text(
        json.dumps({"role": "player", "exit_reason": "peer_lost"}))  # fmt: skip
    meta = json.loads((d / "metadata.json").read_text())
    meta["session"] = {"failed": True, "lost": ["qpr-player"]}
    (d / "metadata.json").write_text(json.dumps(meta))
    out = run_metrics(d)
    assert out["valid"] is True
    m = out["metrics"]
    assert m["session_failed"] == 1.0 and m["freezes"] is None and m["played_pct"] is None
    assert m["throughput_mean_mbps"] == pytest.approx(4.0)  # the segments that arrived
    for log in ("segments.csv", "objects.csv"):
        (d / "guest" / log).unlink()
    out = run_metrics(d)
    assert out["valid"] is True and out["metrics"]["throughput_mean_mbps"] is None
    alive = run_metrics(scenario / "driving-loss5" / "q0" / "default" / "r2")["metrics"]
    assert alive["session_failed"] == 0.0


def test_plan_and_parameters(tmp_path: Path) -> None:
    w = Qpr()
    p = QprParams(q_pct=75, scale=0.1, initial_window=InitialWindow(lowest_rate_mbps=6.3,
                                                                     rtt_ms=20))  # fmt: skip
    ctx = RunContext(tmp_path, 120.0, 9, tmp_path, (Pair("guest", "host", "10.0.0.1", "10.0.0.2"),))
    server, player = w.plan(p, ctx)
    assert (server.name, server.node, player.name, player.node) == (
        "qpr-server", "host", "qpr-player", "guest")  # fmt: skip
    a, b = server.argv, player.argv
    assert a[a.index("--initial-window-bytes") + 1] == "15750"  # 6.3 Mbit/s × 20 ms
    assert b[b.index("--q-pct") + 1] == "75" and b[b.index("--duration-s") + 1] == "120"
    for argv in (a, b):  # both sides agree on the content
        assert argv[argv.index("--scale") + 1] == "0.1" and argv[argv.index("--seed") + 1] == "9"
    assert b[b.index("--connect") + 1] == "10.0.0.2:4443"
    assert player.wait_for_file == tmp_path / "host" / "cert.der"
    # a BDP below quinn's minimum window (two packets) is raised to it; none = quinn's default
    assert InitialWindow(lowest_rate_mbps=0.4, rtt_ms=20).bytes() == 2400
    argv = w.plan(QprParams(), ctx)[0].argv
    assert argv[argv.index("--initial-window-bytes") + 1] == "0"
    assert a[a.index("--transport") + 1] == "quic" == b[b.index("--transport") + 1]
    h2 = w.plan(QprParams(transport="h2", q_pct=0), ctx)
    assert all(s.argv[s.argv.index("--transport") + 1] == "h2" for s in h2)
    with pytest.raises(ValueError, match="transport h2 is reliable"):
        QprParams(transport="h2", q_pct=50)
    with pytest.raises(ValueError, match="allowed 0, 25, 50, 75, 100"):
        QprParams(q_pct=60)
    with pytest.raises(ValueError):
        QprParams(scale=0)
    # the unreliable path: both sides get it; shared unless chosen
    assert a[a.index("--unreliable-path") + 1] == "shared" == b[b.index("--unreliable-path") + 1]
    fw = QprParams(q_pct=100, unreliable_path="fixed_window_connection",
                   initial_window=InitialWindow(lowest_rate_mbps=6.3, rtt_ms=20))  # fmt: skip
    for s in w.plan(fw, ctx):
        assert s.argv[s.argv.index("--unreliable-path") + 1] == "fixed-window-connection"
    with pytest.raises(ValueError, match="initial_window, which is not set"):
        QprParams(unreliable_path="fixed_window_connection")
    with pytest.raises(ValueError, match="transport h2 has no datagrams"):
        QprParams(transport="h2", q_pct=0, unreliable_path="loss_blind_connection")
    # FEC (QPR(F)): both sides get it, off unless chosen; a block fits GF(2^8)
    assert a[a.index("--fec-repair-pct") + 1] == "0" == b[b.index("--fec-repair-pct") + 1]
    for s in w.plan(QprParams(fec_repair_pct=22, fec_block=40), ctx):
        assert s.argv[s.argv.index("--fec-repair-pct") + 1] == "22"
        assert s.argv[s.argv.index("--fec-block") + 1] == "40"
    QprParams(fec_block=128, fec_repair_pct=100)  # 128 + 128 = 256 symbols
    with pytest.raises(ValueError, match="at most 256"):
        QprParams(fec_block=129, fec_repair_pct=100)
    with pytest.raises(ValueError, match="no datagrams to protect"):
        QprParams(transport="h2", q_pct=0, fec_repair_pct=10)


# per scenario: the transports, the unreliable paths of its runs that send datagrams, the Q levels
SCENARIOS = {
    # the paper's QUIC matrix, every unreliable object as the paper's text says (a fixed window)
    "qpr-5g.yaml": ({"quic"}, {"fixed_window_connection"}, {0, 25, 50, 75, 100}),
    # the other readings, named variants
    "qpr-readings.yaml": ({"quic"}, {"shared", "loss_blind_connection"}, {0, 50, 100}),
    # QPR(F): FEC on the paper-text and the loss-blind path
    "qpr-fec.yaml": ({"quic"}, {"fixed_window_connection", "loss_blind_connection"}, {0, 50, 100}),
    "qpr-h2.yaml": ({"quic", "h2"}, set(), {0}),  # HTTP/2 beside reliable QUIC (Mininet)
    "qpr-quick.yaml": ({"quic", "h2"}, {"shared"}, {0, 50, 100}),
    "qpr-paths.yaml": (
        {"quic"},
        {"shared", "fixed_window_connection", "loss_blind_connection"},
        {0, 50, 100},
    ),
}


# the scenarios name the 5G traces of a dataset, and loading a scenario reads them
@pytest.mark.skipif(
    not has_dataset("sigcomm21-5g-variegated"), reason=skip_reason("sigcomm21-5g-variegated")
)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenarios_valid_and_initial_window_from_the_trace(name: str) -> None:
    from priolab.scenario import expand, load

    path = REPO / "scenarios" / name
    runs = expand(load(path), path)
    transports, paths, q_levels = SCENARIOS[name]
    assert {r.params.q_pct for r in runs} == q_levels  # type: ignore[attr-defined]
    assert {r.params.transport for r in runs} == transports  # type: ignore[attr-defined]
    sending = [r.params for r in runs if r.params.q_pct > 0]  # type: ignore[attr-defined]
    assert {p.unreliable_path for p in sending} == paths
    for r in runs:
        trace = r.link.downlink.trace  # type: ignore[union-attr]
        scale = r.params.scale  # type: ignore[attr-defined]
        assert trace.scale == scale  # the link and the content are rescaled together
        f = Path(trace.file)  # a data: reference, resolved when the scenario loaded
        rates = [float(line.split()[1]) for line in f.read_text().splitlines() if line.strip()]
        head = [x for x in rates[: int(r.duration_s) + 5] if x > 0]
        iw = r.params.initial_window  # type: ignore[attr-defined]
        assert iw.lowest_rate_mbps == pytest.approx(min(head) * scale)
        assert iw.rtt_ms == pytest.approx(2 * r.link.downlink.delay_ms)
