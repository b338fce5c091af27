"""Scenario figures and Table 3 of the `qpr` workload ([QPR]).

- `qpr_throughput_cdf` (Figs. 12, 14, 15): CDF of the per-segment throughput, the segments
  of every valid run of a (setting, scheme) pooled (each run's CDF from its quantile vector,
  weighted by its segments: analysis.figure_data.pooled_cdf); one panel per setting, one
  line per scheme (the pooled segments' mean in the legend).
- `qpr_quality` (Figs. 13c/d, 16): mean quality (1-5) per priority rank, per scheme; one
  panel per setting. `qpr_decodable_quality`: the same with an object that lost data
  counted as 0 (analysis.py's loss model).
- `freeze_table.md` / `freeze_table.csv` (scenario folder; Table 3): per setting and
  scheme, freezes, total freeze duration (s), media played (%), mean throughput and its
  ratio to the reference scheme (`compare.reference`), mean [95 % bootstrap CI] (runs).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import analysis.aggregate as agg
from analysis.figure_data import FigureData, pooled_cdf, pooled_count, read
from analysis.figures import save
from analysis.stats import bootstrap_ci, ci_text
from priolab.workloads.qpr.analysis import RANKS

TABLE_METRICS = [("freezes", ".1f"), ("freeze_total_s", ".2f"), ("played_pct", ".1f"),
                 ("throughput_mean_mbps", ".2f")]  # fmt: skip


def _cell(vals: list[float], fmt: str) -> str:
    mean, lo, hi, n = bootstrap_ci(vals)
    return "—" if n == 0 else f"{mean:{fmt}} {ci_text(lo, hi, n, fmt)} ({n})"


def make_figures(runs: pd.DataFrame, scenario_dir: Path) -> tuple[list[Path], list[str]]:
    """runs: analysis/aggregate.py's runs.csv (valid runs only)."""
    out = scenario_dir / "figures"
    cmp = agg.COMPARISON
    data: dict[tuple[str, str], list[FigureData]] = {}
    for _, r in runs.iterrows():
        data.setdefault((str(r["setting"]), str(r["scheme"])), []).append(read(Path(r["path"])))
    settings = sorted({s for s, _ in data})
    schemes = sorted({s for _, s in data}, key=cmp.key)
    n = len(settings)
    made: list[Path] = []
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.2), squeeze=False)
    for ax, st in zip(axes[0], settings, strict=True):
        for sc in schemes:
            if (st, sc) not in data:
                continue
            parts = [d["throughput"] for d in data[(st, sc)] if "throughput" in d]
            x, y = pooled_cdf(parts)
            if len(x):
                mean = sum(float(p["sum"][0]) for p in parts) / pooled_count(parts)
                ax.plot(x, y, label=f"{cmp.label(sc)}: {mean:.1f}")
        ax.set(title=st, xlabel="per-segment throughput (Mbit/s, rescaled)", ylabel="CDF")
        ax.legend(fontsize=6)
    made += save(fig, out, "qpr_throughput_cdf",
                 "CDF of the per-segment throughput (segments of all valid runs pooled), per "
                 "setting and scheme; the legend gives the mean ([QPR Figs. 12, 14, 15]). "
                 "Rates are in the run's rescaled units (workload README).")  # fmt: skip
    for col, name, what in [("quality", "qpr_quality", "requested quality"),
                            ("decodable_quality", "qpr_decodable_quality",
                             "decodable quality (an object that lost data counts 0)")]:  # fmt: skip
        fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.2), squeeze=False)
        width = 0.8 / max(1, len(schemes))
        for ax, st in zip(axes[0], settings, strict=True):
            for i, sc in enumerate(schemes):
                if (st, sc) not in data:
                    continue
                qs = [d["quality"] for d in data[(st, sc)] if "quality" in d]
                k = np.sum([q[f"{col}_n"] for q in qs], axis=0) if qs else np.zeros(len(RANKS))
                total = np.sum([q[f"{col}_sum"] for q in qs], axis=0) if qs else k
                means = np.where(k > 0, total / np.maximum(k, 1), np.nan)  # the pooled mean
                ax.bar(np.array(RANKS) + (i - (len(schemes) - 1) / 2) * width, means, width,
                       label=cmp.label(sc))  # fmt: skip
            ax.set(title=st, xlabel="priority rank", ylabel=f"mean {col.replace('_', ' ')}",
                   ylim=(0, 5.2), xticks=list(RANKS))  # fmt: skip
            ax.legend(fontsize=6)
        made += save(fig, out, name,
                     f"Mean {what} (1-5, Table 2) per viewport priority rank (1 = most visible), "
                     "per setting and scheme ([QPR Figs. 13c/d, 16]).")  # fmt: skip
    _freeze_table(runs, settings, schemes, scenario_dir)
    return made, []


def _freeze_table(
    runs: pd.DataFrame, settings: list[str], schemes: list[str], scenario_dir: Path
) -> None:
    cmp = agg.COMPARISON
    ref = cmp.reference
    head = ["setting", "scheme", *[k for k, _ in TABLE_METRICS], f"throughput ÷ {ref}"]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows = []
    for st in settings:
        base = runs[(runs["setting"] == st) & (runs["scheme"] == ref)]
        ref_thr = float(base["throughput_mean_mbps"].mean()) if len(base) else float("nan")
        for sc in schemes:
            sel = runs[(runs["setting"] == st) & (runs["scheme"] == sc)]
            if sel.empty:
                continue
            cells = [st, cmp.label(sc)]
            row: dict[str, object] = {"setting": st, "scheme": sc, "n_runs": len(sel)}
            for k, fmt in TABLE_METRICS:
                vals = sel[k].astype(float).tolist()
                cells.append(_cell(vals, fmt))
                mean, lo, hi, _ = bootstrap_ci(vals)
                row.update({k: mean, f"{k}_ci_low": lo, f"{k}_ci_high": hi})
            ratio = float(sel["throughput_mean_mbps"].mean()) / ref_thr
            cells.append(f"{ratio:.2f}")
            row["throughput_ratio"] = ratio
            md.append("| " + " | ".join(cells) + " |")
            rows.append(row)
    pd.DataFrame(rows).to_csv(scenario_dir / "freeze_table.csv", index=False)
    text = [
        f"# {scenario_dir.name}: freezes and throughput ([QPR Table 3, Figs. 14-15])",
        "",
        "Mean [95 % bootstrap CI] (runs) over valid runs. A freeze: the buffer is empty when a "
        "segment ends (a stall still going on at the end counts, up to the end); the start-up "
        "wait is not one. `played_pct`: media played / run duration, beside the freezes so a "
        "run that stops delivering does not look good. Throughput: the mean per-segment "
        "throughput (rescaled units).",
        "",
        *md,
        "",
    ]
    (scenario_dir / "freeze_table.md").write_text("\n".join(text))
