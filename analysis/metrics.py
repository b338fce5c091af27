"""Per-run metrics → RUN_DIR/metrics.json, whatever the workload.

    python -m analysis.metrics RUN_DIR

The metrics are the workload's (its folder's analysis.py: e.g. priolab/workloads/rise/
metrics.py); this writes them with the run's validity, and one of its own: `session_failed`,
1 when the protocol lost the run's session (metadata.json `session.failed`, the judge's:
priolab/engine/judge.py), else 0. A metric with no data is NaN (written as null in
metrics.json), never 0. Unreadable logs make the run invalid with the reason
`analysis: <error>`, so aggregation excludes it and says why (`--strict`: exit 1).

Beside it, RUN_DIR/figure-data.json: the compact data the scenario's figures draw (the
workload's `figure_data`, analysis/figure_data.py), empty for an invalid run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from analysis import figure_data
from analysis.logs import AnalysisError, read_json, read_metadata, workload_kind
from analysis.workload import analysis_for
from ground import rundir
from ground.reasons import Code, Reason, from_metadata

NAN = float("nan")
TABLES_DIR = rundir.TABLES


def _json_safe(m: dict[str, float]) -> dict[str, float | None]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in m.items()}


def read_metrics(run_dir: Path) -> dict[str, Any] | None:
    """metrics.json of a run with nulls turned back into NaN; None if absent."""
    obj = read_json(run_dir / rundir.METRICS)
    if obj is None:
        return None
    obj["metrics"] = {k: (NAN if v is None else float(v)) for k, v in obj["metrics"].items()}
    return obj


def session_failed(meta: dict[str, Any]) -> float:
    """1.0 when the judge recorded that the protocol lost the run's session, else 0.0 (a run
    judged before the judge recorded sessions counts as one that did not fail: such a run
    was judged invalid then)."""
    session = meta.get("session")
    return 1.0 if isinstance(session, dict) and session.get("failed") else 0.0


def run_metrics(run_dir: Path) -> dict[str, Any]:
    """Compute and write RUN_DIR/metrics.json (and what the workload writes beside it)."""
    meta = read_metadata(run_dir)
    out: dict[str, Any] = {
        "run": meta["run"],
        "valid": bool(meta.get("valid", False)),
        "invalid": [r.to_json() for r in from_metadata(meta)],
        "invalid_reasons": list(meta.get("invalid_reasons", [])),
        "metrics": {},
    }
    try:
        m, info = analysis_for(workload_kind(meta)).metrics(run_dir, meta, run_dir / TABLES_DIR)
    except AnalysisError as e:
        # unreadable logs: the run cannot be analysed, so it is invalid, with the reason
        out["valid"] = False
        why = Reason(Code.ANALYSIS, f"analysis: {e}")
        out["invalid"].append(why.to_json())
        out["invalid_reasons"].append(why.prose())
        out["analysis_error"] = str(e)
    else:
        m["session_failed"] = session_failed(meta)
        out["metrics"] = _json_safe(m)
        if info:
            out["analysis"] = info
    (run_dir / rundir.METRICS).write_text(json.dumps(out, indent=2, default=str) + "\n")
    figure_data.write(run_dir, compute_figure_data(run_dir, meta) if out["valid"] else {})
    return out


def compute_figure_data(
    run_dir: Path, meta: dict[str, Any] | None = None
) -> figure_data.FigureData:
    """The run's figure data from its tables (the workload's `figure_data`; none without)."""
    meta = meta if meta is not None else read_metadata(run_dir)
    wa = analysis_for(workload_kind(meta))
    make = getattr(wa, "figure_data", None)
    return make(run_dir, meta, run_dir / TABLES_DIR) if make is not None else {}


def per_run_main(
    prog: str, description: str | None, report: Callable[[Path], str], argv: list[str] | None
) -> int:
    """A diagnostic command over run folders whose metrics.json exists (`prog RUN_DIR ...`):
    prints `report(run)` for each; exit 2, naming the folder, at the first without one."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("runs", type=Path, nargs="+")
    a = ap.parse_args(argv)
    for run in a.runs:
        if not (run / rundir.METRICS).is_file():
            print(
                f"error: {run}: no {rundir.METRICS} (run python -m analysis.metrics)",
                file=sys.stderr,
            )
            return 2
        print(report(run))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.metrics", description=__doc__)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument(
        "--strict", action="store_true", help="exit 1 on malformed logs (default: record it)"
    )
    args = ap.parse_args(argv)
    if not args.run_dir.is_dir():
        print(f"error: {args.run_dir}: not a directory", file=sys.stderr)
        return 2
    try:
        out = run_metrics(args.run_dir)
    except AnalysisError as e:  # metadata.json itself unreadable
        print(f"error: {e}", file=sys.stderr)
        return 1
    if "analysis_error" in out:
        print(f"error: {out['analysis_error']} (run marked invalid)", file=sys.stderr)
        return 1 if args.strict else 0
    if not out["valid"]:
        print(f"invalid run: {'; '.join(out['invalid_reasons'])}")
    try:
        core = analysis_for(workload_kind(out)).core_metrics
    except AnalysisError:
        core = ()
    shown = [k for k in core if k in out["metrics"]] or list(out["metrics"])
    for k in shown:
        print(f"{k}: {out['metrics'][k]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
