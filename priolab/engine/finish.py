"""The end of every run, on every site: read the reports, judge, write metadata.json, promote.

The only impure part of judging: it reads the nodes' reports and the link's counters from
the run folder, adds provenance, writes metadata.json and renames `<dir>.partial` to `<dir>`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from priolab import provenance, pylock
from priolab.engine import rundir
from priolab.engine.judge import judge, read_link_final
from priolab.workloads import WORKLOADS


def read_reports(partial: Path, plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for node in plan["nodes"]:
        f = partial / f"node-{node}.json"
        if f.is_file():
            out[node] = json.loads(f.read_text())
    return out


def finish(
    partial: Path,
    plan: dict[str, Any],
    *,
    site_errors: list[str] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Judge the run in `partial` and promote it; return its metadata."""
    reports = read_reports(partial, plan)
    verdict = judge(plan, reports, read_link_final(partial, plan, reports), site_errors)
    if plan["link"]["applied"]["backend"] == "tc":
        (partial / "tc-applied.json").write_text(json.dumps(plan["link"]["applied"], indent=1))
    workload = WORKLOADS[plan["run"]["workload"]["kind"]]
    meta: dict[str, Any] = {
        "run": plan["run"],
        "target": plan["site"],
        "backend": plan["backend"],
        "git": provenance.git_info(),
        "versions": provenance.versions(workload.tools()),
        "python_packages": pylock.python_packages(),
        "host": provenance.host_info(),
        "slurm": provenance.slurm_info(),  # node and job id when run as a Slurm job
        "interfaces": plan["interfaces"],
        "link_applied": plan["link"]["applied"],
        "site": {"kind": plan["site"], "shaper": plan["shaper"]},
        "inputs": {},
        **(extra or {}),
        **verdict,
        "nodes": {
            n: {k: rep.get(k) for k in ("hostname", "kernel", "versions", "clock", "t0")}
            | {"name": plan["nodes"][n]["name"]}
            for n, rep in reports.items()
        },
    }
    tmp = partial / (rundir.METADATA + ".tmp")
    tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n")
    tmp.replace(partial / rundir.METADATA)
    for n in plan["nodes"].values():
        stop = n["spec"].get("stop_file")
        if stop:
            (partial / Path(stop).name).unlink(missing_ok=True)
    rundir.promote(partial)
    return meta
