"""Figure data: the compact per-run data a workload's figures draw, in RUN_DIR/figure-data.json.

`python -m analysis.metrics RUN_DIR` writes it beside metrics.json (the workload's
`figure_data`, from the run's tables); a scenario's figures read only it, never the tables or
logs, so the same figures are drawn from a run folder and from the evidence store's records
(priolab/evidence/), which carry it. What it holds, per workload (its analysis.py):

- a distribution a figure draws (a CDF pooled over runs): its quantile vector at QUANTILES_PCT
  and its count (`quantiles`); runs pool by `pooled_cdf`, each weighted by its count;
- a series a figure averages over runs: binned means on a fixed grid (`binned`);
- a series drawn for one run (a time series figure): the run's own points, kept only for
  repetition 1 of each setting and scheme (`ONE_RUN_REP`), which `analysis.figures.pick_run`
  draws.

Values are rounded to SIGNIFICANT digits: a figure shows no more, and the records stay small.
The file is a JSON object: figure-data name → {column: [values]}; missing → computed from the
run's tables (and written) when a figure needs it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ground import rundir

SIGNIFICANT = 5
"""Digits kept of every value (assumption: a figure resolves less than 1 part in 10^4)."""
QUANTILES_PCT = (*np.round(np.arange(0, 99, 1.0), 1).tolist(), 99.0, 99.5, 99.9, 100.0)
"""The percentiles a distribution is kept at: every 1 %, and the tail a log axis shows."""
ONE_RUN_REP = 1
"""The repetition whose own series (time series, packet windows) a record keeps."""

Columns = dict[str, list[Any]]
FigureData = dict[str, Columns]


def sig(x: float, digits: int = SIGNIFICANT) -> float | None:
    """`x` rounded to `digits` significant digits; None for NaN (JSON has none); ±inf kept."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits - 1}e}")


def sigs(xs: Sequence[float] | np.ndarray, digits: int = SIGNIFICANT) -> list[float | None]:
    return [sig(float(x), digits) for x in np.asarray(xs, dtype=float)]


def quantiles(values: Sequence[float] | np.ndarray) -> Columns:
    """The finite values' quantile vector at QUANTILES_PCT (`q`) and their count (`n`, one
    element); an empty `q` when there is none."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return {"q": [], "n": [0]}
    return {"q": sigs(np.percentile(v, QUANTILES_PCT)), "n": [int(len(v))]}


def pooled_cdf(parts: Sequence[Columns], points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """The CDF of several runs' values pooled, from their quantile vectors: the mixture of
    each run's CDF (linear between its quantiles), weighted by its count, on `points` x
    values spanning them. (x, F); empty arrays when no run has a value."""
    runs = [(np.asarray(p["q"], dtype=float), int(p["n"][0])) for p in parts if p.get("q")]
    if not runs:
        return np.zeros(0), np.zeros(0)
    lo = min(float(q[0]) for q, _ in runs)
    hi = max(float(q[-1]) for q, _ in runs)
    knots = np.unique(np.concatenate([q for q, _ in runs]))
    x = np.unique(np.concatenate([knots, np.linspace(lo, hi, points)])) if hi > lo else knots
    p = np.asarray(QUANTILES_PCT) / 100.0
    total = sum(n for _, n in runs)
    f = np.zeros(len(x))
    for q, n in runs:
        # the CDF between quantiles; a flat step (equal quantiles) jumps to its last p
        f += n * np.interp(x, q, p, left=0.0, right=1.0) if q[-1] > q[0] else n * (x >= q[0])
    return x, f / total


def pooled_count(parts: Sequence[Columns]) -> int:
    """The values the pooled CDF stands for (the runs' counts summed)."""
    return sum(int(p["n"][0]) for p in parts if p.get("n"))


def binned(t: np.ndarray, values: dict[str, np.ndarray], width: float) -> Columns:
    """Means per bin of `width` (in t's unit) of each named series: `t` the bins' starts
    (multiples of width), one column per series; bins without a sample are left out."""
    t = np.asarray(t, dtype=float)
    if not len(t):
        return {"t": [], **{k: [] for k in values}}
    idx = np.floor(t / width).astype(np.int64)
    keys, inv = np.unique(idx, return_inverse=True)
    out: Columns = {"t": sigs(keys * width)}
    for k, v in values.items():
        sums = np.bincount(inv, weights=np.asarray(v, dtype=float), minlength=len(keys))
        out[k] = sigs(sums / np.bincount(inv, minlength=len(keys)))
    return out


def write(run_dir: Path, data: FigureData) -> Path:
    p = run_dir / rundir.FIGURE_DATA
    p.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")
    return p


def read(run_dir: Path) -> FigureData:
    """A run's figure data: its file, else computed from its tables and written (a run folder
    analysed before figure data existed), else empty."""
    p = run_dir / rundir.FIGURE_DATA
    if p.is_file():
        return json.loads(p.read_text())
    from analysis.metrics import compute_figure_data

    data = compute_figure_data(run_dir)
    write(run_dir, data)
    return data


def array(col: Sequence[Any]) -> np.ndarray:
    """A stored column as floats (None → NaN, "inf"/"-inf" → ±inf)."""
    return np.array([math.nan if v is None else float(v) for v in col], dtype=float)
