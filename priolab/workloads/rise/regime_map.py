"""The regime map (issue 22 item 9): where prioritisation matters, from the real endpoints
and the real quinn on the sim site.

    python -m priolab.workloads.rise.regime_map SCENARIO_DIR OUT_DIR

SCENARIO_DIR is an aggregated scenario (runs.csv, one row per valid run) whose settings span
the map's axes: scenarios/maps/rise-loss-queue.yaml (`snakemake --cores 2 regime_map --config
site=sim scenario=scenarios/maps`) is the one file that says which loss and queue values the
map has. Each run's place on the map (uplink loss %, queue in BDP) comes from its
metadata.json (`rise_map.coordinates`, so a run off the map's fixed point is left out, not
misplaced). Per cell, the mean over runs of each scheme's Guest median MTP, stall time and
displayed fps; the figure shows, for each baseline (w/o Pri with tail drop in the channels;
vanilla quinn with head drop), the ratio baseline ÷ w/ Pri of the median MTP and of the stall
time. A stall ratio is shown only where w/ Pri stalls (x/0 is marked ∞, 0/0 is 1).

Writes OUT_DIR/regime_map.csv (the cells, read by `rise_map` and the reproduction report) and
the figure regime_map.png/.pdf/.txt.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

from ground import rundir
from priolab.workloads.rise.rise_map import coordinates

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.figures import save  # noqa: E402

REFERENCE = "pri"
# the baselines the map compares with w/ Pri, in the figure's row order
BASELINES = {
    "nopri-tail": "w/o Pri (tail drop)",
    "nopri": "vanilla quinn (head drop)",
}
SCHEMES = (REFERENCE, *BASELINES)


def grid_runs(scenario_dir: Path) -> pd.DataFrame:
    """One row per valid run on the map: loss, queue, scheme, rep and the three metrics the
    map draws."""
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
            "loss_pct": place[1], "queue_bdp": place[2], "scheme": str(r.scheme),
            "rep": int(r.rep), "mtp_median_ms": float(r.mtp_median_ms),
            "stall_s": float(r.stall_time_s), "displayed_fps": float(r.displayed_fps),
        })  # fmt: skip
    if not rows:
        raise SystemExit(f"error: {runs_csv}: no valid run on the map's axes")
    return pd.DataFrame(rows)


def cells(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean over runs per (loss, queue, scheme), and the ratios to w/ Pri per baseline."""
    m = runs.groupby(["loss_pct", "queue_bdp", "scheme"], as_index=False)[
        ["mtp_median_ms", "stall_s", "displayed_fps"]
    ].mean()
    wide = m.pivot_table(index=["loss_pct", "queue_bdp"], columns="scheme")
    out = pd.DataFrame(index=wide.index)
    for b in BASELINES:
        if ("mtp_median_ms", b) not in wide or ("mtp_median_ms", REFERENCE) not in wide:
            continue
        out[f"mtp_ratio_{b}"] = wide[("mtp_median_ms", b)] / wide[("mtp_median_ms", REFERENCE)]
        sb, sp = wide[("stall_s", b)], wide[("stall_s", REFERENCE)]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"stall_ratio_{b}"] = np.where(sp > 0, sb / sp, np.where(sb > 0, np.inf, 1.0))
    for s in sorted(m["scheme"].unique()):
        out[f"mtp_median_ms_{s}"] = wide[("mtp_median_ms", s)]
        out[f"stall_s_{s}"] = wide[("stall_s", s)]
        out[f"displayed_fps_{s}"] = wide[("displayed_fps", s)]
    return out.reset_index()


def _frame(ax: plt.Axes, im: Any, grid: pd.DataFrame, title: str) -> None:
    """Ticks (queue across, loss down), labels, title and colour bar of one map panel."""
    ax.set_xticks(range(grid.shape[1]), [f"{q:g}" for q in grid.columns])
    ax.set_yticks(range(grid.shape[0]), [f"{p:g}" for p in grid.index])
    ax.set_xlabel("uplink queue (× BDP)")
    ax.set_ylabel("uplink iid loss (%)")
    ax.set_title(title, fontsize=9)
    plt.colorbar(im, ax=ax, shrink=0.8)


def _heat(ax: plt.Axes, c: pd.DataFrame, col: str, title: str) -> None:
    grid = c.pivot(index="loss_pct", columns="queue_bdp", values=col).sort_index(ascending=False)
    v = grid.to_numpy(dtype=float)
    finite = v[np.isfinite(v) & (v > 0)]
    hi = max(10.0, float(finite.max())) if finite.size else 10.0
    norm = mcolors.LogNorm(vmin=1 / hi, vmax=hi)
    shown = np.where(np.isfinite(v) & (v > 0), v, np.nan)
    im = ax.imshow(shown, cmap="RdBu_r", norm=norm, aspect="auto")
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            x = v[i, j]
            # NaN: w/ Pri displayed no frame after the warm-up (no median to divide by)
            txt = "∞" if np.isinf(x) else ("none" if np.isnan(x) else f"{x:.2g}")
            ax.text(j, i, txt, ha="center", va="center", fontsize=7)
    _frame(ax, im, grid, title)


def _fps(ax: plt.Axes, c: pd.DataFrame, scheme: str, title: str) -> None:
    grid = c.pivot(index="loss_pct", columns="queue_bdp", values=f"displayed_fps_{scheme}")
    grid = grid.sort_index(ascending=False)
    v = grid.to_numpy(dtype=float)
    im = ax.imshow(v, cmap="viridis", vmin=0, aspect="auto")
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            ax.text(j, i, f"{v[i, j]:.0f}", ha="center", va="center", fontsize=7, color="w")
    _frame(ax, im, grid, title)


def draw(c: pd.DataFrame, out: Path, n_reps: int, source: str) -> list[Path]:
    """The map's figure; `source` is the caption's first sentence (what made the cells)."""
    bases = [b for b in BASELINES if f"mtp_ratio_{b}" in c]
    fig, axes = plt.subplots(len(bases), 3, figsize=(16, 4 * len(bases)), squeeze=False)
    for r, b in enumerate(bases):
        _heat(axes[r][0], c, f"mtp_ratio_{b}", f"median MTP: {BASELINES[b]} / w/ Pri")
        _heat(axes[r][1], c, f"stall_ratio_{b}", f"stall time: {BASELINES[b]} / w/ Pri")
        fps_scheme = b if r else REFERENCE
        fps_label = BASELINES[b] if r else "w/ Pri"
        _fps(axes[r][2], c, fps_scheme, f"displayed fps: {fps_label}")
    caption = (
        f"{source} over uplink iid loss × uplink drop-tail queue depth, FB/4K/Low, B = 1 MiB, "
        f"Cubic; mean of {n_reps} run(s) per cell and scheme. Red: the baseline is worse than "
        "w/ Pri (ratio > 1); blue: better. A stall ratio of ∞ means only the baseline stalls, "
        "1 that neither does; 'none': w/ Pri displayed nothing after the warm-up. Right: "
        "displayed frames per second after the warm-up (top: w/ Pri; below: the row's "
        "baseline). The real endpoints and quinn over linkem's link core in virtual time: see "
        "the agreement page for how the sim site compares with Mininet."
    )
    return save(fig, out, "regime_map", caption)


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
    for p in draw(c, args.out, int(runs["rep"].nunique()), source):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
