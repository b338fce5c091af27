"""A real `roq` run in Mininet hosts through a step-change link (the shape of RFC 8867 test
case 1, shortened): SCReAM over QUIC with RTCP feedback ramps up, lowers its target when the
capacity halves, and the receiver decodes the video; the analysis scores every frame."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, needs_root

pytestmark = [needs_root, pytest.mark.netns]

ROQ = Path(os.environ.get("PRIOLAB_ROQ", REPO / "target" / "release" / "roq"))
LINKEM = REPO / "target" / "release" / "linkem"


@pytest.fixture(autouse=True)
def _built() -> None:
    for b in (ROQ, LINKEM):
        if not b.is_file():
            pytest.skip(f"{b} is not built; `make build` builds it")


def _scenario(tmp_path: Path) -> Path:
    data = yaml.safe_load((REPO / "scenarios" / "roq-rfc8867.yaml").read_text())
    # short: 1 Mbit/s for 7 s, 0.5 for 5 s, 1 again (the test's premise, not the paper's times)
    trace = tmp_path / "steps.txt"
    trace.write_text("# duration_s 16\n0\t1.0\n7\t0.5\n12\t1.0\n")
    data["duration_s"] = 14
    data["repetitions"] = 1
    for d in ("uplink", "downlink"):
        data["link"][d]["trace"]["file"] = str(trace)
    data["workload"]["params"].update(width=320, height=180, source_s=4)
    p = tmp_path / "roq-test.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def test_scream_over_quic_backs_off_in_the_dip_and_video_is_decoded(tmp_path: Path) -> None:
    sc = _scenario(tmp_path)
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "priolab.cli", "run-one", str(sc), "--setting", "d50",
         "--scheme", "scream", "--out", str(out)],
        capture_output=True, text=True, cwd=REPO, timeout=180,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "metadata.json").read_text())
    reasons = [x for x in meta["invalid_reasons"] if not x.startswith("CPU saturated")]
    assert not reasons, reasons
    assert {p["name"] for p in meta["processes"]} == {"roq-sender", "roq-receiver"}
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
    rate = __import__("pandas").read_parquet(out / "tables" / RATE_TABLE)
    before = rate[(rate["time_s"] > 4) & (rate["time_s"] < 7)]["target_bps"].mean()
    dip = rate[(rate["time_s"] > 10) & (rate["time_s"] < 12)]["target_bps"].mean()
    print(f"target before the dip {before:.0f} bit/s, in it {dip:.0f} bit/s")
    assert before > 550_000, before
    assert dip < 0.8 * before, (before, dip)
