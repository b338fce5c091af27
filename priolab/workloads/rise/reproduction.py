"""The reproduction report (issue 10 item 8): each claim of the paper against priolab's runs.

    python -m priolab.workloads.rise.reproduction --out REPRODUCTION.md
        [--points rise_map_points.csv] [--cells regime_map.csv] SCENARIO_DIR [SCENARIO_DIR ...]

Each SCENARIO_DIR is an aggregated results folder (runs.csv: one row per valid run;
exclusions.csv: the invalid ones). For every claim of the paper's Fig. 5, 6, 8, 9 and 10 (the
CLAIMS table below, quoted from [RISE §4]), the report gives priolab's number on
every path where that setting ran (the paper's link as given, and the regime map's
window-limited path), with the 95 % bootstrap CI over runs, the regime the runs were in (read
from the runs' own diagnostics, not from the setting's name) and whether the paper's value
lies inside, above or below the CI. Freezes get their own section: the freeze rate beside
stalls and displayed fps, and what would be needed for the paper's 82×.

Writes the markdown to --out; the commit and the date on top come from `git` and the clock.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

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
IDEAL, WL = "paper's link", "window-limited (map)"
# (scenario, setting, path) for each of the paper's settings, in order of preference per path
PLACES: dict[str, list[tuple[str, str, str]]] = {
    "5G-FHD-Low": [
        ("rise-transport", "5G-FHD-Low", IDEAL),
        ("rise-transport-wl", "5G-FHD-Low", WL),
    ],
    "FB-4K-Low": [
        ("quick", "FB-4K-Low", IDEAL),
        ("rise-transport", "FB-4K-Low", IDEAL),
        ("quick", "FB-4K-Low-L0.05", WL),
        ("rise-transport-wl", "FB-4K-Low", WL),
    ],
    "FB-4K-High": [
        ("rise-transport", "FB-4K-High", IDEAL),
        ("rise-transport-wl", "FB-4K-High", WL),
    ],
    "direction": [
        ("rise-direction", "FB-4K-Low", IDEAL),
        ("rise-direction-wl", "FB-4K-Low-L0.05", WL),
    ],
}
# Fig. 6 per movement speed: rise-content(-wl) run each setting at several speeds, so their rows
# are `<setting>/<speed>` (runs.csv `setting_label`; `load` keeps speeds apart). The moderate
# speed is every rise-transport(-wl) run (40 deg/s): rise-content(-wl) run only slow and fast.
SPEEDS = ("slow", "moderate", "fast")
for _st in ("5G-FHD-Low", "FB-4K-Low"):
    for _sp in SPEEDS:
        PLACES[f"{_st}/{_sp}"] = [
            ("rise-content", f"{_st}/{_sp}", IDEAL),
            ("rise-content-wl", f"{_st}/{_sp}", WL),
        ]
    PLACES[f"{_st}/moderate"] = PLACES[_st] + PLACES[f"{_st}/moderate"]
FIG6_SETTINGS = ("5G-FHD-Low", "FB-4K-Low")
ALL_BITRATES = tuple(f"V{b}M" for b in (15, 20, 25, 30, 35, 40))  # Fig. 10
for _b in (15, 20, 25, 30, 35, 40):
    PLACES[f"V{_b}M"] = [("rise-bitrate", f"V{_b}M", IDEAL), ("rise-bitrate-wl", f"V{_b}M", WL)]
PLACES["V30M"].insert(1, ("quick", "FB-4K-Low-L0.05", WL))


@dataclass(frozen=True)
class Claim:
    """One number of the paper: `metric` of `base` ÷ `scheme` (a reduction factor), or, when
    `scheme` is empty, `metric` of `base` itself (an absolute value), at the places `where`."""

    figure: str
    text: str
    paper: tuple[float, float]  # the paper's value or range
    metric: str
    where: tuple[str, ...]
    base: str = "nopri"
    scheme: str = "pri"
    upper_bound: bool = False  # the paper's claim is "below paper[1]" (an absolute bound)
    qualitative: bool = False  # the paper gives no number ("near zero"): the value is shown


CLAIMS = [
    Claim(
        "Fig. 5", "5G/FHD/Low: median MTP 2× lower w/ Pri", (2, 2), "mtp_median_ms", ("5G-FHD-Low",)
    ),
    Claim(
        "Fig. 5",
        "FB/4K/Low: median MTP 9.4× lower w/ Pri",
        (9.4, 9.4),
        "mtp_median_ms",
        ("FB-4K-Low",),
    ),
    Claim(
        "Fig. 5",
        "FB/4K/High: median MTP 8.8× lower w/ Pri",
        (8.8, 8.8),
        "mtp_median_ms",
        ("FB-4K-High",),
    ),
    Claim(
        "Fig. 5",
        "p95 MTP 2.3–5.7× lower across the three settings",
        (2.3, 5.7),
        "mtp_p95_ms",
        ("5G-FHD-Low", "FB-4K-Low", "FB-4K-High"),
    ),
    Claim(
        "Fig. 5",
        "p99 MTP 1.3–5.3× lower across the three settings",
        (1.3, 5.3),
        "mtp_p99_ms",
        ("5G-FHD-Low", "FB-4K-Low", "FB-4K-High"),
    ),
    Claim(
        "Fig. 5",
        "5G/FHD/Low: freeze rate 82× lower w/ Pri",
        (82, 82),
        "freeze_rate_pct",
        ("5G-FHD-Low",),
    ),
    Claim(
        "Fig. 5",
        "FB: freeze rate more than 8× lower w/ Pri",
        (8, math.inf),
        "freeze_rate_pct",
        ("FB-4K-Low", "FB-4K-High"),
    ),
    Claim(
        "Fig. 5",
        "w/ Pri keeps the freeze rate below 1 % (%)",
        (0, 1),
        "freeze_rate_pct",
        ("5G-FHD-Low", "FB-4K-Low", "FB-4K-High"),
        base="pri",
        scheme="",
        upper_bound=True,
    ),
    # Fig. 6 ([RISE §4.3]): "zero median mismatch under slow movement and reduces
    # 95th and 99th percentile mismatches by 2.5 – 7.8× and 1.8 – 6.4×"; "For moderate and fast
    # movement ... median reductions reach 2.1 – 11× in 5G networks and 1.5 – 15× in fixed
    # broadband networks; 95th and 99th percentile improvements range from 3 – 7× and 2.5 – 4×
    # for moderate movement, and 2.5 – 28× and 4 – 18× for fast movement."
    Claim(
        "Fig. 6",
        "slow movement: w/ Pri's median position mismatch is zero (°)",
        (0, 0),
        "mismatch_median_deg",
        tuple(f"{s}/slow" for s in FIG6_SETTINGS),
        base="pri",
        scheme="",
    ),
    Claim(
        "Fig. 6",
        "slow movement: p95 position mismatch 2.5–7.8× lower",
        (2.5, 7.8),
        "mismatch_p95_deg",
        tuple(f"{s}/slow" for s in FIG6_SETTINGS),
    ),
    Claim(
        "Fig. 6",
        "slow movement: p99 position mismatch 1.8–6.4× lower",
        (1.8, 6.4),
        "mismatch_p99_deg",
        tuple(f"{s}/slow" for s in FIG6_SETTINGS),
    ),
    Claim(
        "Fig. 6",
        "FB, moderate movement: median position mismatch 1.5–15× lower",
        (1.5, 15),
        "mismatch_median_deg",
        ("FB-4K-Low/moderate", "FB-4K-High"),
    ),
    Claim(
        "Fig. 6",
        "5G, moderate movement: median position mismatch 2.1–11× lower",
        (2.1, 11),
        "mismatch_median_deg",
        ("5G-FHD-Low/moderate",),
    ),
    Claim(
        "Fig. 6",
        "moderate movement: p95 position mismatch 3–7× lower",
        (3, 7),
        "mismatch_p95_deg",
        ("5G-FHD-Low/moderate", "FB-4K-Low/moderate", "FB-4K-High"),
    ),
    Claim(
        "Fig. 6",
        "moderate movement: p99 position mismatch 2.5–4× lower",
        (2.5, 4),
        "mismatch_p99_deg",
        ("5G-FHD-Low/moderate", "FB-4K-Low/moderate", "FB-4K-High"),
    ),
    Claim(
        "Fig. 6",
        "FB, fast movement: median position mismatch 1.5–15× lower",
        (1.5, 15),
        "mismatch_median_deg",
        ("FB-4K-Low/fast",),
    ),
    Claim(
        "Fig. 6",
        "5G, fast movement: median position mismatch 2.1–11× lower",
        (2.1, 11),
        "mismatch_median_deg",
        ("5G-FHD-Low/fast",),
    ),
    Claim(
        "Fig. 6",
        "fast movement: p95 position mismatch 2.5–28× lower",
        (2.5, 28),
        "mismatch_p95_deg",
        tuple(f"{s}/fast" for s in FIG6_SETTINGS),
    ),
    Claim(
        "Fig. 6",
        "fast movement: p99 position mismatch 4–18× lower",
        (4, 18),
        "mismatch_p99_deg",
        tuple(f"{s}/fast" for s in FIG6_SETTINGS),
    ),
    Claim(
        "Fig. 8",
        "Pri-U: median MTP 9× lower than w/o Pri",
        (9, 9),
        "mtp_median_ms",
        ("direction",),
        scheme="pri-u",
    ),
    Claim(
        "Fig. 8",
        "Pri-U: freeze rate 32× lower than w/o Pri",
        (32, 32),
        "freeze_rate_pct",
        ("direction",),
        scheme="pri-u",
    ),
    Claim(
        "Fig. 8",
        "Pri-D: median MTP 2× lower than w/o Pri",
        (2, 2),
        "mtp_median_ms",
        ("direction",),
        scheme="pri-d",
    ),
    Claim(
        "Fig. 8",
        "Pri-D: freeze rate 2.4× lower than w/o Pri",
        (2.4, 2.4),
        "freeze_rate_pct",
        ("direction",),
        scheme="pri-d",
    ),
    Claim(
        "Fig. 9",
        "Pri-D: the Host's retransmission rate similar to w/o Pri (ratio ≈ 1)",
        (1, 1),
        "retx_rate_pct_host",
        ("direction",),
        scheme="pri-d",
    ),
    Claim(
        "Fig. 9",
        "Pri-D: the Host encodes half as many key frames (ratio ≈ 2)",
        (2, 2),
        "keyframe_rate_pct_host",
        ("direction",),
        scheme="pri-d",
    ),
    Claim(
        "Fig. 9",
        "Pri-D: the Guest almost never retransmits (%)",
        (0, 0),
        "retx_rate_pct_guest",
        ("direction",),
        base="pri-d",
        scheme="",
        qualitative=True,
    ),
    Claim(
        "Fig. 9",
        "Pri-U: the Host's retransmission rate near zero (%)",
        (0, 0),
        "retx_rate_pct_host",
        ("direction",),
        base="pri-u",
        scheme="",
        qualitative=True,
    ),
    Claim(
        "Fig. 10",
        "above 25 Mbit/s: median MTP 7–9× lower",
        (7, 9),
        "mtp_median_ms",
        ("V30M", "V35M", "V40M"),
    ),
    Claim(
        "Fig. 10",
        "above 25 Mbit/s: p95 MTP 1.3–10× lower",
        (1.3, 10),
        "mtp_p95_ms",
        ("V30M", "V35M", "V40M"),
    ),
    Claim(
        "Fig. 10",
        "above 25 Mbit/s: freeze rate 4–12× lower",
        (4, 12),
        "freeze_rate_pct",
        ("V30M", "V35M", "V40M"),
    ),
    Claim("Fig. 10", "15 Mbit/s: p95 MTP 10× lower", (10, 10), "mtp_p95_ms", ("V15M",)),
    Claim(
        "Fig. 10",
        "every bitrate: w/ Pri median MTP below 103 ms (ms)",
        (0, 103),
        "mtp_median_ms",
        ALL_BITRATES,
        base="pri",
        scheme="",
        upper_bound=True,
    ),
    Claim(
        "Fig. 10",
        "every bitrate: w/ Pri freeze rate below 2 % (%)",
        (0, 2),
        "freeze_rate_pct",
        ALL_BITRATES,
        base="pri",
        scheme="",
        upper_bound=True,
    ),
]


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


# The verdict of a claim, as a code (what book_claims.py decides on) and as the report's text.
VERDICTS = {
    "undefined": "undefined (0/0: neither scheme had any)",
    "no-number": "the paper gives no number: compare the value",
    "no-ci": "no CI (one run): compare the value",
    "holds": "holds (CI below the bound)",
    "fails": "does not hold (CI above the bound)",
    "straddles": "CI straddles the bound",
    "lower": "priolab lower (CI below the paper)",
    "higher": "priolab higher (CI above the paper)",
    "inside": "paper's value inside the CI",
}


def verdict_code(c: Claim, v: tuple[float, float, float]) -> str:
    """Where the paper's value lies against priolab's value and CI: a key of VERDICTS."""
    lo, hi = c.paper
    x, a, b = v
    if math.isnan(x):
        return "undefined"
    if c.qualitative:
        return "no-number"
    if math.isnan(a) or math.isnan(b):
        return "no-ci"
    if c.upper_bound:
        return "holds" if b < hi else ("fails" if a >= hi else "straddles")
    if b < lo:
        return "lower"
    if a > hi:
        return "higher"
    return "inside"


def verdict(c: Claim, v: tuple[float, float, float]) -> str:
    return VERDICTS[verdict_code(c, v)]


def evaluate(c: Claim, runs: pd.DataFrame) -> list[dict[str, object]]:
    """priolab's number for claim c at every place where its setting ran."""
    out: list[dict[str, object]] = []
    for where in c.where:
        for sc, st, path in PLACES[where]:
            a = _values(runs, sc, st, c.base, c.metric)
            if not a:
                continue
            row: dict[str, object] = {"path": path, "place": f"{sc}/{st}", "n": f"{len(a)}"}
            if c.scheme:
                b = _values(runs, sc, st, c.scheme, c.metric)
                if not b:
                    continue
                if np.mean(b) == 0:
                    v = (math.inf,) * 3 if np.mean(a) > 0 else (math.nan,) * 3
                else:
                    v = bootstrap_ratio_ci(a, b)
                row.update(a=bootstrap_ci(a)[:3], b=bootstrap_ci(b)[:3], n=f"{len(a)}+{len(b)}")
            else:
                v = bootstrap_ci(a)[:3]
            code = verdict_code(c, v)
            row.update(v=v, regime=regime(runs, sc, st), code=code, verdict=VERDICTS[code])
            out.append(row)
    return out


def claim_rows(c: Claim, rows: list[dict[str, object]]) -> list[str]:
    out = []
    for r in rows:
        if c.scheme:
            vals = f"{ci(r['a'])} | {ci(r['b'])} | {ci(r['v'])}"  # type: ignore[arg-type]
        else:
            vals = f"{ci(r['v'])} | | "  # type: ignore[arg-type]
        out.append(
            f"| {r['path']} | {r['place']} | {vals} | {r['n']} | {r['regime']} | {r['verdict']} |"
        )
    return out


def summary_table(evaluated: list[tuple[Claim, list[dict[str, object]]]]) -> list[str]:
    """One line per claim: priolab's number on each path (the first place that ran)."""
    lines = [
        "## Summary",
        "",
        f"| figure | claim | paper | {IDEAL} | {WL} |",
        "|---|---|---|---|---|",
    ]
    for c, rows in evaluated:
        cells = []
        for path in (IDEAL, WL):
            got = [r for r in rows if r["path"] == path]
            cells.append(
                "; ".join(
                    f"{ci(r['v'])} ({r['place']}, {r['n']} runs; {r['verdict']})"  # type: ignore[arg-type]
                    for r in got
                )
                or "not run"
            )
        lines.append(f"| {c.figure} | {c.text} | {paper_text(c)} | {cells[0]} | {cells[1]} |")
    lines.append("")
    return lines


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


def provenance(runs: pd.DataFrame, excl: pd.DataFrame, dirs: list[Path]) -> list[str]:
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
    ran = {d.name for d in dirs}
    missing = sorted({sc for v in PLACES.values() for sc, _, _ in v} - ran)
    lines += [
        f"Scenarios read: {', '.join(sorted(ran)) or 'none'}. Not run for this report (their "
        f"claims show no row for that path): {', '.join(missing) or 'none'}.",
        "",
    ]
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
        "# RISE reproduction report",
        "",
        "Generated by `python -m priolab.workloads.rise.reproduction` (`snakemake reproduction`) "
        "at commit "
        f'{commit}{dirty}, {now}, from the runs listed under "What this rests on".',
        "",
        "Paper: [RISE] (Lin et al., MMAsia 2025), section 4; setup: [RISE setup] "
        "(docs/rise-setup.md; the keys: docs/bibliography.md). "
        "Every ratio is the mean over runs of w/o Pri (or the named scheme's baseline) ÷ the "
        "mean of the compared scheme, with a 95 % percentile bootstrap CI that resamples each "
        "scheme's runs independently; absolute values are means with their bootstrap CI. "
        "Guest's perspective, after the warm-up. Two paths: the paper's link as [RISE setup] "
        "gives it (70 Mbit/s shaped uplink, one BDP drop-tail queue, no random loss), and the "
        "map's window-limited path (the same with 0.05 % iid uplink loss). 'Regime' is read "
        f"from the w/o Pri runs' diagnostics: window-limited when the Guest's sender was "
        f"transport-limited ≥ {WINDOW_LIMITED_PCT:g} % of the time.",
        "",
    ]
    evaluated = [(c, evaluate(c, runs)) for c in CLAIMS]
    lines += summary_table(evaluated)
    lines += explanation(runs)
    lines += regime_table(runs, excl)
    lines += freeze_section(runs)
    lines += freeze_map_section(runs)
    lines += keyframe_section(runs)
    lines += phase_section(runs)
    lines += map_section(points, cells)
    lines += ["## The paper's claims, in detail", ""]
    head = (
        "| path | scenario/setting | baseline | compared | ratio [CI] | runs | regime | "
        "paper's value vs CI |"
    )
    for c, ev in evaluated:
        lines += [f"### {c.figure}: {c.text} — paper: {paper_text(c)}", ""]
        rows = claim_rows(c, ev)
        if not rows:
            lines += ["No run of this setting in this report.", ""]
            continue
        if c.scheme:
            lines += [
                head.replace("baseline", c.base).replace("compared", c.scheme),
                "|---|---|---|---|---|---|---|---|",
            ]
        else:
            lines += [
                f"| path | scenario/setting | {c.base} [CI] | | | runs | regime | bound |",
                "|---|---|---|---|---|---|---|---|",
            ]
        lines += [*rows, ""]
    lines += provenance(runs, excl, dirs)
    return "\n".join(lines).rstrip() + "\n"


def paper_text(c: Claim) -> str:
    lo, hi = c.paper
    if c.qualitative:
        return "near 0 (no number)"
    if c.upper_bound:
        return f"< {fmt(hi)}"
    if math.isinf(hi):
        return f"> {fmt(lo)}×"
    return f"{fmt(lo)}×" if lo == hi else f"{fmt(lo)}–{fmt(hi)}×"


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
