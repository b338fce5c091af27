"""What a refresh of the store reruns, and what a full one cost (book/refresh.py runs it).

`points(store, repo, names, reps)`: every sim point of the named scenarios at `reps`
repetitions (the sim site's points only: a point the sim cannot run is a Mininet-only cell,
named and left out) and whether the store's record of it is current, stale or missing.
`Timing` is evidence/refresh.json, what `make book-refresh` measured when it started from an
empty store; `slurm_estimate_s` prices the same refresh on a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ground.errors import UserError
from priolab.evidence import store
from priolab.evidence.scenarios import expected, scenario_files

TIMING_FILE = "refresh.json"
"""evidence/refresh.json: the measured cost of a full sim refresh (`Timing`)."""
JOB_OVERHEAD_CPU_S = 4.2
"""CPU seconds a Slurm job spends around its run, measured in parts on a 2-core machine
(docs/investigations/2026-11-26-slurm-cost.md): one job run by a local Snakemake (its
start-up, the workflow parsed, `priolab run-one` around a run of no cost) 2.4 s, plus the job
step's own Snakemake start-up (a dry run of the workflow) 1.8 s."""


@dataclass(frozen=True)
class Point:
    scenario: str
    file: Path  # relative to the checkout
    rel_dir: Path  # <scenario>/<setting>/<scheme>/<speed>/r<rep>
    state: str  # current, stale or missing


@dataclass(frozen=True)
class Left:
    """A scenario, or its points, the sim site cannot run (a Mininet-only cell), and why."""

    scenario: str
    why: str


def points(
    store_dir: Path, repo: Path, names: list[str], reps: int
) -> tuple[list[Point], list[Left]]:
    """The sim points of the named scenarios (files found by name) and what is left out."""
    from priolab.engine.sim_spec import sim_problems
    from priolab.scenario import expand, load

    files = scenario_files(repo)
    out: list[Point] = []
    left: list[Left] = []
    for name in names:
        f = files.get(name)
        if f is None:
            left.append(Left(name, "no scenario file of this name under scenarios/"))
            continue
        try:
            sc = load(repo / f)
        except UserError as e:
            left.append(Left(name, f"{f}: {e.title}"))
            continue
        sc = sc.model_copy(update={"repetitions": max(reps, sc.repetitions)})
        p = store.path_of(store_dir, "sim", name)
        have = {store.sort_key(r): r for r in store.read(p)} if p.is_file() else {}
        exp = expected(repo, name)
        refused: dict[str, int] = {}
        for spec in expand(sc, repo / f):
            problems = sim_problems(spec)
            if problems:  # counted by what the sim lacks, not by the setting it lacks it in
                why = problems[0][1]
                refused[why] = refused.get(why, 0) + 1
                continue
            rec = have.get((spec.setting, spec.scheme, spec.speed, spec.rep))
            state = "missing" if rec is None else ("current" if exp.why_not(rec) is None
                                                   else "stale")  # fmt: skip
            out.append(Point(name, f, spec.rel_dir, state))
        left += [Left(name, f"{n} points: {why}") for why, n in refused.items()]
    return out, left


class Timing(BaseModel):
    """What a full refresh from an empty store measured (evidence/refresh.json)."""

    model_config = ConfigDict(extra="forbid")
    commit: str
    machine: str  # e.g. "2 CPUs, AMD EPYC ..."
    cores: int  # the --cores it ran with
    reps: int
    points: int  # matrix points refreshed (scenario × setting × scheme × speed)
    runs: int
    wall_s: float
    cpu_s: float  # CPU of every process the refresh started (runs, metrics, Snakemake)
    longest_run_s: float  # the longest run's wall time (priolab-sim's), the cluster's bound
    job_overhead_cpu_s: float = JOB_OVERHEAD_CPU_S


def slurm_estimate_s(t: Timing, nodes: int, cores_per_node: int) -> float:
    """The refresh's wall time on `nodes` nodes: its CPU time and every job's overhead spread
    evenly over the cores (jobs are independent and many), never less than its longest run."""
    spread = (t.cpu_s + t.runs * t.job_overhead_cpu_s) / (nodes * cores_per_node)
    return max(t.longest_run_s, spread)
