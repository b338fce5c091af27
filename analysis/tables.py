"""Logs of one run → tidy parquet tables under RUN_DIR/tables/.

    python -m analysis.tables RUN_DIR

Tables (each from both endpoints' logs, with an `endpoint` column `guest`/`host`):
frames_sent, frames_displayed, tracking_sent, tracking_received, channels, path_stats;
and `linkem` (linkem-stats.jsonl, with `direction` = `up` for a_to_b (Guest → Host), `down`
for b_to_a). tables/manifest.json lists, per source file, its row count or that it was
missing/empty. A table with no data is written anyway (zero rows, documented columns).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from analysis.logs import (
    CSV_SCHEMAS,
    ENDPOINTS,
    AnalysisError,
    read_linkem_stats,
    read_log_csv,
    read_metadata,
    workload_kind,
)
from priolab.engine import rundir

TABLES_DIR = rundir.TABLES
LINKEM_FILE = "linkem-stats.jsonl"
DIRECTION = {"a_to_b": "up", "b_to_a": "down"}


def table_name(csv_name: str) -> str:
    return csv_name.removesuffix(".csv")


def build_tables(run_dir: Path) -> tuple[dict[str, pd.DataFrame], dict[str, object]]:
    """Read every log of the run; return (tables by name, manifest)."""
    tables: dict[str, pd.DataFrame] = {}
    manifest: dict[str, object] = {}
    for csv_name in CSV_SCHEMAS:
        parts = []
        for ep in ENDPOINTS:
            path = run_dir / ep / csv_name
            df = read_log_csv(path, csv_name)
            note: object = len(df) if path.is_file() else "missing"
            if df.attrs.get("truncated_last_line"):
                note = f"{len(df)} rows (an incomplete last line was dropped)"
            manifest[f"{ep}/{csv_name}"] = note
            df.insert(0, "endpoint", pd.Series([ep] * len(df), dtype=object))
            parts.append(df)
        tables[table_name(csv_name)] = pd.concat(parts, ignore_index=True)
    path = run_dir / LINKEM_FILE
    lk = read_linkem_stats(path)
    manifest[LINKEM_FILE] = len(lk) if path.is_file() else "missing"
    lk.insert(2, "direction", lk["dir"].map(DIRECTION).astype(object))
    tables["linkem"] = lk
    return tables, manifest


def write_tables(run_dir: Path) -> Path:
    kind = workload_kind(read_metadata(run_dir))
    if kind == "moq":
        return _write_moq_table(run_dir)
    if kind == "qpr":
        return _write_qpr_tables(run_dir)
    tables, manifest = build_tables(run_dir)
    out = run_dir / TABLES_DIR
    out.mkdir(exist_ok=True)
    for name, df in tables.items():
        df.to_parquet(out / f"{name}.parquet", index=False)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return out


def _write_moq_table(run_dir: Path) -> Path:
    """A `moq` run's one table (priolab/workloads/moq/analysis.py)."""
    from priolab.workloads.moq.analysis import FRAMES_TABLE, MoqLogError, frames_table

    try:
        frames = frames_table(run_dir)
    except MoqLogError as e:
        raise AnalysisError(str(e)) from None
    out = run_dir / TABLES_DIR
    out.mkdir(exist_ok=True)
    frames.to_parquet(out / FRAMES_TABLE, index=False)
    (out / "manifest.json").write_text(json.dumps({FRAMES_TABLE: len(frames)}, indent=2) + "\n")
    return out


def _write_qpr_tables(run_dir: Path) -> Path:
    """A `qpr` run's two tables (priolab/workloads/qpr/analysis.py)."""
    from priolab.workloads.qpr.analysis import QprLogError, write_tables

    try:
        manifest = write_tables(run_dir, TABLES_DIR)
    except QprLogError as e:
        raise AnalysisError(str(e)) from None
    out = run_dir / TABLES_DIR
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return out


def load_tables(run_dir: Path) -> dict[str, pd.DataFrame]:
    """The run's tables: from RUN_DIR/tables/ when all are there, else built from the logs."""
    names = [table_name(c) for c in CSV_SCHEMAS] + ["linkem"]
    d = run_dir / TABLES_DIR
    if all((d / f"{n}.parquet").is_file() for n in names):
        return {n: pd.read_parquet(d / f"{n}.parquet") for n in names}
    return build_tables(run_dir)[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.tables", description=__doc__)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument(
        "--strict", action="store_true", help="exit 1 on malformed logs (default: record it)"
    )
    args = ap.parse_args(argv)
    if not args.run_dir.is_dir():
        print(f"error: {args.run_dir}: not a directory", file=sys.stderr)
        return 2
    try:
        out = write_tables(args.run_dir)
    except AnalysisError as e:
        # one broken run must not stop a whole workflow: the error is recorded here, and
        # analysis.metrics marks the run invalid with it, so aggregation excludes it and says why
        print(f"error: {e}", file=sys.stderr)
        if args.strict:
            return 1
        d = args.run_dir / TABLES_DIR
        d.mkdir(exist_ok=True)
        (d / "manifest.json").write_text(json.dumps({"error": str(e)}, indent=2) + "\n")
        return 0
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
