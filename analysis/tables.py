"""Logs of one run → tidy parquet tables under RUN_DIR/tables/.

    python -m analysis.tables RUN_DIR

Which tables, from which logs, is the workload's (its folder's analysis.py; e.g. the `rise`
tables of priolab/workloads/rise/tables.py); every run also has the `linkem` table
(analysis/link.py). tables/manifest.json lists, per source file, its row count or that it
was missing/empty. A table with no data is written anyway (zero rows, documented columns).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from analysis.logs import AnalysisError, read_metadata, workload_kind
from analysis.workload import analysis_for
from ground import rundir

TABLES_DIR = rundir.TABLES


def write_tables(run_dir: Path) -> Path:
    out = run_dir / TABLES_DIR
    manifest = analysis_for(workload_kind(read_metadata(run_dir))).write_tables(run_dir, out)
    out.mkdir(exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return out


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
