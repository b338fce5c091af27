"""analysis.qlog: JSON-SEQ qlog traces read as RFC 7464 says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis import qlog

HEADER = {"qlog_version": "0.3", "qlog_format": "JSON-SEQ", "title": "rise guest, connection 1",
          "trace": {"vantage_point": {"type": "unknown"}}}  # fmt: skip
EVENTS = [
    {"time": 0.5, "name": "transport:packet_sent", "data": {"header": {"packet_number": 0}},
     "group_id": "ab"},
    {"time": 21.25, "name": "transport:packet_received", "data": {}, "group_id": "ab"},
]  # fmt: skip


def _write(path: Path, records: list[object], tail: str = "") -> Path:
    path.write_text("".join(f"\x1e{json.dumps(r)}\n" for r in records) + tail)
    return path


def test_a_trace_is_its_header_and_its_events(tmp_path: Path) -> None:
    t = qlog.read(_write(tmp_path / "a.sqlog", [HEADER, *EVENTS]))
    assert t.header == HEADER and t.events == EVENTS
    assert [e["time"] for e in t.named("transport:packet_received")] == [21.25]


def test_a_last_record_cut_short_is_left_out_and_any_other_bad_one_is_an_error(
    tmp_path: Path,
) -> None:
    cut = _write(tmp_path / "cut.sqlog", [HEADER, *EVENTS], tail='\x1e{"time": 30.0, "na')
    assert qlog.read(cut).events == EVENTS
    bad = tmp_path / "bad.sqlog"
    bad.write_text(f"\x1e{json.dumps(HEADER)}\n\x1e{{nope\n\x1e{json.dumps(EVENTS[0])}\n")
    with pytest.raises(qlog.QlogError, match="record 2 is not JSON"):
        qlog.read(bad)
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(HEADER))
    with pytest.raises(qlog.QlogError, match="no record separator"):
        qlog.read(plain)
    other = _write(tmp_path / "other.sqlog", [{"qlog_format": "JSON"}])
    with pytest.raises(qlog.QlogError, match="not a JSON-SEQ qlog header"):
        qlog.read(other)
