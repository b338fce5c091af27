"""Figures of a `rise` scenario (PNG and PDF, seaborn), each with a caption in
figures/<name>.txt; analysis.figures calls `make_figures` through the workload's analysis.

Every figure the data supports is drawn; the others are skipped with a printed reason:
- transport_mtp_cdf, transport_freeze   (paper Fig. 5) a scheme vs compare.reference per setting
- mismatch_cdf                          (Fig. 6) position mismatch CDF per movement speed
- ablation                              (Fig. 8) MTP CDF and freeze rate, nopri/pri-d/pri-u/pri
- retx_keyframe                         (Fig. 9) retransmission and key-frame rate, Guest/Host
- bitrate_sweep                         (Fig. 10) metrics vs video bitrate, with CIs
- timeseries_<scheme>                   one run: throughput, bottleneck queue, MTP over time
- microbursts_<scheme>                  (Fig. 2) that run's throughput in 1 ms windows over
                                        0.5 s, if it has linkem's packet log
Bars and points are the mean over runs with the 95 % bootstrap CI of summary.csv (or
analysis.stats for the sweep); CDFs pool the frames of all valid runs of a group and say how
many runs and frames they hold.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np
import pandas as pd
import seaborn as sns

from analysis import aggregate as agg
from analysis.aggregate import scheme_key
from analysis.figures import label, palette, pick_run, save
from analysis.metrics import read_metrics
from analysis.microbursts import fig_microbursts
from analysis.stats import bootstrap_ci
from priolab.workloads.rise.analysis import buffer_scheme
from priolab.workloads.rise.stalls import Window, stall_spans_us, stalls
from priolab.workloads.rise.tables import TABLES_DIR, load_tables

METRIC_LABELS = {
    "mtp_median_ms": "median MTP latency (ms)",
    "mtp_p95_ms": "p95 MTP latency (ms)",
    "mtp_p99_ms": "p99 MTP latency (ms)",
    "freeze_rate_pct": "freeze rate (% of displayed frames)",
    "freeze_duration_s": "total freeze duration (s)",
    "mismatch_median_deg": "median position mismatch (°)",
    "mismatch_p95_deg": "p95 position mismatch (°)",
    "goodput_down_mbps": "Host→Guest goodput (Mbit/s)",
    "stall_pct": "stall time (% of the run after warm-up)",
    "displayed_fps": "displayed frames per second",
}
# shown wherever freezes are: the freeze rate cannot see a stream that stops displaying
QUALITY = ["freeze_rate_pct", "stall_pct", "displayed_fps"]
QUALITY_NOTE = (
    "Freeze rate: libwebrtc's rule over intervals between displayed frames, per displayed "
    "frame; it cannot see a stream that stops, so stall time (display gaps ≥ max(3/fps, "
    "1/fps + 150 ms) including the gap from the last display to the end of the run, % of the "
    "run after its warm-up) and displayed frames per second stand beside it. "
)


# ------------------------------------------------------------------ data


def load_frames(runs: pd.DataFrame) -> pd.DataFrame:
    """Per displayed frame at the Guest of every valid run (tables/guest_frames.parquet)."""
    parts = []
    for _, r in runs.iterrows():
        p = Path(r["path"]) / TABLES_DIR / "guest_frames.parquet"
        if not p.is_file():
            continue
        f = pd.read_parquet(p, columns=["display_time_us", "mtp_ms", "mismatch_deg", "freeze"])
        for k in ("setting_label", "setting", "scheme", "speed", "rep", "path"):
            f[k] = r[k]
        parts.append(f)
    if not parts:
        return pd.DataFrame(
            columns=["display_time_us", "mtp_ms", "mismatch_deg", "freeze", "setting_label",
                     "setting", "scheme", "speed", "rep", "path"]
        )  # fmt: skip
    return pd.concat(parts, ignore_index=True)


def _grid(n_rows: int, n_cols: int, w: float = 4.2, h: float = 3.2) -> tuple:
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(w * n_cols, h * n_rows), squeeze=False)
    return fig, axes


def _ecdf_panel(ax: plt.Axes, frames: pd.DataFrame, col: str, schemes: list[str],
                pal: dict, xlabel: str, log: bool) -> list[str]:  # fmt: skip
    notes = []
    for s in schemes:
        v = frames.loc[frames["scheme"] == s, col].dropna()
        v = v[v > 0] if log else v
        if v.empty:
            continue
        n_runs = frames.loc[frames["scheme"] == s, "path"].nunique()
        lab = f"{label(s)}: {n_runs} run(s), {len(v)} frames"
        sns.ecdfplot(x=v.to_numpy(), ax=ax, color=pal[s], label=lab, log_scale=log)
        notes.append(f"{s}: {n_runs} runs, {len(v)} frames")
    if not notes:  # no valid run in this panel (e.g. all CPU saturated): say so, no axis
        ax.text(0.5, 0.5, "no valid run", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(xlabel)
        return ["no valid run"]
    if log:
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of displayed frames")
    ax.legend(fontsize=7, loc="lower right")
    return notes


def _ci_bars(ax: plt.Axes, rows: pd.DataFrame, groups: list[str], group_col: str,
             hues: list[str], hue_col: str, pal: dict, hue_label: Callable[[str], str],
             ylabel: str) -> None:  # fmt: skip
    """Bars of `value` with [ci_low, ci_high] error bars, n runs above each bar."""
    width = 0.8 / max(1, len(hues))
    for j, h in enumerate(hues):
        for i, g in enumerate(groups):
            r = rows[(rows[group_col] == g) & (rows[hue_col] == h)]
            if r.empty or not math.isfinite(float(r["value"].iloc[0])):
                continue
            v, lo, hi = (float(r[c].iloc[0]) for c in ("value", "ci_low", "ci_high"))
            x = i - 0.4 + width * (j + 0.5)
            ax.bar(x, v, width, color=pal[h], label=hue_label(h) if i == 0 else None)
            if math.isfinite(lo) and math.isfinite(hi):  # n=1: no CI (analysis.stats)
                ax.errorbar(x, v, yerr=[[v - lo], [hi - v]], color="black", capsize=3, lw=1)
            else:
                hi = v
            ax.annotate(f"n={int(r['n_runs'].iloc[0])}", (x, hi), ha="center", va="bottom",
                        fontsize=6, xytext=(0, 2), textcoords="offset points")  # fmt: skip
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=20 if len(groups) > 2 else 0, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)


# ------------------------------------------------------------------ figures


def fig_transport(
    summary: pd.DataFrame, frames: pd.DataFrame, out: Path, what_ran: str = ""
) -> list[str]:
    schemes = agg.COMPARISON.pair(set(summary["scheme"]))
    if len(schemes) < 2:
        return ["transport_*: needs the compare key's reference and another scheme's runs"]
    settings = list(dict.fromkeys(summary["setting"]))
    pal = palette(schemes)
    fig, axes = _grid(1, len(settings))
    notes = []
    for ax, st in zip(axes[0], settings, strict=True):
        f = frames[frames["setting_label"] == st]
        n = _ecdf_panel(ax, f, "mtp_ms", schemes, pal, "MTP latency (ms, log scale)", True)
        ax.set_title(st, fontsize=9)
        notes.append(f"{st}: " + "; ".join(n))
    save(fig, out, "transport_mtp_cdf",
         "MTP latency CDF at the Guest (display time − generation time of the Guest's tracking "
         "sample the frame was rendered from), w/o Pri (nopri) vs w/ Pri (pri), per setting; "
         "frames of all valid runs pooled (paper Fig. 5). " + " | ".join(notes))  # fmt: skip
    fig, axes = _grid(1, len(QUALITY), w=max(4.2, 1.6 * len(settings)))
    for ax, m in zip(axes[0], QUALITY, strict=True):
        rows = summary[(summary["metric"] == m) & summary["scheme"].isin(schemes)]
        _ci_bars(ax, rows, settings, "setting", schemes, "scheme", pal, label, METRIC_LABELS[m])
    save(
        fig,
        out,
        "transport_freeze",
        "Freeze frame rate at the Guest (libwebrtc rule: interval ≥ max(3·avg, avg+150 ms), "
        "avg over the last 30 intervals), freezes per displayed frame in %, stall time and "
        "displayed fps, per setting, w/o Pri vs w/ Pri: mean over runs with 95 % bootstrap "
        "CI; n = valid runs (Fig. 5). " + QUALITY_NOTE + what_ran,
    )
    return []


def fig_mismatch(frames: pd.DataFrame, out: Path) -> list[str]:
    if frames["mismatch_deg"].dropna().empty:
        return ["mismatch_cdf: no position mismatch samples"]
    speeds = list(dict.fromkeys(frames["speed"]))
    settings = list(dict.fromkeys(frames["setting"]))
    schemes = sorted(frames["scheme"].unique(), key=scheme_key)
    pal = palette(schemes)
    fig, axes = _grid(len(settings), len(speeds))
    for i, st in enumerate(settings):
        for j, sp in enumerate(speeds):
            f = frames[(frames["setting"] == st) & (frames["speed"] == sp)]
            _ecdf_panel(axes[i][j], f, "mismatch_deg", schemes, pal,
                        "position mismatch (°)", False)  # fmt: skip
            axes[i][j].set_title(f"{st}, speed {sp}", fontsize=9)
    save(
        fig,
        out,
        "mismatch_cdf",
        "Position mismatch CDF at the Guest per movement speed (geodesic angle between the "
        "Guest's orientation in the tracking sample a displayed frame was rendered from and "
        "its orientation at display time, slerp-interpolated), per scheme; frames of all "
        "valid runs pooled, run and frame counts in the legends (paper Fig. 6).",
    )
    return []


def fig_ablation(
    summary: pd.DataFrame, frames: pd.DataFrame, out: Path, what_ran: str = ""
) -> list[str]:
    schemes = sorted(set(summary["scheme"]), key=scheme_key)
    if not {"pri-u", "pri-d"} & set(schemes):
        return ["ablation: needs pri-u or pri-d runs"]
    settings = list(dict.fromkeys(summary["setting"]))
    pal = palette(schemes)
    fig, axes = _grid(len(settings), 2 + len(QUALITY))
    mtp = ["mtp_median_ms", "mtp_p95_ms", "mtp_p99_ms"]
    for i, st in enumerate(settings):
        _ecdf_panel(axes[i][0], frames[frames["setting_label"] == st], "mtp_ms", schemes, pal,
                    "MTP latency (ms, log scale)", True)  # fmt: skip
        rows = summary[(summary["setting"] == st) & summary["metric"].isin(mtp)]
        _ci_bars(axes[i][1], rows, mtp, "metric", schemes, "scheme", pal, label,
                 "MTP latency (ms)")  # fmt: skip
        axes[i][1].set_xticklabels(["median", "p95", "p99"])
        for j, m in enumerate(QUALITY):
            rows = summary[(summary["setting"] == st) & (summary["metric"] == m)]
            _ci_bars(axes[i][2 + j], rows, [m], "metric", schemes, "scheme", pal, label,
                     METRIC_LABELS[m])  # fmt: skip
            axes[i][2 + j].set_xticklabels([""])
        for ax in axes[i]:
            ax.set_title(st, fontsize=9)
    save(
        fig,
        out,
        "ablation",
        "Directional ablation: MTP latency CDF (frames of all valid runs pooled), freeze "
        "rate, stall time and displayed fps (mean over runs, 95 % bootstrap CI, n = valid "
        "runs) at the Guest for w/o Pri, Pri-D (Host only), Pri-U (Guest only) and w/ Pri "
        "(paper Fig. 8). " + QUALITY_NOTE + what_ran,
    )
    return []


def fig_retx_keyframe(summary: pd.DataFrame, out: Path) -> list[str]:
    ms = [f"{m}_{ep}" for m in ("retx_rate_pct", "keyframe_rate_pct") for ep in ("guest", "host")]
    rows = summary[summary["metric"].isin(ms)]
    if rows.empty or not np.isfinite(rows["value"].to_numpy(dtype=float)).any():
        return ["retx_keyframe: no retransmission/key-frame data"]
    settings = list(dict.fromkeys(summary["setting"]))
    schemes = sorted(rows["scheme"].unique(), key=scheme_key)
    fig, axes = _grid(len(settings), 2)
    pal = dict(zip(["guest", "host"], sns.color_palette("colorblind", 6)[4:6], strict=True))
    for i, st in enumerate(settings):
        for j, (m, yl) in enumerate(
            (
                ("retx_rate_pct", "retransmitted / sent video (%)"),
                ("keyframe_rate_pct", "key / encoded frames (%)"),
            )
        ):
            r = rows[(rows["setting"] == st) & rows["metric"].str.startswith(m)]
            r = r.assign(endpoint=r["metric"].str.rsplit("_", n=1).str[-1])
            _ci_bars(axes[i][j], r, schemes, "scheme", ["guest", "host"], "endpoint", pal,
                     lambda e: e.capitalize(), yl)  # fmt: skip
            axes[i][j].set_title(st, fontsize=9)
    fig.tight_layout()
    save(
        fig,
        out,
        "retx_keyframe",
        "Retransmission rate (retransmitted / sent video datagrams, from channels.csv) and "
        "key-frame rate (key frames / frames encoded) of the Guest's and the Host's streamer, "
        "per scheme: mean over runs with 95 % bootstrap CI, n = valid runs (paper Fig. 9).",
    )
    return []


def fig_bitrate(runs: pd.DataFrame, out: Path) -> list[str]:
    if "video_bitrate_mbps" not in runs or runs["video_bitrate_mbps"].nunique() < 2:
        return ["bitrate_sweep: fewer than two video bitrates"]
    metrics = ["mtp_median_ms", "mtp_p95_ms", *QUALITY]
    schemes = sorted(runs["scheme"].unique(), key=scheme_key)
    speeds = list(dict.fromkeys(runs["speed"]))
    pal = palette(schemes)
    fig, axes = _grid(len(speeds), len(metrics))
    for i, sp in enumerate(speeds):
        for j, m in enumerate(metrics):
            ax = axes[i][j]
            for s in schemes:
                g = runs[(runs["scheme"] == s) & (runs["speed"] == sp)]
                pts = []
                for br, gb in g.groupby("video_bitrate_mbps"):
                    v, lo, hi, n = bootstrap_ci(gb[m].to_numpy(dtype=float))
                    if n:
                        pts.append((float(br), v, lo, hi, n))
                if not pts:
                    continue
                x, va, loa, hia, na = (np.array(c) for c in zip(*pts, strict=True))
                ax.errorbar(
                    x,
                    va,
                    yerr=[va - loa, hia - va],
                    marker="o",
                    capsize=3,
                    color=pal[s],
                    label=f"{label(s)}, n={_span(na)} runs/point",
                )
            ax.set_xlabel("video bitrate (Mbit/s)")
            ax.set_ylabel(METRIC_LABELS[m])
            ax.set_title(f"speed {sp}", fontsize=9)
            ax.legend(fontsize=7)
    save(
        fig,
        out,
        "bitrate_sweep",
        "Effective range: Guest metrics vs the video bitrate of both streams (from each run's "
        "metadata), w/ and w/o Pri: mean over runs with 95 % bootstrap CI "
        "(analysis.stats.bootstrap_ci; n runs per point in the legend) (paper Fig. 10). "
        + QUALITY_NOTE,
    )
    return []


def _span(n: np.ndarray) -> str:
    lo, hi = int(n.min()), int(n.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _stall_spans(
    run_dir: Path, gf: pd.DataFrame, r: pd.Series
) -> tuple[np.ndarray, str, int | None]:
    """The run's stall gaps (µs), a one-line note and the end of the warm-up (µs), from
    metrics.json's recorded window."""
    info = (read_metrics(run_dir) or {}).get("analysis") or {}
    win = (info.get("windows_us") or {}).get("guest")
    if not win:
        return np.zeros((0, 2)), "", None
    w = Window(*(int(x) for x in win))
    fps = float(info.get("stall_fps") or 30.0)
    t = gf["display_time_us"].to_numpy(np.int64) if len(gf) else np.zeros(0, np.int64)
    st = stalls(t, w, fps)
    note = (f"after {info.get('warmup_s', 0):g} s warm-up: {st['displayed_fps']:.1f} displayed "
            f"fps, stalled {st['stall_pct']:.1f} % of the time, longest gap "
            f"{st['longest_gap_s']:.2f} s")  # fmt: skip
    return stall_spans_us(t, w, fps), note, w.start_us


def fig_timeseries(runs: pd.DataFrame, out: Path) -> list[str]:
    notes: list[str] = []
    picked = agg.COMPARISON.pair(set(runs["scheme"])) or list(dict.fromkeys(runs["scheme"]))[:1]
    for scheme in picked:
        r = pick_run(runs, scheme)
        if r is None:
            continue
        run_dir = Path(r["path"])
        t = load_tables(run_dir)
        gf_path = run_dir / TABLES_DIR / "guest_frames.parquet"
        gf = pd.read_parquet(gf_path) if gf_path.is_file() else pd.DataFrame()
        starts = [int(x["time_us"].min()) for x in (t["path_stats"],) if len(x)]
        starts += [int(gf["display_time_us"].min())] if len(gf) else []
        if not starts:
            notes.append(f"timeseries_{scheme}: run {run_dir} has no time series")
            continue
        t0 = min(starts)
        fig, axes = plt.subplots(3, 1, figsize=(9, 8), sharex=False)
        ps = t["path_stats"].sort_values("time_us")
        for ep, name in (("host", "Host→Guest (Host's QUIC path, 100 ms)"),
                         ("guest", "Guest→Host (Guest's QUIC path, 100 ms)")):  # fmt: skip
            p = ps[ps["endpoint"] == ep]
            if len(p) > 1:
                dt = np.diff(p["time_us"].to_numpy()) / 1e6
                rate = np.diff(p["bytes_sent"].to_numpy()) * 8 / dt / 1e6
                x = (p["time_us"].to_numpy()[1:] - t0) / 1e6
                axes[0].step(x, rate, where="post", label=name, lw=0.8)
        lk = t["linkem"]
        lk = lk[~lk["final"].astype(bool)]
        for d, name in (("up", "uplink a_to_b (linkem, 1 s)"),
                        ("down", "downlink b_to_a (linkem, 1 s)")):  # fmt: skip
            q = lk[lk["direction"] == d].sort_values("t_s")
            if len(q):
                axes[0].step(q["t_s"], q["bytes_out"] * 8 / 1e6, where="post", ls="--",
                             label=name, lw=1)  # fmt: skip
                axes[1].step(q["t_s"], q["queue_bytes"] / 1e3, where="post", label=name)
        axes[0].set_ylabel("throughput (Mbit/s)")
        axes[0].set_xlabel("time (s)")
        axes[0].legend(fontsize=7)
        axes[1].set_ylabel("bottleneck queue (kB)")
        axes[1].set_xlabel("linkem time (s since the emulator started)")
        if len(lk):
            axes[1].legend(fontsize=7)
        else:
            axes[1].text(0.5, 0.5, "no linkem stats in this run (tc backend or file missing)",
                         ha="center", va="center", transform=axes[1].transAxes)  # fmt: skip
        spans, fps_txt, warm_end = _stall_spans(run_dir, gf, r)
        if warm_end is not None:
            axes[2].axvline((warm_end - t0) / 1e6, color="grey", ls=":", lw=1,
                            label="end of warm-up (left out)")  # fmt: skip
        for k, (a, b) in enumerate(spans):
            axes[2].axvspan((a - t0) / 1e6, (b - t0) / 1e6, color="orange", alpha=0.3,
                            label="stall (no display)" if k == 0 else None)  # fmt: skip
        if fps_txt:
            axes[2].set_title(fps_txt, fontsize=8)
        if len(gf):
            x = (gf["display_time_us"].to_numpy() - t0) / 1e6
            axes[2].plot(x, gf["mtp_ms"], ".", ms=2, label="displayed frame")
            fz = gf["freeze"].to_numpy(bool)
            if fz.any():
                axes[2].plot(x[fz], gf["mtp_ms"].to_numpy()[fz], "x", color="red",
                             label="frame ending a freeze")  # fmt: skip
        if len(gf) or len(spans) or warm_end is not None:
            axes[2].legend(fontsize=7)
        axes[2].set_ylabel("MTP latency at the Guest (ms)")
        axes[2].set_xlabel("time (s)")
        fig.suptitle(f"{r['setting_label']} / {scheme} / rep {r['rep']}", fontsize=10)
        fig.tight_layout()
        save(fig, out, f"timeseries_{scheme}",
             f"One run ({run_dir.name} of {r['setting_label']}, scheme {scheme}): sending rate "
             "per direction from each endpoint's QUIC path stats (100 ms bins) and the link "
             "emulator's departures (1 s bins); bottleneck queue occupancy sampled once per "
             "second by linkem (its own time axis, not aligned to the endpoints' clock; "
             "sub-second microbursts show only in the 100 ms path-stats rate); MTP latency "
             "of every frame displayed at the Guest, frames ending a freeze marked, stalls "
             "(display gaps ≥ max(3/fps, 1/fps + 150 ms), including the one up to the end of "
             "the run) shaded, displayed fps and stall share after the warm-up above. "
             "Time (s) is from the first endpoint sample of the run.")  # fmt: skip
    return notes


def what_ran(runs: pd.DataFrame) -> str:
    """Which sender buffer each scheme ran (from runs.csv's workload columns)."""
    parts = []
    for scheme, g in runs.groupby("scheme", sort=False):
        kinds = set()
        for _, r in g.iterrows():
            wl = {k: r[k] for k in ("prio_guest", "prio_host", "fifo_drop") if k in r
                  and not (isinstance(r[k], float) and math.isnan(r[k]))}  # fmt: skip
            kinds.add(f"Guest {buffer_scheme(wl, 'guest')}, Host {buffer_scheme(wl, 'host')}")
        parts.append(f"{scheme}: {'; '.join(sorted(kinds))}")
    return "Sender buffers: " + " | ".join(parts) + "." if parts else ""


def make_figures(runs: pd.DataFrame, scenario_dir: Path) -> tuple[list[Path], list[str]]:
    """runs: analysis/aggregate.py's runs.csv (valid runs only)."""
    summary = pd.read_csv(scenario_dir / "summary.csv")
    out = scenario_dir / "figures"
    frames = load_frames(runs)
    skipped: list[str] = []
    what = what_ran(runs)
    skipped += fig_transport(summary, frames, out, what)
    skipped += fig_mismatch(frames, out)
    skipped += fig_ablation(summary, frames, out, what)
    skipped += fig_retx_keyframe(summary, out)
    skipped += fig_bitrate(runs, out)
    skipped += fig_timeseries(runs, out)
    skipped += fig_microbursts(runs, out)
    return sorted(out.glob("*.png")) if out.is_dir() else [], skipped
