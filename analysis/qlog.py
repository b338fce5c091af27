"""qlog traces as the endpoints write them with `qlog: true` (quinn's qlog: JSON-SEQ, `.sqlog`):
read one into its header and its events.

JSON-SEQ (RFC 7464) is a sequence of JSON texts, each after a record separator byte (0x1e)
and ended by a line feed. The first record is the header (`qlog_version`, `qlog_format`
"JSON-SEQ", `title`, `description`, `trace` with its vantage point and `configuration`); every
other record is one event: `time` (ms since the trace's time 0; quicsetup's qlog.rs says which
instant that is), `name` (`transport:packet_sent`, `transport:packet_received`,
`recovery:packet_lost`, `recovery:metrics_updated`), `data`, and `group_id` (the connection's
original destination connection ID). As RFC 7464 asks, a last record cut short (a writer
stopped mid-record) is left out; any other record that is not JSON is an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RS = "\x1e"
"""JSON-SEQ's record separator."""


class QlogError(ValueError):
    """A file that is not a JSON-SEQ qlog trace: the file and the record."""


@dataclass(frozen=True)
class Trace:
    header: dict[str, Any]
    events: list[dict[str, Any]]

    def named(self, name: str) -> list[dict[str, Any]]:
        """The events called `name` (e.g. `transport:packet_sent`), in file order."""
        return [e for e in self.events if e.get("name") == name]


def read(path: Path) -> Trace:
    """The trace in `path`; QlogError if it is not JSON-SEQ qlog."""
    text = path.read_text()
    if not text.startswith(RS):
        raise QlogError(f"{path}: not JSON-SEQ (no record separator first)")
    records = text.split(RS)[1:]
    values: list[dict[str, Any]] = []
    for i, rec in enumerate(records):
        try:
            value = json.loads(rec)
        except json.JSONDecodeError as e:
            if i == len(records) - 1 and not rec.endswith("\n"):
                break  # cut short: RFC 7464 §2.3 drops it
            raise QlogError(f"{path}: record {i + 1} is not JSON: {e}") from e
        if not isinstance(value, dict):
            raise QlogError(f"{path}: record {i + 1} is not a JSON object")
        values.append(value)
    if not values or values[0].get("qlog_format") != "JSON-SEQ":
        raise QlogError(f"{path}: the first record is not a JSON-SEQ qlog header")
    return Trace(header=values[0], events=values[1:])
