"""The regime map (priolab.workloads.rise.regime_map, issue 22 item 9): its axes owned by
scenarios/maps/rise-loss-queue.yaml, its cells from runs, and the map drawn from the real
endpoints: the scenario cut to two cells and 8 s, run on the sim site through the real
priolab-sim and aggregated."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.aggregate import aggregate
from analysis.metrics import run_metrics
from ground import rundir
from priolab import cli
from priolab.paths import sim_binary
from priolab.scenario import expand, load
from priolab.workloads.rise import regime_map
from priolab.workloads.rise.rise_map import coordinates
from tests.conftest import REPO

SCENARIO = REPO / "scenarios" / "maps" / "rise-loss-queue.yaml"
REAL = sim_binary() if "PRIOLAB_SIM" not in os.environ else None
CELLS = ("L0-Q1", "L0.5-Q0.25")  # no loss at one BDP; the grid's heaviest loss, a short queue


def test_the_scenario_file_owns_the_axes() -> None:
    """Every run of the file lies on the map (its fixed point, iid or no loss, a drop-tail
    queue in BDP), its settings are the full loss × queue grid they name, and it runs the
    map's three schemes: nothing else holds a copy of the axes."""
    sc = load(SCENARIO)
    runs = expand(sc, SCENARIO)
    places = {}
    for r in runs:
        place = coordinates({"run": r.to_json()}, any_fifo_drop=True)
        assert place is not None and place[0] in ("none", "iid"), (r.setting, r.scheme)
        places.setdefault(r.setting, set()).add(place[1:])
    assert all(len(p) == 1 for p in places.values())  # a setting is one cell, every scheme
    cells = {s: p.pop() for s, p in places.items()}
    losses = sorted({loss for loss, _ in cells.values()})
    queues = sorted({q for _, q in cells.values()})
    assert len(losses) >= 3 and len(queues) >= 3 and 0.0 in losses
    assert sorted(cells.values()) == sorted((x, q) for x in losses for q in queues)
    assert all(name == f"L{x:g}-Q{q:g}" for name, (x, q) in cells.items())
    assert {r.scheme for r in runs} == set(regime_map.SCHEMES)
    assert len(runs) == len(cells) * len(regime_map.SCHEMES) * sc.repetitions


def _runs() -> pd.DataFrame:
    """Two runs per cell and scheme: no loss (alike), 0.05 % (w/o Pri slower and stalling),
    0.5 % (w/ Pri displays nothing after the warm-up)."""
    rows = []
    for rep in (1, 2):
        for loss, scheme, mtp, stall in (
            (0.0, "pri", 28.0, 0.0), (0.0, "nopri-tail", 28.0, 0.0), (0.0, "nopri", 28.0, 0.0),
            (0.05, "pri", 30.0, 0.0), (0.05, "nopri-tail", 300.0 if rep == 1 else 150.0, 2.0),
            (0.05, "nopri", 60.0, 0.0),
            (0.5, "pri", math.nan, 27.0), (0.5, "nopri-tail", 500.0, 9.0),
            (0.5, "nopri", 250.0, 27.0),
        ):  # fmt: skip
            rows.append({"loss_pct": loss, "queue_bdp": 1.0, "scheme": scheme, "rep": rep,
                         "mtp_median_ms": mtp, "stall_s": stall,
                         "displayed_fps": 0.0 if math.isnan(mtp) else 30.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_ratios_are_means_over_runs_and_zero_stalls_are_named() -> None:
    c = regime_map.cells(_runs()).set_index(["loss_pct", "queue_bdp"])
    assert c.loc[(0.0, 1.0), "mtp_ratio_nopri-tail"] == pytest.approx(1.0)
    assert c.loc[(0.0, 1.0), "stall_ratio_nopri-tail"] == 1.0  # neither stalls
    assert c.loc[(0.05, 1.0), "mtp_ratio_nopri-tail"] == pytest.approx(225.0 / 30.0)
    assert c.loc[(0.05, 1.0), "mtp_ratio_nopri"] == pytest.approx(2.0)
    assert math.isinf(c.loc[(0.05, 1.0), "stall_ratio_nopri-tail"])  # only the baseline stalls
    # w/ Pri displays nothing: no median to divide by, and its stall shows the collapse
    assert math.isnan(c.loc[(0.5, 1.0), "mtp_ratio_nopri-tail"])
    assert c.loc[(0.5, 1.0), "stall_ratio_nopri-tail"] == pytest.approx(9.0 / 27.0)
    assert c.loc[(0.5, 1.0), "displayed_fps_pri"] == 0.0


def test_the_figure_names_what_made_it(tmp_path: Path) -> None:
    paths = regime_map.draw(regime_map.cells(_runs()), tmp_path, 2, "Hand-made runs")
    assert [p.name for p in paths] == ["regime_map.png", "regime_map.pdf"]
    assert all(p.stat().st_size > 1000 for p in paths)
    caption = (tmp_path / "regime_map.txt").read_text()
    assert caption.startswith("Hand-made runs over uplink iid loss") and "2 run(s)" in caption


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
    for b in ("nopri", "nopri-tail"):
        assert cells[f"mtp_ratio_{b}"].notna().all()
    ideal = cells[cells["loss_pct"] == 0.0].iloc[0]
    # no loss, one BDP: the window carries the video, B stays empty, the schemes are alike
    assert 0.8 < ideal["mtp_ratio_nopri"] < 1.25, ideal.to_dict()
    assert ideal["displayed_fps_pri"] > 25
    for f in ("regime_map.png", "regime_map.pdf", "regime_map.txt"):
        assert (out / f).is_file()
    assert "real endpoints on the sim site" in (out / "regime_map.txt").read_text()
