"""The regime map with real runs on it (issue 10 item 6).

    python -m priolab.workloads.rise.rise_map [--cells REGIME_CSV] OUT_DIR SCENARIO_DIR ...

REGIME_CSV is the regime map's cells (`regime_map`'s regime_map.csv, from the real endpoints
on the sim site): per uplink loss × queue depth, the ratios vanilla quinn (head drop) ÷ w/ Pri,
drawn as the background. Without it the figure has the real points alone, on the axes of their
own values. Each SCENARIO_DIR is an aggregated results folder (runs.csv, one row per valid
run). A setting of a scenario becomes a real point on the map when its runs are on the map's
axes: the map's fixed point, FB/4K/Low (70 Mbit/s shaped uplink, 30 Mbit/s, 30 fps video,
B = 1 MiB, key-frame factor 9, Cubic), with uplink loss none, iid or Gilbert-Elliott (drawn
as a triangle at its mean loss) and a queue given as a BDP factor; those coordinates come from
each run's metadata.json, not from setting names. The point's ratio is w/o Pri (`nopri`, head
drop) ÷ w/ Pri (`pri`) of the mean over runs, with a percentile bootstrap CI that resamples
each scheme's runs independently.

Writes OUT_DIR/rise_map.png/.pdf/.txt (figure, caption) and rise_map_points.csv (the points).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import matplotlib

from ground import rundir

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.figures import save  # noqa: E402
from analysis.stats import bootstrap_ratio_ci  # noqa: E402

# The map's fixed point (scenarios/maps/rise-loss-queue.yaml's workload and link; the test of
# that file checks its runs lie on it): a run off these values is not on the map, whatever
# its loss and queue.
ON_MAP: dict[str, Any] = {
    "video_bitrate_mbps": 30.0,
    "fps": 30.0,
    "buffer_bytes": 1_048_576,
    "keyframe_factor": 9.0,
    "cc": "cubic",
    "fifo_drop": "head",  # for nopri; w/ Pri ignores it
    "processing_delay_ms": 0.0,
}
UPLINK_RATE_MBPS = 70.0
DELAY_MS = 10.5  # each way: RTT 21 ms
BASELINE, REFERENCE = "nopri", "pri"
METRICS = {"mtp_median_ms": "median MTP", "stall_time_s": "stall time"}
POINT_COLUMNS = [
    "scenario",
    "setting",
    "loss_model",
    "loss_pct",
    "queue_bdp",
    "n_nopri",
    "n_pri",
    *[f"{m}_{s}" for m in METRICS for s in (BASELINE, REFERENCE)],
    *[f"{k}_{m}" for m in METRICS for k in ("ratio", "ratio_low", "ratio_high")],
]


def coordinates(
    meta: dict[str, Any], any_fifo_drop: bool = False
) -> tuple[str, float, float] | None:
    """(loss model, loss %, queue BDP factor) of a run on the map's axes, else None.
    `any_fifo_drop`: a w/o Pri run with either FIFO drop policy is on the map (the regime map
    draws both baselines), not only vanilla quinn's head drop."""
    run = meta.get("run", {})
    up = run.get("link", {}).get("uplink", {})
    wl = run.get("workload", {})
    if up.get("rate_mbps") != UPLINK_RATE_MBPS or up.get("policer") or up.get("trace"):
        return None
    if (
        up.get("delay_ms") != DELAY_MS
        or (run.get("link", {}).get("downlink") or {}).get("delay_ms") != DELAY_MS
    ):
        return None
    for k, v in ON_MAP.items():
        given = wl.get(k, v)
        if k == "fifo_drop" and (any_fifo_drop or (wl.get("prio_guest") and wl.get("prio_host"))):
            continue
        if given != v and not (isinstance(v, float) and math.isclose(float(given), v)):
            return None
    q = (up.get("queue") or {}).get("bdp_factor")
    if q is None or (up.get("queue") or {}).get("drop", "tail") != "tail":
        return None
    loss = up.get("loss") or {"model": "none"}
    model = loss.get("model", "none")
    if model == "none":
        return "none", 0.0, float(q)
    if model in ("iid", "gilbert_elliott_mean"):
        return model, float(loss["loss_pct"]), float(q)
    return None


def _ratio(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """a ÷ b of the means with its CI; 0/0 is 1 (neither), x/0 is ∞."""
    ma, mb = float(np.mean(a)), float(np.mean(b))
    if mb == 0:
        r = 1.0 if ma == 0 else math.inf
        return r, r, r
    return bootstrap_ratio_ci(a, b)


def real_points(scenario_dirs: list[Path]) -> pd.DataFrame:
    """One row per (scenario, setting) with runs of both schemes on the map's axes."""
    rows = []
    for d in scenario_dirs:
        runs_csv = d / "runs.csv"
        if not runs_csv.is_file():
            raise SystemExit(f"error: {runs_csv}: no such file (aggregate the scenario first)")
        runs = pd.read_csv(runs_csv)
        if runs.empty:
            continue
        runs = runs[runs["scheme"].isin([BASELINE, REFERENCE])]
        for setting, g in runs.groupby("setting", sort=False):
            coords: set[tuple[str, float, float] | None] = set()
            for p in g["path"]:
                meta = json.loads((Path(p) / rundir.METADATA).read_text())
                coords.add(coordinates(meta))
            coord = coords.pop() if len(coords) == 1 else None
            if coord is None:
                continue
            (model, loss, q) = coord
            row: dict[str, Any] = {
                "scenario": d.name,
                "setting": setting,
                "loss_model": model,
                "loss_pct": loss,
                "queue_bdp": q,
            }
            by = {s: g[g["scheme"] == s] for s in (BASELINE, REFERENCE)}
            row["n_nopri"], row["n_pri"] = len(by[BASELINE]), len(by[REFERENCE])
            if not (row["n_nopri"] and row["n_pri"]):
                continue
            for m in METRICS:
                a, b = (by[s][m].dropna().tolist() for s in (BASELINE, REFERENCE))
                row[f"{m}_{BASELINE}"] = float(np.mean(a)) if a else math.nan
                row[f"{m}_{REFERENCE}"] = float(np.mean(b)) if b else math.nan
                r = _ratio(a, b) if a and b else (math.nan,) * 3
                row[f"ratio_{m}"], row[f"ratio_low_{m}"], row[f"ratio_high_{m}"] = r
            rows.append(row)
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


def read_cells(path: Path) -> pd.DataFrame:
    """The regime map's cells (regime_map.csv), checked for what the map and the report
    read: per loss and queue, the ratios w/o Pri (head drop) ÷ w/ Pri."""
    cells = pd.read_csv(path)
    need = ["loss_pct", "queue_bdp", f"mtp_ratio_{BASELINE}", f"stall_ratio_{BASELINE}"]
    missing = [c for c in need if c not in cells]
    if missing:
        raise SystemExit(
            f"error: {path}: no column {', '.join(missing)} (the regime map's cells need "
            f"{', '.join(need)}; a file drawn before the columns took the scheme names is "
            "redrawn by `python -m priolab.workloads.rise.regime_map SCENARIO_DIR OUT`)"
        )
    return cells


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else ("–" if math.isnan(x) else f"{x:.2g}")


def _grid(cells: pd.DataFrame | None, pts: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The background: the regime map's ratio per loss (rows, highest first) × queue; without
    cells, an empty grid over the points' own loss and queue values."""
    if cells is not None:
        grid = cells.pivot(index="loss_pct", columns="queue_bdp", values=f"{metric}_{BASELINE}")
        return grid.sort_index(ascending=False)
    losses = sorted(set(pts["loss_pct"].astype(float)), reverse=True) or [0.0]
    queues = sorted(set(pts["queue_bdp"].astype(float))) or [1.0]
    return pd.DataFrame(math.nan, index=losses, columns=queues)


def _panel(ax: plt.Axes, cells: pd.DataFrame | None, pts: pd.DataFrame, metric: str) -> None:
    col = {"mtp_median_ms": "mtp_ratio", "stall_time_s": "stall_ratio"}
    grid = _grid(cells, pts, col[metric])
    v = grid.to_numpy(dtype=float)
    finite = np.concatenate(
        [
            v[np.isfinite(v) & (v > 0)].ravel(),
            pts[f"ratio_{metric}"].to_numpy(float)[
                np.isfinite(pts[f"ratio_{metric}"].to_numpy(float))
                & (pts[f"ratio_{metric}"].to_numpy(float) > 0)
            ],
        ]
    )
    hi = max(10.0, float(finite.max()), 1 / float(finite.min())) if finite.size else 10.0
    norm = mcolors.LogNorm(vmin=1 / hi, vmax=hi)
    im = ax.imshow(
        np.where(np.isfinite(v) & (v > 0), v, np.nan),
        cmap="RdBu_r",
        norm=norm,
        aspect="auto",
        alpha=0.55,
    )
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            ax.text(j, i - 0.28, _fmt(v[i, j]), ha="center", va="center", fontsize=6, color="0.35")
    losses, queues = list(grid.index), list(grid.columns)

    def idx(values: list[float], x: float) -> float:
        """Position of x on a categorical axis: its index, interpolated in log(x + ε)."""
        lv = np.log(np.asarray(values, float) + 1e-3)
        order = np.argsort(lv)
        return float(np.interp(math.log(x + 1e-3), lv[order], np.arange(len(values))[order]))

    for _, p in pts.iterrows():
        r = float(p[f"ratio_{metric}"])
        if math.isnan(r):
            continue
        ge = p["loss_model"] == "gilbert_elliott_mean"
        x, y = idx(queues, p["queue_bdp"]) + (0.22 if ge else -0.22), idx(losses, p["loss_pct"])
        face = plt.get_cmap("RdBu_r")(norm(min(max(r, 1 / hi), hi)))
        ax.scatter(
            [x],
            [y + 0.12],
            s=70,
            marker="^" if ge else "o",
            c=[face],
            edgecolors="k",
            linewidths=0.8,
            zorder=3,
        )
        lo, up = float(p[f"ratio_low_{metric}"]), float(p[f"ratio_high_{metric}"])
        ax.text(
            x,
            y + 0.38,
            f"{_fmt(r)}\n[{_fmt(lo)}, {_fmt(up)}]",
            ha="center",
            va="center",
            fontsize=5.5,
            zorder=4,
        )
    ax.set_xticks(range(len(queues)), [f"{q:g}" for q in queues])
    ax.set_yticks(range(len(losses)), [f"{p:g}" for p in losses])
    ax.set_xlabel("uplink queue (× BDP)")
    ax.set_ylabel("uplink loss (%)")
    ax.set_title(f"{METRICS[metric]}: w/o Pri (head drop) ÷ w/ Pri", fontsize=9)
    plt.colorbar(im, ax=ax, shrink=0.8)


def draw(cells: pd.DataFrame | None, pts: pd.DataFrame, out: Path) -> list[Path]:
    fig, axes = plt.subplots(1, 2, figsize=(14, 5.2))
    for ax, m in zip(axes, METRICS, strict=True):
        _panel(ax, cells, pts, m)
    runs = ", ".join(f"{r.scenario}/{r.setting} ({r.n_nopri}+{r.n_pri})" for r in pts.itertuples())
    background = (
        "background and grey numbers, its cells, drawn from the real endpoints on the sim site "
        "(scenarios/maps/rise-loss-queue.yaml; FB/4K/Low, B = 1 MiB, Cubic, key-frame factor 9) "
        "over uplink iid loss × drop-tail queue depth"
        if cells is not None
        else "no background: the regime map's cells were not given (`snakemake --cores 2 "
        "regime_map --config site=sim scenario=scenarios/maps` makes them)"
    )
    caption = (
        f"The regime map: {background}; markers, real runs with the ratio of the "
        "means over runs and its 95 % bootstrap CI (each scheme's runs resampled "
        "independently; circles iid loss, triangles Gilbert-Elliott loss at the same mean, "
        "shifted right). Red: w/o Pri worse than w/ Pri; blue: w/ Pri worse. Stall time is "
        "time without a display after the warm-up, including the trailing gap; a ratio of 1 "
        "with no CI means neither scheme stalled, ∞ only w/o Pri did. Real points (scenario/"
        f"setting, runs w/o + w/ Pri): {runs or 'none'}."
    )
    return save(fig, out, "rise_map", caption)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m priolab.workloads.rise.rise_map", description=__doc__
    )
    ap.add_argument("--cells", type=Path, help="the regime map's cells (regime_map.csv)")
    ap.add_argument("out", type=Path)
    ap.add_argument("scenario_dirs", type=Path, nargs="*")
    args = ap.parse_args(argv)
    if args.cells is not None and not args.cells.is_file():
        print(f"error: {args.cells}: no such file", file=sys.stderr)
        return 2
    cells = read_cells(args.cells) if args.cells is not None else None
    pts = real_points(args.scenario_dirs)
    args.out.mkdir(parents=True, exist_ok=True)
    pts.to_csv(args.out / "rise_map_points.csv", index=False)
    for p in draw(cells, pts, args.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
