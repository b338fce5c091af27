"""[MoQ]'s claims on the MoQ results page (book/papers.py MOQ, judged by
priolab/workloads/moq/claims.py): verdicts from hand-made runs, and the page's rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.judged import standard
from book import results
from book.papers import BELOW_1, MOQ
from priolab.paths import REPO_ROOT
from priolab.workloads.moq.claims import (
    all_i_on_time,
    backlog_where,
    scheme_gain,
    spread_order,
    waited,
    within,
)


def _runs(col: str, values: list[float], **other: list[float]) -> pd.DataFrame:
    return pd.DataFrame({col: values, **other})


def test_every_i_frame_on_time_in_every_run_is_reproduced() -> None:
    j = all_i_on_time(700)(_runs("i_all_on_time_budget_ms", [400, 650, 700]), pd.DataFrame())
    assert j.verdict == "reproduced: every I frame on time in all 3 runs"
    assert j.n == "3" and j.value.startswith("583 [") and "worst run 700 ms" in j.value


def test_one_late_or_lost_i_frame_is_not_reproduced_and_says_where_it_waited() -> None:
    runs = _runs("i_all_on_time_budget_ms", [400, 900, np.nan],
                 latency_I_max_ms=[400.0, 900.0, 800.0],
                 link_queue_delay_max_ms=[350.0, 800.0, 700.0])  # fmt: skip
    v = all_i_on_time(700)(runs, pd.DataFrame()).verdict
    assert v.startswith("not reproduced, because in 2 of 3 runs an I frame")
    assert "1 of 3 runs lost an I frame" in v and "link's FIFO queue" in v
    assert "as the link counts" not in v  # no load measured: none claimed
    runs = runs.assign(link_load=[1.006] * 3, downlink_eth_mbps=[2.716] * 3,
                       link_rate_mbps=[2.7] * 3)  # fmt: skip
    v = all_i_on_time(700)(runs, pd.DataFrame()).verdict
    assert "2.716 Mbit/s as the link counts it (IP + Ethernet), 100.6% of the 2.7 Mbit/s " in v
    assert "(above it)" in v
    # the link's queue held little: the frames waited in the publisher
    runs["link_queue_delay_max_ms"] = [10.0, 12.0, 11.0]
    assert "in the publisher" in all_i_on_time(700)(runs, pd.DataFrame()).verdict


def test_backlog_where_without_counters_says_so() -> None:
    assert "not counted" in backlog_where(_runs("latency_I_max_ms", [1.0]), "latency_I_max_ms")


def test_ft_gain_over_fefs_reproduced_differs_or_not() -> None:
    q = {"latency_I_max_ms": [500.0] * 3, "link_queue_delay_max_ms": [450.0] * 3}
    ft = _runs("otdr_700ms", [0.9, 0.92, 0.91], **q)
    fefs = _runs("otdr_700ms", [0.5, 0.52, 0.51], **q)
    assert scheme_gain("otdr_700ms")(ft, fefs).verdict == "reproduced"
    same = scheme_gain("otdr_700ms")(fefs, fefs.assign(otdr_700ms=[0.52, 0.5, 0.51])).verdict
    assert same.startswith("differs (no gain: the CI holds 1), because FT displays 0.510")
    lower = scheme_gain("otdr_700ms")(fefs, ft).verdict
    assert lower.startswith("not reproduced (FT lower), because")
    assert scheme_gain("otdr_700ms")(ft, fefs).n == "3+3"


def test_a_setup_value_within_its_range() -> None:
    j = within(2.619, 2.781, "clip_ip_mbps", "Mbit/s")
    assert j(_runs("clip_ip_mbps", [2.70, 2.71, 2.69]), pd.DataFrame()).verdict == "reproduced"
    assert j(_runs("clip_ip_mbps", [2.9, 2.91]), pd.DataFrame()).verdict.startswith("differs")
    assert j(_runs("clip_ip_mbps", [2.7]), pd.DataFrame()).value.endswith("(n=1, no CI) Mbit/s")


def _fake_moq(res: Path) -> None:
    """moq-sports at 2.7M, FT and FEFS, 3 runs each; moq-overhead's new clip, FT, 2 runs."""
    for name, setting, rows in (
        ("moq-sports", "2.7M", [("ft", {"i_all_on_time_budget_ms": 600.0, "otdr_700ms": 0.9}),
                                ("fefs", {"i_all_on_time_budget_ms": 2000.0,
                                          "otdr_700ms": 0.4})]),
        ("moq-overhead", "x264-2.7-ip", [("ft", {"clip_ip_mbps": 2.7})]),
    ):  # fmt: skip
        out = []
        for scheme, metrics in rows:
            for rep in (1, 2, 3):
                run = res / name / setting / scheme / "default" / f"r{rep}"
                run.mkdir(parents=True)
                meta = {"site": {"kind": "sim"}, "git": {"commit": "b" * 40, "dirty": False}}
                (run / "metadata.json").write_text(json.dumps(meta))
                wobble = {k: v + 0.001 * rep for k, v in metrics.items()}
                queue = {"latency_I_max_ms": 600.0, "link_queue_delay_max_ms": 20.0}
                out.append({"path": str(run), "setting": setting, "scheme": scheme,
                            **wobble, **queue})  # fmt: skip
        pd.DataFrame(out).to_csv(res / name / "runs.csv", index=False)


def test_the_moq_page_judges_each_claim_per_rate(tmp_path: Path) -> None:
    _fake_moq(tmp_path / "results")
    out = tmp_path / "docs"
    out.mkdir()
    text = results.page(MOQ, tmp_path / "results", out, REPO_ROOT, "abc")
    rows = [line for line in text.splitlines() if line.startswith("| Fig. ")]
    fig6 = next(r for r in rows if r.startswith("| Fig. 6") and "2.7M" in r)
    assert "| 3 | sim | `scenarios/moq-sports.yaml` | 2.7M | reproduced: every I frame" in fig6
    fig10 = next(r for r in rows if r.startswith("| Fig. 10") and "2.7M" in r)
    assert "| 3+3 | sim |" in fig10 and fig10.endswith("| reproduced |")
    # 2.85M and 3M did not run: said so, not left out
    assert sum("not run" in r for r in rows if r.startswith(("| Fig. 6 ", "| Fig. 10 "))) == 4
    # the fake runs carry no per-type latencies or OTDRs: Figs. 6-9, 7 and 8 are rows, not run
    later = [
        r for r in text.splitlines() if r.startswith(("| Figs. 6-9 ", "| Fig. 7 ", "| Fig. 8 "))
    ]
    assert len(later) == 9 and all("| not run |" in r for r in later)
    setup = next(line for line in text.splitlines() if line.startswith("| Experimental Setup"))
    assert "`scenarios/moq-overhead.yaml` | x264-2.7-ip | reproduced |" in setup
    assert "moq-sports" not in setup


def _spreads(i: float, p: float, b: float) -> pd.DataFrame:
    """Three runs whose p95 − median latency spreads are about i, p and b ms per type."""
    rows = {}
    for t, s in (("I", i), ("P", p), ("B", b)):
        rows[f"latency_{t}_median_ms"] = [100.0, 110.0, 120.0]
        rows[f"latency_{t}_p95_ms"] = [100.0 + s, 110.0 + s * 1.1, 120.0 + s * 0.9]
    rows["latency_B_max_ms"] = [900.0] * 3
    rows["link_queue_delay_max_ms"] = [800.0] * 3
    return pd.DataFrame(rows)


def test_latency_variation_smallest_for_i_largest_for_b() -> None:
    j = spread_order(_spreads(20, 60, 400), pd.DataFrame())
    assert j.verdict == "reproduced" and j.n == "3"
    assert j.value.startswith("I 20 [") and j.value.endswith(" ms (p95 − median)")
    v = spread_order(_spreads(60, 20, 400), pd.DataFrame()).verdict
    assert v.startswith("not reproduced, because P ÷ I 0.333 [") and "link's FIFO queue" in v
    v = spread_order(_spreads(20, 60, 61), pd.DataFrame()).verdict
    assert v.startswith("differs (a CI holds 1), because")
    assert spread_order(pd.DataFrame({"x": [1.0]}), pd.DataFrame()).verdict == "not run"


def test_a_share_of_late_frames_is_explained_by_where_they_waited() -> None:
    runs = pd.DataFrame({"otdr_P_700ms": [1.0, 1.0, 1.0], "latency_P_max_ms": [300.0] * 3,
                         "link_queue_delay_max_ms": [20.0] * 3})  # fmt: skip
    j = standard(0.0, BELOW_1, "otdr_P_700ms", False, "< 1", waited("P"))(runs, pd.DataFrame())
    assert j.verdict.startswith("not reproduced (CI above the paper's < 1), because the largest ")
    assert "P-frame latency is 300 [300, 300] ms" in j.verdict and "in the publisher" in j.verdict
    some = runs.assign(otdr_P_700ms=[0.97, 0.98, 0.99])
    assert (
        standard(0.0, BELOW_1, "otdr_P_700ms", False, "< 1", waited("P"))(
            some, pd.DataFrame()
        ).verdict
        == "reproduced"
    )
