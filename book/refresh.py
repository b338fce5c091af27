"""`make book-refresh`: rerun the book's stale and missing sim cells and add them to the store.

    python -m book.refresh plan [--reps 10] [--only NAME,...]
    python -m book.refresh run  [--reps 10] [--only NAME,...] [--results results-refresh]
                                [--cores 2]

The book's scenarios are every paper's (papers.py), the agreement points (scenarios/agreement/)
and the regime map's grid (scenarios/maps/rise-loss-queue.yaml). Each sim point of theirs at
`--reps` repetitions (at least the file's) is current, stale or missing in the store
(priolab/evidence/refresh.py); a point the sim cannot run is a Mininet-only cell, named and
left out. `plan` prints them; `run` runs the stale and missing ones through the workflow on
the sim site into `--results` (a tree of its own, so that no older run folder is taken for a
new one: a leftover of a target is removed first), adds exactly those run folders to the
store (`priolab evidence add ... --runs`) and, when it started from an empty store (every
point missing), writes what it cost to evidence/refresh.json (the book's front page states
it): wall time, the CPU time of every process it started, the longest run. `--only` limits
both to some of the book's scenarios (the timing then is not a full refresh's, and is not
written).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from book.papers import PAPERS
from ground import rundir
from priolab.evidence import refresh, store
from priolab.evidence.add import add, head
from priolab.paths import REPO_ROOT
from priolab.workloads.rise.regime_map import REGIME_MAP_SCENARIO

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
TARGETS_FILE = "refresh-targets.txt"
"""In the results tree: the run folders of the last `run` (what it adds)."""


def book_scenarios(repo: Path) -> list[str]:
    """Every scenario a page of the book rests on, each once, in the papers' order."""
    import yaml

    names = [n for p in PAPERS for n in p.scenarios]
    for f in sorted((repo / "scenarios" / "agreement").glob("*.yaml")):
        names.append(str((yaml.safe_load(f.read_text()) or {}).get("name")))
    names.append(REGIME_MAP_SCENARIO)
    return list(dict.fromkeys(names))


def _cpu_children_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs{', ' + model if model else ''}, {platform.node()}"


def plan(
    store_dir: Path, repo: Path, reps: int, only: list[str] | None = None
) -> tuple[list[refresh.Point], list[refresh.Left]]:
    """The book's sim points (of the scenarios in `only`, when given) and what is left out."""
    names = book_scenarios(repo)
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise SystemExit(f"error: --only: {unknown} are not scenarios of the book: {names}")
        names = [n for n in names if n in only]
    return refresh.points(store_dir, repo, names, reps)


def print_plan(pts: list[refresh.Point], left: list[refresh.Left]) -> None:
    by: dict[str, dict[str, int]] = {}
    for p in pts:
        by.setdefault(p.scenario, {}).setdefault(p.state, 0)
        by[p.scenario][p.state] += 1
    for name, states in by.items():
        print(f"{name}: " + ", ".join(f"{n} {s}" for s, n in sorted(states.items())))
    for x in left:
        print(f"{x.scenario}: left out on the sim site: {x.why}")
    todo = sum(p.state != "current" for p in pts)
    print(f"refresh: {todo} of {len(pts)} sim points to run")


def run(
    store_dir: Path,
    repo: Path,
    reps: int,
    results: Path,
    cores: int,
    only: list[str] | None = None,
) -> int:
    pts, left = plan(store_dir, repo, reps, only)
    print_plan(pts, left)
    todo = [p for p in pts if p.state != "current"]
    if not todo:
        return 0
    from_empty = not only and all(p.state == "missing" for p in pts)  # a full refresh
    results.mkdir(parents=True, exist_ok=True)
    for p in todo:  # a leftover of an earlier refresh is not taken for a new run
        if (results / p.rel_dir).exists():
            shutil.rmtree(results / p.rel_dir)
    (results / TARGETS_FILE).write_text("".join(f"{p.rel_dir}\n" for p in todo))
    files = ",".join(sorted({str(p.file) for p in todo}))
    argv = [str(SNAKEMAKE), "--cores", str(cores), "--rerun-incomplete", "--keep-going",
            "--config", "site=sim", "sim_partial=true", f"results={results}", f"reps={reps}",
            "calibrate=false",
            f"scenario={files}", "--",
            *[str(results / p.rel_dir / rundir.METRICS) for p in todo]]  # fmt: skip
    t0, cpu0 = time.monotonic(), _cpu_children_s()
    r = subprocess.run(argv, cwd=repo, check=False)
    done = add(results, store_dir=store_dir, repo=repo,
               only={(results / p.rel_dir).resolve() for p in todo
                     if (results / p.rel_dir / rundir.METRICS).is_file()})  # fmt: skip
    wall, cpu = time.monotonic() - t0, _cpu_children_s() - cpu0
    for path, n_added, n_total in done:
        print(f"{path}: {n_added} added, {n_total} records")
    print(f"refresh: {len(todo)} runs in {wall:.0f} s of wall time, {cpu:.0f} s of CPU time")
    if r.returncode != 0:
        print(f"refresh: snakemake exited {r.returncode}; what ran was added", file=sys.stderr)
        return r.returncode
    if from_empty:
        longest = max((float((rec.meta.get("site") or {}).get("wall_s") or 0.0)
                       for f in store.files(store_dir) if f.parent.name == "sim"
                       for rec in store.read(f)), default=0.0)  # fmt: skip
        t = refresh.Timing(commit=head(repo) or "unknown", machine=_machine(), cores=cores,
                           reps=reps, points=len({p.rel_dir.parent for p in pts}),
                           runs=len(todo), wall_s=round(wall, 1), cpu_s=round(cpu, 1),
                           longest_run_s=round(longest, 1))  # fmt: skip
        out = store_dir / refresh.TIMING_FILE
        out.write_text(t.model_dump_json(indent=1) + "\n")
        print(f"refresh: timing of a full refresh written to {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m book.refresh", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("what", choices=["plan", "run"])
    ap.add_argument("--reps", type=int, default=10, help="repetitions per point (default 10)")
    ap.add_argument("--results", type=Path, default=REPO_ROOT / "results-refresh")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--evidence", type=Path, default=store.STORE)
    ap.add_argument("--only", help="these scenarios of the book only (comma-separated names)")
    args = ap.parse_args(argv)
    only = args.only.split(",") if args.only else None
    if args.what == "plan":
        print_plan(*plan(args.evidence, REPO_ROOT, args.reps, only))
        return 0
    return run(args.evidence, REPO_ROOT, args.reps, args.results.resolve(), args.cores, only)


if __name__ == "__main__":
    sys.exit(main())
