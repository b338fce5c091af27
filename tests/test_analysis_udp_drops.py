"""runs.csv shows each node's kernel receive-buffer drops (metadata.json's `udp_drops`)."""

from __future__ import annotations

from pathlib import Path

from analysis.aggregate import runs_table
from analysis.rundirs import Run


def run(meta_extra: dict, valid: bool = True) -> Run:
    meta = {"run": {"workload": {"kind": "probe"}}, **meta_extra}
    return Run(Path("r"), "s", "pri", "moderate", "1", meta, valid, [], {"stall_pct": 1.0})


def test_runs_table_has_a_rcvbuf_column_per_node() -> None:
    drops = {
        "guest": {"InErrors": 12, "RcvbufErrors": 12, "SndbufErrors": 0},
        "host": {"InErrors": 0, "RcvbufErrors": 0, "SndbufErrors": 0},
        "emu": None,
    }
    t = runs_table([run({"udp_drops": drops}), run({})], False, ())
    assert list(t["udp_rcvbuf_errors_guest"][:1]) == [12]
    assert list(t["udp_rcvbuf_errors_host"][:1]) == [0]
    assert t["udp_rcvbuf_errors_emu"].isna().all()  # no readings: unknown, not 0
    assert t["udp_rcvbuf_errors_guest"].isna().tolist() == [False, True]  # older run: unknown
    assert list(t["stall_pct"]) == [1.0, 1.0]
