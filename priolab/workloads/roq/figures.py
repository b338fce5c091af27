"""Scenario figures and the SSIM table of the `roq` workload ([RoQ Figs. 4-7]).

- `roq_target_<setting>` (Figs. 4-6): the controller's target bitrate (line) and the rate
  the sender transmitted (light line) against time, one panel per configuration, the mean
  over repetitions; the downlink capacity of the trace (dashed).
- `roq_scream_by_delay` (Fig. 7): SCReAM's target with QUIC-inferred feedback (left) and
  RTCP feedback (right), one row per one-way delay.
- `roq_ssim_time_<setting>`: per-frame SSIM against time (mean over repetitions), per
  configuration.
- `ssim_table.{md,csv}` (scenario folder): mean SSIM [95 % bootstrap CI over runs] per
  configuration and delay, the share of frames decoded beside it, the decoder's state (runs
  in which no picture was decoded, runs whose decoder pipeline stopped on an ERROR, mean
  complete key frames), and the paper's number where it states one ([RoQ §6], at 50 ms
  unless named). A configuration with such runs is not a low-SSIM result like the others:
  the `decoder` column says what happened instead of leaving the mean to speak for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.compare import for_scenario
from analysis.figures import save
from analysis.stats import bootstrap_ci, ci_text
from ground import rundir
from priolab.paths import REPO_ROOT
from priolab.workloads.logs import numeric_key
from priolab.workloads.roq.analysis import FRAMES_TABLE, RATE_TABLE

Label = Callable[[str], str]

# [RoQ §6]: average SSIM the paper reports, (scheme, setting) -> value
PAPER_SSIM: dict[tuple[str, str], float] = {
    ("trivial", "d50"): 0.78,
    ("trivial+stream", "d50"): 0.75,
    ("trivial-newreno", "d50"): 0.78,
    ("trivial-newreno+stream", "d50"): 0.69,
    ("scream", "d50"): 0.87,
    ("udp-scream", "d50"): 0.80,
    ("scream-newreno", "d50"): 0.78,
    ("scream-quicfb", "d150"): 0.85,
    ("scream-quicfb", "d300"): 0.83,
}


def _table(path: Path, name: str) -> pd.DataFrame | None:
    p = path / "tables" / name
    return pd.read_parquet(p) if p.is_file() else None


def _capacity(run_path: Path) -> pd.DataFrame | None:
    """The downlink's rate schedule of the run (time_s, rate_mbps), if it is a trace."""
    import json

    from traces.throughput import RateSchedule, read_schedule

    try:
        meta = json.loads((run_path / rundir.METADATA).read_text())
        tr = meta["run"]["link"]["downlink"]["trace"]
        # as the scenario names it, relative to the scenario's folder (the run record's
        # base_dir; runs recorded before it had one came from scenarios/)
        base = Path(meta["run"].get("base_dir") or REPO_ROOT / "scenarios")
        f = Path(tr["file"])
        sched = read_schedule(f if f.is_absolute() else base / f)
    except (OSError, KeyError, TypeError, ValueError):
        return None
    if not isinstance(sched, RateSchedule):
        return None
    t = np.append(sched.times_s, sched.duration_s)
    r = np.append(sched.rate_mbps, sched.rate_mbps[-1])
    return pd.DataFrame({"time_s": t, "rate_mbps": r})


def _mean_rate(paths: list[Path]) -> pd.DataFrame | None:
    parts = []
    for p in paths:
        r = _table(p, RATE_TABLE)
        if r is not None and len(r):
            r = r.assign(t=np.round(r["time_s"] * 2) / 2)  # 0.5 s bins
            parts.append(r.groupby("t")[["target_bps", "send_rate_bps"]].mean())
    if not parts:
        return None
    return pd.concat(parts).groupby(level=0).mean()


def _grid(n: int) -> tuple[plt.Figure, list[plt.Axes]]:
    cols = min(4, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.2 * rows), squeeze=False,
                             sharex=True, sharey=True)  # fmt: skip
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def fig_targets(runs: pd.DataFrame, out: Path, cmp_order: list[str], label: Label) -> list[Path]:
    made: list[Path] = []
    for setting, rs in sorted(runs.groupby("setting"), key=lambda x: numeric_key(str(x[0]))):
        schemes = sorted(
            set(rs["scheme"]), key=lambda s: (cmp_order.index(s) if s in cmp_order else 99, s)
        )
        fig, axes = _grid(len(schemes))
        cap = _capacity(Path(rs["path"].iloc[0]))
        for ax, sch in zip(axes, schemes, strict=True):
            m = _mean_rate([Path(p) for p in rs.loc[rs["scheme"] == sch, "path"]])
            if m is not None:
                ax.plot(m.index, m["send_rate_bps"] / 1e3, color="C1", alpha=0.5, lw=0.8,
                        label="transmitted")  # fmt: skip
                ax.plot(m.index, m["target_bps"] / 1e3, color="C0", lw=1.2, label="target")
            if cap is not None:
                ax.step(cap["time_s"], cap["rate_mbps"] * 1e3, where="post", color="k",
                        ls="--", lw=0.8, label="link capacity")  # fmt: skip
            ax.set_title(label(sch), fontsize=8)
            ax.set_xlabel("time (s)")
            ax.set_ylabel("kbit/s")
        axes[0].legend(fontsize=6)
        made += save(fig, out, f"roq_target_{setting}",
                     f"Target bitrate and transmitted rate, one-way delay setting {setting}, "
                     "mean over repetitions ([RoQ Figs. 4-6])")  # fmt: skip
    return made


def fig_scream_by_delay(runs: pd.DataFrame, out: Path) -> list[Path]:
    settings = sorted(set(runs["setting"]), key=numeric_key)
    cols = [s for s in ("scream-quicfb", "scream") if s in set(runs["scheme"])]
    if not cols or not settings:
        return []
    fig, axes = plt.subplots(len(settings), len(cols), figsize=(4 * len(cols), 1.8 * len(settings)),
                             squeeze=False, sharex=True, sharey=True)  # fmt: skip
    for i, st in enumerate(settings):
        for j, sch in enumerate(cols):
            ax = axes[i][j]
            sel = runs[(runs["setting"] == st) & (runs["scheme"] == sch)]
            m = _mean_rate([Path(p) for p in sel["path"]])
            if m is not None:
                ax.plot(m.index, m["send_rate_bps"] / 1e3, color="C1", alpha=0.5, lw=0.8)
                ax.plot(m.index, m["target_bps"] / 1e3, color="C0", lw=1.2)
            ax.set_title(f"{sch}, {st}", fontsize=8)
            ax.set_ylabel("kbit/s")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    caption = (
        "SCReAM's target (dark) and transmitted rate (light): feedback inferred from "
        "QUIC (left) and RTCP (right), one row per one-way delay ([RoQ Fig. 7])"
    )
    return save(fig, out, "roq_scream_by_delay", caption)


def fig_ssim_time(runs: pd.DataFrame, out: Path, cmp_order: list[str], label: Label) -> list[Path]:
    made: list[Path] = []
    for setting, rs in sorted(runs.groupby("setting"), key=lambda x: numeric_key(str(x[0]))):
        fig, ax = plt.subplots(figsize=(8, 3.5))
        for k, (sch, g) in enumerate(
            sorted(
                rs.groupby("scheme"),
                key=lambda x: cmp_order.index(x[0]) if x[0] in cmp_order else 99,
            )
        ):
            parts = [t for t in (_table(Path(p), FRAMES_TABLE) for p in g["path"]) if t is not None]
            if not parts:
                continue
            n = min(len(t) for t in parts)
            s = np.mean([t["ssim"].to_numpy(float)[:n] for t in parts], axis=0)
            t_s = parts[0]["capture_ms"].to_numpy(float)[:n] / 1e3
            w = max(1, int(len(s) / 240))  # smooth to ~240 points
            smooth = pd.Series(s).rolling(w, min_periods=1).mean().to_numpy()
            ax.plot(
                t_s[::w],
                smooth[::w],
                label=label(sch),
                lw=0.8,
                color=f"C{k % 10}",
                ls="-" if k < 10 else "--",
            )
        ax.set_xlabel("time (s)")
        ax.set_ylabel("SSIM")
        ax.legend(fontsize=5, ncol=2)
        made += save(fig, out, f"roq_ssim_time_{setting}",
                     f"Per-frame SSIM (lost frames score their frozen picture), "
                     f"{setting}")  # fmt: skip
    return made


def ssim_table(
    runs: pd.DataFrame, scenario_dir: Path, cmp_order: list[str], label: Label
) -> list[str]:
    rows = []
    for (sch, st), g in runs.groupby(["scheme", "setting"]):
        vals = [m for m in g["ssim_mean"]] if "ssim_mean" in g else []
        mean, lo, hi, n = bootstrap_ci(np.array(vals, dtype=float))
        dec = float(g["decoded_pct"].mean()) if "decoded_pct" in g else math.nan
        rows.append({"scheme": sch, "label": label(sch), "setting": st, "ssim_mean": mean,
                     "ci_low": lo, "ci_high": hi, "runs": n, "decoded_pct": dec,
                     **_decoder_state(g),
                     "paper_ssim": PAPER_SSIM.get((str(sch), str(st)), math.nan)})  # fmt: skip
    t = pd.DataFrame(rows)
    if t.empty:
        return ["no run with metrics: no SSIM table"]
    t["order"] = [cmp_order.index(s) if s in cmp_order else 99 for s in t["scheme"]]
    t["delay"] = [numeric_key(str(s))[0] for s in t["setting"]]
    t = t.sort_values(["order", "delay"]).drop(columns=["order", "delay"])
    t.to_csv(scenario_dir / "ssim_table.csv", index=False)
    lines = ["| configuration | delay | SSIM mean [95 % CI] | runs | frames decoded (%) "
             "| decoder | paper |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in t.itertuples():
        paper = "" if math.isnan(r.paper_ssim) else f"{r.paper_ssim:.2f}"
        ci = ci_text(r.ci_low, r.ci_high, r.runs, ".3f")  # one run: "(n=1, no CI)"
        decoder = _decoder_text(int(r.runs), r.no_picture_runs, r.decoder_stopped_runs,
                                r.decoder_unknown_runs, r.key_frames_complete_mean)  # fmt: skip
        lines.append(f"| {r.label} | {r.setting} | {r.ssim_mean:.3f} {ci} | {r.runs} | "
                     f"{r.decoded_pct:.1f} | {decoder} | {paper} |")  # fmt: skip
    (scenario_dir / "ssim_table.md").write_text("\n".join(lines) + "\n")
    return []


def _decoder_state(g: pd.DataFrame) -> dict[str, float]:
    """Runs of one configuration: how many decoded no picture, how many had their decoder
    stop (unknown where the receiver did not report it), mean complete key frames per run."""

    def col(name: str) -> np.ndarray:
        return g[name].to_numpy(float) if name in g else np.full(len(g), math.nan)

    stopped, keys = col("decoder_stopped"), col("key_frames_complete")
    return {
        "no_picture_runs": float(np.nansum(col("no_picture"))),
        "decoder_stopped_runs": float(np.nansum(stopped)),
        "decoder_unknown_runs": float(np.isnan(stopped).sum()),
        "key_frames_complete_mean": (
            float(np.nanmean(keys)) if (~np.isnan(keys)).any() else math.nan
        ),
    }


def _decoder_text(n: int, no_picture: float, stopped: float, unknown: float, keys: float) -> str:
    """The table's `decoder` cell: what went wrong in how many of the n runs, led by "ok" only
    when every run decoded pictures and reported no decoder ERROR."""
    parts = []
    if no_picture > 0:
        parts.append(f"no picture decoded in {int(no_picture)}/{n} runs")
    if stopped > 0:
        parts.append(f"decoder stopped (ERROR) in {int(stopped)}/{n}")
    if unknown > 0:
        parts.append(f"errors not recorded in {int(unknown)}/{n}")
    if not math.isnan(keys):
        parts.append(f"{keys:.1f} complete key frames/run")
    if no_picture == 0 and stopped == 0 and unknown == 0:
        parts.insert(0, "ok")
    return "; ".join(parts)


def make_figures(runs: pd.DataFrame, scenario_dir: Path) -> tuple[list[Path], list[str]]:
    out = scenario_dir / "figures"
    cmp = for_scenario(scenario_dir)
    order = list(getattr(cmp, "order", []) or [])
    label = cmp.label
    made: list[Path] = []
    skipped = ssim_table(runs, scenario_dir, order, label)
    made += fig_targets(runs, out, order, label)
    made += fig_scream_by_delay(runs, out)
    made += fig_ssim_time(runs, out, order, label)
    return made, skipped
