"""The regime map from the real endpoints on the sim site (issue 22 item 9): the predictor
map's cells and figure, made from runs of scenarios/maps/rise-loss-queue.yaml instead of
endpoints/rise-sim's model of quinn.

    python -m priolab.workloads.rise.regime_map SCENARIO_DIR OUT_DIR

SCENARIO_DIR is the aggregated scenario (runs.csv, one row per valid run). Each run's place on
the map (uplink loss %, queue in BDP) comes from its metadata.json (`rise_map.coordinates`, so
a run off the map's fixed point is left out, not misplaced); its schemes map onto the
predictor's: `pri`, `nopri` (vanilla quinn, head drop) and `nopri-tail`. The cells are the
predictor map's (`predictor_map.cells`: per cell the mean over runs and the ratios baseline ÷
w/ Pri), written as OUT_DIR/regime_map.csv with the figure regime_map.png/.pdf/.txt, so the
map and the reproduction report read them as they read the predictor's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from priolab.engine import rundir
from priolab.workloads.rise.predictor_map import cells, draw
from priolab.workloads.rise.rise_map import coordinates

SCHEMES = {"pri": "pri", "nopri": "nopri-head", "nopri-tail": "nopri-tail"}  # ours: predictor's


def grid_runs(scenario_dir: Path) -> pd.DataFrame:
    """One row per valid run on the map: loss, queue, scheme (the predictor's names), rep and
    the three metrics the map draws."""
    runs_csv = scenario_dir / "runs.csv"
    if not runs_csv.is_file():
        raise SystemExit(f"error: {runs_csv}: no such file (aggregate the scenario first)")
    runs = pd.read_csv(runs_csv)
    rows = []
    for r in runs.itertuples(index=False):
        if r.scheme not in SCHEMES:
            continue
        meta = json.loads((Path(str(r.path)) / rundir.METADATA).read_text())
        place = coordinates(meta, any_fifo_drop=True)
        if place is None or place[0] not in ("none", "iid"):
            continue
        rows.append({
            "loss_pct": place[1], "queue_bdp": place[2], "scheme": SCHEMES[str(r.scheme)],
            "seed": int(r.rep), "mtp_median_ms": float(r.mtp_median_ms),
            "stall_s": float(r.stall_time_s), "displayed_fps": float(r.displayed_fps),
        })  # fmt: skip
    if not rows:
        raise SystemExit(f"error: {runs_csv}: no valid run on the map's axes")
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m priolab.workloads.rise.regime_map", description=__doc__
    )
    ap.add_argument("scenario_dir", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args(argv)
    runs = grid_runs(args.scenario_dir)
    c = cells(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    c.to_csv(args.out / "regime_map.csv", index=False)
    source = f"The real endpoints on the sim site ({args.scenario_dir.name})"
    for p in draw(c, args.out, int(runs["seed"].nunique()), "regime_map", source):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
