"""Head-movement traces in the common public layouts, recognised by their column names.

Two layouts (traces/README.md, "Head-movement tables"):
- rows: a header row of names, then one row per sample (comma, tab or space separated).
- wide: one row per signal, its first cell the signal's name (a time row, then yaw/pitch/roll
  or quaternion rows), every other cell one sample.

Signals are found by name (case and punctuation ignored): a time column (time, time_s,
timestamp, t, playbacktime, sec, seconds, …), and either a quaternion (w, x, y, z, optionally
prefixed q/quat/quaternion/unitquaternion, e.g. `UnitQuaternion.x`) or Euler angles (a name
containing yaw, pitch and optionally roll, e.g. `HeadYaw`, `raw yaw`, `yaw_deg`). A quaternion is
used when all four parts are present. Angle units come from the names (`deg`, `rad`,
`degrees`) or `angle_unit`; with neither, the file is refused (no guessing). `columns` names
the signals' columns explicitly when names are ambiguous.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ground.errors import show
from traces.errors import TraceError
from traces.textlines import data_lines, finite_float, time_value
from traces.tracking import TrackingTrace, from_euler

SIGNALS = ("time", "yaw", "pitch", "roll", "w", "x", "y", "z")
TIME_NAMES = ("times", "time", "timestamp", "t", "playbacktime", "sec", "seconds", "elapsed")
_UNIT_TOKENS = {"deg": "deg", "degree": "deg", "degrees": "deg", "rad": "rad", "radian": "rad"}
_UNIT_TOKENS["radians"] = "rad"
_TIME_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_QUAT = re.compile(r"^(unitquaternion|quaternion|quat|q|orientation|rotation)?([wxyz])$")


class TrackingSource(BaseModel):
    """A head-movement trace file and how to read it (a `rise` scenario's `tracking_trace`
    as a mapping; `priolab trace tracking` flags)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: Path = Field(description="relative paths resolve against the scenario file")
    layout: Literal["auto", "rows", "wide"] = Field(
        default="auto", description="rows: a header, one row per sample; wide: one row per signal"
    )
    columns: dict[Literal[SIGNALS], str] | None = Field(  # type: ignore[valid-type]
        default=None, description="signal -> column (or row) name, e.g. {yaw: HeadYaw}"
    )
    time_unit: Literal["s", "ms", "us", "ns"] | None = Field(
        default=None, description="unit of a numeric time column (default: from its name, else s)"
    )
    time_format: str | None = Field(
        default=None, description="strptime format of a date-time time column (no zone = UTC)"
    )
    angle_unit: Literal["deg", "rad"] | None = Field(
        default=None, description="unit of Euler angles whose names do not say"
    )


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t]


def _core(name: str) -> str:
    """The name without unit words and punctuation: `yaw_deg` -> `yaw`, `Time (ms)` -> `time`."""
    return "".join(t for t in _tokens(name) if t not in _UNIT_TOKENS and t not in _TIME_SCALE)


def _find(names: list[str], signal: str) -> list[int]:
    cores = [_core(n) for n in names]
    if signal == "time":
        for cand in TIME_NAMES:
            hits = [i for i, c in enumerate(cores) if c == cand]
            if hits:
                return hits
        return []
    if signal in ("w", "x", "y", "z"):
        return [i for i, c in enumerate(cores) if (m := _QUAT.match(c)) and m.group(2) == signal]
    return [i for i, c in enumerate(cores) if signal in c]


def _table(path: Path, layout: str) -> tuple[list[str], list[list[str]], list[int], bool]:
    """(names, columns of cells, line of each column's cells or row, wide?)."""
    lines = [(n, s) for n, s in data_lines(path) if not s.startswith("#")]
    first = lines[0][1]
    sep = "," if "," in first else ("\t" if "\t" in first else None)
    rows = [[c.strip() for c in s.split(sep)] for _, s in lines]
    if layout == "auto":
        tail = rows[0][1:]
        numeric = sum(_is_number(c) for c in tail)
        layout = "wide" if tail and numeric >= max(1, len(tail) // 2) else "rows"
    if layout == "wide":
        width = len(rows[0])
        for (n, _), r in zip(lines, rows, strict=True):
            if len(r) != width:
                raise TraceError(path, f"{len(r)} cells, the first row has {width}", n)
        names = [r[0] for r in rows]
        return names, [r[1:] for r in rows], [n for n, _ in lines], True
    names = rows[0]
    for (n, _), r in zip(lines[1:], rows[1:], strict=True):
        if len(r) != len(names):
            raise TraceError(path, f"{len(r)} fields, the header has {len(names)}", n)
    if len(rows) < 2:
        raise TraceError(path, "no data rows after the header")
    cols = [list(c) for c in zip(*rows[1:], strict=True)]
    return names, cols, [n for n, _ in lines[1:]], False


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def read_layout(path: Path, source: TrackingSource | None = None) -> TrackingTrace:
    """A head-movement table in the rows or wide layout (module docstring)."""
    src = source or TrackingSource(file=path)
    names, cols, line_of, wide = _table(path, src.layout)
    given = dict(src.columns or {})

    def pick(signal: str, required: bool) -> int | None:
        if signal in given:
            if given[signal] not in names:
                raise TraceError(
                    path, f"columns.{signal}: no column {given[signal]!r}; have {show(names)}"
                )
            return names.index(given[signal])
        hits = _find(names, signal)
        if len(hits) > 1:
            both = [names[i] for i in hits]
            raise TraceError(path, f"{signal}: several columns match {show(both)}; give columns")
        if not hits and required:
            raise TraceError(
                path,
                f"no {signal} column among {show(names)}; allowed names: "
                + (", ".join(TIME_NAMES) if signal == "time" else signal)
                + " (or give columns)",
            )
        return hits[0] if hits else None

    def cell_line(j: int, k: int) -> int:
        return line_of[j] if wide else line_of[k]

    def numbers(j: int, what: str) -> np.ndarray:
        return np.array(
            [finite_float(path, c, what, cell_line(j, k)) for k, c in enumerate(cols[j])]
        )

    ti = pick("time", True)
    assert ti is not None
    tname = names[ti]
    unit: str = src.time_unit or next((t for t in _tokens(tname) if t in _TIME_SCALE), "s")
    times = np.array(
        [
            time_value(path, c, f"time ({tname})", src.time_format, cell_line(ti, k))
            for k, c in enumerate(cols[ti])
        ]
    ) * (1.0 if src.time_format else _TIME_SCALE[unit])
    bad = np.flatnonzero(np.diff(times) <= 0)
    if len(bad):
        k = int(bad[0]) + 1
        where = f" (sample {k + 1})" if wide else ""
        raise TraceError(path, f"time {cols[ti][k]} does not increase{where}", cell_line(ti, k))
    times = times - times[0]

    quat = [pick(s, False) for s in ("w", "x", "y", "z")]
    if all(i is not None for i in quat):
        q = np.stack([numbers(i, names[i]) for i in quat if i is not None], axis=-1)
        norms = np.linalg.norm(q, axis=1)
        off = np.flatnonzero(np.abs(norms - 1) > 1e-2)
        if len(off):
            k = int(off[0])
            raise TraceError(
                path, f"quaternion norm {norms[k]:.4f} is not 1 (sample {k + 1})", cell_line(0, k)
            )
        return TrackingTrace(times, q)
    yi, pi = pick("yaw", False), pick("pitch", False)
    if yi is None or pi is None:
        raise TraceError(
            path,
            f"no orientation among {show(names)}; allowed: yaw and pitch [and roll] columns, "
            "or quaternion w, x, y, z (or give columns)",
        )
    ri = pick("roll", False)
    used = [i for i in (yi, pi, ri) if i is not None]
    units = {u for i in used for t in _tokens(names[i]) if (u := _UNIT_TOKENS.get(t))}
    if len(units) > 1:
        raise TraceError(path, f"angle columns {show([names[i] for i in used])} mix deg and rad")
    angle_unit = src.angle_unit or (units.pop() if units else None)
    if angle_unit is None:
        raise TraceError(
            path,
            f"angle unit unknown: the columns {show([names[i] for i in used])} do not say; "
            "give angle_unit: deg or rad (CLI: --angle-unit)",
        )
    e = np.stack(
        [numbers(i, names[i]) if i is not None else np.zeros(len(times)) for i in (yi, pi, ri)],
        axis=-1,
    )
    return from_euler(times, np.radians(e) if angle_unit == "deg" else e)


_LOADED: dict[tuple[str, int, int, str], TrackingTrace] = {}


def load_tracking(spec: Path | TrackingSource, base_dir: Path) -> tuple[Path, TrackingTrace]:
    """The tracking trace a scenario names (a path or a TrackingSource), resolved against
    base_dir, read as `read_tracking` reads it: (resolved path, trace). Remembered per file
    (path, mtime, size) and options: a scenario's check reads it once per matrix point."""
    from traces.tracking import read_tracking

    src = spec if isinstance(spec, TrackingSource) else TrackingSource(file=spec)
    path = src.file if src.file.is_absolute() else (Path(base_dir) / src.file).resolve()
    try:
        st = path.stat()
    except OSError as e:
        raise TraceError(path, f"cannot read: {e.strerror or e}") from e
    key = (str(path), st.st_mtime_ns, st.st_size, src.model_dump_json(exclude={"file"}))
    if key not in _LOADED:
        _LOADED[key] = read_tracking(path, src)
    return path, _LOADED[key]
