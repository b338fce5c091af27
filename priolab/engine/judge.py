"""judge(plan, reports, link_final) → the verdict and the run's part of metadata.json. Pure.

Every site ends the same way: the nodes' agents wrote reports (node-<node>.json), the link's
final counters were read (`link_final`, below), and this module decides. DESIGN.md: a run is
valid only if every process that should end by itself exited cleanly, it ran its full
duration, every process started on time, the CPU was not saturated on any node, the
emulator saw no oversized frames and reported no error, (testbeds) the clocks agreed, and
(every workload but the calibration probe) no node's kernel dropped UDP datagrams from a full
socket receive buffer.

A sim run (engine/sites/sim.py) is judged by the same rules on virtual time, but for one: the
CPU-saturation rule does not apply (`cpu_rule_applies`), since a slow CPU stretches its wall
time, not its virtual time; metadata.json's `cpu` says so (`applies: false`, `why`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ground import rundir
from ground.reasons import Code, Reason, site_error, verdict_fields
from netem.linkem_stats import final_counters
from priolab.cpu import summarise

LATE_START_LIMIT_S = 1.0
"""A process that started more than this after its planned time makes the run invalid."""
CLOCK_OFFSET_LIMIT_S = 0.001
"""|chrony system offset| above this on any node makes the run invalid (assumption: one-way
delays are analysed at ms resolution)."""
DURATION_SLACK_S = 0.5
"""A run that ended more than this before its duration is invalid."""


SIM_CPU_NOTE = (
    "sim site: every process runs on a virtual clock that waits for the CPU, so a busy CPU "
    "slows the run's wall time, not what the endpoints see; the saturation rule does not apply "
    "(CPU and wall seconds: metadata.json site.cpu_s, site.wall_s)"
)


def cpu_rule_applies(plan: dict[str, Any]) -> bool:
    """Whether the CPU-saturation rule judges this run: on every site but sim."""
    return plan.get("site") != "sim"


RCVBUF_EXEMPT_WORKLOADS = frozenset({"probe"})
"""Workloads whose receive drops are part of the measurement (the calibration ladder's probe
finds the limit, lkprobe reports its own drops); for every other workload the endpoints are the
measured system, and a datagram the kernel dropped from a full socket buffer is a loss the link
did not make (endpoints/README.md, the stall miss): the run is invalid."""


def udp_drops(reports: dict[str, dict[str, Any]]) -> dict[str, dict[str, int] | None]:
    """Per node, how much each UDP counter (IPv4 + IPv6) grew between the agent's start and
    end readings; None for a node whose report has no readable pair."""
    out: dict[str, dict[str, int] | None] = {}
    for node, rep in reports.items():
        c = rep.get("udp_counters") or {}
        start, end = c.get("start") or {}, c.get("end") or {}
        fams = [f for f in ("udp", "udp6") if start.get(f) is not None and end.get(f) is not None]
        if not fams:
            out[node] = None
            continue
        keys = {k for f in fams for k in end[f] if k in start[f]}
        out[node] = {
            k: sum(end[f].get(k, 0) - start[f].get(k, 0) for f in fams) for k in sorted(keys)
        }
    return out


def planned_processes(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for n in plan["nodes"].values() for p in n["spec"]["processes"]}


def _process_reasons(p: dict[str, Any], planned: dict[str, Any]) -> list[Reason]:
    if not planned.get("runs_to_end", True):
        return []
    if p.get("stopped_by_harness"):
        why = f"{p['name']} did not exit by itself ({p['stopped_by_harness']})"
        return [Reason(Code.NOT_SELF_EXIT, why)]
    if p.get("exit_code") not in planned.get("ok_exit_codes", [0]):
        return [Reason(Code.EXIT_CODE, f"{p['name']} exited with code {p.get('exit_code')}")]
    return []


def cpu_summary(reports: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Every node's machine CPU (the worst node's figures at the top) and each process's
    share of a core, so the emulator's cost stands beside the endpoints'."""
    nodes = {n: summarise(r.get("cpu_samples", []), r.get("cpu_interval_s", 0.5))
             for n, r in reports.items()}  # fmt: skip
    worst = max(nodes.values(), key=lambda c: c.get("utilisation_mean_pct", 0.0),
                default={"samples": 0, "saturated": False})  # fmt: skip
    processes = {
        p["name"]: {"node": n, **p["cpu"]}
        for n, r in reports.items()
        for p in r.get("processes", [])
        if isinstance(p.get("cpu"), dict)
    }
    return {**worst, "saturated": any(c["saturated"] for c in nodes.values()),
            "nodes": nodes, "processes": processes}  # fmt: skip


def judge(
    plan: dict[str, Any],
    reports: dict[str, dict[str, Any]],
    link_final: dict[str, Any],
    site_errors: Sequence[Reason | str] | None = None,
    host_cpu: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The verdict of one run from its plan, the nodes' reports and the link's counters:
    the keys metadata.json has on every site (processes, cpu, times, valid, reasons).
    `site_errors`: what the site could not do (text is a `site` reason). `host_cpu`: the VM
    site's CPU summary of the machine the VM ran on (priolab/cpu.py), judged by the same rule
    as a node's CPU."""
    reasons = [e if isinstance(e, Reason) else site_error(e) for e in site_errors or []]
    for node in plan["nodes"]:
        if node not in reports:
            why = f"no report from the {node} node ({plan['nodes'][node]['name']})"
            reasons.append(Reason(Code.NO_REPORT, why))
    planned = planned_processes(plan)
    procs: list[dict[str, Any]] = []
    link_procs: list[dict[str, Any]] = []
    for node, rep in reports.items():
        reasons += [Reason(Code.NODE_ERROR, str(e), node) for e in rep.get("errors", [])]
        for p in rep.get("processes", []):
            (link_procs if planned.get(p["name"], {}).get("link") else procs).append(p)
    procs.sort(key=lambda p: p.get("planned_start_time") or 0.0)
    for p in procs:
        reasons += _process_reasons(p, planned.get(p["name"], {}))
    for p in procs + link_procs:
        late = (p.get("start_time") or 0.0) - (p.get("planned_start_time") or 0.0)
        if p.get("start_time") is not None and late > LATE_START_LIMIT_S:
            why = f"{p['name']} started {late:.2f} s after its planned time"
            reasons.append(Reason(Code.LATE_START, why))
        if p.get("start_error"):
            reasons.append(Reason(Code.START_ERROR, f"{p['name']}: {p['start_error']}"))
    starts = [p["start_time"] for p in procs if p.get("start_time")]
    t_start = min(starts) if starts else 0.0
    ends = [p["end_time"] for p in procs if p.get("end_time")]
    t_stop = max(ends) if ends else t_start
    enders = [p for p in procs if planned.get(p["name"], {}).get("runs_to_end", True)]
    ran_s = (min((p.get("end_time") or t_stop) for p in enders) if enders else t_stop) - t_start
    if ran_s + DURATION_SLACK_S < plan["duration_s"]:
        reasons.append(Reason(Code.SHORT_RUN, f"ran {ran_s:.1f} s of {plan['duration_s']:g} s"))
    linkem = next((p for p in link_procs if p["name"] == "linkem"), None)
    if (
        linkem is not None
        and starts
        and (linkem.get("ready_time") is None or linkem["ready_time"] > t_start)
    ):
        why = "linkem was not forwarding when the workload started"
        reasons.append(Reason(Code.LINK_NOT_READY, why))
    if cpu_rule_applies(plan):
        cpu = {"applies": True, **cpu_summary(reports)}
    else:
        cpu = {"applies": False, "why": SIM_CPU_NOTE, "saturated": False}
    if cpu["saturated"]:
        why = f"CPU saturated (mean {cpu.get('utilisation_mean_pct')} %, rule: {cpu.get('rule')})"
        reasons.append(Reason(Code.CPU_SATURATED, why))
    if host_cpu is not None and host_cpu.get("saturated"):
        why = (f"host CPU saturated (mean {host_cpu.get('utilisation_mean_pct')} %, rule: "
               f"{host_cpu.get('rule')}): the VM's emulated CPUs were starved")  # fmt: skip
        reasons.append(Reason(Code.HOST_CPU_SATURATED, why))
    if link_final.get("oversized_frames"):
        why = f"emulator saw {link_final['oversized_frames']} oversized frames"
        reasons.append(Reason(Code.OVERSIZED_FRAMES, why))
    reasons += [Reason(Code.LINK_ERROR, f"link emulation: {e}")
                for e in link_final.get("errors", [])]  # fmt: skip
    for node, rep in reports.items():
        chrony = (rep.get("clock") or {}).get("chrony")
        if chrony and abs(chrony["system_offset_s"]) > CLOCK_OFFSET_LIMIT_S:
            why = (f"clock offset {chrony['system_offset_s'] * 1e3:.3f} ms exceeds "
                   f"{CLOCK_OFFSET_LIMIT_S * 1e3:g} ms (chrony)")  # fmt: skip
            reasons.append(Reason(Code.CLOCK_OFFSET, why, node))
    drops = udp_drops(reports)
    kind = (plan.get("run") or {}).get("workload", {}).get("kind")
    if kind not in RCVBUF_EXEMPT_WORKLOADS:
        for node, d in drops.items():
            if d and d.get("RcvbufErrors", 0) > 0:
                why = (
                    f"the kernel dropped {d['RcvbufErrors']} UDP datagrams from full "
                    "socket receive buffers (RcvbufErrors): losses the link did not make"
                )
                reasons.append(Reason(Code.RCVBUF_DROPS, why, node))
    strip = ("ready_time",)
    return {
        "link_final": link_final,
        "cpu": cpu,
        "udp_drops": drops,
        "start_time": t_start,
        "stop_time": t_stop,
        "ran_s": round(ran_s, 3),
        "processes": [{k: v for k, v in p.items() if k not in strip} for p in procs],
        "link_processes": [{k: v for k, v in p.items() if k not in strip} for p in link_procs],
        **verdict_fields(reasons),
    }


# --------------------------------------------------------------------------- link counters


def sim_link_final(stats: Path, sim_report: dict[str, Any] | None) -> dict[str, Any]:
    """The sim's link: its stats file, and the final counters sim-report.json gives."""
    out = final_counters(stats)
    out.update(exit_code=None, sim_counters=(sim_report or {}).get("link"))
    return out


def linkem_final(stats: Path, linkem: dict[str, Any] | None) -> dict[str, Any]:
    """linkem's final counters (its stats file) and whether it ran and stopped as planned."""
    out = final_counters(stats)
    errors = out["errors"]
    code = linkem["exit_code"] if linkem else None
    if linkem is None:
        errors.append("linkem did not run on the emulator node")
    elif linkem["stopped_by_harness"] is None:
        errors.append(f"linkem exited by itself with code {code} before the run ended")
    elif linkem["stopped_by_harness"] == "SIGKILL":
        errors.append("linkem did not stop on SIGTERM; killed")
    elif code != 0:
        errors.append(f"linkem exited with code {code}")
    out.update(exit_code=code, errors=errors)
    return out


def tc_final(qdisc_stats: dict[str, Any], replayers: list[dict[str, Any]]) -> dict[str, Any]:
    """tc's counters (`tc -s -j qdisc show` per device) and the trace replayers' summaries."""
    errors = [e for r in replayers for e in r.get("errors", [])]
    return {"oversized_frames": None, "oversized_note": "tc cannot count them",
            "trace_rate_changes": sum(int(r.get("changes", 0)) for r in replayers),
            "qdisc_stats": qdisc_stats, "errors": errors}  # fmt: skip


def read_link_final(run: Path, plan: dict[str, Any], reports: dict[str, Any]) -> dict[str, Any]:
    """The link's counters from the files in a run folder (the only reading part)."""
    if plan["link"]["applied"]["backend"] == "sim":
        try:
            report = json.loads((run / rundir.SIM_REPORT).read_text())
        except (OSError, ValueError):
            report = None  # the site's errors say why
        return sim_link_final(run / rundir.LINK_STATS, report)
    if plan["link"]["applied"]["backend"] == "userspace":
        procs = [p for r in reports.values() for p in r.get("processes", [])]
        return linkem_final(run / rundir.LINK_STATS,
                            next((p for p in procs if p["name"] == "linkem"), None))  # fmt: skip
    stats: dict[str, Any] = {}
    for f in sorted(run.glob(rundir.TC_STATS_GLOB)):
        stats.update(json.loads(f.read_text()))
        f.unlink()
    replayers = []
    for name, p in planned_processes(plan).items():
        if name.startswith(rundir.TC_REPLAY_PREFIX):
            out = run / p["stdout"]
            try:
                replayers.append(json.loads(out.read_text().strip().splitlines()[-1]))
            except (OSError, ValueError, IndexError):
                replayers.append({"errors": [f"{name}: no summary in {p['stdout']}"]})
    return tc_final(stats, replayers)
