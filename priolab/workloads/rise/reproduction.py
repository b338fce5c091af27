"""RISE's mechanisms report: why priolab's numbers are what they are, per setting that ran,
read from the runs' own diagnostics (issue 10 item 8; issue 37 made the claims the results
page's, judged by analysis/verdicts.py for every paper alike).

    python -m priolab.workloads.rise.reproduction --out REPRODUCTION.md
        [--points rise_map_points.csv] [--cells regime_map.csv] SCENARIO_DIR [SCENARIO_DIR ...]

Each SCENARIO_DIR is an aggregated results folder (runs.csv: one row per valid run;
exclusions.csv: the invalid ones). The report gives, per setting that ran, the regime its w/o
Pri runs were in (window-limited or not, from the Guest's transport-limited share, its window
and B's occupancy) and what that does to each scheme; every setting's MTP, stalls and fps with
its invalid runs; the freezes beside stalls and what the paper's 82× needs; the freeze map,
the key-frame causes, the frame-tick phase and the regime map. The same sections are the
RISE results page's own (`page_sections`, a section hook: analysis/claims.py `Section`), one
per results folder.

Writes the markdown to --out; the commit and the date on top come from `git` and the clock.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.claims import PageContext
from analysis.stats import bootstrap_ci, bootstrap_ratio_ci
from ground import rundir
from priolab.workloads.rise.mechanisms import (
    freeze_map_section,
    keyframe_section,
    phase_section,
)
from priolab.workloads.rise.numbers import ci, fmt

# A run is window-limited when its Guest's sender was transport-limited (cwnd or pacer, not the
# application) for at least this share of the analysed window (analysis/regime.py).
WINDOW_LIMITED_PCT = 50.0


def exclusion_kinds(excl: pd.DataFrame) -> list[str]:
    """The kind of every reason of the excluded runs (exclusions.csv `kinds`, the reasons'
    codes); an exclusions.csv written before the codes counts each run's prose whole."""
    if "kinds" in excl.columns:
        return [k for v in excl["kinds"].fillna("unrecorded") for k in str(v).split("; ")]
    return [str(v) for v in excl["reasons"].fillna("unrecorded")]


def load(dirs: list[Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(valid runs of every scenario with `scenario`, `cpu_pct` and `site` columns,
    exclusions). In a scenario with several speeds `setting` becomes `<setting>/<speed>`
    (runs.csv's `setting_label`), so no claim or table ever pools two speeds."""
    runs: list[pd.DataFrame] = []
    excl: list[pd.DataFrame] = []
    for d in dirs:
        multi_speed = False
        for name, out in (("runs.csv", runs), ("exclusions.csv", excl)):
            p = d / name
            if not p.is_file():
                raise SystemExit(f"error: {p}: no such file (aggregate {d} first)")
            try:
                t = pd.read_csv(p)
            except pd.errors.EmptyDataError:
                continue
            if name == "runs.csv" and "setting_label" in t:
                label = t["setting_label"].fillna(t["setting"]).astype(str)
                multi_speed = bool((label != t["setting"].astype(str)).any())
                t["setting"] = label
            elif name == "exclusions.csv" and multi_speed and "speed" in t:
                t["setting"] = t["setting"].astype(str) + "/" + t["speed"].astype(str)
            t.insert(0, "scenario", d.name)
            out.append(t)
    r = pd.concat(runs, ignore_index=True) if runs else pd.DataFrame()
    if not r.empty:
        metas = [_meta(Path(p)) for p in r["path"]]
        r["cpu_pct"] = [_cpu(m) for m in metas]
        r["site"] = [str((m.get("site") or {}).get("kind") or "–") for m in metas]
    e = pd.concat(excl, ignore_index=True) if excl else pd.DataFrame()
    return r, e


def _meta(run_dir: Path) -> dict:
    try:
        meta = json.loads((run_dir / rundir.METADATA).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _cpu(meta: dict) -> float:
    try:
        return float(meta["cpu"]["utilisation_mean_pct"])
    except (KeyError, TypeError, ValueError):
        return math.nan


def _values(runs: pd.DataFrame, sc: str, st: str, scheme: str, metric: str) -> list[float]:
    if runs.empty or metric not in runs:
        return []
    g = runs[(runs["scenario"] == sc) & (runs["setting"] == st) & (runs["scheme"] == scheme)]
    return [float(x) for x in g[metric] if np.isfinite(x)]


def regime(runs: pd.DataFrame, sc: str, st: str) -> str:
    """The regime of a setting's w/o Pri runs, from their own diagnostics."""
    tl = _values(runs, sc, st, "nopri", "transport_limited_pct_guest")
    cw = _values(runs, sc, st, "nopri", "cwnd_to_video_bdp_guest")
    bq = _values(runs, sc, st, "nopri", "buffer_queued_p90_bytes_guest")
    if not tl:
        return "–"
    kind = "window-limited" if np.mean(tl) >= WINDOW_LIMITED_PCT else "not window-limited"
    parts = [f"transport-limited {np.mean(tl):.0f} %"]
    if cw:
        parts.append(f"cwnd {np.mean(cw):.2g}× video BDP")
    if bq:
        parts.append(f"B p90 {np.mean(bq) / 1e3:.0f} kB")
    return f"{kind} ({', '.join(parts)})"


def _mean(runs: pd.DataFrame, sc: str, st: str, scheme: str, metric: str) -> float:
    v = _values(runs, sc, st, scheme, metric)
    return float(np.mean(v)) if v else math.nan


def explanation(runs: pd.DataFrame) -> list[str]:
    """Why the numbers are what they are, per compared setting, from the runs' diagnostics."""
    lines = ["## Why: the regime of each setting that ran", ""]
    if runs.empty:
        return [*lines, "No runs.", ""]
    pairs = runs[runs["scheme"].isin(["nopri", "pri"])][["scenario", "setting"]]
    for sc, st in pairs.drop_duplicates().itertuples(index=False):
        m = {
            (s, k): _mean(runs, sc, st, s, k)
            for s in ("nopri", "pri")
            for k in (
                "transport_limited_pct_guest",
                "cwnd_to_video_bdp_guest",
                "buffer_queued_p90_bytes_guest",
                "mtp_median_ms",
                "evicted_ack_guest",
                "evicted_video_guest",
                "dropped_ingress_tracking_guest",
                "evicted_tracking_guest",
                "deadline_expirations_host",
                "stall_pct",
                "displayed_fps",
                "linkem_drops_queue_up",
                "lost_packets_guest",
                "lost_packets_host",
                "linkem_drops_queue_down",
            )
        }
        if math.isnan(m[("nopri", "transport_limited_pct_guest")]):
            continue
        wl = m[("nopri", "transport_limited_pct_guest")] >= WINDOW_LIMITED_PCT

        def g(s: str, k: str, scale: float = 1.0, m: dict = m) -> str:
            return fmt(m[(s, k)] / scale)

        diag = (
            f"the Guest's sender was transport-limited {g('nopri', 'transport_limited_pct_guest')}"
            f" % of the time w/o Pri, its cwnd {g('nopri', 'cwnd_to_video_bdp_guest')}× the "
            "video's bitrate × RTT; B's p90 occupancy "
            f"{g('nopri', 'buffer_queued_p90_bytes_guest', 1e3)} kB w/o Pri, "
            f"{g('pri', 'buffer_queued_p90_bytes_guest', 1e3)} kB w/ Pri; "
            f"{g('nopri', 'linkem_drops_queue_up')} uplink queue drops and "
            f"{g('nopri', 'lost_packets_guest')} packets the Guest's QUIC declared lost per run."
        )
        if wl:
            why = (
                "Window-limited: B holds a standing queue, so w/o Pri every datagram, tracking "
                "included, waits behind it (median MTP "
                f"{fmt(m[('nopri', 'mtp_median_ms')])} ms), while w/ Pri's tracking skips it "
                f"({fmt(m[('pri', 'mtp_median_ms')])} ms). The price: w/ Pri evicts the lowest "
                f"channel, the Guest's ACKs ({fmt(m[('pri', 'evicted_ack_guest')])} per run; "
                f"w/o Pri's head drop evicts {fmt(m[('nopri', 'evicted_ack_guest')])} ACKs and "
                f"{fmt(m[('nopri', 'evicted_video_guest')])} video datagrams), the Host's key "
                "frames go unacknowledged until the 1 s deadline "
                f"({fmt(m[('pri', 'deadline_expirations_host')])} expirations per run w/ Pri, "
                f"{fmt(m[('nopri', 'deadline_expirations_host')])} w/o), and the Guest stalls "
                f"{fmt(m[('pri', 'stall_pct')])} % of the time w/ Pri against "
                f"{fmt(m[('nopri', 'stall_pct')])} % w/o (displayed fps "
                f"{fmt(m[('pri', 'displayed_fps')])} vs {fmt(m[('nopri', 'displayed_fps')])})."
            )
        else:
            why = (
                "Not window-limited: each frame leaves B within milliseconds and waits in the "
                "bottleneck's FIFO, which both schemes share; B is (nearly) empty, so priority "
                "has nothing to reorder and w/ Pri ≈ w/o Pri (median MTP "
                f"{fmt(m[('nopri', 'mtp_median_ms')])} vs {fmt(m[('pri', 'mtp_median_ms')])} ms)."
            )
        down = host_loss_note(runs, sc, st, m) if wl else ""
        lines += [f"- **{sc}/{st}**: {diag} {why}{down}", ""]
    return lines


def regime_table(runs: pd.DataFrame, excl: pd.DataFrame) -> list[str]:
    """Every (scenario, setting) with w/o Pri or w/ Pri runs, valid or not: its regime, median
    MTP, stall share and displayed fps per scheme (mean [CI] over valid runs), the ratio, and
    how many runs were valid and why the others were not (exclusions.csv)."""
    lines = [
        "## Every setting that ran: w/o Pri vs w/ Pri",
        "",
        "Mean [95 % bootstrap CI] over each scheme's valid runs, w/o Pri → w/ Pri; runs = valid "
        "w/o Pri + w/ Pri; invalid runs are not averaged in, their judge's reasons are counted.",
        "",
        "| scenario/setting | regime (w/o Pri) | median MTP (ms) | ratio [CI] | stall (% of run) "
        "| displayed fps | runs | invalid |",
        "|---|---|---|---|---|---|---|---|",
    ]
    keys: list[tuple[str, str]] = []
    for t in (runs, excl):
        if t.empty:
            continue
        for sc, st in t[t["scheme"].isin(["nopri", "pri"])][["scenario", "setting"]].itertuples(
            index=False
        ):
            if (sc, st) not in keys:
                keys.append((sc, st))
    if not keys:
        return [*lines, "", "No runs.", ""]

    def both(sc: str, st: str, metric: str) -> str:
        out = []
        for scheme in ("nopri", "pri"):
            v = _values(runs, sc, st, scheme, metric)
            out.append(ci(bootstrap_ci(v)[:3]) if v else "–")
        return " → ".join(out)

    for sc, st in keys:
        a = _values(runs, sc, st, "nopri", "mtp_median_ms")
        b = _values(runs, sc, st, "pri", "mtp_median_ms")
        ratio = ci(bootstrap_ratio_ci(a, b)) if a and b else "–"
        n = "+".join(str(len(_values(runs, sc, st, s, "mtp_median_ms"))) for s in ("nopri", "pri"))
        bad = "–"
        if not excl.empty:
            e = excl[(excl["scenario"] == sc) & (excl["setting"] == st)]
            e = e[e["scheme"].isin(["nopri", "pri"])]
            if len(e):
                kinds = pd.Series(exclusion_kinds(e)).value_counts()
                bad = f"{len(e)}: " + ", ".join(f"{k} ({v})" for k, v in kinds.items())
        lines.append(
            f"| {sc}/{st} | {regime(runs, sc, st)} | {both(sc, st, 'mtp_median_ms')} | {ratio} | "
            f"{both(sc, st, 'stall_pct')} | {both(sc, st, 'displayed_fps')} | {n} | {bad} |"
        )
    return [*lines, ""]


def host_loss_note(runs: pd.DataFrame, sc: str, st: str, m: dict[tuple[str, str], float]) -> str:
    """Where the Host lost packets w/ Pri on a downlink that dropped none: the Guest's socket
    (RcvbufErrors, runs.csv `udp_rcvbuf_errors_guest` since a612a1d) when it counted them or
    when the runs predate the counter (endpoints/README.md, the stall miss: then they were
    equal); said to be unexplained when the counter is there and is 0."""
    lost, down = m[("pri", "lost_packets_host")], m[("pri", "linkem_drops_queue_down")]
    if not (lost > 0 and down == 0):
        return ""
    head = (
        f" The Host's QUIC declared {fmt(lost)} packets lost per run w/ Pri "
        f"({fmt(m[('nopri', 'lost_packets_host')])} w/o) on a downlink whose queue dropped 0"
    )
    sock = _mean(runs, sc, st, "pri", "udp_rcvbuf_errors_guest")
    if not math.isnan(sock) and sock == 0:
        return (
            f"{head}, while the Guest's socket dropped none (RcvbufErrors 0 in every run): "
            "a loss neither the link nor the socket counted, not explained here."
        )
    counted = (
        "the runs predate the socket counters; in the runs that had them RcvbufErrors equalled "
        "the Host's losses"
        if math.isnan(sock)
        else f"RcvbufErrors {fmt(sock)} per run"
    )
    return (
        f"{head}: packets lost after the link, in the Guest's UDP receive buffer while its "
        f"endpoint waited for a CPU ({counted}; docs/investigations/"
        "2026-11-26-rise-sim-predictor-and-real-runs.md, 'Why the predictor missed w/ Pri's "
        "stalls'), a cost of this shared 2-core machine, not of the path; "
        "w/ Pri turns each such loss into a stall until the Host's deadline, because the ACK "
        "that would trigger the retransmission was evicted."
    )


def freeze_section(runs: pd.DataFrame) -> list[str]:
    """Freeze rate beside stalls and displayed fps for every compared setting, and the 82×."""
    lines = [
        "## Freezes, stalls and the 82×",
        "",
        "The freeze rate (libwebrtc: a display gap ≥ max(3 × mean, mean + 150 ms) among displayed "
        "frames, per displayed frame) only sees gaps *between* displayed frames; stall time "
        "(time without a display, the trailing gap included) and displayed fps stand beside it. "
        "Means over runs; w/o Pri → w/ Pri.",
        "",
        "| scenario/setting | freeze rate (%) | freezes per run | stall (%) | displayed fps | "
        "frames never displayed (%) | Guest ACKs evicted per run | deadline expirations (Host) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios: list[tuple[str, float]] = []
    stall_worse: list[str] = []
    pairs = (
        runs[runs["scheme"].isin(["nopri", "pri"])][["scenario", "setting"]].drop_duplicates()
        if not runs.empty
        else pd.DataFrame(columns=["scenario", "setting"])
    )
    for sc, st in pairs.itertuples(index=False):
        m = {
            (s, k): _mean(runs, sc, st, s, k)
            for s in ("nopri", "pri")
            for k in (
                "freeze_rate_pct",
                "freeze_count",
                "stall_pct",
                "displayed_fps",
                "frames_undisplayed_pct",
                "evicted_ack_guest",
                "deadline_expirations_host",
            )
        }
        if any(math.isnan(m[(s, "freeze_rate_pct")]) for s in ("nopri", "pri")):
            continue
        cells = [
            f"{fmt(m[('nopri', k)])} → {fmt(m[('pri', k)])}"
            for k in (
                "freeze_rate_pct",
                "freeze_count",
                "stall_pct",
                "displayed_fps",
                "frames_undisplayed_pct",
                "evicted_ack_guest",
                "deadline_expirations_host",
            )
        ]
        lines.append(f"| {sc}/{st} | " + " | ".join(cells) + " |")
        if m[("pri", "stall_pct")] > m[("nopri", "stall_pct")]:
            stall_worse.append(f"{sc}/{st}")
        fp, fn = m[("pri", "freeze_rate_pct")], m[("nopri", "freeze_rate_pct")]
        ratios.append((f"{sc}/{st}", fn / fp if fp > 0 else (math.inf if fn > 0 else math.nan)))
    finite = [r for _, r in ratios if np.isfinite(r)]
    n_both_zero = sum(1 for _, r in ratios if math.isnan(r))
    n_pri_worse = sum(1 for _, r in ratios if np.isfinite(r) and r <= 1)
    n_pri_better = sum(1 for _, r in ratios if math.isinf(r) or r > 1)
    n_stall_worse = len(stall_worse)
    frames = (
        _mean(runs, "quick", "FB-4K-Low", "pri", "frames_displayed_guest")
        if not runs.empty
        else math.nan
    )
    if math.isnan(frames) and "frames_displayed_guest" in runs:
        frames = float(runs["frames_displayed_guest"].mean())
    lines += [
        "",
        "Freeze-rate ratios w/o ÷ w/ Pri measured: "
        + (", ".join(f"{n} {fmt(r)}" for n, r in ratios) or "none")
        + f". Largest finite: {fmt(max(finite)) if finite else '–'}.",
        "",
        "What an 82× ratio of freeze rates needs: with f frames displayed per run and w/ Pri "
        "freezing k ≥ 1 times per run, w/o Pri must freeze 82·k times in its f frames. Here f "
        f"is about {fmt(frames)} (the mean over w/ Pri's runs), so a single w/ Pri freeze "
        f"per run needs w/o Pri to freeze on {fmt(8200 / frames if frames else math.nan)} % of its "
        "frames, a freeze (≥ 150 ms) every few hundred ms, which libwebrtc's rule (a gap of at "
        "least 3× the recent mean) stops counting once gaps become the norm. Below one w/ Pri "
        "freeze per run the ratio is set by the denominator (a mean of 0.5 freezes per run "
        "doubles it, 0 makes it infinite), not by the mechanism: a ratio of averages over a "
        "handful of runs with a near-zero denominator is not a stable statistic.",
        "",
        f"In these runs: {n_both_zero} setting(s) with no freeze in either scheme (ratio 0/0), "
        f"{n_pri_worse} where w/ Pri froze at least as "
        f"often as w/o Pri, {n_pri_better} where w/o Pri froze more (largest finite ratio "
        f"{fmt(max(finite)) if finite else '–'}), and {n_stall_worse} where w/ Pri stalled "
        "longer than w/o Pri. Where w/ Pri stalls more, its freeze rate understates what the "
        "viewer sees: a stall is one long gap (one freeze at most, or none when the stream "
        "stops) while it costs seconds of display.",
        "",
    ]
    return lines


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def provenance(runs: pd.DataFrame, excl: pd.DataFrame) -> list[str]:
    lines = [
        "## What this rests on",
        "",
        "| scenario | setting | scheme | valid runs | duration (s) | CPU mean (%) |",
        "|---|---|---|---|---|---|",
    ]
    if not runs.empty:
        for (sc, st, s), g in runs.groupby(["scenario", "setting", "scheme"], sort=False):
            dur = "–"
            try:
                meta = json.loads((Path(g["path"].iloc[0]) / rundir.METADATA).read_text())
                dur = fmt(float(meta["run"]["duration_s"]))
            except (OSError, KeyError, ValueError):
                pass
            cpu = g["cpu_pct"].to_numpy(float)
            cpu_s = f"{np.nanmin(cpu):.0f}–{np.nanmax(cpu):.0f}" if np.isfinite(cpu).any() else "–"
            lines.append(f"| {sc} | {st} | {s} | {len(g)} | {dur} | {cpu_s} |")
    lines.append("")
    if not excl.empty:
        lines += ["Excluded runs (invalid):", ""]
        lines += [f"- {r.scenario}/{r.path}: {r.reasons}" for r in excl.itertuples()]
        lines.append("")
    ran = sorted({str(x) for t in (runs, excl) if not t.empty for x in t["scenario"]})
    lines += [f"Scenarios read: {', '.join(ran) or 'none'}.", ""]
    return lines


def map_section(points: Path | None, cells: Path | None) -> list[str]:
    from priolab.workloads.rise.rise_map import read_cells

    lines = ["## The regime map", ""]
    if cells and cells.is_file():
        c = read_cells(cells)
        col = "mtp_ratio_nopri"
        g = c.pivot(index="loss_pct", columns="queue_bdp", values=col)
        lines += [
            "The regime map (the real endpoints on the sim site, scenarios/maps/"
            "rise-loss-queue.yaml; `snakemake regime_map`), median MTP "
            "w/o Pri (head drop) ÷ w/ Pri, uplink iid loss (rows, %) × queue depth "
            "(columns, BDP):",
            "",
            "| loss \\ queue | " + " | ".join(f"{q:g}" for q in g.columns) + " |",
            "|---|" + "---|" * len(g.columns),
        ]
        for loss, row in g.iterrows():
            lines.append(f"| {loss:g} | " + " | ".join(fmt(x, 2) for x in row) + " |")
        lines.append("")
    if points and points.is_file():
        try:
            p = pd.read_csv(points)
        except pd.errors.EmptyDataError:
            p = pd.DataFrame()
        if not p.empty:
            lines += [
                "Real runs on the map (`snakemake rise_map`; figure: results/map/rise_map.png):",
                "",
                "| scenario/setting | loss | queue (BDP) | runs | median MTP ratio [CI] | "
                "stall ratio [CI] |",
                "|---|---|---|---|---|---|",
            ]
            for r in p.itertuples():
                m = (r.ratio_mtp_median_ms, r.ratio_low_mtp_median_ms, r.ratio_high_mtp_median_ms)
                s = (r.ratio_stall_time_s, r.ratio_low_stall_time_s, r.ratio_high_stall_time_s)
                lines.append(
                    f"| {r.scenario}/{r.setting} | {r.loss_model} {r.loss_pct:g} % | "
                    f"{r.queue_bdp:g} | {r.n_nopri}+{r.n_pri} | {ci(m)} | {ci(s)} |"
                )
            lines.append("")
    return lines


def body(runs: pd.DataFrame, excl: pd.DataFrame, points: Path | None, cells: Path | None
         ) -> list[str]:  # fmt: skip
    """The report's sections, from one site's runs and exclusions (`load`'s form)."""
    lines = [
        "Every mean is over a scheme's valid runs with its 95 % percentile bootstrap CI; a "
        "ratio is w/o Pri's mean ÷ the compared scheme's. Guest's perspective, after the "
        "warm-up. 'Regime' is read from the w/o Pri runs' diagnostics: window-limited when the "
        f"Guest's sender was transport-limited ≥ {WINDOW_LIMITED_PCT:g} % of the time.",
        "",
    ]
    lines += explanation(runs)
    lines += regime_table(runs, excl)
    lines += freeze_section(runs)
    lines += freeze_map_section(runs)
    lines += keyframe_section(runs)
    lines += phase_section(runs)
    lines += map_section(points, cells)
    lines += provenance(runs, excl)
    return lines


def report(dirs: list[Path], points: Path | None, cells: Path | None) -> str:
    runs, excl = load(dirs)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = (
        " (with uncommitted changes)"
        if _git("status", "--porcelain", "--untracked-files=no")
        else ""
    )
    lines = [
        "# RISE mechanisms report",
        "",
        "Generated by `python -m priolab.workloads.rise.reproduction` (`snakemake reproduction`) "
        "at commit "
        f'{commit}{dirty}, {now}, from the runs listed under "What this rests on". The '
        "paper's claims and their verdicts are on the RISE results page (`make docs`).",
        "",
        "Paper: [RISE] (Lin et al., MMAsia 2025), section 4; setup: [RISE setup] "
        "(docs/rise-setup.md; the keys: docs/bibliography.md).",
        "",
    ]
    lines += body(runs, excl, points, cells)
    return "\n".join(lines).rstrip() + "\n"


def from_rows(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`load`'s (runs, exclusions) from a page's rows (analysis/verdicts.py ROW_COLUMNS:
    valid and invalid runs of one results folder): `setting` becomes `<setting>/<speed>` in
    a scenario whose runs have several speeds, and each valid run gets its CPU share."""
    if rows.empty:
        return pd.DataFrame(), pd.DataFrame()
    rows = rows.copy()
    speeds = rows.groupby("scenario")["speed"].transform("nunique")
    label = rows["setting"].astype(str) + "/" + rows["speed"].astype(str)
    rows["setting"] = np.where(speeds > 1, label, rows["setting"].astype(str))
    valid = rows["valid"].astype(bool)
    runs, excl = rows[valid].copy(), rows[~valid].copy()
    if not runs.empty:
        runs["cpu_pct"] = [_cpu(_meta(Path(str(p)))) for p in runs.get("path", [""] * len(runs))]
    return runs.reset_index(drop=True), excl.reset_index(drop=True)


SIM_TREES = ("sim", "results-sim")
"""The names of a tree of the sim site's runs: materialised from the evidence store, or the
workflow's results tree."""


def page_sections(ctx: PageContext) -> list[str]:
    """The RISE results page's own sections (a section hook): the mechanisms report per
    site's tree, never pooled, each under its site and saying what stale records it rests
    on; then the regime map and the map of the real runs on it (maps.py), drawn from the
    trees. The regime map's cells are the sim tree's (the map's grid runs on sim), else the
    tree's own."""
    from priolab.evidence import marks
    from priolab.workloads.rise import maps, picture

    out: list[str] = []
    sim_tree = next((t for t in ctx.trees if t.name in SIM_TREES), None)
    if sim_tree is not None:
        maps.derive(sim_tree)
    for tree in ctx.trees:
        if tree is not sim_tree:
            maps.derive(tree, cells=maps.cells_file(sim_tree) if sim_tree else None)
    for tree in ctx.trees:
        mine = ctx.rows[ctx.rows["tree"] == tree.name] if "tree" in ctx.rows else ctx.rows
        runs, excl = from_rows(mine)
        if runs.empty and excl.empty:
            continue
        sites = " and ".join(sorted({str(x) for x in runs.get("site", [])})) or "no"
        pts = tree / maps.MAP / "rise_map_points.csv"
        cells = maps.cells_file(sim_tree or tree)
        out += [f"## Mechanisms on the {sites} site", ""]
        stale = [f"{sc}: {marks.stale_count(g)} of {len(g)}" for sc, g in mine.groupby("scenario")
                 if marks.stale_count(g)]  # fmt: skip
        if stale:
            out += ['!!! warning "What this report rests on"',
                    "    Stale records (made by other code than this page's; `make "
                    f"book-refresh` reruns them): {'; '.join(stale)}.", ""]  # fmt: skip
        out += [*demote(body(runs, excl, pts if pts.is_file() else None,
                             cells if cells.is_file() else None)), ""]  # fmt: skip
        fig7 = [tree / n for n in picture.FIG7_SCENARIOS if (tree / n / "runs.csv").is_file()]
        out += demote(picture.section(tree / "picture" / "runs.csv", fig7))
    if ctx.out_dir is not None:
        out += maps.section(list(ctx.trees), ctx.out_dir)
    return out


def demote(lines: list[str]) -> list[str]:
    """The lines with every heading one level deeper (outside code blocks)."""
    out, code = [], False
    for line in lines:
        if line.startswith("```"):
            code = not code
        out.append("#" + line if not code and line.startswith("#") else line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m priolab.workloads.rise.reproduction", description=__doc__
    )
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--points", type=Path)
    ap.add_argument("--cells", type=Path)
    ap.add_argument("scenario_dirs", type=Path, nargs="*")
    args = ap.parse_args(argv)
    text = report(args.scenario_dirs, args.points, args.cells)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
