"""The regime map from the real endpoints (priolab.workloads.rise.regime_map, issue 22 item 9):
scenarios/maps/rise-loss-queue.yaml cut to two cells and 8 s, run on the sim site through the
real priolab-sim, aggregated, and drawn as the predictor's map is."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.aggregate import aggregate
from analysis.metrics import run_metrics
from priolab import cli
from priolab.engine import rundir
from priolab.paths import sim_binary
from priolab.workloads.rise import regime_map
from tests.conftest import REPO

SCENARIO = REPO / "scenarios" / "maps" / "rise-loss-queue.yaml"
REAL = sim_binary() if "PRIOLAB_SIM" not in os.environ else None
CELLS = ("L0-Q1", "L0.5-Q0.25")  # no loss at one BDP; the grid's heaviest loss, a short queue


def test_the_grid_is_the_predictors() -> None:
    """The scenario spans the predictor grid's default axes and schemes (rise-sim main.rs)."""
    data = yaml.safe_load(SCENARIO.read_text())
    src = (REPO / "endpoints" / "rise-sim" / "src" / "main.rs").read_text()
    assert "vec![0.0, 0.02, 0.05, 0.1, 0.2, 0.5]" in src
    assert "vec![0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0]" in src
    names = {f"L{loss:g}-Q{q:g}" for loss in (0.0, 0.02, 0.05, 0.1, 0.2, 0.5)
             for q in (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)}  # fmt: skip
    assert set(data["settings"]) == names
    assert set(data["schemes"]) == set(regime_map.SCHEMES)


def test_a_missing_aggregate_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="runs.csv: no such file"):
        regime_map.main([str(tmp_path / "nothing"), str(tmp_path / "out")])


@pytest.mark.skipif(
    REAL is None or not REAL.is_file(),
    reason=f"priolab-sim is not built ({REAL}): `cargo build --release -p priolab-sim`",
)
def test_a_two_cell_map_from_real_sim_runs(tmp_path: Path) -> None:
    data = yaml.safe_load(SCENARIO.read_text())
    data.update(duration_s=8, repetitions=1)
    data["workload"]["params"]["warmup_s"] = 2
    data["settings"] = {k: data["settings"][k] for k in CELLS}
    scenario = tmp_path / "grid.yaml"
    scenario.write_text(yaml.safe_dump(data))
    results = tmp_path / "results"
    for setting in CELLS:
        for scheme in regime_map.SCHEMES:
            args = ["run-one", str(scenario), "--setting", setting, "--scheme", scheme,
                    "--speed", "moderate", "--rep", "1", "--site", "sim",
                    "--results", str(results)]  # fmt: skip
            assert cli.main(args) == 0
            run_metrics(rundir.run_dir(results, data["name"], setting, scheme, "moderate", 1))
    scenario_dir = results / data["name"]
    aggregate(scenario_dir)
    out = tmp_path / "map"
    assert regime_map.main([str(scenario_dir), str(out)]) == 0
    cells = pd.read_csv(out / "regime_map.csv")
    assert sorted(zip(cells["loss_pct"], cells["queue_bdp"], strict=True)) == [
        (0.0, 1.0), (0.5, 0.25)]  # fmt: skip
    for b in ("nopri-head", "nopri-tail"):
        assert cells[f"mtp_ratio_{b}"].notna().all()
    ideal = cells[cells["loss_pct"] == 0.0].iloc[0]
    # no loss, one BDP: the window carries the video, B stays empty, the schemes are alike
    assert 0.8 < ideal["mtp_ratio_nopri-head"] < 1.25, ideal.to_dict()
    assert ideal["displayed_fps_pri"] > 25
    for f in ("regime_map.png", "regime_map.pdf", "regime_map.txt"):
        assert (out / f).is_file()
    assert "real endpoints on the sim site" in (out / "regime_map.txt").read_text()
