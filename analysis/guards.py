"""What each metric could hide: a workload's metric guards.

A metric can flatter a broken run: a stream that stops displaying has zero freezes. So every
headline metric of a workload names the failure that would make it look good and the metrics
that catch that failure, which every table and page sets beside it. A workload declares its
guards in `priolab/workloads/<kind>/guards.py` (`GUARDS`); its reference page prints them
(book/workloads.py), and the tests check them against the metrics a real run writes.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class MetricGuard:
    metric: str
    measures: str  # what the number is, in one line
    flattered_by: str  # a failure that would make it look good
    caught_by: tuple[str, ...]  # metrics (of the same run) that expose that failure
    how: str = ""  # how they expose it, when it is not obvious from the names


def guards_for(package: str) -> tuple[MetricGuard, ...]:
    """The guards a workload package declares (`<package>.guards.GUARDS`), or none."""
    try:
        mod = importlib.import_module(f"{package}.guards")
    except ModuleNotFoundError as e:
        if e.name != f"{package}.guards":
            raise
        return ()
    return tuple(getattr(mod, "GUARDS", ()))


def guard_problems(
    guards: tuple[MetricGuard, ...], metrics: dict[str, object], core: tuple[str, ...] = ()
) -> list[str]:
    """What is wrong with a workload's guards, given the metrics one of its runs wrote and its
    core metrics: a guarded or guarding metric the run does not report, a metric guarded by
    itself or by nothing, a core metric without a guard, a metric guarded twice."""
    out: list[str] = []
    seen: set[str] = set()
    for g in guards:
        if g.metric in seen:
            out.append(f"{g.metric}: guarded twice")
        seen.add(g.metric)
        if g.metric not in metrics:
            out.append(f"{g.metric}: not a metric the run reports")
        if not g.caught_by:
            out.append(f"{g.metric}: nothing catches what flatters it")
        if g.metric in g.caught_by:
            out.append(f"{g.metric}: caught by itself")
        out += [f"{g.metric}: caught by {c}, not a metric the run reports"
                for c in g.caught_by if c not in metrics]  # fmt: skip
        if not g.measures.strip() or not g.flattered_by.strip():
            out.append(f"{g.metric}: says neither what it measures nor what flatters it")
    out += [f"{m}: a core metric without a guard" for m in core if m not in seen]
    return out
