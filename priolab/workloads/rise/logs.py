"""The `rise` endpoints' log schema (endpoints/README.md) and its reader.

Every CSV an endpoint writes, column → dtype in the documented header order; the values some
columns allow; the cells the endpoint leaves empty when there is no value. summary.json is
read as plain JSON (analysis.logs.read_json).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.logs import AnalysisError, read_csv_checked

ENDPOINTS = ("guest", "host")

# column -> dtype; the order is the documented header order
CSV_SCHEMAS: dict[str, dict[str, str]] = {
    "frames_sent.csv": {
        "frame_id": "int64",
        "frame_type": "str",
        "size_bytes": "int64",
        "frag_cnt": "int64",
        "encode_time_us": "int64",
        "tracking_sample_id": "int64",
        "key_cause": "str",  # added with issue 25: OPTIONAL below
    },
    "frames_displayed.csv": {
        "frame_id": "int64",
        "frame_type": "str",
        "display_time_us": "int64",
        "tracking_sample_id": "int64",
        "tracking_gen_time_us": "int64",
        "mtp_ms": "float64",
    },
    "tracking_sent.csv": {
        "sample_id": "int64",
        "gen_time_us": "int64",
        "yaw_rad": "float64",
        "pitch_rad": "float64",
        "roll_rad": "float64",
    },
    "tracking_received.csv": {
        "sample_id": "int64",
        "recv_time_us": "int64",
        "gen_time_us": "int64",
    },
    "channels.csv": {
        "time_us": "int64",
        "channel": "str",
        "enqueued": "int64",
        "sent": "int64",
        "dropped_ingress": "int64",
        "evicted": "int64",
        "retransmitted": "int64",
        "bytes_sent": "int64",
    },
    "path_stats.csv": {
        "time_us": "int64",
        "rtt_ms": "float64",
        "cwnd_bytes": "int64",
        "lost_packets": "int64",
        "sent_packets": "int64",
        "bytes_sent": "int64",
        "bytes_received": "int64",
        "congestion_events": "int64",
    },
    # added with issue 10; absent in older runs (reads as an empty table)
    "sender.csv": {
        "time_us": "int64",
        "queued_bytes_mean": "int64",
        "queued_bytes_max": "int64",
        "limited_us": "int64",
    },
}

# why a frame is a key frame (endpoints/README.md; rise-core sender.rs KeyCause); `none`: delta
KEY_CAUSES = (
    "start", "deadline-queued", "deadline-dropped", "deadline-lost", "deadline-unacked", "trace",
)  # fmt: skip
# the value a column added later reads as in a log written before it
UNRECORDED = "unrecorded"
OPTIONAL: dict[tuple[str, str], str] = {("frames_sent.csv", "key_cause"): UNRECORDED}

ALLOWED_VALUES: dict[tuple[str, str], set[str]] = {
    ("frames_sent.csv", "frame_type"): {"key", "delta"},
    ("frames_sent.csv", "key_cause"): {"none", *KEY_CAUSES},
    ("frames_displayed.csv", "frame_type"): {"key", "delta"},
    ("channels.csv", "channel"): {"tracking", "video", "ack"},
}

# cells the `rise` endpoint leaves empty when there is no value (endpoints/rise/src/logs.rs
# writes `opt(None)` as ""): a frame displayed before any tracking sample of this endpoint
NULLABLE: set[tuple[str, str]] = {
    ("frames_displayed.csv", "tracking_gen_time_us"),
    ("frames_displayed.csv", "mtp_ms"),
}


def _header(path: Path) -> list[str]:
    if not path.is_file():
        return []
    with path.open() as f:
        return [c.strip() for c in f.readline().rstrip("\n").split(",")]


def read_log_csv(path: Path, name: str | None = None) -> pd.DataFrame:
    """One `rise` CSV. Missing file or header-only file → empty table with the schema. A
    column in OPTIONAL that the file's header lacks (a log from before it) reads as its
    OPTIONAL value in every row, so old runs still load and say they did not record it."""
    name = name or path.name
    schema = dict(CSV_SCHEMAS[name])
    absent = {c: v for (f, c), v in OPTIONAL.items() if f == name}
    header = _header(path)
    absent = {c: v for c, v in absent.items() if c not in header}
    for c in absent:
        del schema[c]
    df = read_csv_checked(
        path,
        schema,
        nullable=frozenset(c for f, c in NULLABLE if f == name),
        allowed={c: v for (f, c), v in ALLOWED_VALUES.items() if f == name and c in schema},
        doc="endpoints/README.md",
    )
    if name == "frames_sent.csv" and "key_cause" in schema and len(df):
        bad = (df["frame_type"] == "key") != (df["key_cause"] != "none")
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise AnalysisError(
                f"{path}: line {i + 2}, column 'key_cause': {df['key_cause'].iloc[i]!r} for a "
                f"{df['frame_type'].iloc[i]} frame; a key frame names one of {list(KEY_CAUSES)},"
                " a delta frame 'none' (endpoints/README.md)"
            )
    for c, v in absent.items():
        df[c] = pd.Series([v] * len(df), dtype=object, index=df.index)
    out = df[list(CSV_SCHEMAS[name])]
    out.attrs = dict(df.attrs)
    return out
