"""`priolab evidence add RESULTS_DIR [--scenario NAME]`: the only way runs enter the store.

Every finished run folder of every scenario under RESULTS_DIR (a results tree: results/,
results-sim/, or any folder the workflow's `results=` named), valid or not, becomes a record
(collect.py) and replaces the record of the same point in its scenario's file for its site;
the files are rewritten whole (store.py). A run made at another commit than the checkout's
is refused when a file its code digest hashes differs between the two (the digest is taken
from this checkout, so it would claim code the run did not run); `allow_changed` takes it
anyway.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from analysis.logs import AnalysisError
from ground import rundir
from ground.errors import UserError
from priolab.evidence import collect, digest, store
from priolab.evidence.records import RunRecord


class EvidenceError(UserError):
    title = "cannot add these runs to the evidence store"


def scenario_dirs(results_dir: Path, scenario: str | None = None) -> list[Path]:
    """The scenario folders of a results tree that hold finished run folders."""
    if not results_dir.is_dir():
        why = "not a folder (a results tree: results/, results-sim/ or the workflow's results=)"
        raise EvidenceError(results_dir, [("", why)])
    dirs = [d for d in sorted(results_dir.iterdir()) if d.is_dir() and rundir.find_runs(d)]
    if scenario is not None:
        dirs = [d for d in dirs if d.name == scenario]
        if not dirs:
            raise EvidenceError(results_dir, [("--scenario", f"no run folders of {scenario!r} "
                                                             "here")])  # fmt: skip
    if not dirs:
        raise EvidenceError(results_dir, [("", "no run folders <scenario>/<setting>/<scheme>/"
                                               "<speed>/r<rep> here")])  # fmt: skip
    return dirs


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)


@functools.cache
def head(repo: Path) -> str | None:
    r = _git(repo, "rev-parse", "HEAD")
    return r.stdout.strip() if r.returncode == 0 else None


@functools.cache
def changed_since(repo: Path, commit: str, kind: str, site: str) -> tuple[str, ...]:
    """The files of a run's code digest (Rust and Python parts) that differ between `commit`
    and the checkout; ("<commit unknown>",) when this repository does not have it."""
    if _git(repo, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        return ("<commit unknown to this repository>",)
    files = [*digest.rust_files(repo, kind, site), *digest.python_files(repo, kind, site)]
    rel = [str(f.relative_to(repo)) for f in files]
    r = _git(repo, "diff", "--name-only", commit, "--", *rel)
    return tuple(sorted(set(r.stdout.split())))


def check_commit(rec: RunRecord, run_dir: Path, repo: Path) -> list[tuple[str, str]]:
    """Problems of taking `rec`'s digest from this checkout (see the module's docstring)."""
    if rec.commit is None or rec.commit == head(repo):
        return []
    kind = str((rec.meta.get("run") or {}).get("workload", {}).get("kind", ""))
    changed = changed_since(repo, rec.commit, kind, rec.site)
    if not changed:
        return []
    return [(str(run_dir), f"made at commit {rec.commit[:12]}; since then its code changed in "
             f"{', '.join(changed[:5])}{' …' if len(changed) > 5 else ''} (rerun it, or "
             "--allow-changed)")]  # fmt: skip


def add(
    results_dir: Path,
    scenario: str | None = None,
    store_dir: Path = store.STORE,
    repo: Path | None = None,
    allow_changed: bool = False,
    only: set[Path] | None = None,
) -> list[tuple[Path, int, int]]:
    """Add every run under `results_dir` (of `scenario` only, when given; of the run folders
    in `only`, when given: a refresh's); return per file written (path, records added,
    records in the file)."""
    from priolab.paths import REPO_ROOT

    repo = repo or REPO_ROOT
    found: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    problems: list[tuple[str, str]] = []
    pictures = collect.picture_scores(results_dir)
    dirty = 0
    for d in scenario_dirs(results_dir, scenario):
        runs = rundir.find_runs(d)
        multi_speed = len({rundir.coords(r).speed for r in runs}) > 1
        for run_dir in runs:
            if only is not None and run_dir.resolve() not in only:
                continue
            try:
                rec = collect.record(run_dir, repo, results_dir, multi_speed, pictures)
            except (AnalysisError, ValueError) as e:  # unreadable metadata, unknown workload
                problems.append((str(run_dir), str(e)))
                continue
            if not allow_changed:
                problems += check_commit(rec, run_dir, repo)
            dirty += bool(rec.dirty)
            found[(rec.site, rec.scenario)].append(rec)
    if problems:
        raise EvidenceError(results_dir, problems)
    if dirty:
        print(f"note: {dirty} run(s) were made with uncommitted changes; their code digest is "
              "of this checkout", file=sys.stderr)  # fmt: skip
    out = []
    for (site, name), recs in sorted(found.items()):
        p = store.path_of(store_dir, site, name)
        old = store.read(p) if p.is_file() else []
        merged = store.merge(old, recs)
        store.write(p, merged)
        out.append((p, len(recs), len(merged)))
    return out
