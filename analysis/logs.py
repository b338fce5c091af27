"""Read one run directory's raw logs, checked against the documented schema.

Schema sources: endpoints/README.md (the `rise` CSVs and summary.json), netem/README.md (the
linkem stats JSON lines), priolab/run.py (metadata.json). A missing or empty file is not an
error (an invalid run may have no logs): it reads as an empty table with the right columns.
A file that is there but malformed raises AnalysisError naming the file, the line or column,
and what is allowed.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from priolab.engine import rundir

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

LINKEM_SCHEMA: dict[str, str] = {
    "t_s": "float64",
    "dir": "str",
    "arrivals": "int64",
    "departures": "int64",
    "bytes_out": "int64",
    "drops_queue": "int64",
    "drops_loss": "int64",
    "drops_police": "int64",
    "oversized": "int64",
    "queue_bytes": "int64",
    "queue_delay_ms_mean": "float64",
    "queue_delay_ms_max": "float64",
    "final": "bool",
}
# keys an older linkem did not write, and the value that means "none happened" then
LINKEM_OPTIONAL: dict[str, object] = {"final": False, "drops_police": 0}
LINKEM_DIRS = {"a_to_b", "b_to_a"}  # a_to_b = uplink (Guest → Host) in the access topology


class AnalysisError(ValueError):
    """Bad input for the analysis: the message names the file, the line/key and what is allowed."""


def empty_frame(schema: dict[str, str]) -> pd.DataFrame:
    cols = {c: pd.Series(dtype=object if t == "str" else t) for c, t in schema.items()}
    return pd.DataFrame(cols)


def _cast(df: pd.DataFrame, schema: dict[str, str], path: Path) -> pd.DataFrame:
    out: dict[str, pd.Series] = {}
    for col, dtype in schema.items():
        s = df[col]
        if dtype == "str":
            out[col] = s.astype(str).str.strip()
            continue
        num = pd.to_numeric(s, errors="coerce")
        nullable = (path.name, col) in NULLABLE
        bad = num.isna() & (s.notna() if nullable else True)  # empty cells only if nullable
        if nullable and dtype == "int64":
            dtype = "Int64"
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise AnalysisError(
                f"{path}: line {i + 2}, column {col!r}: {s.iloc[i]!r} is not a number"
            )
        if dtype in ("int64", "Int64"):
            frac = np.mod(num.to_numpy(dtype=np.float64), 1)
            if np.any(frac[~np.isnan(frac)] != 0):
                i = int(np.flatnonzero(np.nan_to_num(frac) != 0)[0])
                raise AnalysisError(
                    f"{path}: line {i + 2}, column {col!r}: {s.iloc[i]!r} is not an integer"
                )
            out[col] = num.astype(dtype)
        else:
            out[col] = num.astype("float64")
    return pd.DataFrame(out)


def read_log_csv(path: Path, name: str | None = None) -> pd.DataFrame:
    """One `rise` CSV. Missing file or header-only file → empty table with the schema."""
    name = name or path.name
    schema = CSV_SCHEMAS[name]
    if not path.is_file() or path.stat().st_size == 0:
        return empty_frame(schema)
    text = path.read_text()
    truncated = bool(text) and not text.endswith("\n")
    if truncated:  # the writer was killed mid-line: that line is incomplete, drop it
        text = text[: text.rfind("\n") + 1]
    if not text.strip():
        return empty_frame(schema)
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        return empty_frame(schema)
    except pd.errors.ParserError as e:
        raise AnalysisError(f"{path}: not a valid CSV: {e}") from e
    missing = [c for c in schema if c not in df.columns]
    if missing:
        raise AnalysisError(
            f"{path}: header lacks column(s) {missing}; expected {list(schema)} "
            "(endpoints/README.md)"
        )
    df = _cast(df[list(schema)], schema, path)
    df.attrs["truncated_last_line"] = truncated
    for (fname, col), allowed in ALLOWED_VALUES.items():
        if fname == name and len(df):
            bad = ~df[col].isin(allowed)
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise AnalysisError(
                    f"{path}: line {i + 2}, column {col!r}: {df[col].iloc[i]!r} is not one of "
                    f"{sorted(allowed)}"
                )
    return df


def read_linkem_stats(path: Path) -> pd.DataFrame:
    """linkem --stats JSON lines → one row per line. Missing/empty file → empty table."""
    if not path.is_file():
        return empty_frame(LINKEM_SCHEMA)
    rows: list[dict[str, Any]] = []
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise AnalysisError(f"{path}: line {i}: not JSON: {e.msg}") from e
        if not isinstance(obj, dict):
            raise AnalysisError(f"{path}: line {i}: expected a JSON object")
        missing = [k for k in LINKEM_SCHEMA if k not in obj and k not in LINKEM_OPTIONAL]
        if missing:
            raise AnalysisError(
                f"{path}: line {i}: missing key(s) {missing}; expected {list(LINKEM_SCHEMA)} "
                "(netem/README.md)"
            )
        if obj["dir"] not in LINKEM_DIRS:
            raise AnalysisError(
                f"{path}: line {i}: key 'dir' is {obj['dir']!r}, allowed {sorted(LINKEM_DIRS)}"
            )
        row = {k: obj.get(k, LINKEM_OPTIONAL.get(k)) for k in LINKEM_SCHEMA}
        for k, t in LINKEM_SCHEMA.items():
            if t in ("int64", "float64") and not isinstance(row[k], int | float):
                raise AnalysisError(f"{path}: line {i}: key {k!r} must be a number")
        rows.append(row)
    if not rows:
        return empty_frame(LINKEM_SCHEMA)
    df = pd.DataFrame(rows)
    return df.astype({k: ("object" if t == "str" else t) for k, t in LINKEM_SCHEMA.items()})


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or None if missing/empty."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        obj = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise AnalysisError(f"{path}: line {e.lineno}: not JSON: {e.msg}") from e
    if not isinstance(obj, dict):
        raise AnalysisError(f"{path}: expected a JSON object at the top level")
    return obj


def workload_kind(meta: dict[str, Any]) -> str:
    """The workload a run's metadata names (`rise` for runs that predate the key)."""
    w = meta.get("run", {}).get("workload", {})
    return str(w.get("kind", "rise")) if isinstance(w, dict) else "rise"


def read_metadata(run_dir: Path) -> dict[str, Any]:
    """metadata.json of a run; a run without one is reported as invalid, not an error."""
    meta = read_json(run_dir / rundir.METADATA)
    if meta is None:
        return {"valid": False, "invalid_reasons": [f"no {rundir.METADATA}"], "run": {}}
    if "run" in meta and not isinstance(meta["run"], dict):
        raise AnalysisError(f"{run_dir / rundir.METADATA}: key 'run' must be an object")
    meta.setdefault("run", {})
    return meta
