"""A `rise` run's logs → its tables (each from both endpoints' logs, with an `endpoint`
column `guest`/`host`): frames_sent, frames_displayed, tracking_sent, tracking_received,
channels, path_stats, sender; plus the link's `linkem` table (analysis/link.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.link import LINKEM_FILE, linkem_table
from ground import rundir
from priolab.workloads.rise.logs import CSV_SCHEMAS, ENDPOINTS, read_log_csv

TABLES_DIR = rundir.TABLES


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
    tables["linkem"], manifest[LINKEM_FILE] = linkem_table(run_dir)
    return tables, manifest


def write_tables(run_dir: Path, out: Path) -> dict[str, object]:
    tables, manifest = build_tables(run_dir)
    out.mkdir(exist_ok=True)
    for name, df in tables.items():
        df.to_parquet(out / f"{name}.parquet", index=False)
    return manifest


def load_tables(run_dir: Path) -> dict[str, pd.DataFrame]:
    """The run's tables: from RUN_DIR/tables/ when all are there, else built from the logs."""
    names = [table_name(c) for c in CSV_SCHEMAS] + ["linkem"]
    d = run_dir / TABLES_DIR
    if all((d / f"{n}.parquet").is_file() for n in names):
        return {n: pd.read_parquet(d / f"{n}.parquet") for n in names}
    return build_tables(run_dir)[0]
