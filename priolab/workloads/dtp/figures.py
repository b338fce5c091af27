"""Scenario figures and the deadline table of the `dtp` workload ([DTP Figs. 3-5]).

The x axis of the sweep figures is the setting, ordered by the number in its name (the
bandwidth in MB/s, or the loss in %, as the scenario names them); a point is the mean over
runs, its bar the 95 % bootstrap CI over runs (analysis/stats.py).

- `dtp_deadline` (Figs. 3a/3b and 5): deadline-meeting ratio of all blocks and of the most
  important ones, one line per scheme, one row of panels per speed (the congestion
  controller, when the scenario has several: runs.csv's `<setting>/<speed>` labels);
- `dtp_good_bytes`: good-bytes ratio (bytes of on-time blocks / bytes sent), one panel per
  speed;
- `dtp_windows` (Fig. 4): deadline ratio of the blocks released in each 1 s window against
  time, one panel per setting, mean over runs with its CI band;
- `dtp_table.md` / `dtp_table.csv` (scenario folder): those ratios per setting and scheme,
  mean [CI] (runs), and each scheme ÷ the reference scheme (the scenario's `compare:`).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.compare import for_scenario
from analysis.figure_data import array, read
from analysis.figures import save
from analysis.stats import bootstrap_ci, bootstrap_ci_rows

METRICS = {
    "deadline_ratio": "deadline-meeting ratio, all blocks",
    "deadline_ratio_p1": "deadline-meeting ratio, priority 1",
    "good_bytes_ratio": "good-bytes ratio",
}


def setting_key(setting: str) -> tuple[float, str]:
    digits = "".join(c for c in setting if c.isdigit() or c == ".").strip(".")
    try:
        return (float(digits), setting)
    except ValueError:
        return (math.inf, setting)


def _windows_of(path: Path) -> pd.DataFrame:
    """A run's 1 s window ratios from its figure data (analysis.py's `figure_data`)."""
    w = read(path).get("windows") or {"window_start_s": [], "ratio": []}
    return pd.DataFrame({"window_start_s": array(w["window_start_s"]), "ratio": array(w["ratio"])})


def _order(runs: pd.DataFrame, reference: str | None) -> tuple[list[str], list[str]]:
    settings = sorted({str(s) for s in runs["setting_label"]}, key=setting_key)
    schemes = list(dict.fromkeys(str(s) for s in runs["scheme"]))
    if reference in schemes:
        schemes = [reference] + [s for s in schemes if s != reference]
    return settings, schemes


def by_speed(settings: list[str]) -> dict[str, list[str]]:
    """Setting labels grouped by their speed (the part after `/`; "" when there is none),
    each group in the order given."""
    out: dict[str, list[str]] = {}
    for st in settings:
        out.setdefault(st.split("/", 1)[1] if "/" in st else "", []).append(st)
    return out


def _sweep(
    runs: pd.DataFrame, settings: list[str], schemes: list[str], metric: str, ax: plt.Axes
) -> None:
    x = np.arange(len(settings))
    for i, sc in enumerate(schemes):
        ys, lo, hi = [], [], []
        for st in settings:
            v = runs[(runs["setting_label"] == st) & (runs["scheme"] == sc)][metric].to_numpy(float)
            mean, a, b, _ = bootstrap_ci(v)
            ys.append(mean)
            lo.append(mean - a if math.isfinite(a) else 0.0)
            hi.append(b - mean if math.isfinite(b) else 0.0)
        off = (i - (len(schemes) - 1) / 2) * 0.05
        ax.errorbar(x + off, ys, yerr=[lo, hi], marker="o", ms=3, lw=1, capsize=2, label=sc)
    ax.set_xticks(x, [st.split("/", 1)[0] for st in settings], rotation=30, fontsize=7)
    ax.set_xlim(-0.5, len(settings) - 0.5)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel(METRICS[metric])


def make_figures(runs: pd.DataFrame, scenario_dir: Path) -> tuple[list[Path], list[str]]:
    """runs: analysis/aggregate.py's runs.csv (valid runs only). The reference scheme is the
    scenario's `compare.reference`."""
    reference = for_scenario(scenario_dir).reference
    out = scenario_dir / "figures"
    settings, schemes = _order(runs, reference)
    made: list[Path] = []
    skipped: list[str] = []
    speeds = by_speed(settings)
    fig, axes = plt.subplots(len(speeds), 2, figsize=(10, 3.6 * len(speeds)), squeeze=False)
    for row, (speed, sts) in zip(axes, speeds.items(), strict=True):
        for ax, metric in zip(row, ("deadline_ratio", "deadline_ratio_p1"), strict=True):
            _sweep(runs, sts, schemes, metric, ax)
            ax.set_xlabel("setting")
            if speed:
                ax.set_title(speed, fontsize=9)
        row[0].legend(fontsize=7)
    made += save(fig, out, "dtp_deadline",
                 "Share of blocks complete at the receiver within their deadline of their "
                 "release, of all blocks (left, [DTP Figs. 3a and 5]) and of the most "
                 "important blocks (right, Fig. 3b), per setting and scheme, one row per "
                 "congestion controller (speed); mean over runs, bar = 95 % bootstrap CI over "
                 "runs. Blocks still queued at the close count as missed.")  # fmt: skip
    fig, axes = plt.subplots(1, len(speeds), figsize=(5.5 * len(speeds), 3.6), squeeze=False)
    for ax, (speed, sts) in zip(axes[0], speeds.items(), strict=True):
        _sweep(runs, sts, schemes, "good_bytes_ratio", ax)
        ax.set_xlabel("setting")
        if speed:
            ax.set_title(speed, fontsize=9)
        ax.legend(fontsize=7)
    made += save(fig, out, "dtp_good_bytes",
                 "Good-bytes ratio: bytes of on-time blocks / bytes handed to QUIC, per "
                 "setting and scheme, one panel per congestion controller (speed); mean over "
                 "runs with 95 % bootstrap CI.")  # fmt: skip
    made += _windows(runs, settings, schemes, out)
    _table(runs, settings, schemes, reference, scenario_dir)
    return [p for p in made if p.suffix == ".png"], skipped


def _windows(runs: pd.DataFrame, settings: list[str], schemes: list[str], out: Path) -> list[Path]:
    speeds = by_speed(settings)
    cols = max(len(v) for v in speeds.values())
    fig, axes = plt.subplots(
        len(speeds), cols, figsize=(4.2 * cols, 3.2 * len(speeds)), squeeze=False
    )
    cells = [(ax, st) for row, sts in zip(axes, speeds.values(), strict=True)
             for ax, st in zip(row, sts, strict=False)]  # fmt: skip
    for row, sts in zip(axes, speeds.values(), strict=True):
        for ax in row[len(sts) :]:
            ax.set_axis_off()
    for ax, st in cells:
        for sc in schemes:
            paths = runs[(runs["setting_label"] == st) & (runs["scheme"] == sc)]["path"]
            ws = [w for w in (_windows_of(Path(p)) for p in paths) if len(w)]
            if not ws:
                continue
            n = min(len(w) for w in ws)
            m = np.column_stack([w["ratio"].to_numpy(float)[:n] for w in ws])
            x = ws[0]["window_start_s"].to_numpy(float)[:n] + 1.0  # the end of each window
            mean, lo, hi = bootstrap_ci_rows(m)
            (line,) = ax.plot(x, mean, marker="o", ms=2, lw=0.8, label=sc)
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
        ax.set_title(st)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("deadline ratio in the past 1 s")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7)
    return save(fig, out, "dtp_windows",
                "Deadline-meeting ratio of the blocks released in each 1 s window, against the "
                "window's end ([DTP Fig. 4]), per setting (one row per congestion "
                "controller); mean over runs, band = 95 % "
                "bootstrap CI over runs.")  # fmt: skip


def _table(
    runs: pd.DataFrame, settings: list[str], schemes: list[str], reference: str | None,
    scenario_dir: Path,
) -> None:  # fmt: skip
    rows, md = [], []
    head = ["setting", "scheme", *METRICS, "deadline_ratio ÷ reference"]
    md += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for st in settings:
        ref = runs[(runs["setting_label"] == st) & (runs["scheme"] == reference)]
        ref_mean = bootstrap_ci(ref["deadline_ratio"].to_numpy(float))[0] if len(ref) else math.nan
        for sc in schemes:
            sel = runs[(runs["setting_label"] == st) & (runs["scheme"] == sc)]
            if sel.empty:
                continue
            cells = [st, sc]
            for metric in METRICS:
                mean, lo, hi, n = bootstrap_ci(sel[metric].to_numpy(float))
                cells.append(f"{mean:.3f} [{lo:.3f}, {hi:.3f}] ({n})" if n else "—")
                rows.append({"setting": st, "scheme": sc, "metric": metric, "mean": mean,
                             "ci_low": lo, "ci_high": hi, "n_runs": n})  # fmt: skip
            mean = bootstrap_ci(sel["deadline_ratio"].to_numpy(float))[0]
            ratio = mean / ref_mean if ref_mean and math.isfinite(ref_mean) else math.nan
            cells.append("—" if not math.isfinite(ratio) else f"{ratio:.2f}")
            md.append("| " + " | ".join(cells) + " |")
    pd.DataFrame(rows).to_csv(scenario_dir / "dtp_table.csv", index=False)
    text = [
        f"# {scenario_dir.name}: deadline-meeting and good-bytes ratios",
        "",
        "Mean [95 % bootstrap CI] (runs) over valid runs; the last column divides each "
        f"scheme's mean deadline ratio by the reference scheme's ({reference}). [DTP] "
        "reports up to 5× more blocks on time than QUIC when bandwidth is limited.",
        "",
        *md,
        "",
    ]
    (scenario_dir / "dtp_table.md").write_text("\n".join(text))
