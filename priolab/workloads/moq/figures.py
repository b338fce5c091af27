"""Scenario figures and the OTDR table of the `moq` workload ([MoQ Figs. 6-10]).

Each run's frames (tables/moq_frames.parquet) are aligned across repetitions by frame id
(the schedule is the same in every run), so a line is the mean over runs and its band the
95 % bootstrap CI over runs (analysis/stats.py), per frame or per budget.

- `moq_latency_<T>` (Figs. 6-8): latency (arrival − capture) of the T frames against their
  capture time; one panel per setting, one line per scheme. Frames that never arrived have
  no latency and are left out (their share is `lost_<T>_pct` in the summary).
- `moq_latency_all` (Fig. 9): every type at the lowest-rate setting, one panel per scheme.
- `moq_otdr` (Fig. 10): OTDR of all frames against the budget 0-3000 ms; colour = setting,
  line style = scheme (FEFS dashed, FT solid, as in the paper; group dotted).
- `moq_otdr_by_type`: the same per frame type.
- `otdr_table.md` / `otdr_table.csv` (scenario folder): OTDR at 500/700/1000 ms, all frames
  and per type, mean [CI] (runs), and the smallest budget with every I frame on time.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.figures import save
from analysis.stats import bootstrap_ci, bootstrap_ci_rows, ci_text
from priolab.workloads.logs import numeric_key
from priolab.workloads.moq.analysis import (
    BUDGETS_MS,
    FRAMES_TABLE,
    TYPES,
    frames_table,
    otdr_curves,
)

STYLE = {"fefs": "--", "ft": "-", "group": ":"}
TYPE_COLOR = {"I": "C3", "P": "C0", "B": "C2"}


def _frames(path: Path) -> pd.DataFrame:
    p = path / "tables" / FRAMES_TABLE
    return pd.read_parquet(p) if p.is_file() else frames_table(path)


def _matrix(frames: list[pd.DataFrame], col: str, sel: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(capture_s of the first run, rows = frames × columns = runs) of `col`, type `sel`."""
    parts = [f[f["pict_type"] == sel] if sel else f for f in frames]
    n = min(len(p) for p in parts)
    m = np.column_stack([p[col].to_numpy(float)[:n] for p in parts])
    return parts[0]["capture_ms"].to_numpy(float)[:n] / 1e3, m


def _band(ax: plt.Axes, x: np.ndarray, m: np.ndarray, **kw: object) -> None:
    mean, lo, hi = bootstrap_ci_rows(m)
    (line,) = ax.plot(x, mean, lw=0.8, **kw)  # type: ignore[arg-type]
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)


def make_figures(runs: pd.DataFrame, scenario_dir: Path) -> tuple[list[Path], list[str]]:
    """runs: analysis/aggregate.py's runs.csv (valid runs only)."""
    out = scenario_dir / "figures"
    data: dict[tuple[str, str], list[pd.DataFrame]] = {}
    for _, r in runs.iterrows():
        data.setdefault((str(r["setting"]), str(r["scheme"])), []).append(_frames(Path(r["path"])))
    settings = sorted({s for s, _ in data}, key=numeric_key)
    schemes = sorted(
        {s for _, s in data}, key=lambda s: (list(STYLE).index(s) if s in STYLE else 9, s)
    )
    made: list[Path] = []
    for t in TYPES:
        fig, axes = plt.subplots(
            1, len(settings), figsize=(4.2 * len(settings), 3.2), squeeze=False
        )
        for ax, st in zip(axes[0], settings, strict=True):
            for sc in schemes:
                if (st, sc) in data:
                    x, m = _matrix(data[(st, sc)], "latency_ms", t)
                    _band(ax, x, m, ls=STYLE.get(sc, "-"), label=sc)
            ax.set_title(st)
            ax.set_xlabel("capture time (s)")
            ax.set_ylabel(f"{t}-frame latency (ms)")
            ax.legend(fontsize=7)
        caption = (
            f"Latency (arrival − capture) of every {t} frame against its capture time, per "
            "bottleneck setting and scheme ([MoQ Figs. 6-8]): mean over runs, band = 95 % "
            "bootstrap CI over runs. Frames that never arrived are left out."
        )
        made += save(fig, out, f"moq_latency_{t}", caption)
    low = settings[0]
    fig, axes = plt.subplots(1, len(schemes), figsize=(4.2 * len(schemes), 3.2), squeeze=False)
    for ax, sc in zip(axes[0], schemes, strict=True):
        if (low, sc) not in data:
            ax.text(0.5, 0.5, "no valid run", ha="center", va="center", transform=ax.transAxes)
        for t in TYPES:
            if (low, sc) in data:
                x, m = _matrix(data[(low, sc)], "latency_ms", t)
                _band(ax, x, m, color=TYPE_COLOR[t], label=t)
        ax.set_title(f"{low}, {sc}")
        ax.set_xlabel("capture time (s)")
        ax.set_ylabel("latency (ms)")
        if (low, sc) in data:
            ax.legend(fontsize=7)
    made += save(fig, out, "moq_latency_all",
                 f"Latency of every frame by type at {low} ([MoQ Fig. 9]), one panel per "
                 "scheme; mean over runs with 95 % bootstrap CI band.")  # fmt: skip
    made += _otdr_figures(data, settings, schemes, out)
    _otdr_table(data, settings, schemes, scenario_dir)
    return [p for p in made if p.suffix == ".png"], []


def _curves(frames: list[pd.DataFrame], which: str) -> tuple[np.ndarray, np.ndarray]:
    cs = [otdr_curves(f) for f in frames]
    cs = [c[c["frames"] == which] for c in cs]
    return cs[0]["budget_ms"].to_numpy(float), np.column_stack([c["otdr"] for c in cs])


def _otdr_figures(data: dict, settings: list[str], schemes: list[str], out: Path) -> list[Path]:
    made: list[Path] = []
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for i, st in enumerate(settings):
        for sc in schemes:
            if (st, sc) in data:
                x, m = _curves(data[(st, sc)], "all")
                _band(ax, x, m, color=f"C{i}", ls=STYLE.get(sc, "-"), label=f"{st} {sc}")
    ax.set_xlabel("latency budget (ms)")
    ax.set_ylabel("on-time display ratio")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)
    made += save(fig, out, "moq_otdr",
                 "OTDR of all frames against the latency budget ([MoQ Fig. 10]): a frame is "
                 "on time if it and every frame it depends on arrived by capture + budget. "
                 "Colour = bottleneck setting; FEFS dashed, FT solid, group dotted. Mean over "
                 "runs, band = 95 % bootstrap CI over runs.")  # fmt: skip
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, t in zip(axes, TYPES, strict=True):
        for i, st in enumerate(settings):
            for sc in schemes:
                if (st, sc) in data:
                    x, m = _curves(data[(st, sc)], t)
                    _band(ax, x, m, color=f"C{i}", ls=STYLE.get(sc, "-"), label=f"{st} {sc}")
        ax.set_title(f"{t} frames")
        ax.set_xlabel("latency budget (ms)")
        ax.set_ylabel("on-time display ratio")
        ax.set_ylim(0, 1.02)
    axes[0].legend(fontsize=6)
    made += save(fig, out, "moq_otdr_by_type",
                 "OTDR per frame type against the latency budget; as moq_otdr.")  # fmt: skip
    return made


def _cell(vals: list[float], fmt: str = ".3f") -> tuple[str, float, float, float, int]:
    mean, lo, hi, n = bootstrap_ci(vals)
    if n == 0:
        return "—", mean, lo, hi, n
    return f"{mean:{fmt}} {ci_text(lo, hi, n, fmt)} ({n})", mean, lo, hi, n


def _otdr_table(data: dict, settings: list[str], schemes: list[str], scenario_dir: Path) -> None:
    from priolab.workloads.moq.analysis import metrics

    rows, md = [], []
    head = ["setting", "scheme", "budget_ms", "all", *TYPES]
    md += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    i_rows = []
    for st in settings:
        for sc in schemes:
            if (st, sc) not in data:
                continue
            ms = [metrics(f) for f in data[(st, sc)]]
            for b in BUDGETS_MS:
                cells = [st, sc, str(b)]
                for name in ("all", *TYPES):
                    key = f"otdr_{b}ms" if name == "all" else f"otdr_{name}_{b}ms"
                    cell, mean, lo, hi, n = _cell([m[key] for m in ms])
                    cells.append(cell)
                    rows.append(
                        {"setting": st, "scheme": sc, "budget_ms": b, "frames": name,
                         "otdr": mean, "ci_low": lo, "ci_high": hi, "n_runs": n}
                    )  # fmt: skip
                md.append("| " + " | ".join(cells) + " |")
            ib = [m["i_all_on_time_budget_ms"] for m in ms]
            worst = max(ib) if all(math.isfinite(v) for v in ib) else math.inf
            i_rows.append(f"| {st} | {sc} | {_cell(ib, '.0f')[0]} | {worst:.0f} |")
    pd.DataFrame(rows).to_csv(scenario_dir / "otdr_table.csv", index=False)
    text = [
        f"# {scenario_dir.name}: on-time display ratio",
        "",
        "OTDR at the budgets of [MoQ]: mean [95 % bootstrap CI] (runs) over valid runs. A "
        "frame is on time if it and every frame it depends on arrived by capture + budget; a "
        "frame that never arrived is never on time.",
        "",
        *md,
        "",
        "## Smallest budget with every I frame on time (ms)",
        "",
        "Per run the largest I-frame latency; mean [CI] (runs) and the worst run (inf: an I "
        "frame never arrived). [MoQ]: 'if the latency budget is 700 ms or more, all "
        "I-frames can be displayed on time'.",
        "",
        "| setting | scheme | mean | worst run |",
        "|---|---|---|---|",
        *i_rows,
        "",
    ]
    (scenario_dir / "otdr_table.md").write_text("\n".join(text))
