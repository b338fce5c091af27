"""The records of the store → the aggregated scenario folders the results book reads.

`materialise(store, out)` writes, per site, a results tree `out/<site>/` laid out as the
workflow's (ground/rundir.py): per record a run folder holding what the record keeps of its
metadata.json, its metrics.json and its figure-data.json (no log: a record has none), then
per scenario the aggregates (analysis.aggregate: summary.md, summary.csv, runs.csv,
exclusions.csv) and the figures (analysis.figures, drawn from the figure data), the machines'
calibration reports (`calibration-<host>.json`) and the RISE page's picture scores
(`picture/runs.csv`). It is the one place the book's runs come from: book/ reads these trees
as it reads a results tree, and never `results/` or `results-sim/`.

Each record's standing is written beside it, for the pages to mark: runs.csv and
exclusions.csv gain `evidence_stale` (why the record is stale: made by other code than the
checkout's; empty when current) and `evidence_real_time` (a real-time site's run: not
replayable, its numbers rest on its machine and calibration), and metadata.json an
`evidence` block with both and the code digest.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ground import rundir
from priolab.evidence import store
from priolab.evidence.marks import REAL_TIME, STALE
from priolab.evidence.records import RunRecord
from priolab.evidence.scenarios import expected


@dataclass(frozen=True)
class Materialised:
    site: str
    scenario: str
    dir: Path
    records: int
    valid: int
    stale: int
    real_time: bool


def metadata(r: RunRecord, stale: str | None) -> dict[str, Any]:
    """A run folder's metadata.json as the record keeps it (collect.META_KEYS), with the
    verdict, the provenance and the record's standing."""
    reasons = [x.reason() for x in r.reasons]
    return {
        **r.meta,
        "git": {"commit": r.commit, "dirty": r.dirty},
        "python_packages": {"lock_sha256": r.lock_digest},
        "valid": r.valid,
        "invalid": [x.to_json() for x in reasons],
        "invalid_reasons": [x.prose() for x in reasons],
        "evidence": {
            "code_digest": r.code_digest,
            "stale": stale or "",
            "real_time": r.real_time,
        },  # fmt: skip
    }


def metrics_json(r: RunRecord) -> dict[str, Any]:
    reasons = [x.reason() for x in r.reasons]
    return {
        "run": r.meta.get("run") or {},
        "valid": r.valid,
        "invalid": [x.to_json() for x in reasons],
        "invalid_reasons": [x.prose() for x in reasons],
        "metrics": r.metrics,
        **({"analysis": r.analysis} if r.analysis else {}),
    }


def write_run(tree: Path, r: RunRecord, stale: str | None) -> Path:
    d = tree / rundir.rel_dir(r.scenario, r.setting, r.scheme, r.speed, r.rep)
    d.mkdir(parents=True, exist_ok=True)
    (d / rundir.METADATA).write_text(json.dumps(metadata(r, stale), indent=1))
    (d / rundir.METRICS).write_text(json.dumps(metrics_json(r), indent=1))
    (d / rundir.FIGURE_DATA).write_text(json.dumps(r.figure_data, separators=(",", ":")))
    return d


def _standing(df: pd.DataFrame, scenario_dir: Path, by_dir: dict[Path, tuple[str, bool]],
              rel: bool) -> pd.DataFrame:  # fmt: skip
    """runs.csv or exclusions.csv with each row's record standing (STALE, REAL_TIME)."""
    if df.empty:
        return df.assign(**{STALE: pd.Series(dtype=str), REAL_TIME: pd.Series(dtype=bool)})
    dirs = [(scenario_dir / p) if rel else Path(p) for p in df["path"]]
    df[STALE] = [by_dir[d.resolve()][0] for d in dirs]
    df[REAL_TIME] = [by_dir[d.resolve()][1] for d in dirs]
    return df


def _csv(p: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(p)
    except (OSError, pd.errors.EmptyDataError):
        return pd.DataFrame()


def materialise_file(args: tuple[Path, Path, Path, bool]) -> Materialised:
    """One store file (one scenario on one site) → its scenario folder, aggregated, with
    figures (when `figures`)."""
    path, out, repo, figures = args
    from analysis import figures as figs
    from analysis.aggregate import aggregate

    recs = store.read(path)
    site, scenario = path.parent.name, path.stem
    tree = out / site
    exp = expected(repo, scenario)
    by_dir: dict[Path, tuple[str, bool]] = {}
    for r in recs:
        stale = exp.why_not(r)
        d = write_run(tree, r, stale)
        by_dir[d.resolve()] = (stale or "", r.real_time)
    sdir = tree / scenario
    aggregate(sdir)
    for name, rel in (("runs.csv", False), ("exclusions.csv", True)):
        _standing(_csv(sdir / name), sdir, by_dir, rel).to_csv(sdir / name, index=False)
    if figures:
        was, figs.PNG_ONLY = figs.PNG_ONLY, True  # the pages show PNGs; set for this call only
        try:
            (sdir / "figures").mkdir(exist_ok=True)
            figs.make_figures(sdir)
        finally:
            figs.PNG_ONLY = was
    n_stale = sum(1 for v in by_dir.values() if v[0])
    real = any(r.real_time for r in recs)
    return Materialised(site, scenario, sdir, len(recs), sum(r.valid for r in recs), n_stale, real)


def write_site_files(store_dir: Path, out: Path) -> None:
    """Per site tree: the machines' calibration reports and the picture scores."""
    for p in store.files(store_dir):
        recs = store.read(p)
        tree = out / p.parent.name
        for r in recs:
            if r.calibration and r.calibration.get("file"):
                f = tree / str(r.calibration["file"])
                if not f.is_file():
                    f.write_text(json.dumps(r.calibration.get("report"), indent=1))
        rows = [
            {"scenario": r.scenario, "setting": _label(r, recs), "scheme": r.scheme,
             "speed": r.speed, "rep": r.rep, **r.picture}
            for r in recs if r.picture
        ]  # fmt: skip
        if rows:
            pic = tree / "picture" / "runs.csv"
            pic.parent.mkdir(parents=True, exist_ok=True)
            old = _csv(pic)
            pd.concat([old, pd.DataFrame(rows)], ignore_index=True).to_csv(pic, index=False)


def _label(r: RunRecord, recs: list[RunRecord]) -> str:
    """runs.csv's setting label: `<setting>/<speed>` when the scenario has several speeds."""
    return f"{r.setting}/{r.speed}" if len({x.speed for x in recs}) > 1 else r.setting


def materialise(
    store_dir: Path,
    out: Path,
    repo: Path,
    figures: Collection[str] | None = None,
    jobs: int = 2,
) -> list[Materialised]:
    """Every store file → its scenario folder under out/<site>/ (see the module's doc), in
    `jobs` processes; figures for the scenarios named in `figures` (None: every scenario),
    the others aggregated only."""
    work = [(p, out, repo, figures is None or p.stem in figures) for p in store.files(store_dir)]
    if jobs > 1 and len(work) > 1:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(jobs) as pool:
            done = pool.map(materialise_file, work, chunksize=1)
    else:
        done = [materialise_file(w) for w in work]
    write_site_files(store_dir, out)
    return done
