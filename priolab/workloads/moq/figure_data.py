"""The compact data the `moq` figures draw (analysis/figure_data.py), from a run's frames table.

- `latency_<T>` per frame type: the latency (arrival − capture, ms) of the frames captured in
  each bin of `bin_s(duration)` seconds (the bin's mean over the frames that arrived; a bin
  whose frames never arrived has none), against the bin's start (`t`): Figs. 6-9 average the
  runs bin by bin;
- `delay_<all|T>`: the quantile vector of the display delay of the frames that became
  displayable (`q`, `n`) and how many frames there were in all (`total`; the others never
  became displayable): the OTDR curve of Fig. 10 at any budget (`otdr_curve`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.figure_data import Columns, FigureData, binned, quantiles
from priolab.workloads.moq.analysis import FRAMES_TABLE, TYPES, frames_table

BINS_PER_RUN = 120
"""Latency bins per run at most (assumption: a figure's line needs no more points)."""
MIN_BIN_S = 0.5
"""The finest bin: about one GOP's P and B frames at 30 fps (assumption)."""


def bin_s(duration_s: float) -> float:
    return max(MIN_BIN_S, math.ceil(duration_s / BINS_PER_RUN * 2) / 2)


def figure_data(run_dir: Path, meta: dict[str, Any], tables_dir: Path) -> FigureData:
    p = tables_dir / FRAMES_TABLE
    frames = pd.read_parquet(p) if p.is_file() else frames_table(run_dir)
    width = bin_s(float((meta.get("run") or {}).get("duration_s") or 60.0))
    out: FigureData = {}
    for t in TYPES:
        f = frames[(frames["pict_type"] == t) & frames["latency_ms"].notna()]
        lat = {"latency_ms": f["latency_ms"].to_numpy(float)}
        out[f"latency_{t}"] = binned(f["capture_ms"].to_numpy(float) / 1e3, lat, width)
    delay = frames["display_delay_ms"].to_numpy(float)
    for name in ("all", *TYPES):
        d = delay if name == "all" else delay[(frames["pict_type"] == name).to_numpy()]
        out[f"delay_{name}"] = quantiles(d) | {"total": [int(len(d))]}
    return out


def otdr_curve(delay: Columns, budgets_ms: np.ndarray) -> np.ndarray:
    """OTDR at each budget from `delay_<x>`: the share of all frames displayable within it
    (the displayable frames' CDF from their quantiles, times their share of all frames)."""
    from analysis.figure_data import QUANTILES_PCT

    total = int(delay["total"][0])
    if not total or not delay.get("q"):
        return np.zeros(len(budgets_ms))
    q = np.asarray(delay["q"], dtype=float)
    share = int(delay["n"][0]) / total
    p = np.asarray(QUANTILES_PCT) / 100.0
    cdf = np.interp(budgets_ms, q, p, left=0.0, right=1.0) if q[-1] > q[0] else (budgets_ms >= q[0])
    return share * cdf
