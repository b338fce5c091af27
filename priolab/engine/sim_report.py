"""The sim site's reading half (pure): priolab-sim's sim-report.json → the node reports every
site writes (node-<node>.json, read by engine/finish.py and judged by engine/judge.py), the
run's errors, and metadata.json's `site` block.

Times in the node reports are virtual: t = SPEC.json's epoch + the report's seconds, the same
clock the endpoints' logs use. What a sim run has no reading of says so instead of a number:
no CPU samples (the judge's CPU rule does not apply to sim runs), no chrony, and UDP counters
that are the modelled receive buffers' drops (`sim.recv_buffer_bytes`), zero when unbounded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ground import rundir
from priolab.engine.plan import ProcessPlan, RunPlan
from priolab.engine.report import NodeReport, ProcessCpu, ProcessReport

CANCELLED = "cancelled by priolab-sim (the run was over, or the virtual deadline)"
PROCESS_CPU_NOTE = (
    "one priolab-sim process runs every endpoint and the link: its CPU time is metadata.json "
    "site.cpu_s"
)
UDP_NOTE = "sim: datagrams the modelled receive buffers dropped (sim.recv_buffer_bytes)"
STDERR_TAIL_CHARS = 300


def _udp(drops: int | None, time_s: float) -> dict[str, Any]:
    udp = None if drops is None else {"InErrors": drops, "RcvbufErrors": drops, "SndbufErrors": 0}
    return {"time": time_s, "udp": udp, "udp6": None}


def recv_drops(spec: dict[str, Any], report: dict[str, Any]) -> dict[str, int]:
    """Per node, the datagrams its sockets' receive buffers dropped (the report's `sockets`,
    keyed by `addr:port`, matched to the SPEC's node addresses)."""
    by_addr = {n["addr"]: node for node, n in spec["nodes"].items()}
    out = dict.fromkeys(spec["nodes"], 0)
    for sock, counters in (report.get("sockets") or {}).items():
        node = by_addr.get(sock.rsplit(":", 1)[0])
        if node is not None:
            out[node] += int(counters.get("recv_buffer_drops", 0))
    return out


def _process(p: ProcessPlan, node: str, t0: float, r: dict[str, Any] | None) -> ProcessReport:
    """One planned process as the agent reports it (engine/agent.py Proc.to_json)."""

    def at(key: str) -> float | None:
        return None if r is None or r.get(key) is None else t0 + float(r[key])

    return ProcessReport(
        name=p.name, node=node, argv=p.argv, pid=None, planned_start_time=t0 + p.start_at_s,
        start_time=at("started_at_s"), end_time=at("ended_at_s"), ready_time=None,
        exit_code=None if r is None else r.get("exit_code"),
        stopped_by_harness=CANCELLED if r is not None and r.get("cancelled") else None,
        start_error=None if r is not None else f"not in {rundir.SIM_REPORT}: priolab-sim "
                                               "did not report it",
        stdout=p.stdout, stderr=p.stderr, cpu=ProcessCpu(note=PROCESS_CPU_NOTE),
    )  # fmt: skip


def node_reports(
    run_plan: RunPlan, spec: dict[str, Any], report: dict[str, Any], host: dict[str, Any]
) -> dict[str, NodeReport]:
    """node-<node>.json of every node of a sim run from priolab-sim's report. `host`: this
    machine's hostname and kernel (provenance)."""
    t0 = spec["epoch_unix_ns"] / 1e9
    by_name = {r["name"]: r for r in report.get("processes", [])}
    drops = recv_drops(spec, report)
    t_end = t0 + float(report.get("virtual_s") or 0.0)
    out = {}
    for node, np_ in run_plan.nodes.items():
        procs = [_process(p, node, t0, by_name.get(p.name)) for p in np_.spec.processes]
        out[node] = NodeReport.model_validate({
            "node": node, "hostname": host.get("hostname"), "t0": t0, "processes": procs,
            "cpu_samples": [], "cpu_interval_s": None,
            "udp_counters": {"start": _udp(0, t0), "end": _udp(drops.get(node), t_end),
                             "note": UDP_NOTE},
            "versions": {}, "kernel": host.get("kernel"),
            "clock": {"chrony": None, "note": "sim: one virtual clock"}, "errors": [],
        })  # fmt: skip
    return out


def run_errors(
    spec: dict[str, Any],
    report: dict[str, Any] | None,
    exit_code: int | None,
    stderr_tail: str,
    present: set[str],
) -> list[str]:
    """Why a sim run is invalid beyond what the judge sees in the node reports: priolab-sim
    failed, wrote no report or reported errors, or a process's log files are missing.
    `present`: the absolute paths of the SPEC's output files (logs, packet log) that exist."""
    errors = []
    if exit_code is not None and exit_code != 0:
        tail = stderr_tail.strip()[-STDERR_TAIL_CHARS:]
        errors.append(f"priolab-sim exited with code {exit_code}" + (f": {tail}" if tail else ""))
    if report is None:
        errors.append(f"priolab-sim wrote no readable {rundir.SIM_REPORT}")
        return errors
    errors += [f"sim: {e}" for e in report.get("errors", [])]
    log = spec["link"].get("packet_log")
    if log is not None and log not in present:
        errors.append(f"link.packet_log: asked for, but priolab-sim wrote no {Path(log).name}")
    for pcap in (spec.get("capture") or {}).get("files", {}).values():
        if pcap not in present:
            errors.append(f"capture: asked for, but priolab-sim wrote no {Path(pcap).name}")
    reported = {r["name"] for r in report.get("processes", [])}
    for p in spec["processes"]:
        if p["name"] not in reported:
            continue  # the node report says so (start_error)
        for key in ("stdout", "stderr"):
            if p[key] not in present:
                errors.append(f"{p['name']}: its {key} file {Path(p[key]).name} is missing")
    return errors


def site_block(
    spec: dict[str, Any], report: dict[str, Any] | None, measured: dict[str, Any]
) -> dict[str, Any]:
    """metadata.json's `site`: the kind, the seed, virtual, wall and CPU seconds and the
    speed-up as priolab-sim measured them (the harness's own wall and CPU seconds beside
    them, process start included), and the SPEC it ran."""
    r = report or {}
    virtual_s, wall_s = r.get("virtual_s"), r.get("wall_s")
    speedup = r.get("speedup")
    if speedup is None and virtual_s is not None and wall_s:
        speedup = round(float(virtual_s) / float(wall_s), 2)
    return {
        "kind": "sim", "shaper": "router", "seed": spec["seed"],
        "epoch_unix_ns": spec["epoch_unix_ns"], "virtual_s": virtual_s, "wall_s": wall_s,
        "cpu_s": r.get("cpu_s"), "speedup": speedup, "harness": measured,
        "spec_file": rundir.SIM_SPEC, "report_file": rundir.SIM_REPORT, "spec": spec,
    }  # fmt: skip
