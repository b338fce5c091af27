"""Metric guards (analysis/guards.py): every workload names, for each headline metric, the
failure that would flatter it and the metrics that catch it. Here: the checker itself, every
workload's declaration against its core metrics, and the reference page. That the names are
metrics a real run writes is checked where real runs are made: tests/test_sim_site.py (rise,
dtp, qpr, moq on the sim site) and tests/test_roq_netns.py (roq on Mininet)."""

from __future__ import annotations

import pytest

from analysis.guards import MetricGuard, guard_problems, guards_for
from analysis.workload import analysis_for
from book import workloads
from priolab.workloads import PACKAGES

GUARDED = ("dtp", "moq", "qpr", "rise", "roq")


def test_the_checker_names_each_kind_of_problem():
    guards = (
        MetricGuard("a", "what a is", "what flatters a", ("b",)),
        MetricGuard("a", "again", "again", ("a",)),
        MetricGuard("c", "", "", ()),
        MetricGuard("d", "what d is", "what flatters d", ("typo",)),
    )
    problems = guard_problems(guards, {"a": 1.0, "b": 2.0, "d": 0.0}, core=("a", "e"))
    assert problems == [
        "a: guarded twice",
        "a: caught by itself",
        "c: not a metric the run reports",
        "c: nothing catches what flatters it",
        "c: says neither what it measures nor what flatters it",
        "d: caught by typo, not a metric the run reports",
        "e: a core metric without a guard",
    ]
    assert guard_problems(guards[:1], {"a": 1.0, "b": 2.0}, core=("a",)) == []


@pytest.mark.parametrize("kind", GUARDED)
def test_every_core_metric_is_guarded(kind: str):
    guards = guards_for(PACKAGES[kind])
    assert guards, f"{kind} declares no guards"
    # every name that guards mention, as if a run reported all of them: only the structure
    # (core coverage, self-guarding, duplicates, empty text) is judged here
    names = {g.metric for g in guards} | {c for g in guards for c in g.caught_by}
    core = analysis_for(kind).core_metrics
    assert guard_problems(guards, dict.fromkeys(names, 0.0), core) == []


def test_a_package_without_guards_has_none():
    assert guards_for("priolab.workloads.probe") == ()


def test_the_workload_page_prints_the_guards():
    text = workloads.page("rise", workloads.Path(__file__).resolve().parents[1])
    assert "## What each metric could hide" in text
    for g in guards_for(PACKAGES["rise"]):
        assert f"| `{g.metric}` | {g.measures} | {g.flattered_by} |" in text
    assert "`stall_pct`, `displayed_fps`, `frames_undisplayed_pct`" in text  # freeze's guard
