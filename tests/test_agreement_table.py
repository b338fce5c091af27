"""book/agreement.py: the sim-vs-Mininet table from two results folders (the rule
`agreement` and the results book's page share it), on fake aggregated runs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from book import agreement
from priolab.paths import REPO_ROOT


def _runs(root: Path, name: str, site: str, points: dict[tuple[str, str], list[float]],
          metric: str) -> None:  # fmt: skip
    """A runs.csv under root/name as `analysis.aggregate` writes it, one valid run per value,
    each run folder's metadata.json naming its site."""
    rows = []
    for (setting, scheme), values in points.items():
        for rep, v in enumerate(values, 1):
            run = root / name / setting / scheme / "moderate" / f"r{rep}"
            run.mkdir(parents=True)
            (run / "metadata.json").write_text(json.dumps({"site": {"kind": site}}))
            rows.append({"path": str(run), "setting": setting, "scheme": scheme, metric: v})
    pd.DataFrame(rows).to_csv(root / name / "runs.csv", index=False)


def test_every_sim_workload_has_an_agreement_scenario_and_a_key_metric() -> None:
    kinds = agreement.agreement_scenarios(REPO_ROOT)
    assert sorted(kinds.values()) == ["dtp", "moq", "qpr", "rise", "roq"]
    assert set(agreement.KEY_METRIC) >= set(kinds.values())


def test_the_table_pairs_both_trees_and_gives_the_ratio_with_a_ci(tmp_path: Path) -> None:
    mininet, sim = tmp_path / "results", tmp_path / "results-sim"
    m = "mtp_p95_ms"
    _runs(mininet, "agree-rise", "mininet", {("L0.05", "pri"): [100, 104, 96, 102, 98]}, m)
    _runs(sim, "agree-rise", "sim", {("L0.05", "pri"): [90 + i % 3 for i in range(10)],
                                     ("ideal", "pri"): [50.0] * 10}, m)  # fmt: skip
    # a results-book scenario run on Mininet only: not a point of the table
    _runs(mininet, "quick", "mininet", {("FB-4K-Low", "pri"): [70.0, 71.0]}, m)
    md, csv = tmp_path / "out" / "agreement.md", tmp_path / "out" / "agreement.csv"
    argv = ["--mininet", str(mininet), "--sim", str(sim), "--md", str(md), "--csv", str(csv)]
    assert agreement.main(argv) == 0
    t = pd.read_csv(csv)
    assert list(zip(t["scenario"], t["setting"], t["scheme"], strict=True)) == [
        ("agree-rise", "ideal", "pri"), ("agree-rise", "L0.05", "pri")]  # fmt: skip
    wl = t[t["setting"] == "L0.05"].iloc[0]
    assert (wl["mininet_n"], wl["sim_n"], wl["metric"]) == (5, 10, m)
    assert wl["ratio"] == pytest.approx(90.9 / 100.0)
    assert wl["ratio_ci_low"] < wl["ratio"] < wl["ratio_ci_high"]
    assert wl["ratio_ci_high"] - wl["ratio_ci_low"] < 0.1
    ideal = t[t["setting"] == "ideal"].iloc[0]
    assert ideal["mininet_n"] == 0 and ideal["sim_n"] == 10 and pd.isna(ideal["ratio"])
    text = md.read_text()
    assert "| agree-rise | L0.05 | pri | `mtp_p95_ms` | 100 [" in text
    # ten sim runs that measured the same in everything are one result: the cell says so
    ideal_row = "| agree-rise | ideal | pri | `mtp_p95_ms` | – | 50 [50, 50] (10, all alike) | – |"
    assert ideal_row in text
    assert bool(ideal["sim_all_alike"]) and not wl["sim_all_alike"] and not wl["mininet_all_alike"]
    assert "no ratio yet" in text and "quick" not in text.split("|---|")[1]


def test_without_runs_the_page_says_what_fills_it(tmp_path: Path) -> None:
    src = agreement.sources([tmp_path / "a", tmp_path / "b"], {"quick": "rise"})
    text = agreement.page(src)
    assert (
        "No runs are present" in text and "agreement --config site=sim scenario=agreement" in text
    )
