"""Head-movement (3DoF tracking) traces: read, resample, write, generate.

Orientation convention: traces.orientation (intrinsic yaw–pitch–roll, radians).
Formats (documented in traces/README.md):
- Corbillon et al. MMSys'18 raw navigation traces: a header line, then space-separated rows
  `timestamp viewpoint yaw pitch roll` (Euler, radians in [0, 2π), Unity convention) or
  `timestamp viewpoint w x y z` (unit quaternion in that dataset's axes: x up, y forward,
  z left — checked: it equals the Euler file row for row, to 1e-15).
- The `rise` endpoint's tracking CSV: header `time_s,yaw_rad,pitch_rad,roll_rad`, then rows;
  angles in (−π, π].
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
from traces.orientation import euler_to_quat, quat_to_euler, slerp
from traces.textlines import data_lines

if TYPE_CHECKING:
    from traces.tracking_layouts import TrackingSource

TRACKING_HEADER = ["time_s", "yaw_rad", "pitch_rad", "roll_rad"]


@dataclass(frozen=True, eq=False)
class TrackingTrace:
    """Orientation samples: times_s strictly increasing, quats (N, 4) unit (w, x, y, z)."""

    times_s: np.ndarray
    quats: np.ndarray

    def __post_init__(self) -> None:
        t = np.array(self.times_s, dtype=np.float64)
        q = np.array(self.quats, dtype=np.float64)
        if t.ndim != 1 or len(t) == 0 or q.shape != (len(t), 4):
            raise TraceError(None, "a tracking trace needs N >= 1 times and (N, 4) quaternions")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
            raise TraceError(None, "tracking times and orientations must be finite")
        if np.any(np.diff(t) <= 0):
            raise TraceError(None, "tracking times must strictly increase")
        norms = np.linalg.norm(q, axis=1)
        if np.any(norms < 1e-9):
            raise TraceError(None, "a zero quaternion is not an orientation")
        q = q / norms[:, None]
        t.flags.writeable = False
        q.flags.writeable = False
        object.__setattr__(self, "times_s", t)
        object.__setattr__(self, "quats", q)

    @property
    def duration_s(self) -> float:
        return float(self.times_s[-1] - self.times_s[0])

    def euler(self) -> np.ndarray:
        """(N, 3) yaw, pitch, roll in radians."""
        return np.stack(quat_to_euler(self.quats), axis=-1)

    def orientation_at(self, t_s: np.ndarray | float) -> np.ndarray:
        """Quaternion(s) at t_s by slerp between neighbouring samples; held constant before the
        first and after the last sample."""
        t = np.atleast_1d(np.asarray(t_s, dtype=np.float64))
        ts = self.times_s
        if len(ts) == 1:
            out = np.repeat(self.quats, len(t), axis=0)
        else:
            tc = np.clip(t, ts[0], ts[-1])
            i = np.clip(np.searchsorted(ts, tc, side="right") - 1, 0, len(ts) - 2)
            u = (tc - ts[i]) / (ts[i + 1] - ts[i])
            out = slerp(self.quats[i], self.quats[i + 1], u)
        return out[0] if np.ndim(t_s) == 0 else out


def from_euler(times_s: np.ndarray, euler: np.ndarray) -> TrackingTrace:
    e = np.asarray(euler, dtype=np.float64)
    return TrackingTrace(times_s, euler_to_quat(e[:, 0], e[:, 1], e[:, 2]))


# --------------------------------------------------------------------------- readers


def _rows(path: Path, n_fields: int, header: bool) -> tuple[list[int], np.ndarray]:
    lines = data_lines(path)
    if header:
        lines = lines[1:]
    if not lines:
        raise TraceError(path, "no data rows after the header")
    vals = np.empty((len(lines), n_fields))
    for k, (lineno, s) in enumerate(lines):
        fields = s.replace(",", " ").split()
        if len(fields) != n_fields:
            raise TraceError(path, f"{len(fields)} fields, expected {n_fields}", lineno)
        for j, f in enumerate(fields):
            try:
                v = float(f)
            except ValueError:
                raise TraceError(path, f"field {j + 1} {show(f)} is not a number", lineno) from None
            if not math.isfinite(v):
                raise TraceError(path, f"field {j + 1} is {show(f)}; it must be finite", lineno)
            vals[k, j] = v
    linenos = [i for i, _ in lines]
    bad = np.flatnonzero(np.diff(vals[:, 0]) <= 0)
    if len(bad):
        k = int(bad[0]) + 1
        raise TraceError(
            path, f"time {vals[k, 0]} does not increase (previous {vals[k - 1, 0]})", linenos[k]
        )
    return linenos, vals


def _corbillon_quat_to_ours(q: np.ndarray) -> np.ndarray:
    """Dataset axes (x up, y forward, z left; other handedness) to ours (x right, y up,
    z forward): same w, vector (z_d, −x_d, −y_d)."""
    return np.stack([q[:, 0], q[:, 3], -q[:, 1], -q[:, 2]], axis=-1)


def read_corbillon(
    path: Path, kind: Literal["auto", "euler", "quaternion"] = "auto"
) -> TrackingTrace:
    """A Corbillon MMSys'18 navigation trace (the viewpoint column is read and ignored)."""
    if kind == "auto":
        first = data_lines(path)[0][1].split()
        if first == ["timestamp", "viewpoint", "yaw", "pitch", "roll"]:
            kind = "euler"
        elif first == ["timestamp", "viewpoint", "w", "x", "y", "z"]:
            kind = "quaternion"
        else:
            raise TraceError(
                path,
                f"header {show(first)} is neither 'timestamp viewpoint yaw pitch roll' nor "
                "'timestamp viewpoint w x y z'",
                1,
            )
    if kind == "euler":
        _, v = _rows(path, 5, header=True)
        return from_euler(v[:, 0], v[:, 2:5])
    if kind == "quaternion":
        linenos, v = _rows(path, 6, header=True)
        norms = np.linalg.norm(v[:, 2:6], axis=1)
        bad = np.flatnonzero(np.abs(norms - 1) > 1e-3)
        if len(bad):
            raise TraceError(path, f"quaternion norm {norms[bad[0]]:.4f} is not 1", linenos[bad[0]])
        return TrackingTrace(v[:, 0], _corbillon_quat_to_ours(v[:, 2:6]))
    raise TraceError(path, f"unknown kind {kind!r}; allowed: auto, euler, quaternion")


def read_tracking_csv(path: Path) -> TrackingTrace:
    """The endpoint's `time_s,yaw_rad,pitch_rad,roll_rad` CSV (header required)."""
    first = data_lines(path)[0][1]
    if first and [h.strip() for h in first.split(",")] != TRACKING_HEADER:
        raise TraceError(path, f"header must be {','.join(TRACKING_HEADER)}, not {show(first)}", 1)
    _, v = _rows(path, 4, header=True)
    return from_euler(v[:, 0], v[:, 1:4])


def read_tracking(path: Path, source: TrackingSource | None = None) -> TrackingTrace:
    """Any supported tracking format: the endpoint's CSV and the Corbillon MMSys'18 files by
    their exact header line, else a head-movement table in the rows or wide layout
    (traces.tracking_layouts; `source` gives its reading options)."""
    from traces.tracking_layouts import read_layout

    first = data_lines(path)[0][1]
    if source is None or source.model_fields_set <= {"file"}:
        if [h.strip() for h in first.split(",")] == TRACKING_HEADER:
            return read_tracking_csv(path)
        if first.split()[:2] == ["timestamp", "viewpoint"]:
            return read_corbillon(path)
    return read_layout(path, source)


def write_tracking_csv(trace: TrackingTrace, path: Path) -> None:
    e = trace.euler() + 0.0  # no "-0.0"
    with Path(path).open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(TRACKING_HEADER)
        for t, (y, p, r) in zip(trace.times_s, e, strict=True):
            w.writerow([f"{t:.6f}", f"{y:.9f}", f"{p:.9f}", f"{r:.9f}"])


# --------------------------------------------------------------------------- resample


def resample(
    trace: TrackingTrace,
    rate_hz: float = 60.0,
    duration_s: float | None = None,
    loop: bool = True,
) -> TrackingTrace:
    """Samples at k / rate_hz from 0 (times re-based to the first sample), by slerp.

    duration_s None: the trace's own length. Longer than the trace: loop=True wraps around
    (the orientation jumps from the last sample back to the first at each wrap); loop=False
    stops at the end of the trace (cut)."""
    if not (rate_hz > 0 and math.isfinite(rate_hz)):
        raise TraceError(None, f"rate_hz must be > 0, not {rate_hz}")
    length = trace.duration_s
    if duration_s is None or (not loop and duration_s >= length):
        n = int(math.floor(length * rate_hz + 1e-9)) + 1  # up to and including the end
    else:
        n = max(1, math.ceil(duration_s * rate_hz - 1e-9))  # [0, duration_s)
    t = np.arange(n) / rate_hz
    src = t % (length + 1.0 / rate_hz) if loop and length > 0 else t
    src = np.minimum(src, length)
    return TrackingTrace(t, trace.orientation_at(trace.times_s[0] + src))


def angular_speed_deg_s(trace: TrackingTrace) -> np.ndarray:
    """Geodesic angle between consecutive samples / their time difference (deg/s)."""
    from traces.orientation import geodesic_angle

    a = geodesic_angle(trace.quats[:-1], trace.quats[1:])
    return np.degrees(a / np.diff(trace.times_s))
