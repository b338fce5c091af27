"""Typed plans and node reports from the few keys a test cares about: the engine's judge and
finish take `RunPlan` and `NodeReport` models (engine/plan.py, engine/report.py), and a test
that judges hand-made runs names only what it varies. Every key it leaves out gets a neutral
value here; the models still check what it gives."""

from __future__ import annotations

from typing import Any

from ground import rundir
from priolab.engine.plan import RunPlan
from priolab.engine.report import NodeReport


def _process(p: dict[str, Any]) -> dict[str, Any]:
    out, err = rundir.log_files(p["name"])
    return {"argv": [p["name"]], "start_at_s": 0.0, "runs_to_end": True, "ok_exit_codes": [0],
            "stdout": out, "stderr": err, **p}  # fmt: skip


def run_plan(d: dict[str, Any]) -> RunPlan:
    """A RunPlan from a partial plan.json (`nodes.<key>.spec.processes` may hold only names)."""
    nodes = {}
    for key, n in d.get("nodes", {}).items():
        spec = n.get("spec", {})
        nodes[key] = {
            "name": n.get("name", key), "run_dir": n.get("run_dir", "/run"),
            "spec": {"node": key, "run_dir": "/run", "report": rundir.node_report(key),
                     "deadline_s": 30.0, "term_wait_s": 5.0, "stop_file": None, "tools": [],
                     "files": {}, "outputs": [], "archive": None, "registry_dir": "/run/.pids",
                     "check_clock": False, **spec,
                     "processes": [_process(p) for p in spec.get("processes", [])]},
        }  # fmt: skip
    full = {"site": "mininet", "rel_dir": "sc/s/p/d/r1", "out_dir": "/run",
            "partial_dir": "/run.partial", "run": {"workload": {"kind": "rise"}}, "backend": {},
            "shaper": "router", "python": None, "duration_s": 10.0, "deadline_s": 30.0,
            "link": {"applied": {"backend": "userspace"}}, "transfers": [], "inputs": [],
            "interfaces": {}, "emulator": None, **d, "nodes": nodes}  # fmt: skip
    return RunPlan.model_validate(full)


def node_report(node: str, d: dict[str, Any]) -> NodeReport:
    """A NodeReport from a partial node-<node>.json (processes may lack argv and logs)."""
    procs = [{"node": node, **_process(p)} for p in d.get("processes", [])]
    for p in procs:  # what a report has and a plan's process has not
        for k in ("start_at_s", "runs_to_end", "ok_exit_codes"):
            p.pop(k)
    return NodeReport.model_validate({"node": node, **d, "processes": procs})


def node_reports(reports: dict[str, dict[str, Any] | NodeReport]) -> dict[str, NodeReport]:
    return {n: r if isinstance(r, NodeReport) else node_report(n, r) for n, r in reports.items()}
