"""Analysis compares the schemes a scenario's `compare:` key names, not hard-coded ones."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.aggregate import aggregate
from ground.errors import ScenarioError
from priolab.scenario import expand, load
from priolab.workloads.rise.synthetic import SynthRun, run_path, write_run


def _tree(results: Path, compare: dict | None) -> Path:
    for k, scheme in enumerate(("fast", "slow")):
        delay_ms = 60.0 if scheme == "slow" else 20.0
        r = SynthRun(scenario="c", setting="s", scheme=scheme, speed="moderate", rep=1,
                     seed=k + 1, duration_s=2.0, delay_ms=delay_ms)  # fmt: skip
        d = write_run(run_path(results, r), r)
        meta = json.loads((d / "metadata.json").read_text())
        meta["run"]["compare"] = compare
        (d / "metadata.json").write_text(json.dumps(meta))
    aggregate(results / "c")
    return results / "c"


def test_the_reference_comes_from_the_scenario(tmp_path: Path) -> None:
    d = _tree(tmp_path, {"reference": "fast", "order": ["slow", "fast"],
                         "labels": {"slow": "Slow"}})  # fmt: skip
    ratios = pd.read_csv(d / "ratios.csv")
    assert set(ratios["reference"]) == {"fast"} and set(ratios["scheme"]) == {"slow"}
    md = (d / "summary.md").read_text()
    assert "| metric | slow | fast | slow ÷ fast |" in md
    mtp = pd.read_csv(d / "summary.csv").query("metric == 'mtp_median_ms'")
    v = dict(zip(mtp["scheme"], mtp["value"], strict=True))
    r = ratios.query("metric == 'mtp_median_ms'")["ratio"].iloc[0]
    assert r == pytest.approx(v["slow"] / v["fast"]) and r > 1.5


def test_without_the_key_nothing_is_compared(tmp_path: Path) -> None:
    d = _tree(tmp_path, None)
    assert pd.read_csv(d / "ratios.csv").empty
    assert "÷" not in (d / "summary.md").read_text()


def test_the_key_names_defined_schemes(write_scenario, standin_dict) -> None:
    standin_dict["schemes"] = {"a": {}, "b": {}}
    standin_dict["compare"] = {"reference": "c"}
    path = write_scenario(standin_dict)
    with pytest.raises(ScenarioError, match="compare.reference: 'c' is not defined under schemes"):
        load(path)
    standin_dict["compare"] = {"reference": "b", "order": ["b"]}
    path = write_scenario(standin_dict)
    run = expand(load(path), path)[0]
    assert run.to_json()["compare"] == {"reference": "b", "order": ["b", "a"], "labels": {}}
