"""`priolab export`: one tidy table of every run of a scenario, for a notebook of your own.

    priolab export SCENARIO --format parquet|csv [--results DIR] [--out FILE]

One row per run folder, valid or not, in the order of the run folders: its matrix point
(`setting`, `scheme`, `speed`, `rep`, `seed`), where it ran (`site`, `backend`), whether it is
valid and why not (`valid`, `reason_codes`, `reasons`), its provenance (`commit`, `dirty`,
`lock_sha256`: the requirements.lock it ran under), its folder (`path`, relative to the
results folder), then one column per metric (as metrics.json holds it: what the aggregates
use; empty for an invalid run, as in the aggregates). SCENARIO is a scenario file or the
scenario's name (its folder under the results folder).
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ground import rundir
from ground.cli import documented
from ground.errors import UserError

if TYPE_CHECKING:  # imported where used: `priolab --help` should not load pandas
    import pandas as pd

    from analysis.rundirs import Run

FIXED = (
    "scenario", "setting", "scheme", "speed", "rep", "seed", "site", "backend",
    "valid", "reason_codes", "reasons", "commit", "dirty", "lock_sha256", "path",
)  # fmt: skip
"""The columns every export has, in order; the metrics follow, sorted by name."""
FORMATS = {"parquet": ".parquet", "csv": ".csv"}


class ExportError(UserError):
    title = "cannot export"


def scenario_name(scenario: str) -> str:
    """The scenario's name: a file's `name:` key, or the argument itself."""
    p = Path(scenario)
    if not p.is_file():
        return scenario
    try:
        name = (yaml.safe_load(p.read_text()) or {}).get("name")
    except (OSError, yaml.YAMLError) as e:
        raise ExportError(p, [("", f"cannot read the scenario's name: {e}")]) from e
    if not isinstance(name, str) or not name:
        raise ExportError(p, [("name", "required: the scenario's name (its results folder)")])
    return name


def _backend(recorded: object) -> str | None:
    """The link backend a run used: metadata.json's `backend.used` (a plain string in run
    folders written before it was a record)."""
    if isinstance(recorded, dict):
        used = recorded.get("used")
        return str(used) if used is not None else None
    return None if recorded is None else str(recorded)


def _row(run: Run, scenario: str, results: Path) -> dict[str, Any]:
    meta = run.meta
    spec = meta.get("run") or {}
    site = meta.get("site") or {}
    git = meta.get("git") or {}
    packages = meta.get("python_packages") or {}
    row: dict[str, Any] = {
        "scenario": scenario,
        "setting": run.setting,
        "scheme": run.scheme,
        "speed": run.speed,
        "rep": int(run.rep),
        "seed": spec.get("seed"),
        "site": site.get("kind") or meta.get("target"),
        "backend": _backend(meta.get("backend")),
        "valid": run.valid,
        "reason_codes": ";".join(str(r.code) for r in run.reasons),
        "reasons": run.reasons_prose,
        "commit": git.get("commit"),
        "dirty": git.get("dirty"),
        "lock_sha256": packages.get("lock_sha256"),
        "path": str(run.path.relative_to(results)),
    }
    clash = set(run.metrics) & set(FIXED)
    if clash:
        where = run.path / rundir.METRICS
        raise ExportError(where, [("metrics", f"named like a fixed column: {sorted(clash)}")])
    return row | {k: (math.nan if v is None else v) for k, v in run.metrics.items()}


def tidy_table(results: Path, scenario: str) -> pd.DataFrame:
    """Every run of `scenario` under `results`, one row each (module docstring)."""
    import pandas as pd

    from analysis.rundirs import find_run_dirs, load_run

    folder = results / scenario
    dirs = find_run_dirs(folder)
    if not dirs:
        raise ExportError(
            folder, [("", "no run folders (<setting>/<scheme>/<speed>/r<rep>/) under it")]
        )
    rows = [_row(load_run(d), scenario, results) for d in dirs]
    metrics = sorted({k for r in rows for k in r} - set(FIXED))
    table = pd.DataFrame(rows, columns=[*FIXED, *metrics])
    table["valid"] = table["valid"].astype(bool)
    table["rep"] = table["rep"].astype("int64")
    table["seed"] = table["seed"].astype("Int64")
    table["dirty"] = table["dirty"].astype("boolean")
    for m in metrics:
        table[m] = pd.to_numeric(table[m], errors="coerce").astype("float64")
    return table


def write(table: pd.DataFrame, out: Path, fmt: str) -> None:
    """Write the table as `fmt` to a temporary file beside `out`, then rename it: a failed
    export leaves no half-written file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    os.close(fd)
    try:
        if fmt == "parquet":
            table.to_parquet(tmp, index=False)
        else:
            table.to_csv(tmp, index=False)
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _export(args: argparse.Namespace) -> int:
    results = Path(args.results)
    name = scenario_name(args.scenario)
    table = tidy_table(results, name)
    out = Path(args.out) if args.out else results / name / f"runs-tidy{FORMATS[args.format]}"
    write(table, out, args.format)
    valid = int(table["valid"].sum())
    print(f"{out}: {len(table)} runs ({valid} valid), {len(table.columns) - len(FIXED)} metrics")
    return 0


HELP = "one tidy table (Parquet or CSV) of every run of a scenario"
"""The subcommand's line in `priolab --help`."""


def register(sub: argparse._SubParsersAction) -> None:
    e = documented(sub, "export", HELP, __doc__)
    e.add_argument("scenario", help="a scenario file, or a scenario's name (its results folder)")
    e.add_argument(
        "--format", choices=sorted(FORMATS), required=True, help="the table's file format"
    )
    e.add_argument(
        "--results",
        default="results",
        help="the results folder holding the scenario's runs (default: results; the sim "
        "site's: results-sim)",
    )
    e.add_argument(
        "--out",
        help="the file to write (default: RESULTS/<scenario>/runs-tidy.parquet or .csv)",
    )
    e.set_defaults(func=_export)
