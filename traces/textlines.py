"""Reading a trace file's text: numbered lines, with the errors every reader shares."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

from ground.errors import show
from traces.errors import TraceError


def data_lines(path: Path) -> list[tuple[int, str]]:
    """(1-based line number, stripped text) of every non-blank line. An unreadable file, one
    that is not text, or one with no non-blank line is a TraceError naming the file."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise TraceError(path, f"cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise TraceError(path, "not a text file") from e
    lines = [(i + 1, s.strip()) for i, s in enumerate(text.splitlines())]
    lines = [(i, s) for i, s in lines if s]
    if not lines:
        raise TraceError(path, "empty file")
    return lines


def finite_float(path: Path, s: str, what: str, lineno: int) -> float:
    """The number in cell `s` of line `lineno`, or a TraceError naming `what`."""
    try:
        v = float(s)
    except ValueError:
        raise TraceError(path, f"{what} {show(s)} is not a number", lineno) from None
    if not math.isfinite(v):
        raise TraceError(path, f"{what} is {show(s)}; it must be finite", lineno)
    return v


def time_value(path: Path, s: str, what: str, time_format: str | None, lineno: int) -> float:
    """Seconds in cell `s`: a number, or a date-time parsed with time_format (strptime; one
    without a zone is taken as UTC, so no daylight-saving shift moves it)."""
    if time_format is None:
        return finite_float(path, s, what, lineno)
    try:
        d = datetime.strptime(s, time_format)
    except ValueError:
        raise TraceError(
            path, f"{what} {show(s)} does not match time_format {time_format!r}", lineno
        ) from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return d.timestamp()
