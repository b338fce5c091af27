"""The regime map from the predictor (endpoints/rise-sim): where prioritisation matters.

    python -m priolab.workloads.rise.predictor_map GRID.jsonl OUT_DIR

GRID.jsonl is `rise-sim --grid` output (one run per line: uplink loss × uplink queue depth ×
scheme × seed). Per cell, the mean over seeds of each scheme's Guest median MTP and stall time;
the figure shows, for each baseline (w/o Pri with tail drop in the channels, as `rise --prio off`
runs; vanilla quinn with head drop), the ratio baseline / w/ Pri of the median MTP and of the
stall time. A stall ratio is shown only where w/ Pri stalls (x/0 is marked ∞, 0/0 "=").
Writes predictor_map.png/.pdf/.txt and predictor_map.csv (the cells) into OUT_DIR.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.figures import save  # noqa: E402

BASELINES = {
    "nopri-tail": "w/o Pri (tail drop, rise --prio off)",
    "nopri-head": "vanilla quinn (head drop)",
}


def load_grid(path: Path) -> pd.DataFrame:
    """One row per run: loss, queue, scheme, seed, the Guest's median MTP, stall, fps."""
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            g = d["metrics"]["guest"]
            rows.append(
                {
                    "loss_pct": float(d["up_loss_pct"]),
                    "queue_bdp": float(d["up_queue_bdp"]),
                    "scheme": str(d["scheme"]),
                    "seed": int(d["seed"]),
                    "mtp_median_ms": math.nan
                    if g["mtp_median_ms"] is None
                    else float(g["mtp_median_ms"]),
                    "stall_s": float(g["stall_s"]),
                    "displayed_fps": float(g["displayed_fps"]),
                }
            )
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"error: {path}:{n}: not a rise-sim grid line ({e})") from e
    if not rows:
        raise SystemExit(f"error: {path}: no runs")
    return pd.DataFrame(rows)


def cells(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per (loss, queue, scheme), and the ratios to w/ Pri per baseline."""
    m = runs.groupby(["loss_pct", "queue_bdp", "scheme"], as_index=False)[
        ["mtp_median_ms", "stall_s", "displayed_fps"]
    ].mean()
    wide = m.pivot_table(index=["loss_pct", "queue_bdp"], columns="scheme")
    out = pd.DataFrame(index=wide.index)
    for b in BASELINES:
        if ("mtp_median_ms", b) not in wide or ("mtp_median_ms", "pri") not in wide:
            continue
        out[f"mtp_ratio_{b}"] = wide[("mtp_median_ms", b)] / wide[("mtp_median_ms", "pri")]
        sb, sp = wide[("stall_s", b)], wide[("stall_s", "pri")]
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


def draw(
    c: pd.DataFrame, out: Path, n_seeds: int, name: str = "predictor_map", source: str = ""
) -> list[Path]:
    """The map's figure; `source` replaces the caption's first sentence (what made the cells)."""
    bases = [b for b in BASELINES if f"mtp_ratio_{b}" in c]
    fig, axes = plt.subplots(len(bases), 3, figsize=(16, 4 * len(bases)), squeeze=False)
    for r, b in enumerate(bases):
        _heat(axes[r][0], c, f"mtp_ratio_{b}", f"median MTP: {BASELINES[b]} / w/ Pri")
        _heat(axes[r][1], c, f"stall_ratio_{b}", f"stall time: {BASELINES[b]} / w/ Pri")
        _fps(
            axes[r][2],
            c,
            b if r else "pri",
            f"displayed fps: {'w/ Pri' if r == 0 else BASELINES[b]}",
        )
    source = source or "Predictor (endpoints/rise-sim, virtual time)"
    caption = (
        f"{source} over uplink iid loss × uplink drop-tail "
        f"queue depth, FB/4K/Low, B = 1 MiB, Cubic; mean of {n_seeds} seed(s) per cell. "
        "Red: the baseline is worse than w/ Pri (ratio > 1); blue: better. A stall ratio of ∞ "
        "means only the baseline stalls, 1 that neither does; 'none': w/ Pri displayed nothing "
        "after the warm-up. Right: displayed frames per second after the warm-up (top: w/ Pri; "
        "bottom: vanilla quinn). "
        + (
            "Model, not measurement: see endpoints/README.md for what it models and its "
            "agreement with real runs."
            if name == "predictor_map"
            else "The real endpoints and quinn over linkem's link core in virtual time: see "
            "the agreement page for how the sim site compares with Mininet."
        )
    )
    return save(fig, out, name, caption)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m priolab.workloads.rise.predictor_map", description=__doc__
    )
    ap.add_argument("grid", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args(argv)
    if not args.grid.is_file():
        print(f"error: {args.grid}: no such file", file=sys.stderr)
        return 2
    runs = load_grid(args.grid)
    c = cells(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    c.to_csv(args.out / "predictor_map.csv", index=False)
    for p in draw(c, args.out, int(runs["seed"].nunique())):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
