"""[MoQ]'s claims on the MoQ results page (priolab/workloads/moq/paper.py, judged by
analysis/verdicts.py): the mechanism read off the runs (claims.py), and the page's verdicts
from hand-made runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.verdicts import judge
from book import results
from book.papers import PAPERS
from priolab.paths import REPO_ROOT
from priolab.workloads.moq.claims import backlog_where, waited

MOQ = next(p for p in PAPERS if p.key == "moq")
CLAIM = {c.key: c for c in MOQ.claims}


def _runs(col: str, values: list[float], **other: list[float]) -> pd.DataFrame:
    return pd.DataFrame({col: values, **other})


def test_backlog_where_says_where_the_frames_waited() -> None:
    runs = _runs("latency_I_max_ms", [400.0, 900.0, 800.0],
                 link_queue_delay_max_ms=[350.0, 800.0, 700.0])  # fmt: skip
    assert "link's FIFO queue" in backlog_where(runs, "latency_I_max_ms")
    assert "as the link counts" not in backlog_where(runs, "latency_I_max_ms")
    runs = runs.assign(link_load=[1.006] * 3, downlink_eth_mbps=[2.716] * 3,
                       link_rate_mbps=[2.7] * 3)  # fmt: skip
    text = backlog_where(runs, "latency_I_max_ms")
    assert "2.716 Mbit/s as the link counts it (IP + Ethernet), 100.6% of the 2.7 Mbit/s " in text
    assert "(above it)" in text
    runs["link_queue_delay_max_ms"] = [10.0, 12.0, 11.0]
    assert "in the publisher" in backlog_where(runs, "latency_I_max_ms")
    assert "not counted" in backlog_where(_runs("latency_I_max_ms", [1.0]), "latency_I_max_ms")
    why = waited("P")(runs.assign(latency_P_max_ms=[300.0] * 3), runs[:0])
    assert "largest P-frame latency is 300 [300, 300] ms" in why


def _rows(cells: dict[tuple[str, str, str], dict[str, list[float]]], site: str = "sim"
          ) -> pd.DataFrame:  # fmt: skip
    out = []
    for (scenario, setting, scheme), metrics in cells.items():
        n = len(next(iter(metrics.values())))
        for rep in range(n):
            out.append({"scenario": scenario, "setting": setting, "scheme": scheme,
                        "speed": "default", "rep": rep + 1, "site": site, "valid": True,
                        **{k: v[rep] for k, v in metrics.items()}})  # fmt: skip
    return pd.DataFrame(out)


def test_every_i_frame_on_time_and_a_lost_one() -> None:
    """The smallest budget with every I frame on time, per run, at each rate: ≤ 700 ms in every
    run is reproduced; a run that lost an I frame (NaN) is never on time."""
    c = CLAIM["fig6-i-on-time-700"]
    ok = {("moq-sports", r, "ft"): {"i_all_on_time_budget_ms": [400.0, 420.0, 410.0, 405.0,
                                                                415.0]}
          for r in ("2.7M", "2.85M", "3M")}  # fmt: skip
    assert judge(c, c.primary, _rows(ok), MOQ.metrics).verdict.kind == "reproduced"
    lost = dict(ok)
    lost[("moq-sports", "3M", "ft")] = {"i_all_on_time_budget_ms": [400.0, np.nan, 410.0,
                                                                    405.0, 415.0]}  # fmt: skip
    j = judge(c, c.primary, _rows(lost), MOQ.metrics)
    assert j.verdict.kind == "outside the band" and "3 Mbit/s" in j.verdict.detail


def test_the_latency_variation_claims_read_spreads_from_each_run() -> None:
    """A type's variation per run is its p95 − median latency (a derived metric): P ÷ I and
    B ÷ P above 1 at each rate; across rates the B frames' spread grows at 2.7 Mbit/s."""

    def spreads(i: float, p: float, b: float) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for t, s in (("I", i), ("P", p), ("B", b)):
            out[f"latency_{t}_median_ms"] = [100.0, 110.0, 120.0, 105.0, 115.0]
            med = out[f"latency_{t}_median_ms"]
            wobble = (1.0, 1.02, 0.98, 1.01, 0.99)
            out[f"latency_{t}_p95_ms"] = [m + s * k for m, k in zip(med, wobble, strict=True)]
        return out

    runs = _rows({("moq-sports", r, "ft"): spreads(20, 60, 400 if r == "2.7M" else 200)
                  for r in ("2.7M", "2.85M", "3M")})  # fmt: skip
    for key in ("figs6-9-spread-i-p", "figs6-9-spread-p-b", "fig8-b-spread-grows"):
        c = CLAIM[key]
        assert judge(c, c.primary, runs, MOQ.metrics).verdict.kind == "reproduced", key
    same_i = CLAIM["figs6-8-i-spread-same"]
    assert judge(same_i, same_i.primary, runs, MOQ.metrics).verdict.kind == "reproduced"


def test_the_moq_page_judges_each_claim_at_its_rates(tmp_path: Path) -> None:
    """moq-sports at 2.7M only, on the sim site: a claim over the three rates is not run
    until every rate ran; the setup claim reads moq-overhead alone."""
    res = tmp_path / "results-sim"
    for name, setting, scheme, metrics in (
        ("moq-sports", "2.7M", "ft", {"otdr_700ms": 0.9}),
        ("moq-sports", "2.7M", "fefs", {"otdr_700ms": 0.4}),
        ("moq-overhead", "x264-2.7-ip", "ft", {"clip_ip_mbps": 2.7}),
    ):
        d = res / name
        rows = []
        for rep in range(1, 6):
            run = d / setting / scheme / "default" / f"r{rep}"
            run.mkdir(parents=True)
            (run / "metadata.json").write_text(json.dumps({"site": {"kind": "sim"}}))
            rows.append(
                {
                    "path": str(run),
                    "setting": setting,
                    "scheme": scheme,
                    "speed": "default",
                    **{k: v + 0.001 * rep for k, v in metrics.items()},
                }
            )
        old = pd.read_csv(d / "runs.csv") if (d / "runs.csv").is_file() else pd.DataFrame()
        pd.concat([old, pd.DataFrame(rows)]).to_csv(d / "runs.csv", index=False)
    out = tmp_path / "docs"
    out.mkdir()
    text = results.page(MOQ, res, out, REPO_ROOT, "abc")
    setup = next(x for x in text.splitlines() if x.startswith("| [Experimental Setup]"))
    assert setup.endswith("| **reproduced** |") and ", n 5 |" in setup
    fig10 = next(
        x
        for x in text.splitlines()
        if x.startswith("| [Fig. 10, concluding remarks](#fig10-ft-above-fefs-700ms)")
    )
    assert fig10.endswith("| **not run** |")  # 2.85 and 3 Mbit/s have no runs
    section = text.split('<a id="fig10-ft-above-fefs-700ms"></a>')[1].split("<a id=")[0]
    assert "site=sim scenario=scenarios/moq-sports.yaml reps=10 -- results-sim/moq-sports/" in (
        section)  # fmt: skip
