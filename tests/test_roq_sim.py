"""roq on the sim site through the real priolab-sim: the RFC 8867 step-change link, shortened
as tests/test_roq_netns.py shortens it, for SCReAM over QUIC and SCReAM over UDP. Each run is
valid, two runs of one seed leave byte-identical logs (the decoded pictures included), the
analysis scores every frame, and SCReAM lowers its target in the dip."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from analysis.guards import guard_problems, guards_for
from priolab import cli
from priolab.engine import rundir
from priolab.workloads.roq.analysis import ANALYSIS, RATE_TABLE, run_analysis
from tests.netns_runs import shortened
from tests.test_sim_site import _log_files, needs_real_sim

DURATION_S = 14


def _scenario(tmp_path: Path) -> Path:
    # 1 Mbit/s for 7 s, 0.5 for 5 s, 1 again (the netns test's premise, not the paper's times)
    trace = tmp_path / "steps.txt"
    trace.write_text("# duration_s 16\n0\t1.0\n7\t0.5\n12\t1.0\n")

    def edit(data: dict[str, Any]) -> None:
        for d in ("uplink", "downlink"):
            data["link"][d]["trace"]["file"] = str(trace)
        data["workload"]["params"].update(width=320, height=180, source_s=4)

    return shortened(tmp_path, "roq-rfc8867.yaml", edit, duration_s=DURATION_S)


def _run(scenario: Path, results: Path, scheme: str) -> tuple[Path, dict[str, Any]]:
    args = ["run-one", str(scenario), "--setting", "d50", "--scheme", scheme, "--rep", "1",
            "--site", "sim", "--results", str(results)]  # fmt: skip
    assert cli.main(args) == 0
    out = rundir.run_dir(results, "roq-rfc8867", "d50", scheme, "default", 1)
    meta = json.loads((out / rundir.METADATA).read_text())
    assert meta["valid"], meta["invalid_reasons"]
    assert meta["site"]["kind"] == "sim" and meta["run"]["workload"]["kind"] == "roq"
    return out, meta


@needs_real_sim
@pytest.mark.parametrize("scheme", ["scream", "udp-scream"])
def test_roq_on_sim_is_valid_repeats_byte_for_byte_and_is_scored(
    tmp_path: Path, scheme: str
) -> None:
    scenario, results = _scenario(tmp_path), tmp_path / "results"
    runs: list[dict[str, bytes]] = []
    for i in range(2):
        out, meta = _run(scenario, results, scheme)
        print(f"{scheme}: virtual {meta['site']['virtual_s']} s, wall {meta['site']['wall_s']} s")
        runs.append(_log_files(out))
        shutil.move(out, tmp_path / f"run{i}")  # the next run writes the same folder
    first, second = runs
    assert {"guest/decoded.y", "guest/decoded_frames.csv", "host/frames_sent.csv"} <= set(first)
    assert sorted(first) == sorted(second)
    differ = [f for f in first if first[f] != second[f]]
    assert differ == [], f"not byte-identical with one seed: {differ}"

    m = run_analysis(tmp_path / "run0")
    print(json.dumps(m, indent=1))
    assert m["frames_sent"] == DURATION_S * 25
    assert m["decoded_pct"] > 80 and m["ssim_mean"] > 0.5
    assert m["decoder_errors"] == 0 and m["decoder_stopped"] == 0 and m["no_picture"] == 0
    assert m["frames_pushed"] >= m["pictures_decoded"] > 0
    # decoding takes no virtual time: a frame's latency is the path's (50 ms one way, the
    # frame's serialisation and queueing), not less
    assert 50 <= m["latency_median_ms"] < 400, m["latency_median_ms"]
    assert guard_problems(guards_for("priolab.workloads.roq"), m, ANALYSIS.core_metrics) == []
    rate = pd.read_parquet(tmp_path / "run0" / "tables" / RATE_TABLE)
    before = rate[(rate["time_s"] > 4) & (rate["time_s"] < 7)]["target_bps"].mean()
    dip = rate[(rate["time_s"] > 10) & (rate["time_s"] < 12)]["target_bps"].mean()
    print(f"target before the dip {before:.0f} bit/s, in it {dip:.0f} bit/s")
    assert before > 550_000, before
    assert dip < 0.8 * before, (before, dip)
