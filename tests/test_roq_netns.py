"""A real `roq` run in Mininet hosts through a step-change link (the shape of RFC 8867 test
case 1, shortened): SCReAM over QUIC with RTCP feedback ramps up, lowers its target when the
capacity halves, and the receiver decodes the video; the analysis scores every frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import needs_root
from tests.netns_runs import process_names, require_built, run_point, shortened

pytestmark = [needs_root, pytest.mark.netns]


def _scenario(tmp_path: Path) -> Path:
    # short: 1 Mbit/s for 7 s, 0.5 for 5 s, 1 again (the test's premise, not the paper's times)
    trace = tmp_path / "steps.txt"
    trace.write_text("# duration_s 16\n0\t1.0\n7\t0.5\n12\t1.0\n")

    def edit(data: dict) -> None:
        for d in ("uplink", "downlink"):
            data["link"][d]["trace"]["file"] = str(trace)
        data["workload"]["params"].update(width=320, height=180, source_s=4)

    return shortened(tmp_path, "roq-rfc8867.yaml", edit, duration_s=14)


def test_scream_over_quic_backs_off_in_the_dip_and_video_is_decoded(tmp_path: Path) -> None:
    require_built("roq", "linkem")
    out, meta = run_point(_scenario(tmp_path), "d50", "scream")
    assert process_names(meta) == {"roq-sender", "roq-receiver"}
    from priolab.workloads.roq.analysis import RATE_TABLE, run_analysis

    m = run_analysis(out)
    print(json.dumps(m, indent=1))
    assert m["frames_sent"] == 14 * 25
    assert m["decoded_pct"] > 80
    assert m["ssim_mean"] > 0.5
    # the receiver reports its decoder: every complete frame pushed, no ERROR on its bus,
    # and the key frames that arrived whole (the sender's first IDR at least)
    assert m["decoder_errors"] == 0 and m["decoder_stopped"] == 0 and m["no_picture"] == 0
    assert m["frames_pushed"] >= m["pictures_decoded"] > 0
    assert 1 <= m["key_frames_complete"] <= m["key_frames_sent"]
    assert not (out / "guest" / "decoded.y").exists()  # replaced by the frames table
    # the metric guards (analysis/guards.py) name metrics this real run reports
    from analysis.guards import guard_problems, guards_for
    from priolab.workloads.roq.analysis import ANALYSIS

    guards = guards_for("priolab.workloads.roq")
    assert guard_problems(guards, m, ANALYSIS.core_metrics) == []
    rate = __import__("pandas").read_parquet(out / "tables" / RATE_TABLE)
    before = rate[(rate["time_s"] > 4) & (rate["time_s"] < 7)]["target_bps"].mean()
    dip = rate[(rate["time_s"] > 10) & (rate["time_s"] < 12)]["target_bps"].mean()
    print(f"target before the dip {before:.0f} bit/s, in it {dip:.0f} bit/s")
    assert before > 550_000, before
    assert dip < 0.8 * before, (before, dip)
