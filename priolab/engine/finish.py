"""The end of every run, on every site: read the reports, judge, write metadata.json, promote.

The only impure part of judging: it reads the nodes' reports and the link's counters from
the run folder, adds provenance, writes metadata.json and renames `<dir>.partial` to `<dir>`.

A site that wraps another (the VM site runs the Mininet site inside a VM) has the inner run
stop short of promoting (`promote=False`) and calls `rejudge` with what only it can see (the
host's CPU): the run is judged once more from the same reports and link counters, and only
then renamed, so a finished `<dir>` is never rewritten.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ground import rundir
from ground.reasons import Code, Reason, from_metadata
from priolab import provenance, pylock
from priolab.engine import report
from priolab.engine.judge import judge, read_link_final
from priolab.engine.plan import RunPlan
from priolab.workloads import WORKLOADS

NODE_KEYS = {"hostname", "kernel", "versions", "clock", "t0"}
"""What metadata.json's `nodes` keeps of each node's report."""


def read_reports(partial: Path, plan: RunPlan) -> tuple[dict[str, report.NodeReport], list[Reason]]:
    """Every node's report that is there and matches the contract, and a reason for each
    that is there but does not (a missing one is the judge's `no_report`)."""
    out, bad = {}, []
    for node in plan.nodes:
        f = partial / rundir.node_report(node)
        if f.is_file():
            try:
                out[node] = report.read(f)
            except report.ReportError as e:
                bad.append(Reason(Code.BAD_REPORT, str(e), node))
    return out, bad


def finish(
    partial: Path,
    plan: RunPlan | dict[str, Any],
    *,
    site_errors: Sequence[Reason | str] | None = None,
    extra: dict[str, Any] | None = None,
    host_cpu: dict[str, Any] | None = None,
    promote: bool = True,
) -> dict[str, Any]:
    """Judge the run in `partial` and promote it (unless `promote` is False: a wrapping site
    will `rejudge` it); return its metadata. A plan given as JSON is checked into a `RunPlan`
    first."""
    plan = RunPlan.model_validate(plan)
    if not (partial / rundir.PLAN).is_file():  # failed before planning: keep what is known
        (partial / rundir.PLAN).write_text(json.dumps(plan.to_json(), indent=1))
    reports, bad = read_reports(partial, plan)
    link_final = read_link_final(partial, plan, reports)
    verdict = judge(plan, reports, link_final, [*(site_errors or []), *bad], host_cpu=host_cpu)
    if plan.link.backend == "tc":
        (partial / rundir.TC_APPLIED).write_text(json.dumps(plan.link.applied, indent=1))
    workload = WORKLOADS[plan.workload_kind]
    meta: dict[str, Any] = {
        "run": plan.run,
        "target": plan.site,
        "backend": plan.backend,
        "git": provenance.git_info(),
        "versions": provenance.versions(workload.tools()),
        "python_packages": pylock.python_packages(),
        "host": provenance.host_info(),
        "slurm": provenance.slurm_info(),  # node and job id when run as a Slurm job
        "interfaces": plan.interfaces,
        "link_applied": plan.link.applied,
        "site": {"kind": plan.site, "shaper": plan.shaper},
        "inputs": {},
        **(extra or {}),
        **verdict,
        "nodes": {
            n: rep.model_dump(mode="json", include=NODE_KEYS) | {"name": plan.nodes[n].name}
            for n, rep in reports.items()
        },
    }
    rundir.write_metadata(partial, meta)
    for n in plan.nodes.values():
        stop = n.spec.stop_file
        if stop:
            (partial / Path(stop).name).unlink(missing_ok=True)
    if promote:
        rundir.promote(partial)
    return meta


SITE_CODES = (Code.SITE, Code.ABORTED)
"""Reasons only the site that ran a run knows (not in its reports or files): kept when the
run is judged again."""


def rejudge(
    partial: Path, host_cpu: dict[str, Any], extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Judge a run `finish` left unpromoted once more, with the host CPU of the machine the
    site ran on, from the same reports and the link counters the first judging read (reading
    tc's counters consumes their files); add `extra` to its metadata and promote it."""
    meta = rundir.read_metadata(partial)
    plan = RunPlan.read(partial / rundir.PLAN)
    site_errors = [r for r in from_metadata(meta) if r.code in SITE_CODES]
    reports, bad = read_reports(partial, plan)
    verdict = judge(plan, reports, meta["link_final"], [*site_errors, *bad], host_cpu)
    meta |= (extra or {}) | verdict
    rundir.write_metadata(partial, meta)
    rundir.promote(partial)
    return meta
