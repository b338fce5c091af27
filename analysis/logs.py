"""Read one run directory's raw logs, checked against the documented schema.

The generic readers: a CSV log against the schema its workload gives
(priolab/workloads/<kind>/), the linkem stats JSON lines (as netem/linkem_stats.py reads
them), JSON files and
metadata.json (priolab/engine/finish.py). A missing or empty file is not an
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

from ground import rundir
from netem import linkem_stats

LINKEM_SCHEMA = linkem_stats.SCHEMA
"""The columns of the linkem table (netem/linkem_stats.py reads and checks the lines)."""


class AnalysisError(ValueError):
    """Bad input for the analysis: the message names the file, the line/key and what is allowed."""


def empty_frame(schema: dict[str, str]) -> pd.DataFrame:
    cols = {c: pd.Series(dtype=object if t == "str" else t) for c, t in schema.items()}
    return pd.DataFrame(cols)


def _cast(
    df: pd.DataFrame, schema: dict[str, str], path: Path, nullable: frozenset[str]
) -> pd.DataFrame:
    out: dict[str, pd.Series] = {}
    for col, dtype in schema.items():
        s = df[col]
        if dtype == "str":
            out[col] = s.astype(str).str.strip()
            continue
        num = pd.to_numeric(s, errors="coerce")
        is_nullable = col in nullable
        bad = num.isna() & (s.notna() if is_nullable else True)  # empty cells only if nullable
        if is_nullable and dtype == "int64":
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


def read_csv_checked(
    path: Path,
    schema: dict[str, str],
    *,
    nullable: frozenset[str] = frozenset(),
    allowed: dict[str, set[str]] | None = None,
    doc: str = "its workload's README",
) -> pd.DataFrame:
    """A CSV log against its schema (column → dtype; `nullable` columns may have empty cells,
    `allowed` limits a column's values). Missing file or header-only file → empty table with
    the schema; a last line without its newline (a writer killed mid-line) is dropped and
    `df.attrs["truncated_last_line"]` says so. Anything else malformed raises AnalysisError
    naming the file, line, column and what is allowed (`doc` says where the schema is)."""
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
            f"{path}: header lacks column(s) {missing}; expected {list(schema)} ({doc})"
        )
    df = _cast(df[list(schema)], schema, path, nullable)
    df.attrs["truncated_last_line"] = truncated
    for col, ok in (allowed or {}).items():
        if len(df):
            bad = ~df[col].isin(ok)
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise AnalysisError(
                    f"{path}: line {i + 2}, column {col!r}: {df[col].iloc[i]!r} is not one of "
                    f"{sorted(ok)}"
                )
    return df


def read_linkem_stats(path: Path) -> pd.DataFrame:
    """linkem --stats JSON lines → one row per line (netem/linkem_stats.py reads them); a bad
    line is an AnalysisError naming the file and the line. Missing/empty file → empty table."""
    stats = linkem_stats.read(path)
    if stats.exists and stats.errors:
        raise AnalysisError(stats.errors[0])
    if not stats.lines:
        return empty_frame(LINKEM_SCHEMA)
    df = pd.DataFrame([{k: x[k] for k in LINKEM_SCHEMA} for x in stats.lines])
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
