"""Microbursts (the paper's Fig. 2): throughput per direction in 1 ms windows over half a
second, from linkem's packet log.

    python -m analysis.microbursts RUN_DIR [--start-s S] [--span-s 0.5] [--window-ms 1]

Reads RUN_DIR/linkem-packets.log (written when the scenario sets `link: {packet_log: true}`
and the userspace backend runs; netem/README.md, "Stats and packet log") and writes
RUN_DIR/figures/microbursts.png/.pdf/.txt and RUN_DIR/figures/microbursts.csv.

The windows (sent, offered, dropped Mbit/s per direction) are analysis/packet_log.py's; a
scenario's figures draw `microbursts_<scheme>` from the figure data of a run that logged
packets (`fig_microbursts`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.logs import AnalysisError  # noqa: E402
from analysis.packet_log import (  # noqa: E402
    COLUMNS_OUT,
    DIRECTIONS,
    PACKET_LOG,
    SPAN_S,
    WINDOW_MS,
    configured_rates_mbps,
    default_start_s,
    read_packet_log,
    throughput_windows,
)

FIGURE_NAME = "microbursts"


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
    has a packet log, else for the first run of that scheme (settings in order, then reps)
    whose figure data holds one (`windows_data`, kept for repetition 1): a scenario may log
    packets in one setting only (link.packet_log)."""
    from analysis.figure_data import read
    from analysis.figures import pick_run, save

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
        found = next(((d, fd["microbursts"]) for d in candidates
                      if "microbursts" in (fd := read(d))), None)  # fmt: skip
        if found is None:
            notes.append(f"{FIGURE_NAME}_{scheme}: no run has {PACKET_LOG} "
                         "(scenario key link.packet_log)")  # fmt: skip
            continue
        run_dir, data = found
        w = pd.DataFrame({k: data[k] for k in COLUMNS_OUT})
        rates = {d: float(data[f"rate_{d}"][0]) for d in DIRECTIONS if f"rate_{d}" in data}
        start = float(w["t_s"].min()) if len(w) else 0.0
        save(plot(w, rates, WINDOW_MS), out, f"{FIGURE_NAME}_{scheme}",
             f"Throughput per direction in {WINDOW_MS:g} ms windows over {SPAN_S:g} s "
             f"(linkem time {start:.3f}–{start + SPAN_S:.3f} s) of run "
             f"{'/'.join(run_dir.parts[-4:])} (setting/scheme/speed/rep), from linkem's "
             "packet log: bars are the frame bytes that left the emulator per window, the "
             "orange line what arrived, the red line what was dropped (queue, policer, loss), "
             "the dashed line the configured rate. Ethernet frame bytes, as "
             "linkem counts them (cf. the paper's Fig. 2).")  # fmt: skip
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
