"""netem/linkem_stats.py: the one reader of linkem's stats file, as the backend, the judge and
analysis see it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from analysis.logs import AnalysisError, read_linkem_stats
from netem import linkem_stats


def line(d: str, t_s: float, final: bool = False, **counters: Any) -> dict[str, Any]:
    """A complete stats line (netem/README.md's example's keys), zero counters by default."""
    base = {k: 0 for k, t in linkem_stats.SCHEMA.items() if t == "int64"}
    base |= {"queue_delay_ms_mean": 0.0, "queue_delay_ms_max": 0.0}
    return {"t_s": t_s, "dir": d, **base, "final": final, **counters}


def write(path: Path, *rows: dict[str, Any] | str) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_good_lines_finals_and_totals(tmp_path: Path) -> None:
    f = write(tmp_path / "s.jsonl",
              line("a_to_b", 1.0, departures=5), line("b_to_a", 1.0, departures=2),
              line("a_to_b", 1.5, True, departures=9, oversized=1, rx_drops=4),
              line("b_to_a", 1.5, True, departures=3))  # fmt: skip
    s = linkem_stats.read(f)
    assert s.exists and s.errors == [] and len(s.per_second) == 2
    tot = linkem_stats.totals(s.finals)
    assert tot["uplink"]["departures"] == 9 and tot["uplink"]["rx_drops"] == 4  # extra key kept
    assert "dir" not in tot["uplink"] and tot["downlink"]["departures"] == 3
    assert tot["oversized_frames"] == 1
    fc = linkem_stats.final_counters(f)
    assert fc["errors"] == [] and fc["seconds_reported"] == 1 and fc["stats_file"] == "s.jsonl"


def test_each_bad_line_is_left_out_and_named(tmp_path: Path) -> None:
    f = write(tmp_path / "s.jsonl",
              line("a_to_b", 1.0, True), "not json", "[1]", {"t_s": 1, "dir": "a_to_b"},
              line("up", 1.0), line("b_to_a", 1.0, departures="7"), "")  # fmt: skip
    s = linkem_stats.read(f)
    assert len(s.lines) == 1
    assert [e.split(": ", 2)[1:] for e in s.errors] == [
        ["line 2", "not JSON: Expecting value"],
        ["line 3", "expected a JSON object"],
        ["line 4", "missing key(s) ['arrivals', 'departures', 'bytes_out', 'drops_queue', "
                   "'drops_loss', 'oversized', 'queue_bytes', 'queue_delay_ms_mean', "
                   "'queue_delay_ms_max']; expected " + str(list(linkem_stats.SCHEMA))
                   + " (netem/README.md)"],
        ["line 5", "key 'dir' is 'up', allowed ['a_to_b', 'b_to_a']"],
        ["line 6", "key 'departures' must be a number, not '7'"],
    ]  # fmt: skip
    fc = linkem_stats.final_counters(f)
    assert fc["errors"][-1] == "no final stats line for b_to_a in s.jsonl"
    assert fc["uplink"] is not None and fc["downlink"] is None
    with pytest.raises(AnalysisError, match=r"s.jsonl: line 2: not JSON"):
        read_linkem_stats(f)  # analysis stops at the first bad line


def test_an_older_linkems_lines_and_a_missing_file(tmp_path: Path) -> None:
    old = line("a_to_b", 1.0)
    del old["final"], old["drops_police"]  # before the policer and the final lines
    s = linkem_stats.read(write(tmp_path / "s.jsonl", old))
    assert s.errors == [] and s.lines[0]["final"] is False and s.lines[0]["drops_police"] == 0
    missing = linkem_stats.read(tmp_path / "none.jsonl")
    assert not missing.exists and missing.errors == [f"{tmp_path / 'none.jsonl'}: no stats file"]
    assert read_linkem_stats(tmp_path / "none.jsonl").empty
    assert list(read_linkem_stats(tmp_path / "none.jsonl").columns) == list(linkem_stats.SCHEMA)
