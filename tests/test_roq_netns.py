"""A real `roq` run in Mininet hosts through a step-change link (the shape of RFC 8867 test
case 1, shortened): SCReAM over QUIC with RTCP feedback ramps up, lowers its target when the
capacity halves, and the receiver decodes the video; the analysis scores every frame."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import needs_root
from tests.netns_runs import process_names, require_built, run_point
from tests.roq_steps import check_scream_run, step_scenario

pytestmark = [needs_root, pytest.mark.netns]


def test_scream_over_quic_backs_off_in_the_dip_and_video_is_decoded(tmp_path: Path) -> None:
    require_built("roq", "linkem")
    out, meta = run_point(step_scenario(tmp_path), "d50", "scream")
    assert process_names(meta) == {"roq-sender", "roq-receiver"}
    m = check_scream_run(out)
    # the key frames that arrived whole (the sender's first IDR at least)
    assert 1 <= m["key_frames_complete"] <= m["key_frames_sent"]
    assert not (out / "guest" / "decoded.y").exists()  # replaced by the frames table
