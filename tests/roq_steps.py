"""What the roq step-change tests share, on Mininet (tests/test_roq_netns.py) and on the sim
site (tests/test_roq_sim.py): the shortened RFC 8867 link and the checks of a SCReAM run over
it (video decoded and scored, the decoder's report, the metric guards, the back-off in the
dip)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.guards import guard_problems, guards_for
from priolab.workloads.roq.analysis import ANALYSIS, RATE_TABLE, run_analysis
from tests.netns_runs import shortened

DURATION_S = 14


def step_scenario(tmp_path: Path) -> Path:
    """roq-rfc8867.yaml shortened to DURATION_S, at 320 × 180 over a 4 s clip."""
    # short: 1 Mbit/s for 7 s, 0.5 for 5 s, 1 again (the test's premise, not the paper's times)
    trace = tmp_path / "steps.txt"
    trace.write_text("# duration_s 16\n0\t1.0\n7\t0.5\n12\t1.0\n")

    def edit(data: dict[str, Any]) -> None:
        for d in ("uplink", "downlink"):
            data["link"][d]["trace"]["file"] = str(trace)
        data["workload"]["params"].update(width=320, height=180, source_s=4)

    return shortened(tmp_path, "roq-rfc8867.yaml", edit, duration_s=DURATION_S)


def check_scream_run(out: Path) -> dict[str, float]:
    """Scores the run in `out` and checks it; its metrics."""
    m = run_analysis(out)
    print(json.dumps(m, indent=1))
    assert m["frames_sent"] == DURATION_S * 25
    assert m["decoded_pct"] > 80
    assert m["ssim_mean"] > 0.5
    # the receiver reports its decoder: every complete frame pushed, no ERROR on its bus
    assert m["decoder_errors"] == 0 and m["decoder_stopped"] == 0 and m["no_picture"] == 0
    assert m["frames_pushed"] >= m["pictures_decoded"] > 0
    # the metric guards (analysis/guards.py) name metrics this run reports
    assert guard_problems(guards_for("priolab.workloads.roq"), m, ANALYSIS.core_metrics) == []
    rate = pd.read_parquet(out / "tables" / RATE_TABLE)
    before = rate[(rate["time_s"] > 4) & (rate["time_s"] < 7)]["target_bps"].mean()
    dip = rate[(rate["time_s"] > 10) & (rate["time_s"] < 12)]["target_bps"].mean()
    print(f"target before the dip {before:.0f} bit/s, in it {dip:.0f} bit/s")
    assert before > 550_000, before
    assert dip < 0.8 * before, (before, dip)
    return m
