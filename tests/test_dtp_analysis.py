"""The `dtp` workload's analysis on hand-made run folders (blocks table, metrics, figures,
table), its plan (argv) and parameter checks, and the shipped scenarios."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from analysis.logs import AnalysisError
from priolab.scenario import load as load_scenario
from priolab.workloads.base import Pair, RunContext
from priolab.workloads.dtp.analysis import ANALYSIS, blocks_table, metrics, window_ratios
from priolab.workloads.dtp.figures import make_figures
from priolab.workloads.dtp.workload import Dtp, DtpParams
from tests.conftest import REPO

T0 = 1_700_000_000_000_000
SENT = ("block_id,round,priority,payload_bytes,created_us,deadline_us,first_send_us,end_us,"
        "sent_bytes,outcome")  # fmt: skip
RECV = ("block_id,priority,payload_bytes,created_us,deadline_us,first_byte_us,end_us,"
        "received_bytes,status")  # fmt: skip


def _write_run(d: Path, scheme: str, fates: list[tuple[str, str, float]]) -> None:
    """fates per block (3 per round, 100 ms apart, 1000 B, deadline 200 ms):
    (sender outcome, receiver status or 'never', completion ms)."""
    (d / "host").mkdir(parents=True)
    (d / "guest").mkdir()
    sent, got = [SENT], [RECV]
    for i, (outcome, status, ms) in enumerate(fates):
        created = T0 + (i // 3) * 100_000
        sb = 1036 if outcome == "sent" else 500
        sent.append(
            f"{i},{i // 3},{i % 3 + 1},1000,{created},200000,{created},{created},{sb},{outcome}"
        )
        if status != "never":
            end = created + int(ms * 1000)
            got.append(f"{i},{i % 3 + 1},1000,{created},200000,{created},{end},1000,{status}")
    (d / "host" / "blocks_sent.csv").write_text("\n".join(sent) + "\n")
    (d / "guest" / "blocks_received.csv").write_text("\n".join(got) + "\n")
    (d / "host" / "summary.json").write_text(json.dumps({"sent_packets": 200, "lost_packets": 2}))
    meta = {"valid": True, "invalid_reasons": [], "run": {
        "duration_s": 1.0, "setting": "2MBps", "scheme": scheme,
        "workload": {"kind": "dtp", "scheme": "ads" if scheme == "dtp" else "quic"}}}  # fmt: skip
    (d / "metadata.json").write_text(json.dumps(meta))


GOOD = [("sent", "complete", 50.0)] * 3
QUIC = [("sent", "complete", 150.0), ("sent", "complete", 250.0), ("pending", "never", 0.0)]
DTP = [("sent", "complete", 80.0), ("sent", "complete", 190.0), ("dropped", "reset", 0.0)]


def test_blocks_and_metrics(tmp_path: Path) -> None:
    _write_run(tmp_path, "quic", QUIC * 10 + GOOD * 10)
    b = blocks_table(tmp_path)
    assert len(b) == 60
    assert list(b["on_time"][:3]) == [True, False, False]  # 250 ms > 200 ms; never arrived
    assert math.isnan(b["completion_ms"][2])
    assert b["created_s"][3] == pytest.approx(0.1)
    m = metrics(b, {"sent_packets": 200, "lost_packets": 2})
    assert m["blocks_released"] == 60
    assert m["deadline_ratio"] == pytest.approx((10 + 30) / 60)
    assert m["deadline_ratio_p1"] == 1.0
    assert m["deadline_ratio_p2"] == pytest.approx(0.5)
    assert m["deadline_ratio_p3"] == pytest.approx(0.5)
    # good bytes: on-time blocks (1036 each) / everything handed over
    sent = 50 * 1036 + 10 * 500
    assert m["good_bytes_ratio"] == pytest.approx(40 * 1036 / sent)
    assert m["pending_pct"] == pytest.approx(100 * 10 / 60)
    assert m["dropped_pct"] == 0
    assert m["lost_packets_pct"] == pytest.approx(1.0)
    assert math.isnan(m["redundancy_overhead_pct"])  # the sender said nothing of parity
    m = metrics(b.assign(recovered_bytes=[100.0] * 6 + [0.0] * 54),
                {"parity_bytes": 30, "block_bytes_written": 1000})  # fmt: skip
    assert m["redundancy_overhead_pct"] == pytest.approx(3.0)
    assert m["recovered_pct"] == pytest.approx(10.0)
    # 1 s windows: the first (rounds 0-9) has QUIC's pattern, the second all on time
    w = window_ratios(b)
    assert list(w["ratio"]) == pytest.approx([1 / 3, 1.0])
    assert m["window_ratio_min"] == pytest.approx(1 / 3)


def test_malformed_logs_name_the_file(tmp_path: Path) -> None:
    _write_run(tmp_path, "dtp", DTP)
    (tmp_path / "guest" / "blocks_received.csv").write_text("block_id,end_us\n0,1\n")
    with pytest.raises(AnalysisError, match="blocks_received.csv: columns"):
        blocks_table(tmp_path)
    (tmp_path / "host" / "blocks_sent.csv").unlink()
    with pytest.raises(AnalysisError, match="blocks_sent.csv: missing"):
        blocks_table(tmp_path)


def test_figures_and_table(tmp_path: Path) -> None:
    root = tmp_path / "dtp-bandwidth"
    rows = []
    for scheme, fates in (("quic", QUIC), ("dtp", DTP)):
        for rep in (1, 2):
            d = root / "2MBps" / scheme / "cubic" / f"r{rep}"
            _write_run(d, scheme, fates * 20)
            m, _ = ANALYSIS.metrics(d, {}, d / "tables")
            assert (d / "tables" / "dtp_blocks.parquet").is_file()
            rows.append({"setting": "2MBps", "setting_label": "2MBps", "scheme": scheme,
                         "path": str(d), **m})  # fmt: skip
    pngs, skipped = make_figures(pd.DataFrame(rows), root)
    assert {p.stem for p in pngs} == {"dtp_deadline", "dtp_good_bytes", "dtp_windows"}
    assert not skipped
    table = (root / "dtp_table.md").read_text()
    assert "| 2MBps | dtp | 0.667 [0.667, 0.667] (2)" in table
    assert "| 2MBps | quic | 0.333 [0.333, 0.333] (2)" in table


def test_sweep_panels_group_settings_by_speed() -> None:
    from priolab.workloads.dtp.figures import by_speed, setting_key

    labels = sorted(["10MBps/cubic", "2MBps/bbr", "2MBps/cubic", "10MBps/bbr"], key=setting_key)
    assert by_speed(labels) == {
        "bbr": ["2MBps/bbr", "10MBps/bbr"],
        "cubic": ["2MBps/cubic", "10MBps/cubic"],
    }
    assert by_speed(["loss1", "loss5"]) == {"": ["loss1", "loss5"]}


def _ctx(tmp_path: Path) -> RunContext:
    pair = Pair("guest", "host", "10.0.0.1", "10.0.0.2")
    return RunContext(tmp_path, 4.0, 1, tmp_path, (pair,))


def test_plan_argv(tmp_path: Path) -> None:
    p = DtpParams(scheme="ads", alpha=1.0, block_bytes=[100, 200], cc="bbr")
    specs = Dtp().plan(p, _ctx(tmp_path))
    assert [s.name for s in specs] == ["dtp-sender", "dtp-receiver"]
    snd, rcv = specs[0].argv, specs[1].argv
    assert snd[snd.index("--alpha") + 1] == "1"
    assert snd[snd.index("--block-bytes") + 1] == "100,200"
    assert "--beta" not in snd
    assert rcv[rcv.index("--connect") + 1] == "10.0.0.2:4444"
    assert specs[1].wait_for_file == tmp_path / "host" / "cert.der"
    assert rcv[rcv.index("--cc") + 1] == "bbr"


def test_quic_and_its_fifo_variant_reach_the_sender(tmp_path: Path) -> None:
    for scheme in ("quic", "quic-fifo"):
        snd = Dtp().plan(DtpParams(scheme=scheme), _ctx(tmp_path))[0].argv
        assert snd[snd.index("--scheme") + 1] == scheme
    with pytest.raises(ValueError):
        DtpParams(scheme="fifo")  # type: ignore[arg-type]


def test_checks(tmp_path: Path) -> None:
    assert Dtp().check(DtpParams(), tmp_path) == []
    bad = Dtp().check(DtpParams(deadline_ms=2000, drain_s=1.0), tmp_path)
    assert [k for k, _ in bad] == ["drain_s"]
    with pytest.raises(ValueError):
        DtpParams(alpha=1.5)


@pytest.mark.parametrize(
    "name",
    [
        "dtp-bandwidth",
        "dtp-dynamic",
        "dtp-loss",
        "dtp-loss-tail",
        "dtp-loss-small",
        "dtp-quick",
        "dtp-quick-loss",
    ],
)
def test_shipped_scenarios_load(name: str) -> None:
    sc = load_scenario(REPO / "scenarios" / f"{name}.yaml")
    assert sc.workload.kind == "dtp"
    assert sc.compare is not None and sc.compare.reference == "quic"


def _runs(name: str) -> dict[tuple[str, str, str], tuple[dict, dict]]:
    from priolab.scenario import expand

    f = REPO / "scenarios" / f"{name}.yaml"
    return {(r.setting, r.scheme, r.speed): (r.params.model_dump(mode="json"),
                                             r.link.model_dump(mode="json"))
            for r in expand(load_scenario(f), f) if r.rep == 1}  # fmt: skip


@pytest.mark.parametrize(
    ("quick", "full", "pairs"),
    [
        ("dtp-quick", "dtp-bandwidth", {"3MBps": "3MBps", "6MBps": "6MBps"}),
        ("dtp-quick", "dtp-dynamic", {"12-4-12MBps": "12-4-12MBps"}),
        ("dtp-quick-loss", "dtp-loss-small", {"loss10-1KB": "loss10"}),
        ("dtp-quick-loss", "dtp-loss", {"loss10-100KB": "loss10"}),
    ],
)
def test_quick_scenarios_run_what_the_full_files_run(
    quick: str, full: str, pairs: dict[str, str]
) -> None:
    """A quick file reduces only the duration, repetitions and matrix: each of its runs has
    the workload parameters and link of the full file's run at the same point (the dynamic
    trace excepted, whose steps are compressed to fit the short run)."""
    q, f = _runs(quick), _runs(full)
    seen = 0
    for (setting, scheme, speed), (params, link) in q.items():
        if setting not in pairs:
            continue
        fparams, flink = f[(pairs[setting], scheme, speed)]
        assert params == fparams, (setting, scheme, speed)
        if link["downlink"]["trace"] is not None:
            assert Path(link["downlink"]["trace"]["file"]).name != Path(
                flink["downlink"]["trace"]["file"]).name  # fmt: skip
            link["downlink"]["trace"]["file"] = flink["downlink"]["trace"]["file"]
        assert link == flink, (setting, scheme, speed)
        seen += 1
    assert seen >= 5


def test_loss_tail_puts_a_rounds_tail_within_two_rtt_of_its_deadline() -> None:
    """dtp-loss-tail.yaml's derivation (its header): redundancy starts for data with less than
    2 RTT to its deadline ([DTP §III-C]), and the paper says only a round's tail got it;
    so deadline - one-way delay - 2 RTT lies inside the time a round takes at the link rate,
    and the link carries the blocks at the sweep's top loss (20 %). dtp-loss.yaml's 200 ms
    deadline does not satisfy it (why it separates no scheme)."""

    def window(name: str) -> tuple[float, float, float]:
        runs = _runs(name)
        params, link = next(iter(runs.values()))
        rate_bytes_ms = link["downlink"]["rate_mbps"] * 1e6 / 8 / 1e3
        owd_ms = link["downlink"]["delay_ms"]
        rtt_ms = owd_ms + link["uplink"]["delay_ms"]
        round_bytes = sum(params["block_bytes"])
        send_ms = round_bytes / rate_bytes_ms
        first_protected_ms = params["deadline_ms"] - owd_ms - 2 * rtt_ms
        need = round_bytes / params["interval_ms"] / (1 - 0.20)
        return first_protected_ms, send_ms, rate_bytes_ms / need

    protected, send, headroom = window("dtp-loss-tail")
    assert 0 < protected < send, (protected, send)
    assert headroom > 1.0
    protected, send, _ = window("dtp-loss")
    assert protected > send  # every byte leaves with > 2 RTT to go: nothing to protect


def test_runs_table_carries_the_deadline_the_claims_reasons_quote(tmp_path: Path) -> None:
    """runs.csv has each run's deadline (a run column), so the results page's reason for a
    verdict (priolab/workloads/dtp/claims.py) can set the median completion beside it."""
    from analysis.aggregate import aggregate
    from priolab.workloads.dtp.claims import fates

    root = tmp_path / "dtp-bandwidth"
    for scheme, blocks in (("quic", QUIC), ("dtp", DTP)):
        d = root / "2MBps" / scheme / "cubic" / "r1"
        _write_run(d, scheme, blocks * 20)
        meta = json.loads((d / "metadata.json").read_text())
        meta["run"]["workload"]["deadline_ms"] = 200
        (d / "metadata.json").write_text(json.dumps(meta))
    aggregate(root)
    runs = pd.read_csv(root / "runs.csv")
    assert list(runs["deadline_ms"]) == [200, 200]
    quic = fates(runs[runs["scheme"] == "quic"])
    assert quic.startswith("quic: 33.3 % of blocks on time, 0.0 % dropped by the sender, ")
    assert "33.3 % still queued at the end" in quic and "(deadline 200 ms)" in quic
