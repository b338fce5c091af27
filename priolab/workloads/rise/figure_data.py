"""The compact data the `rise` figures draw (analysis/figure_data.py), from one run's tables.

- `mtp`, `mismatch`: the quantile vectors of the MTP latency (ms) and the position mismatch
  (°) of every frame displayed at the Guest (tables/guest_frames.parquet): the CDFs of
  Figs. 5, 6 and 8 pool them over runs;
- for repetition ONE_RUN_REP only, the one-run time series of `timeseries_<scheme>`
  (`path_rate`: each endpoint's sending rate from its 100 ms QUIC path stats; `link`:
  linkem's 1 s departures and queue per direction; `frames`: every displayed frame's MTP and
  whether it ended a freeze; `stalls`: the display gaps; `window`: the end of the warm-up and
  the figure's title line), times in s from the first endpoint sample; and `microbursts`
  (analysis/microbursts.py: the Fig. 2-style 1 ms windows) when the run logged packets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.figure_data import ONE_RUN_REP, FigureData, quantiles, sigs
from analysis.packet_log import windows_data
from priolab.workloads.rise.stalls import Window, stall_spans_us, stalls
from priolab.workloads.rise.tables import TABLES_DIR, load_tables


def figure_data(run_dir: Path, meta: dict[str, Any], analysis: dict[str, Any]) -> FigureData:
    """`analysis`: metrics.json's `analysis` block (the warm-up window the metrics used)."""
    p = run_dir / TABLES_DIR / "guest_frames.parquet"
    gf = pd.read_parquet(p) if p.is_file() else pd.DataFrame(columns=["display_time_us",
                                                                       "mtp_ms", "freeze",
                                                                       "mismatch_deg"])  # fmt: skip
    out: FigureData = {"mtp": quantiles(gf["mtp_ms"]), "mismatch": quantiles(gf["mismatch_deg"])}
    if int((meta.get("run") or {}).get("rep") or 0) != ONE_RUN_REP:
        return out
    out |= timeseries(load_tables(run_dir), gf, analysis)
    bursts = windows_data(run_dir)
    if bursts is not None:
        out["microbursts"] = bursts
    return out


def timeseries(t: dict[str, pd.DataFrame], gf: pd.DataFrame, info: dict[str, Any]) -> FigureData:
    """The one-run series of `timeseries_<scheme>`; empty when the run has none."""
    ps = t["path_stats"].sort_values("time_us")
    starts = [int(ps["time_us"].min())] if len(ps) else []
    starts += [int(gf["display_time_us"].min())] if len(gf) else []
    if not starts:
        return {}
    t0 = min(starts)
    out: FigureData = {}
    for ep in ("host", "guest"):
        p = ps[ps["endpoint"] == ep]
        if len(p) > 1:
            dt = np.diff(p["time_us"].to_numpy()) / 1e6
            rate = np.diff(p["bytes_sent"].to_numpy()) * 8 / dt / 1e6
            x = (p["time_us"].to_numpy()[1:] - t0) / 1e6
            out[f"path_rate_{ep}"] = {"t_s": sigs(x), "rate_mbps": sigs(rate)}
    lk = t["linkem"]
    lk = lk[~lk["final"].astype(bool)]
    for d in ("up", "down"):
        q = lk[lk["direction"] == d].sort_values("t_s")
        if len(q):
            out[f"link_{d}"] = {"t_s": sigs(q["t_s"]), "sent_mbps": sigs(q["bytes_out"] * 8 / 1e6),
                                "queue_kb": sigs(q["queue_bytes"] / 1e3)}  # fmt: skip
    if len(gf):
        out["frames"] = {"t_s": sigs((gf["display_time_us"].to_numpy() - t0) / 1e6),
                         "mtp_ms": sigs(gf["mtp_ms"]),
                         "freeze": [int(x) for x in gf["freeze"].to_numpy(bool)]}  # fmt: skip
    win = (info.get("windows_us") or {}).get("guest")
    if win:
        w = Window(*(int(x) for x in win))
        fps = float(info.get("stall_fps") or 30.0)
        disp = gf["display_time_us"].to_numpy(np.int64) if len(gf) else np.zeros(0, np.int64)
        st = stalls(disp, w, fps)
        spans = stall_spans_us(disp, w, fps)
        out["stalls"] = {"start_s": sigs((spans[:, 0] - t0) / 1e6),
                         "end_s": sigs((spans[:, 1] - t0) / 1e6)}  # fmt: skip
        note = (f"after {info.get('warmup_s', 0):g} s warm-up: {st['displayed_fps']:.1f} "
                f"displayed fps, stalled {st['stall_pct']:.1f} % of the time, longest gap "
                f"{st['longest_gap_s']:.2f} s")  # fmt: skip
        out["window"] = {"warmup_end_s": sigs([(w.start_us - t0) / 1e6]), "note": [note]}
    return out
