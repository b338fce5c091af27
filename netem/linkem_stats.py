"""linkem's stats file (`--stats`, netem/README.md "Stats line"): the one reader of it.

linkem (and the sim's link, which writes the same lines) writes one JSON line per direction
per second and a final line per direction on SIGTERM. Everything that reads the file goes
through `read`: the userspace backend's `stop`, the judge (`final_counters`: the run's link
totals) and analysis (`analysis.logs.read_linkem_stats`: the `linkem` table). A line is
checked once, here: a JSON object with every key of `SCHEMA` (a file from an older linkem
lacks the keys of `OPTIONAL`, which then mean "none happened"), `dir` one of `DIRS`, numbers
where numbers belong. A line that is not is left out and named in `errors`
(`<file>: line N: <problem>`), so a reader decides whether a bad line is fatal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA: dict[str, str] = {
    "t_s": "float64",
    "dir": "str",
    "arrivals": "int64",
    "departures": "int64",
    "bytes_out": "int64",
    "drops_queue": "int64",
    "drops_loss": "int64",
    "drops_police": "int64",
    "oversized": "int64",
    "queue_bytes": "int64",
    "queue_delay_ms_mean": "float64",
    "queue_delay_ms_max": "float64",
    "final": "bool",
}
"""Every key of a stats line and its type (pandas' names: analysis builds its table with them)."""
OPTIONAL: dict[str, object] = {"final": False, "drops_police": 0}
"""Keys an older linkem did not write, and the value that means "none happened" then."""
DIRS = ("a_to_b", "b_to_a")
"""a_to_b = uplink (Guest → Host) in the access topology."""
DIRECTION_NAMES = {"a_to_b": "uplink", "b_to_a": "downlink"}
NOT_COUNTERS = ("t_s", "dir", "final")


@dataclass
class Stats:
    """A stats file as read: its good lines (with `OPTIONAL` keys filled in) and its problems."""

    path: Path
    exists: bool
    lines: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def finals(self) -> dict[str, dict[str, Any]]:
        """The final line of each direction that has one."""
        return {str(x["dir"]): x for x in self.lines if x["final"]}

    @property
    def per_second(self) -> list[dict[str, Any]]:
        return [x for x in self.lines if not x["final"]]


def _problem(obj: object) -> str | None:
    """What is wrong with one parsed line, or None."""
    if not isinstance(obj, dict):
        return "expected a JSON object"
    missing = [k for k in SCHEMA if k not in obj and k not in OPTIONAL]
    if missing:
        return f"missing key(s) {missing}; expected {list(SCHEMA)} (netem/README.md)"
    if obj["dir"] not in DIRS:
        return f"key 'dir' is {obj['dir']!r}, allowed {list(DIRS)}"
    for k, t in SCHEMA.items():
        v = obj.get(k)
        if (
            t in ("int64", "float64")
            and k in obj
            and (isinstance(v, bool) or not isinstance(v, int | float))
        ):
            return f"key {k!r} must be a number, not {v!r}"
    return None


def read(path: Path) -> Stats:
    """Read a stats file. No file: no lines and the error `<file>: no stats file` (an invalid
    run may have none; the reader decides what that means)."""
    if not path.is_file():
        return Stats(path, False, errors=[f"{path}: no stats file"])
    out = Stats(path, True)
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            out.errors.append(f"{path}: line {i}: not JSON: {e.msg}")
            continue
        problem = _problem(obj)
        if problem is not None:
            out.errors.append(f"{path}: line {i}: {problem}")
            continue
        out.lines.append({**OPTIONAL, **obj})
    return out


def totals(finals: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per direction (uplink, downlink) the final line's counters (the contract's and any
    others linkem reports, e.g. rx_drops), None without a final line; `oversized_frames`
    over both."""
    out: dict[str, Any] = {
        name: ({k: v for k, v in finals[d].items() if k not in NOT_COUNTERS}
               if d in finals else None)
        for d, name in DIRECTION_NAMES.items()
    }  # fmt: skip
    out["oversized_frames"] = sum(int(finals[d]["oversized"]) for d in DIRS if d in finals)
    return out


def final_counters(path: Path) -> dict[str, Any]:
    """The link's totals from a stats file (`totals`), `seconds_reported`, and `errors`: the
    file's problems and each direction without a final line."""
    stats = read(path)
    finals = stats.finals
    errors = stats.errors + [f"no final stats line for {d} in {path.name}"
                             for d in DIRS if d not in finals]  # fmt: skip
    out = totals(finals)
    out.update(stats_file=path.name, seconds_reported=len(stats.per_second) // 2, errors=errors)
    return out
