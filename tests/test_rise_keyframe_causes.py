"""rise: the key-frame cause column of frames_sent.csv and its per-run metrics (issue 25)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from analysis.logs import AnalysisError
from priolab.workloads.rise.keyframes import keyframe_causes
from priolab.workloads.rise.logs import UNRECORDED, read_log_csv

OLD_HEADER = "frame_id,frame_type,size_bytes,frag_cnt,encode_time_us,tracking_sample_id"
NEW_HEADER = OLD_HEADER + ",key_cause"


def _write(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def _frames(tmp_path: Path, causes: list[str]) -> pd.DataFrame:
    rows = [
        f"{i},{'delta' if c == 'none' else 'key'},1000,1,{i * 33_333},-1,{c}"
        for i, c in enumerate(causes)
    ]
    df = read_log_csv(_write(tmp_path / "frames_sent.csv", NEW_HEADER, rows))
    df.insert(0, "endpoint", "host")
    return df


def test_causes_are_counted_per_endpoint_and_add_up_to_the_key_frames(tmp_path: Path) -> None:
    causes = ["start", "none", "deadline-lost", "none", "deadline-unacked", "deadline-lost",
              "deadline-queued", "none", "deadline-dropped", "trace"]  # fmt: skip
    m = keyframe_causes(_frames(tmp_path, causes), "host")
    assert m["keyframes_start_host"] == 1
    assert m["keyframes_deadline_lost_host"] == 2
    assert m["keyframes_deadline_unacked_host"] == 1
    assert m["keyframes_deadline_queued_host"] == 1
    assert m["keyframes_deadline_dropped_host"] == 1
    assert m["keyframes_trace_host"] == 1
    assert m["keyframes_deadline_host"] == 5
    key = sum(v for k, v in m.items() if k != "keyframes_deadline_host")
    assert key == sum(c != "none" for c in causes)
    # the other endpoint has no frames here: NaN, not 0
    assert all(math.isnan(v) for v in keyframe_causes(_frames(tmp_path, causes), "guest").values())


def test_a_log_from_before_the_cause_column_reads_as_unrecorded_and_gives_nan(
    tmp_path: Path,
) -> None:
    """The flattering failure: an old run (no key_cause) must not read as 'no key frame from
    a deadline', which would make any scheme look like Pri-D's claim."""
    rows = ["0,key,9000,8,0,-1", "1,delta,1000,1,33333,-1", "2,key,9000,8,66666,-1"]
    df = read_log_csv(_write(tmp_path / "frames_sent.csv", OLD_HEADER, rows))
    assert list(df.columns) == NEW_HEADER.split(",")
    assert set(df["key_cause"]) == {UNRECORDED}
    df.insert(0, "endpoint", "host")
    m = keyframe_causes(df, "host")
    assert m and all(math.isnan(v) for v in m.values())


def test_missing_log_reads_as_an_empty_table_with_the_cause_column(tmp_path: Path) -> None:
    df = read_log_csv(tmp_path / "frames_sent.csv")
    assert df.empty and "key_cause" in df.columns


@pytest.mark.parametrize(
    ("row", "why"),
    [("1,key,9000,8,0,-1,none", "'none' for a key frame"),
     ("1,delta,1000,1,0,-1,deadline-lost", "'deadline-lost' for a delta frame")],
)  # fmt: skip
def test_a_cause_that_contradicts_the_frame_type_is_an_error(
    tmp_path: Path, row: str, why: str
) -> None:
    p = _write(tmp_path / "frames_sent.csv", NEW_HEADER, ["0,key,9000,8,0,-1,start", row])
    with pytest.raises(AnalysisError, match=r"frames_sent.csv: line 3, column 'key_cause'") as e:
        read_log_csv(p)
    assert why.split(" for")[0] in str(e.value)


def test_an_unknown_cause_is_an_error(tmp_path: Path) -> None:
    p = _write(tmp_path / "frames_sent.csv", NEW_HEADER, ["0,key,9000,8,0,-1,pli"])
    with pytest.raises(AnalysisError, match="'pli' is not one of"):
        read_log_csv(p)
