"""The compact data the `roq` figures draw (analysis/figure_data.py), from a run's tables.

- `rate`: the controller's target and the transmitted rate (bit/s) in 0.5 s bins (Figs. 4-7
  average the runs bin by bin);
- `ssim`: the per-frame SSIM in groups of `group_frames(n)` consecutive frames (their mean,
  against the group's first capture time): the SSIM-over-time figure averages the runs
  group by group, as it smoothed the per-frame mean before;
- `capacity` (repetition ONE_RUN_REP only): the downlink trace's rate schedule
  (time_s, rate_mbps), read from the scenario's trace file the run named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.figure_data import ONE_RUN_REP, FigureData, sigs
from priolab.paths import REPO_ROOT
from priolab.workloads.roq.analysis import FRAMES_TABLE, RATE_TABLE

SSIM_POINTS = 240
"""Groups per run of the SSIM series (the figure's former smoothing to ~240 points)."""
RATE_BIN_S = 0.5


def group_frames(n: int) -> int:
    return max(1, int(n / SSIM_POINTS))


def figure_data(run_dir: Path, meta: dict[str, Any], tables_dir: Path) -> FigureData:
    out: FigureData = {}
    rate_p, frames_p = tables_dir / RATE_TABLE, tables_dir / FRAMES_TABLE
    if rate_p.is_file():
        r = pd.read_parquet(rate_p)
        if len(r):
            m = r.assign(t=np.round(r["time_s"] / RATE_BIN_S) * RATE_BIN_S).groupby("t")[
                ["target_bps", "send_rate_bps"]].mean()  # fmt: skip
            out["rate"] = {"t": sigs(m.index), "target_bps": sigs(m["target_bps"]),
                           "send_rate_bps": sigs(m["send_rate_bps"])}  # fmt: skip
    if frames_p.is_file():
        f = pd.read_parquet(frames_p)
        if len(f):
            k = group_frames(len(f))
            g = np.arange(len(f)) // k
            ssim = pd.Series(f["ssim"].to_numpy(float)).groupby(g).mean()
            t = pd.Series(f["capture_ms"].to_numpy(float) / 1e3).groupby(g).first()
            out["ssim"] = {"t": sigs(t), "ssim": sigs(ssim), "group": [k]}
    if int((meta.get("run") or {}).get("rep") or 0) == ONE_RUN_REP:
        cap = capacity(meta)
        if cap is not None:
            out["capacity"] = cap
    return out


def capacity(meta: dict[str, Any]) -> dict[str, list[Any]] | None:
    """The downlink's rate schedule of the run (time_s, rate_mbps), if it is a trace."""
    from traces.throughput import RateSchedule, read_schedule

    try:
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
    return {"time_s": sigs(t), "rate_mbps": sigs(r)}
