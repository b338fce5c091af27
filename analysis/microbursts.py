"""Microbursts (the paper's Fig. 2): throughput per direction in 1 ms windows over half a
second, from linkem's packet log.

    python -m analysis.microbursts RUN_DIR [--start-s S] [--span-s 0.5] [--window-ms 1]

Reads RUN_DIR/linkem-packets.log (written when the scenario sets `link: {packet_log: true}`
and the userspace backend runs; netem/README.md, "Stats and packet log") and writes
RUN_DIR/figures/microbursts.png/.pdf/.txt and RUN_DIR/figures/microbursts.csv.

Per direction (a_to_b = uplink, Guest → Host; b_to_a = downlink) and per window:
- `sent_mbps`: bytes of the frames that left linkem in the window (by `t_out_us`) × 8 / window;
- `offered_mbps`: bytes of every frame that arrived at linkem in the window (by `t_in_us`,
  dropped ones included);
- `dropped_mbps`: bytes of the frames dropped on arrival in the window (queue, policer,
  oversized) plus those lost after the delay line (by `t_in_us`).
Bytes are Ethernet frames as linkem counts them. Times are linkem's (s since it started
forwarding), not the endpoints' clocks. Default window start: the middle of the log's span.
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
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.logs import AnalysisError  # noqa: E402
from ground import rundir  # noqa: E402

PACKET_LOG = rundir.PACKET_LOG
FIGURE_NAME = "microbursts"
DIRECTIONS = {"a_to_b": "uplink (Guest → Host)", "b_to_a": "downlink (Host → Guest)"}
FATES = {"sent", "drop_queue", "drop_loss", "drop_police", "oversized", "tx_error"}
COLUMNS = ["dir", "t_in_us", "t_out_us", "bytes", "fate"]


def read_packet_log(path: Path) -> pd.DataFrame:
    """The packet log as a table (COLUMNS). `tx_error` lines carry no packet and are left
    out; a last line without its newline (linkem killed mid-write) is dropped. Any other bad
    line is an AnalysisError naming the file and the line."""
    try:
        text = path.read_text()
    except OSError as e:
        raise AnalysisError(f"{path}: cannot read: {e.strerror}") from e
    lines = text.split("\n")
    if lines and lines[-1] != "":
        lines = lines[:-1]  # cut mid-line
    rows: list[tuple[Any, ...]] = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            row = (r["dir"], float(r["t_in_us"]), float(r["t_out_us"]), int(r["bytes"]), r["fate"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            raise AnalysisError(f"{path}: line {i}: not a packet-log record ({e})") from e
        if row[0] not in DIRECTIONS or row[4] not in FATES:
            raise AnalysisError(
                f"{path}: line {i}: dir must be one of {sorted(DIRECTIONS)} and fate one of "
                f"{sorted(FATES)}, got {row[0]!r} / {row[4]!r}"
            )
        if row[4] != "tx_error":
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def throughput_windows(
    log: pd.DataFrame, start_s: float, span_s: float = 0.5, window_ms: float = 1.0
) -> pd.DataFrame:
    """One row per direction and window in [start_s, start_s + span_s): `dir`, `t_s` (the
    window's start), `sent_mbps`, `offered_mbps`, `dropped_mbps`."""
    if span_s <= 0 or window_ms <= 0:
        raise ValueError("span_s and window_ms must be > 0")
    n = int(round(span_s * 1000.0 / window_ms))
    edges_us = start_s * 1e6 + np.arange(n + 1) * window_ms * 1e3
    to_mbps = 8.0 / (window_ms * 1e3)  # bytes per window → Mbit/s (bits per µs)
    out = []
    for d in DIRECTIONS:
        g = log[log["dir"] == d]
        sent = g[g["fate"] == "sent"]
        dropped = g[g["fate"] != "sent"]

        def binned(t_us: pd.Series, b: pd.Series) -> np.ndarray:
            h, _ = np.histogram(t_us.to_numpy(), bins=edges_us, weights=b.to_numpy(float))
            return h * to_mbps

        out.append(
            pd.DataFrame(
                {
                    "dir": d,
                    "t_s": edges_us[:-1] / 1e6,
                    "sent_mbps": binned(sent["t_out_us"], sent["bytes"]),
                    "offered_mbps": binned(g["t_in_us"], g["bytes"]),
                    "dropped_mbps": binned(dropped["t_in_us"], dropped["bytes"]),
                }
            )
        )
    return pd.concat(out, ignore_index=True)


def default_start_s(log: pd.DataFrame, span_s: float) -> float:
    """The middle of the log's span (rounded down to a ms), or 0 for an empty log."""
    if log.empty:
        return 0.0
    t = np.concatenate([log["t_in_us"].to_numpy(), log["t_out_us"].to_numpy()]) / 1e6
    mid = (float(t.min()) + float(t.max()) - span_s) / 2.0
    return max(0.0, math.floor(mid * 1000.0) / 1000.0)


def configured_rates_mbps(run_dir: Path) -> dict[str, float]:
    """Each direction's constant or policer rate from RUN_DIR/linkem.json (if any)."""
    p = run_dir / rundir.LINKEM_CONFIG
    try:
        cfg = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    out = {}
    for d in DIRECTIONS:
        rate = (cfg.get(d) or {}).get("rate") or {}
        if rate.get("kind") in ("constant", "policer"):
            out[d] = float(rate["rate_bps"]) / 1e6
    return out


def plot(windows: pd.DataFrame, rates_mbps: dict[str, float], window_ms: float) -> plt.Figure:
    fig, axes = plt.subplots(len(DIRECTIONS), 1, figsize=(9, 5.5), sharex=True)
    for ax, (d, name) in zip(axes, DIRECTIONS.items(), strict=True):
        w = windows[windows["dir"] == d]
        t_ms = (w["t_s"].to_numpy() - windows["t_s"].min()) * 1000.0
        ax.bar(t_ms, w["sent_mbps"], width=window_ms, align="edge", lw=0,
               color="tab:blue", label="left linkem")  # fmt: skip
        ax.step(t_ms, w["offered_mbps"], where="post", lw=0.6, color="tab:orange",
                label="arrived at linkem")  # fmt: skip
        if w["dropped_mbps"].any():
            ax.step(t_ms, w["dropped_mbps"], where="post", lw=0.6, color="tab:red",
                    label="dropped")  # fmt: skip
        if d in rates_mbps:
            ax.axhline(rates_mbps[d], ls="--", lw=0.8, color="black",
                       label=f"configured rate {rates_mbps[d]:g} Mbit/s")  # fmt: skip
        ax.set_ylabel(f"Mbit/s per {window_ms:g} ms")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1].set_xlabel("time (ms) from the window start")
    fig.tight_layout()
    return fig


def make_figure(
    run_dir: Path,
    out_dir: Path | None = None,
    *,
    start_s: float | None = None,
    span_s: float = 0.5,
    window_ms: float = 1.0,
    name: str = FIGURE_NAME,
) -> list[Path]:
    """Draw RUN_DIR's microburst figure; returns the PNG, PDF and CSV paths. Raises
    AnalysisError when the run has no packet log."""
    from analysis.figures import save  # late: figures imports seaborn and the aggregates

    path = run_dir / PACKET_LOG
    if not path.is_file():
        raise AnalysisError(
            f"{path}: no packet log; set `link: {{packet_log: true}}` in the scenario "
            "(userspace backend) and run again"
        )
    log = read_packet_log(path)
    start = default_start_s(log, span_s) if start_s is None else start_s
    windows = throughput_windows(log, start, span_s, window_ms)
    out = out_dir or run_dir / "figures"
    fig = plot(windows, configured_rates_mbps(run_dir), window_ms)
    caption = (
        f"Throughput per direction in {window_ms:g} ms windows over {span_s:g} s "
        f"(linkem time {start:.3f}–{start + span_s:.3f} s) of run {run_dir}, from linkem's "
        "packet log: bars are the frame bytes that left the emulator per window, the orange "
        "line what arrived, the red line what was dropped (queue, policer, loss), the dashed "
        "line the configured rate. Ethernet frame bytes, as linkem counts them (cf. the "
        "paper's Fig. 2)."
    )
    paths = save(fig, out, name, caption)
    csv = out / f"{name}.csv"
    windows.to_csv(csv, index=False)
    return [*paths, csv]


def fig_microbursts(runs: pd.DataFrame, out: Path) -> list[str]:
    """The figures hook: `microbursts_<scheme>` for the run `timeseries_<scheme>` shows when it
    has a packet log, else for the first run of that scheme (settings in order, then reps) that
    has one: a scenario may log packets in one setting only (link.packet_log)."""
    from analysis.figures import pick_run

    notes = []
    for scheme in dict.fromkeys(runs["scheme"]):
        r = pick_run(runs, scheme)
        if r is None:
            continue
        candidates = [Path(r["path"])] + [
            Path(p)
            for p in runs.loc[runs["scheme"] == scheme, "path"]
            if Path(p) != Path(r["path"])
        ]
        logged = [d for d in candidates if (d / PACKET_LOG).is_file()]
        if not logged:
            notes.append(f"{FIGURE_NAME}_{scheme}: no run has {PACKET_LOG} "
                         "(scenario key link.packet_log)")  # fmt: skip
            continue
        make_figure(logged[0], out, name=f"{FIGURE_NAME}_{scheme}")
    return notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.microbursts", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--start-s", type=float, default=None, help="window start (linkem time)")
    ap.add_argument("--span-s", type=float, default=0.5)
    ap.add_argument("--window-ms", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=None, help="default: RUN_DIR/figures")
    args = ap.parse_args(argv)
    try:
        made = make_figure(args.run_dir, args.out, start_s=args.start_s, span_s=args.span_s,
                           window_ms=args.window_ms)  # fmt: skip
    except (AnalysisError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for p in made:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
