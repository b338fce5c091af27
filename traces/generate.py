"""Throughput trace generators: constant, step schedules, and a seeded Markov-modulated
cellular model that can be fitted from a real trace (a "synthetic twin").

Markov-modulated model (documented in traces/README.md):
- A discrete-time Markov chain over K states, one step every `step_s` seconds.
- State i has a level `levels_mbps[i]`; a state with level 0 is an outage.
- `transition[i][j]` is the probability of moving from state i to state j at a step boundary
  (rows sum to 1). Equivalently the transition rate i→j is transition[i][j] / step_s per
  second, and the mean dwell time in state i is step_s / (1 − transition[i][i]).
- Within a state each step's rate is level × exp(σ·Z − σ²/2), Z ~ N(0, 1) i.i.d.: lognormal
  around the level with mean equal to the level (σ = `sigma`). Outage steps are exactly 0.
- The first state is drawn from the chain's stationary distribution. numpy's PCG64 generator
  seeded with `seed` drives everything, so (model, duration, seed) gives the same trace.
- Rates are rounded to `RATE_DECIMALS` (1e-6 Mbit/s = 1 bit/s). exp's last bit depends on
  the CPU (glibc and numpy pick FMA, AVX2 or AVX-512 kernels at run time), so unrounded
  rates differed between machines in their 16th digit; rounded, a trace is the same on every
  CPU unless a rate lies within a few ULPs of a rounding boundary, and then it moves by one
  bit/s. tests/test_traces_cli.py regenerates the shipped traces on two code paths.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from traces.errors import TraceError
from traces.throughput import DeliveryOpportunities, RateSchedule
from traces.throughput_ops import to_schedule


def constant(rate_mbps: float, duration_s: float) -> RateSchedule:
    if not (rate_mbps >= 0 and duration_s > 0):
        raise TraceError(None, "constant: rate_mbps must be >= 0 and duration_s > 0")
    return RateSchedule(np.array([0.0]), np.array([float(rate_mbps)]), duration_s)


def steps(spec: str, duration_s: float) -> RateSchedule:
    """A step schedule from `start_s:rate_mbps,start_s:rate_mbps,...`; the first start must be 0.
    Example (RFC 8867 style): "0:1,30:0.5,60:1" with duration 90 s = 1 Mbit/s, 500 kbit/s from
    30 s to 60 s, back to 1 Mbit/s."""
    times: list[float] = []
    rates: list[float] = []
    for k, part in enumerate(spec.split(",")):
        a, sep, b = part.strip().partition(":")
        try:
            if not sep:
                raise ValueError
            t, r = float(a), float(b)
        except ValueError:
            raise TraceError(
                None, f"steps: item {k + 1} {part!r}; allowed start_s:rate_mbps"
            ) from None
        if not (math.isfinite(t) and math.isfinite(r) and r >= 0):
            raise TraceError(
                None, f"steps: item {k + 1} {part!r}: values must be finite, rate >= 0"
            )
        times.append(t)
        rates.append(r)
    if times[0] != 0:
        raise TraceError(None, f"steps: the first step must start at 0, not {times[0]}")
    if any(b <= a for a, b in zip(times, times[1:], strict=False)):
        raise TraceError(None, "steps: start times must strictly increase")
    if duration_s <= times[-1]:
        raise TraceError(None, f"steps: duration {duration_s} s must exceed the last start")
    return RateSchedule(np.array(times), np.array(rates), duration_s)


class MarkovModel(BaseModel):
    """Parameters of the Markov-modulated rate model (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    step_s: float = Field(gt=0)
    levels_mbps: list[float] = Field(min_length=1)
    transition: list[list[float]]
    sigma: float = Field(ge=0)
    fitted_from: str | None = None

    @model_validator(mode="after")
    def _check(self) -> MarkovModel:
        k = len(self.levels_mbps)
        if any(not math.isfinite(v) or v < 0 for v in self.levels_mbps):
            raise ValueError("levels_mbps must be finite and >= 0")
        if len(self.transition) != k or any(len(row) != k for row in self.transition):
            raise ValueError(f"transition must be a {k}x{k} matrix")
        for i, row in enumerate(self.transition):
            if any(p < 0 for p in row) or not math.isclose(sum(row), 1.0, abs_tol=1e-6):
                raise ValueError(f"transition row {i} must be probabilities summing to 1")
        return self

    def stationary(self) -> np.ndarray:
        p = np.array(self.transition)
        w, v = np.linalg.eig(p.T)
        pi = np.real(v[:, int(np.argmin(np.abs(w - 1)))])
        pi = np.abs(pi) / np.abs(pi).sum()
        return pi

    def mean_mbps(self) -> float:
        return float(self.stationary() @ np.array(self.levels_mbps))

    def mean_dwell_s(self) -> list[float]:
        return [
            math.inf if row[i] >= 1 else self.step_s / (1 - row[i])
            for i, row in enumerate(self.transition)
        ]


# Default: fitted (traces.generate.fit, 4 states, 1 s steps) from Mahimahi's
# Verizon-LTE-short.down (Sprout / NSDI'13 trace, mean 5.03 Mbit/s), rounded.
DEFAULT_CELLULAR = MarkovModel(
    step_s=1.0,
    levels_mbps=[1.125, 2.787, 5.37, 10.061],
    transition=[
        [0.421, 0.421, 0.158, 0.0],
        [0.275, 0.475, 0.25, 0.0],
        [0.0, 0.231, 0.634, 0.135],
        [0.0, 0.034, 0.207, 0.759],
    ],
    sigma=0.238,
    fitted_from="Verizon-LTE-short.down (mahimahi-cellular), 4 states, 1 s steps",
)


RATE_DECIMALS = 6
"""Decimal places of a generated rate in Mbit/s (1 bit/s): see the module docstring."""


def generate_markov(model: MarkovModel, duration_s: float, seed: int) -> RateSchedule:
    if not duration_s > 0:
        raise TraceError(None, f"duration_s must be > 0, not {duration_s}")
    rng = np.random.default_rng(seed)
    n = max(1, math.ceil(duration_s / model.step_s - 1e-9))
    p = np.cumsum(np.array(model.transition), axis=1)
    levels = np.array(model.levels_mbps)
    state = int(np.searchsorted(np.cumsum(model.stationary()), rng.random(), side="right"))
    state = min(state, len(levels) - 1)
    states = np.empty(n, dtype=np.int64)
    u = rng.random(n)
    for k in range(n):
        states[k] = state
        state = min(int(np.searchsorted(p[state], u[k], side="right")), len(levels) - 1)
    s = model.sigma
    noise = np.exp(s * rng.standard_normal(n) - s * s / 2)
    rates = np.round(levels[states] * noise, RATE_DECIMALS)
    times = np.arange(n) * model.step_s
    return RateSchedule(times, rates, min(duration_s, n * model.step_s))


def fit(
    trace: RateSchedule | DeliveryOpportunities,
    n_states: int = 4,
    step_s: float = 1.0,
    name: str | None = None,
) -> MarkovModel:
    """Fit the model from a trace: resample to step_s; steps with rate 0 form an outage
    state (if any); the others are split into n_states (or n_states − 1 with an outage) groups
    by 1-D k-means on log(rate) (deterministic: started at quantiles); a level is its group's
    mean rate; transitions are the
    counted moves between consecutive steps (the wrap from last to first included; a state
    never left keeps a self-loop of 1); σ is the standard deviation of log(rate / level)
    over the non-outage steps."""
    if n_states < 1:
        raise TraceError(None, f"n_states must be >= 1, not {n_states}")
    sched = trace if isinstance(trace, RateSchedule) else to_schedule(trace, round(step_s * 1000))
    r = _bins(sched, step_s)
    zero = r <= 1e-9
    labels = np.zeros(len(r), dtype=np.int64)
    k_pos = n_states - 1 if zero.any() and n_states > 1 else n_states
    offset = 1 if zero.any() and n_states > 1 else 0
    pos = r[~zero]
    if len(pos):
        labels[~zero] = offset + _kmeans_1d(np.log(pos), k_pos)
    used = np.unique(labels)
    remap = {int(old): new for new, old in enumerate(used)}
    labels = np.array([remap[int(x)] for x in labels])
    k = len(used)
    levels = [float(r[labels == i].mean()) for i in range(k)]
    counts = np.zeros((k, k))
    np.add.at(counts, (labels, np.roll(labels, -1)), 1)
    trans = []
    for i in range(k):
        row = counts[i]
        trans.append(list(row / row.sum()) if row.sum() else [float(j == i) for j in range(k)])
    lv = np.array(levels)[labels]
    ok = (~zero) & (lv > 0)
    sigma = float(np.std(np.log(r[ok] / lv[ok]))) if ok.sum() > 1 else 0.0
    return MarkovModel(
        step_s=step_s, levels_mbps=levels, transition=trans, sigma=sigma, fitted_from=name
    )


def _kmeans_1d(x: np.ndarray, k: int, iterations: int = 100) -> np.ndarray:
    """Deterministic 1-D k-means (Lloyd), started at the quantile midpoints; labels are
    ordered by centre (0 = lowest)."""
    centres = np.quantile(x, (np.arange(k) + 0.5) / k)
    labels = np.zeros(len(x), dtype=np.int64)
    for _ in range(iterations):
        order = np.argsort(centres)
        centres = centres[order]
        edges = (centres[1:] + centres[:-1]) / 2
        new = np.searchsorted(edges, x, side="right")
        for i in range(k):
            if np.any(new == i):
                centres[i] = x[new == i].mean()
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


def _bins(s: RateSchedule, step_s: float) -> np.ndarray:
    edges = np.append(s.times_s, s.duration_s)
    cum = np.concatenate([[0.0], np.cumsum(s.rate_mbps * np.diff(edges))])
    n = max(1, math.ceil(s.duration_s / step_s - 1e-9))
    b = np.minimum(np.arange(n + 1) * step_s, s.duration_s)
    return np.diff(np.interp(b, edges, cum)) / np.diff(b)


def save_model(model: MarkovModel, path: Path) -> None:
    Path(path).write_text(json.dumps(model.model_dump(), indent=2) + "\n")


def load_model(path: Path) -> MarkovModel:
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise TraceError(path, f"cannot read: {e.strerror or e}") from e
    except json.JSONDecodeError as e:
        raise TraceError(path, f"not JSON: {e.msg}", e.lineno) from e
    try:
        return MarkovModel.model_validate(data)
    except ValueError as e:
        raise TraceError(path, f"not a Markov model: {e}") from e
