"""roq on the sim site through the real priolab-sim: the shortened RFC 8867 step-change link
of tests/roq_steps.py (Mininet's roq test runs it too), for SCReAM over QUIC and SCReAM over
UDP. Each run is valid, two runs of one seed leave byte-identical logs (the decoded pictures
included), the analysis scores every frame, and SCReAM lowers its target in the dip."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ground import rundir
from priolab import cli
from tests.roq_steps import DURATION_S, check_scream_run, step_scenario
from tests.test_sim_site import _log_files, needs_real_sim

TRIVIAL_TOP_BPS = 1_280_000  # endpoints/roq-core/src/trivial.rs LEVELS_BPS, the top level


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
    scenario, results = step_scenario(tmp_path), tmp_path / "results"
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

    m = check_scream_run(tmp_path / "run0")
    # decoding takes no virtual time: a frame's latency is the path's (50 ms one way, the
    # frame's serialisation and queueing), not less
    assert 50 <= m["latency_median_ms"] < 400, m["latency_median_ms"]


@needs_real_sim
def test_trivial_controller_on_sim_sits_at_its_top_level_as_on_the_real_stack(
    tmp_path: Path,
) -> None:
    """Without congestion control nothing holds the trivial controller's RTP queue back for
    long (quinn takes the datagrams and drops the oldest when the 1 Mbit/s link lags), so it
    climbs to 1280 kbit/s and stays there ([RoQ §6.1]; Mininet's agree-roq runs: 79-87 %
    of the 100 ms samples). Its decisions run on their own clock off the frame clock: when
    they fell on the frames' instants in virtual time, each saw a frame just queued and the
    level wandered (sim: never at the top between 5 and 60 s)."""
    out, _ = _run(step_scenario(tmp_path), tmp_path / "results", "trivial")
    rate = pd.read_csv(out / "host" / "rate.csv")
    t_s = (rate["time_us"] - rate["time_us"].iloc[0]) / 1e6
    top = rate[(t_s > 2) & (t_s < DURATION_S)]["target_bps"] == TRIVIAL_TOP_BPS
    print(f"trivial at its top level in {top.mean():.0%} of {len(top)} samples")
    assert len(top) > 50 and top.mean() > 0.8, top.mean()
