"""The `rise` endpoints' log schema (endpoints/README.md) and its reader.

Every CSV an endpoint writes, column → dtype in the documented header order; the values some
columns allow; the cells the endpoint leaves empty when there is no value. summary.json is
read as plain JSON (analysis.logs.read_json).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.logs import read_csv_checked

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

ALLOWED_VALUES: dict[tuple[str, str], set[str]] = {
    ("frames_sent.csv", "frame_type"): {"key", "delta"},
    ("frames_displayed.csv", "frame_type"): {"key", "delta"},
    ("channels.csv", "channel"): {"tracking", "video", "ack"},
}

# cells the `rise` endpoint leaves empty when there is no value (endpoints/rise/src/logs.rs
# writes `opt(None)` as ""): a frame displayed before any tracking sample of this endpoint
NULLABLE: set[tuple[str, str]] = {
    ("frames_displayed.csv", "tracking_gen_time_us"),
    ("frames_displayed.csv", "mtp_ms"),
}


def read_log_csv(path: Path, name: str | None = None) -> pd.DataFrame:
    """One `rise` CSV. Missing file or header-only file → empty table with the schema."""
    name = name or path.name
    return read_csv_checked(
        path,
        CSV_SCHEMAS[name],
        nullable=frozenset(c for f, c in NULLABLE if f == name),
        allowed={c: v for (f, c), v in ALLOWED_VALUES.items() if f == name},
        doc="endpoints/README.md",
    )
