"""A real `moq` run in Mininet hosts: under a bottleneck below the video's bitrate, FT (a
stream per frame type, I > P > B) delivers I frames earlier than FEFS (one stream in encode
order), because the backlog waits in the publisher's QUIC send buffer, where FT lets I frames
go first."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import REPO, needs_root
from tests.netns_runs import process_names, require_built, run_point, shortened

pytestmark = [needs_root, pytest.mark.netns]


def _scenario(tmp_path: Path) -> Path:
    def edit(data: dict) -> None:
        data["workload"]["params"]["frame_trace"] = str(
            REPO / "traces" / "synthetic" / "gop-x264-720p25-g50-bf2-2.7mbps-20s.csv"
        )
        # a rate well below the clip's 2.8 Mbit/s and a short queue: the backlog builds in the
        # sender, where the scheme decides the order (the test's premise, not a paper value)
        link = {"downlink": {"rate_mbps": 2.2, "queue": {"limit_packets": 30}}}
        data["settings"] = {"2.2M": {"link": link}}

    # short: the backlog grows by ~0.6 Mbit/s from the start
    return shortened(tmp_path, "moq-sports.yaml", edit, duration_s=10)


def _run(sc: Path, scheme: str) -> pd.DataFrame:
    out, meta = run_point(sc, "2.2M", scheme)
    assert process_names(meta) == {"moq-publisher", "moq-subscriber"}
    from priolab.workloads.moq.analysis import frames_table

    return frames_table(out)


def test_ft_delivers_i_frames_earlier_than_fefs(tmp_path: Path) -> None:
    require_built("moq", "linkem")
    sc = _scenario(tmp_path)
    fefs = _run(sc, "fefs")
    ft = _run(sc, "ft")
    assert len(fefs) == len(ft) > 200  # the same schedule: 10 s of 25 fps
    i_fefs = fefs[fefs["pict_type"] == "I"]["latency_ms"]
    i_ft = ft[ft["pict_type"] == "I"]["latency_ms"]
    assert i_ft.notna().all() and i_fefs.notna().all(), "every I frame arrives in both"
    print(f"I-frame latency mean (ms): ft {i_ft.mean():.0f}, fefs {i_fefs.mean():.0f}")
    # FEFS: later I frames wait behind the backlog of everything before them
    assert i_ft.iloc[-1] < i_fefs.iloc[-1], (list(i_ft), list(i_fefs))
    assert i_ft.mean() < i_fefs.mean(), (list(i_ft), list(i_fefs))
    # and FT pays with B frames: the lowest priority waits longest
    b_ft = ft[ft["pict_type"] == "B"]["latency_ms"]
    assert b_ft.median() > i_ft.median()
