"""Figures of a scenario (PNG and PDF, seaborn), each with a caption in figures/<name>.txt.

    python -m analysis.figures RESULTS/<scenario>

Runs analysis.aggregate first when summary.csv/runs.csv are missing. Which figures is the
workload's (its folder's analysis.py: e.g. priolab/workloads/rise/figures.py,
priolab/workloads/moq/figures.py); every figure the data supports is drawn, the others are
skipped with a printed reason. This module holds what every workload's figures share:
`save` (PNG + PDF + caption), the schemes' colours and labels from the scenario's
`compare:` key, and `pick_run`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from analysis import aggregate as agg  # noqa: E402
from analysis.aggregate import aggregate  # noqa: E402
from analysis.compare import for_scenario  # noqa: E402
from analysis.logs import AnalysisError, read_metadata, workload_kind  # noqa: E402
from analysis.workload import analysis_for  # noqa: E402


def palette(schemes: list[str]) -> dict[str, tuple[float, float, float]]:
    """A colour per scheme: the compared schemes' in the scenario's order, then the rest."""
    order = agg.COMPARISON.order
    colors = sns.color_palette("colorblind", len(order) + 4)
    out: dict[str, tuple[float, float, float]] = {}
    for s in schemes:
        i = order.index(s) if s in order else len(order) + len(out) % 4
        out[s] = colors[i]
    return out


def label(s: str) -> str:
    return agg.COMPARISON.label(s)


def save(fig: plt.Figure, out: Path, name: str, caption: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    fig.tight_layout()
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    plt.close(fig)
    (out / f"{name}.txt").write_text(caption.strip() + "\n")
    return paths


def pick_run(runs: pd.DataFrame, scheme: str) -> pd.Series | None:
    """The first repetition of `scheme` in its first setting (runs.csv rows)."""
    g = runs[runs["scheme"] == scheme]
    if g.empty:
        return None
    first = g["setting_label"].iloc[0]
    return g[g["setting_label"] == first].sort_values("rep", key=lambda s: s.astype(int)).iloc[0]


def make_figures(scenario_dir: Path) -> tuple[list[Path], list[str]]:
    if not (scenario_dir / "summary.csv").is_file() or not (scenario_dir / "runs.csv").is_file():
        aggregate(scenario_dir)
    agg.COMPARISON = for_scenario(scenario_dir)
    try:
        runs = pd.read_csv(scenario_dir / "runs.csv", dtype={"rep": str})
    except pd.errors.EmptyDataError:
        runs = pd.DataFrame()
    if runs.empty:
        return [], ["no valid run: no figure"]
    sns.set_theme(style="whitegrid", context="paper")
    kind = workload_kind(read_metadata(Path(runs["path"].iloc[0])))
    return analysis_for(kind).figures(runs, scenario_dir)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.figures", description=__doc__)
    ap.add_argument("scenario_dir", type=Path)
    args = ap.parse_args(argv)
    if not args.scenario_dir.is_dir():
        print(f"error: {args.scenario_dir}: not a directory", file=sys.stderr)
        return 2
    try:
        made, skipped = make_figures(args.scenario_dir)
    except AnalysisError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for p in made:
        print(p)
    for s in skipped:
        print(f"skipped {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
