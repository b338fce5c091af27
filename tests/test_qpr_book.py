"""QPR's claims (priolab/workloads/qpr/paper.py) on its results page: each reading of the
unreliable path is a row of its own claim from its own scenario and site, labelled; a claim
across two loss levels reads each side from its own setting; sessions the protocol lost
count at their worst; a gain of unstated size leaves out the no-effect margin."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis.claims import SAME_AS
from analysis.verdicts import judge
from book import results
from book.papers import PAPERS
from priolab.paths import REPO_ROOT

QPR = next(p for p in PAPERS if p.key == "qpr")
CLAIM = {c.key: c for c in QPR.claims}


def _scenario(tree: Path, name: str, site: str,
              cells: dict[tuple[str, str], dict[str, list[float]]]) -> None:  # fmt: skip
    """A results folder's scenario: one valid run per value of each (setting, scheme) cell,
    the metrics given, on `site`."""
    rows = []
    for (setting, scheme), metrics in cells.items():
        for rep in range(len(next(iter(metrics.values())))):
            run = tree / name / setting / scheme / "default" / f"r{rep + 1}"
            run.mkdir(parents=True)
            (run / "metadata.json").write_text(json.dumps({"site": {"kind": site}}))
            rows.append({"path": str(run), "setting": setting, "scheme": scheme,
                         "speed": "default", "rep": rep + 1,
                         **{k: v[rep] for k, v in metrics.items()}})  # fmt: skip
    (tree / name).mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(tree / name / "runs.csv", index=False)


def _five(x: float) -> dict[str, list[float]]:
    return {"throughput_mean_mbps": [x * k for k in (0.98, 0.99, 1.0, 1.01, 1.02)]}


def test_each_reading_is_a_labelled_row_from_its_own_scenario_and_site(tmp_path: Path) -> None:
    """The paper-text reading (qpr-5g, Mininet) is the primary row; the shared (sensitivity)
    and loss-blind (exploratory) readings come from qpr-readings on sim; qpr-quick's q100 (the
    shared path under another name) counts for none of them."""
    _scenario(
        tmp_path / "results",
        "qpr-5g",
        "mininet",
        {("driving-loss5", "q0"): _five(4.0), ("driving-loss5", "q100"): _five(9.0)},
    )
    _scenario(
        tmp_path / "results-sim",
        "qpr-readings",
        "sim",
        {
            ("driving-loss5", "q0"): _five(4.0),
            ("driving-loss5", "q100-shared"): _five(4.1),
            ("driving-loss5", "q100-lossblind"): _five(9.0),
        },
    )
    quick = {("driving-loss5", "q0"): _five(4.0), ("driving-loss5", "q100"): _five(20.0)}
    _scenario(tmp_path / "results-sim", "qpr-quick", "sim", quick)
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(QPR, [tmp_path / "results", tmp_path / "results-sim"], out, REPO_ROOT,
                        "abc")  # fmt: skip
    section = text.split('<a id="fig15-driving-5-q100"></a>')[1].split("<a id=")[0]
    rows = [x for x in section.splitlines() if x.startswith("| **")]
    assert [r.split(" · ")[0] for r in rows] == [
        "| **primary**",
        "| **sensitivity**",
        "| **sensitivity**",
        "| **exploratory**",
    ]
    primary, sim, shared, blind = rows
    assert "mininet · `scenarios/qpr-5g.yaml` driving-loss5, q100 ÷ q0" in primary
    assert primary.endswith("| reproduced |") and "| 2.25 [" in primary  # 9 ÷ 4
    assert sim.endswith("| not run |")  # qpr-5g has no sim runs here
    assert "`scenarios/qpr-readings.yaml` driving-loss5, q100-shared ÷ q0" in shared
    assert shared.endswith("| not reproduced |")  # 4.1 ÷ 4: no effect
    assert "q100-lossblind ÷ q0" in blind and blind.endswith("| reproduced |")
    assert "added as the reading under which the paper's driving-trace gains are possible" in (
        section)  # fmt: skip


def test_a_claim_across_two_loss_levels_reads_each_from_its_own_setting() -> None:
    """Q100's freezes at 5 % over its freezes at 0 % (Table 3: "no additional freezes"): the
    denominator's runs come from driving-loss0; at 10 % more freezes is not reproduced."""
    rows = []
    for setting, freezes in (("driving-loss0", 4.0), ("driving-loss5", 4.0),
                             ("driving-loss10", 9.0)):  # fmt: skip
        for rep in range(5):
            rows.append({"scenario": "qpr-5g", "setting": setting, "scheme": "q100",
                         "speed": "default", "site": "mininet", "valid": True,
                         "freezes": freezes + 0.1 * rep})  # fmt: skip
    r = pd.DataFrame(rows)
    same, worse = CLAIM["table3-q100-no-more-freezes"], CLAIM["q100-10pct-no-deterioration"]
    assert judge(same, same.primary, r, QPR.metrics).verdict.kind == "reproduced"
    j = judge(worse, worse.primary, r, QPR.metrics)
    assert j.verdict.kind == "not reproduced" and j.points[0].den.cell.setting == "driving-loss0"


def test_sessions_that_died_count_at_their_worst_and_the_page_says_how_many() -> None:
    """Q0 at 10 % loss: two of six sessions died. They count at 0 throughput and in the death
    rate the breakdown claim reads; the living sessions alone would flatter Q0."""
    rows = []
    for rep in range(6):
        died = rep < 2
        rows.append({"scenario": "qpr-5g", "setting": "driving-loss10", "scheme": "q0",
                     "speed": "default", "site": "mininet", "valid": True,
                     "session_failed": 1.0 if died else 0.0,
                     "throughput_mean_mbps": 3.0})  # fmt: skip
    r = pd.DataFrame(rows)
    breakdown = CLAIM["q0-q50-10pct-break-down"]
    j = judge(breakdown, breakdown.primary, r, QPR.metrics)
    q0 = j.points[0]
    assert q0.num.failed == 2 and abs(q0.value - 2 / 6) < 1e-12
    assert j.verdict.kind == "not run"  # Q25 and Q50 have no runs
    from analysis.verdicts import metric_values

    assert sorted(metric_values(r, "throughput_mean_mbps", QPR.metrics["throughput_mean_mbps"])
                  ) == [0.0, 0.0, 3.0, 3.0, 3.0, 3.0]  # fmt: skip


def test_a_gain_of_unstated_size_leaves_out_no_effect() -> None:
    """Every QPR claim the paper prints as "> 1×" or "< 1×" has a band beyond the same-as
    margin: a CI that holds 1 or lies within ±10 % of it is never reproduced."""
    strict = [c for c in QPR.claims if c.paper in ("> 1×", "< 1×")]
    assert len(strict) >= 8
    for c in strict:
        assert c.band.lo >= SAME_AS.hi or c.band.hi <= SAME_AS.lo, c.key
        assert c.direction in ("gain", "loss"), c.key
