"""Throughput traces: the two in-memory forms, the three file formats, and `load_trace`.

Two in-memory forms:

- `RateSchedule`: a piecewise-constant rate. Step i has rate `rate_mbps[i]` from `times_s[i]`
  to `times_s[i+1]` (the last step to `duration_s`). Replay wraps at `duration_s`.
- `DeliveryOpportunities`: Mahimahi's form. Each entry is one opportunity to deliver one
  1500-byte packet at `times_ms[i]`; repeated values mean several packets in that millisecond.
  Replay wraps with period `period_ms` (Mahimahi: the last timestamp of the file), i.e. entry i
  of loop k is at `times_ms[i] + k * period_ms`.

The file formats are documented precisely in traces/README.md.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from ground.errors import show
from traces.errors import TraceError
from traces.textlines import data_lines, time_value
from traces.textlines import finite_float as _float

if TYPE_CHECKING:
    from traces.config import TraceRate

__all__ = [
    "MTU_BYTES",
    "DeliveryOpportunities",
    "RateSchedule",
    "TraceError",
    "load_trace",
    "read_csv",
    "read_mahimahi",
    "read_schedule",
    "read_trace",
    "write_mahimahi",
    "write_schedule",
]

MTU_BYTES = 1500
"""Bytes per Mahimahi delivery opportunity."""

RateUnit = Literal["bps", "kbps", "mbps"]
_UNIT_TO_MBPS: dict[str, float] = {"bps": 1e-6, "kbps": 1e-3, "mbps": 1.0}
GapPolicy = Literal["error", "hold", "zero"]
DuplicatePolicy = Literal["error", "mean"]


@dataclass(frozen=True, eq=False)
class RateSchedule:
    """Piecewise-constant rate: step i runs from times_s[i] to times_s[i+1] (last: duration_s)."""

    times_s: np.ndarray
    rate_mbps: np.ndarray
    duration_s: float

    def __post_init__(self) -> None:
        times = np.array(self.times_s, dtype=np.float64)
        rates = np.array(self.rate_mbps, dtype=np.float64)
        if times.ndim != 1 or rates.ndim != 1 or len(times) != len(rates):
            raise TraceError(None, "times_s and rate_mbps must be 1-D arrays of equal length")
        if len(times) == 0:
            raise TraceError(None, "a rate schedule needs at least one step")
        if times[0] != 0.0:
            raise TraceError(None, f"the first step must start at 0 s, not {times[0]}")
        if not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
            raise TraceError(None, "times_s must be finite and strictly increasing")
        if not np.all(np.isfinite(rates)) or np.any(rates < 0):
            raise TraceError(None, "rate_mbps must be finite and >= 0")
        duration = float(self.duration_s)
        if not math.isfinite(duration) or duration <= times[-1]:
            raise TraceError(None, f"duration_s {duration} must exceed the last start {times[-1]}")
        times.flags.writeable = False
        rates.flags.writeable = False
        object.__setattr__(self, "times_s", times)
        object.__setattr__(self, "rate_mbps", rates)
        object.__setattr__(self, "duration_s", duration)

    @property
    def step_durations_s(self) -> np.ndarray:
        return np.diff(np.append(self.times_s, self.duration_s))

    def rate_at(self, t_s: float, loop: bool = True) -> float:
        """Rate at time t_s (wrapping at duration_s if loop, else 0 after the end)."""
        if loop:
            t_s = t_s % self.duration_s
        elif t_s >= self.duration_s:
            return 0.0
        i = int(np.searchsorted(self.times_s, t_s, side="right")) - 1
        return float(self.rate_mbps[max(i, 0)])


@dataclass(frozen=True, eq=False)
class DeliveryOpportunities:
    """Mahimahi delivery opportunities: one 1500-byte packet per entry, times in ms."""

    times_ms: np.ndarray
    period_ms: int

    def __post_init__(self) -> None:
        times = np.array(self.times_ms, dtype=np.int64)
        if times.ndim != 1 or len(times) == 0:
            raise TraceError(None, "a Mahimahi trace needs at least one delivery opportunity")
        if times[0] < 0 or np.any(np.diff(times) < 0):
            raise TraceError(None, "times_ms must be >= 0 and non-decreasing")
        period = int(self.period_ms)
        if period <= 0 or period < times[-1]:
            raise TraceError(
                None, f"period_ms {period} must be > 0 and >= the last time {times[-1]}"
            )
        times.flags.writeable = False
        object.__setattr__(self, "times_ms", times)
        object.__setattr__(self, "period_ms", period)


# --------------------------------------------------------------------------- Mahimahi


def read_mahimahi(path: Path) -> DeliveryOpportunities:
    """One non-negative integer (ms) per line, non-decreasing; blank lines are ignored.
    The period is the last timestamp (as in mm-link), which must be > 0."""
    times: list[int] = []
    prev = 0
    for lineno, s in data_lines(path):
        try:
            t = int(s)
        except ValueError:
            raise TraceError(path, f"{show(s)} is not an integer millisecond", lineno) from None
        if t < 0:
            raise TraceError(path, f"negative time {t} ms", lineno)
        if t < prev:
            raise TraceError(path, f"time {t} ms is before the previous {prev} ms", lineno)
        prev = t
        times.append(t)
    if times[-1] == 0:
        raise TraceError(path, "the last timestamp (the period) must be > 0 ms")
    return DeliveryOpportunities(np.array(times, dtype=np.int64), times[-1])


def write_mahimahi(opps: DeliveryOpportunities, path: Path) -> None:
    """Write one timestamp per line. Mahimahi takes the period from the last line, so the last
    opportunity must be at period_ms (the ops in traces.throughput_ops guarantee that)."""
    if opps.times_ms[-1] != opps.period_ms:
        raise TraceError(
            path,
            f"cannot write: last opportunity {opps.times_ms[-1]} ms != period {opps.period_ms} ms"
            " (the Mahimahi format takes the period from the last line)",
        )
    Path(path).write_text("\n".join(str(int(t)) for t in opps.times_ms) + "\n")


# --------------------------------------------------------------------------- schedule


def _ordered(
    path: Path,
    times: list[float],
    rates: list[float],
    linenos: list[int],
    duplicates: DuplicatePolicy,
    hint: str,
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Check that times increase; rows sharing a time are merged into one row with their mean
    rate when duplicates="mean" (an error naming the line otherwise). A time that goes back
    is always an error."""
    if duplicates not in ("error", "mean"):
        raise TraceError(path, f"duplicates {show(duplicates)}; allowed: error, mean")
    out_t: list[float] = []
    out_r: list[list[float]] = []
    out_l: list[int] = []
    for t, r, ln in zip(times, rates, linenos, strict=True):
        if out_t and t == out_t[-1] and duplicates == "mean":
            out_r[-1].append(r)
            continue
        if out_t and t <= out_t[-1]:
            raise TraceError(
                path,
                f"time {t:g} does not increase (previous {out_t[-1]:g} on line {out_l[-1]}); "
                + hint,
                ln,
            )
        out_t.append(t)
        out_r.append([r])
        out_l.append(ln)
    return np.array(out_t), np.array([sum(g) / len(g) for g in out_r]), out_l


def read_schedule(
    path: Path,
    rate_column: int = 2,
    step_s: float | None = None,
    duplicates: DuplicatePolicy = "error",
) -> RateSchedule:
    """Whitespace-separated `time_s rate_mbps [more columns]` (Lumos5G / SIGCOMM'21).

    rate_column: 1-based column holding the rate (the SIGCOMM'21 multipath files: 2 = 5G,
    3 = 4G). Times are shifted so the first row starts at 0. The step of the last row is the
    median time step (1 s for a one-row file), unless a `# duration_s X` line gives the length
    (X in the file's own time base, measured from the first row's time).
    step_s: None: times must increase. A number: the time column is ignored (it must still be
    numeric) and row k is the step [k·step_s, (k+1)·step_s) — that is how the SIGCOMM'21
    artifact replays these files (one row per second).
    duplicates (without step_s): "error" (default) or "mean": rows with the same time become
    one step with their mean rate. A missing time is no error: the step before it lasts
    until the next row (the schedule is piecewise constant).
    Lines starting with `#` and blank lines are ignored.
    """
    if rate_column < 2:
        raise TraceError(path, f"rate_column must be >= 2 (column 1 is time), not {rate_column}")
    if step_s is not None and not (step_s > 0 and math.isfinite(step_s)):
        raise TraceError(path, f"step_s must be > 0, not {step_s}")
    times: list[float] = []
    rates: list[float] = []
    lines: list[int] = []
    duration: float | None = None
    for lineno, s in data_lines(path):
        if s.startswith("#"):
            parts = s[1:].split()
            if len(parts) == 2 and parts[0] == "duration_s":
                duration = _float(path, parts[1], "duration_s", lineno)
            continue
        fields = s.split()
        if len(fields) < rate_column:
            raise TraceError(
                path, f"{len(fields)} column(s); rate column {rate_column} is missing", lineno
            )
        t = _float(path, fields[0], "time", lineno)
        r = _float(path, fields[rate_column - 1], "rate", lineno)
        if r < 0:
            raise TraceError(path, f"negative rate {r} Mbit/s", lineno)
        times.append(t)
        rates.append(r)
        lines.append(lineno)
    if not times:
        raise TraceError(path, "no data rows")
    if step_s is not None:
        return RateSchedule(np.arange(len(rates)) * step_s, np.array(rates), len(rates) * step_s)
    hint = "to replay the rows one per step give row_step_s (CLI --row-step-s)"
    if duplicates == "error":
        hint += ", or merge rows of one time with duplicates: mean"
    t_arr, r_arr, _ = _ordered(path, times, rates, lines, duplicates, hint)
    t_arr = t_arr - t_arr[0]
    if duration is None:
        last_step = float(np.median(np.diff(t_arr))) if len(t_arr) > 1 else 1.0
        duration = float(t_arr[-1]) + last_step
    elif duration <= t_arr[-1]:
        raise TraceError(
            path, f"duration_s {duration} must exceed the last row's time {t_arr[-1]} s"
        )
    return RateSchedule(t_arr, r_arr, duration)


def write_schedule(schedule: RateSchedule, path: Path) -> None:
    """Write `time_s<TAB>rate_mbps` rows; a `# duration_s X` line is added when the last step's
    length differs from the median step (so that reading it back gives the same schedule)."""
    t = schedule.times_s
    inferred_last = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
    out = []
    if not math.isclose(t[-1] + inferred_last, schedule.duration_s, rel_tol=0, abs_tol=1e-9):
        out.append(f"# duration_s {schedule.duration_s!r}")
    out += [f"{float(a)!r}\t{float(b)!r}" for a, b in zip(t, schedule.rate_mbps, strict=True)]
    Path(path).write_text("\n".join(out) + "\n")


# --------------------------------------------------------------------------- csv


def read_csv(
    path: Path,
    time_column: str,
    rate_column: str,
    rate_unit: RateUnit,
    step_s: float = 1.0,
    gap: GapPolicy = "error",
    max_gap_s: float | None = None,
    time_format: str | None = None,
    duplicates: DuplicatePolicy = "error",
) -> RateSchedule:
    """A CSV with a header row; irregular samples are resampled to a fixed step.

    time_column holds seconds as numbers, or date-time strings when time_format (a strptime
    format such as "%Y-%m-%d %H:%M:%S") is given. Rows sharing a time: an error, or with
    duplicates="mean" one sample with their mean rate (e.g. Lumos5G's CSV logs several rows per
    second stamped to the second).
    Each sample's rate holds from its time until the next sample (zero-order hold); the last
    sample holds for the median sampling interval. Times are shifted so the first sample is at
    0. Each output step is the time-weighted mean rate over [k·step_s, (k+1)·step_s); the last
    step may be shorter (it ends at the end of the last sample).
    Gaps: an interval between consecutive samples longer than max_gap_s (default: 5 × the median
    interval) is handled by `gap`: "error" (default) raises naming the line after the gap;
    "hold" keeps the previous rate through the gap; "zero" treats the gap as an outage: the
    previous sample holds for one median interval, then the rate is 0 until the next sample.
    """
    if rate_unit not in _UNIT_TO_MBPS:
        raise TraceError(path, f"unknown rate unit {show(rate_unit)}; allowed: bps, kbps, mbps")
    if gap not in ("error", "hold", "zero"):
        raise TraceError(path, f"unknown gap policy {show(gap)}; allowed: error, hold, zero")
    if not (step_s > 0 and math.isfinite(step_s)):
        raise TraceError(path, f"step_s must be > 0, not {step_s}")
    if max_gap_s is not None and not (max_gap_s > 0 and math.isfinite(max_gap_s)):
        raise TraceError(path, f"max_gap_s must be > 0, not {max_gap_s}")
    lines = data_lines(path)
    try:
        rows = list(csv.reader([s for _, s in lines]))
    except csv.Error as e:
        raise TraceError(path, f"not a CSV file: {e}") from e
    header = [h.strip() for h in rows[0]]
    for col in (time_column, rate_column):
        if col not in header:
            raise TraceError(path, f"no column {col!r}; the header has {show(header)}", lines[0][0])
    ti, ri = header.index(time_column), header.index(rate_column)
    times: list[float] = []
    rates: list[float] = []
    linenos: list[int] = []
    for (lineno, _), row in zip(lines[1:], rows[1:], strict=True):
        if len(row) != len(header):
            raise TraceError(path, f"{len(row)} fields, the header has {len(header)}", lineno)
        times.append(
            time_value(path, row[ti].strip(), f"time ({time_column})", time_format, lineno)
        )
        r = _float(path, row[ri].strip(), f"rate ({rate_column})", lineno)
        if r < 0:
            raise TraceError(path, f"negative rate {r} {rate_unit}", lineno)
        rates.append(r * _UNIT_TO_MBPS[rate_unit])
        linenos.append(lineno)
    if not times:
        raise TraceError(path, "no data rows after the header")
    hint = "merge rows of one time with duplicates: mean" if duplicates == "error" else ""
    t_arr, r_arr, linenos = _ordered(path, times, rates, linenos, duplicates, hint)
    t_arr = t_arr - t_arr[0]
    dt = np.diff(t_arr)
    median_dt = float(np.median(dt)) if len(dt) else step_s
    limit = 5.0 * median_dt if max_gap_s is None else max_gap_s
    big = np.flatnonzero(dt > limit)
    if len(big) and gap == "error":
        i = int(big[0])
        raise TraceError(
            path,
            f"gap of {dt[i]:g} s before this sample (limit {limit:g} s); "
            "choose gap='hold' or gap='zero'",
            linenos[i + 1],
        )
    starts, vals = list(t_arr), list(r_arr)
    if gap == "zero" and len(big):
        for i in sorted(big.tolist(), reverse=True):
            starts.insert(i + 1, float(t_arr[i]) + median_dt)
            vals.insert(i + 1, 0.0)
    end = float(t_arr[-1]) + median_dt
    return _resample(np.array(starts), np.array(vals), end, step_s)


def _resample(starts: np.ndarray, rates: np.ndarray, end_s: float, step_s: float) -> RateSchedule:
    """Time-weighted mean of a piecewise-constant rate over fixed bins of step_s."""
    edges = np.append(starts, end_s)
    cum = np.concatenate([[0.0], np.cumsum(rates * np.diff(edges))])  # Mbit at each edge
    n_bins = max(1, math.ceil(end_s / step_s - 1e-9))
    b = np.minimum(np.arange(n_bins + 1) * step_s, end_s)
    fb = np.interp(b, edges, cum)
    return RateSchedule(b[:-1], np.diff(fb) / np.diff(b), end_s)


# --------------------------------------------------------------------------- load_trace


def read_trace(trace: TraceRate, path: Path) -> RateSchedule | DeliveryOpportunities:
    """Read `path` with every reading option of a link's trace config (format, columns, row
    step, time format, duplicates, gaps); the scale options are not applied. The scenario's
    links (`load_trace`) and the `priolab trace` commands read through this one function."""
    if trace.format == "mahimahi":
        return read_mahimahi(path)
    if trace.format == "schedule":
        col = trace.rate_column if isinstance(trace.rate_column, int) else 2
        return read_schedule(path, col, trace.row_step_s, trace.duplicates)
    assert trace.time_column and isinstance(trace.rate_column, str) and trace.rate_unit
    return read_csv(
        path,
        trace.time_column,
        trace.rate_column,
        trace.rate_unit,
        trace.step_s,
        trace.gap,
        trace.max_gap_s,
        trace.time_format,
        trace.duplicates,
    )


def load_trace(trace: TraceRate, base_dir: Path) -> RateSchedule | DeliveryOpportunities:
    """Read the trace a link config names: resolve the path against base_dir, read it
    (`read_trace`), cut it to its window (`start_s`, `end_s`; re-based to 0), then apply
    `scale` or `target_mean_mbps` (of the window) (traces.throughput_ops)."""
    from traces.throughput_ops import scale, scale_to_mean, window

    path = trace.file if trace.file.is_absolute() else Path(base_dir) / trace.file
    try:
        result = window(read_trace(trace, path), trace.start_s, trace.end_s, path)
        if trace.target_mean_mbps is not None:
            return scale_to_mean(result, trace.target_mean_mbps)
        if trace.scale != 1.0:
            return scale(result, trace.scale)
    except TraceError as e:
        if e.path is None:  # a check on the whole trace: name the file
            raise TraceError(path, e.problem) from e
        raise
    return result
