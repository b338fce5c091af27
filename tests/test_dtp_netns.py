"""A real `dtp` run in Mininet hosts: at 3 MB/s, half the rate the paper's blocks need (3 ×
200 KB every 100 ms), DTP (ADS, α = 0.5) meets more block deadlines than QUIC in arrival
order, whose sender backlog grows until every block is late; and DTP keeps the most important
blocks on time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import needs_root
from tests.netns_runs import process_names, require_built, run_point, shortened

pytestmark = [needs_root, pytest.mark.netns]


def _scenario(tmp_path: Path) -> Path:
    def edit(data: dict) -> None:
        data["settings"] = {"3MBps": data["settings"]["3MBps"]}
        data["speeds"] = {"cubic": data["speeds"]["cubic"]}

    # short: QUIC's backlog passes the deadline within a second
    return shortened(tmp_path, "dtp-bandwidth.yaml", edit, duration_s=4)


def _run(sc: Path, scheme: str) -> dict[str, float]:
    out, meta = run_point(sc, "3MBps", scheme, speed="cubic", timeout_s=120)
    assert process_names(meta) == {"dtp-sender", "dtp-receiver"}
    from priolab.workloads.dtp.analysis import blocks_table, metrics

    blocks = blocks_table(out)
    assert len(blocks) == 120  # 40 rounds of 3 blocks in 4 s
    return metrics(blocks, json.loads((out / "host" / "summary.json").read_text()))


def test_dtp_meets_more_deadlines_than_quic_when_bandwidth_limited(tmp_path: Path) -> None:
    require_built("dtp", "linkem")
    sc = _scenario(tmp_path)
    quic = _run(sc, "quic")
    dtp = _run(sc, "dtp")
    for k in ("deadline_ratio", "deadline_ratio_p1", "good_bytes_ratio"):
        print(f"{k}: dtp {dtp[k]:.3f}, quic {quic[k]:.3f}")
    assert quic["dropped_pct"] == 0  # QUIC drops nothing ...
    assert dtp["dropped_pct"] > 0  # ... DTP gives up the blocks it cannot deliver
    assert dtp["deadline_ratio"] > 2 * quic["deadline_ratio"]
    assert dtp["deadline_ratio_p1"] > 0.8
    assert dtp["good_bytes_ratio"] > quic["good_bytes_ratio"]
