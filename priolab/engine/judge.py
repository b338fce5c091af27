"""judge(plan, reports, link_final) → the verdict and the run's part of metadata.json. Pure.

Every site ends the same way: the nodes' agents wrote reports (node-<node>.json, read into
engine/report.py's `NodeReport`), the link's final counters were read (`link_final`, below),
and this module decides on the typed plan (engine/plan.py `RunPlan`) and reports.
DESIGN.md: a run is valid only if every process that should end by itself exited cleanly,
it ran its full duration, every process started on time, the CPU was not saturated on any
node, the emulator saw no oversized frames and reported no error, (testbeds) the clocks
agreed, and (every workload but the calibration probe) no node's kernel dropped UDP datagrams
from a full socket receive buffer.

A connection the protocol lost under the scenario's conditions is the scheme's result, not a
harness fault: a process that exits with one of its `lost_exit_codes` (an endpoint's "peer
lost", workloads/base.py PEER_LOST_EXIT) exited as the protocol ended it. The run stays valid
(unless another rule says otherwise), the full-duration rule does not apply to it (its session
ended early by the protocol's doing), and metadata.json's `session` records it: `failed`
true, `lost` the processes that said so. The claims count such a run with its worst values
(analysis/verdicts.py), never by leaving it out.

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
from priolab.engine.plan import ProcessPlan, RunPlan
from priolab.engine.report import NodeReport, ProcessReport

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


def cpu_rule_applies(plan: RunPlan) -> bool:
    """Whether the CPU-saturation rule judges this run: on every site but sim."""
    return plan.site != "sim"


RCVBUF_EXEMPT_WORKLOADS = frozenset({"probe"})
"""Workloads whose receive drops are part of the measurement (the calibration ladder's probe
finds the limit, lkprobe reports its own drops); for every other workload the endpoints are the
measured system, and a datagram the kernel dropped from a full socket buffer is a loss the link
did not make (endpoints/README.md, the stall miss): the run is invalid."""


def udp_drops(reports: dict[str, NodeReport]) -> dict[str, dict[str, int] | None]:
    """Per node, how much each UDP counter (IPv4 + IPv6) grew between the agent's start and
    end readings; None for a node whose report has no readable pair."""
    out: dict[str, dict[str, int] | None] = {}
    for node, rep in reports.items():
        c = rep.udp_counters
        start, end = (c.start, c.end) if c is not None else (None, None)
        fams: list[tuple[dict[str, int], dict[str, int]]] = []
        if start is not None and end is not None:
            for a, b in ((start.udp, end.udp), (start.udp6, end.udp6)):
                if a is not None and b is not None:
                    fams.append((a, b))
        if not fams:
            out[node] = None
            continue
        keys = {k for a, b in fams for k in b if k in a}
        out[node] = {k: sum(b.get(k, 0) - a.get(k, 0) for a, b in fams) for k in sorted(keys)}
    return out


def planned_processes(plan: RunPlan) -> dict[str, ProcessPlan]:
    return plan.processes()


def lost_session(p: ProcessReport, planned: ProcessPlan | None) -> bool:
    """Whether the process exited by itself with a code that says the protocol lost its
    session (ProcessPlan.lost_exit_codes)."""
    return (planned is not None and not p.stopped_by_harness
            and p.exit_code is not None and p.exit_code in planned.lost_exit_codes)  # fmt: skip


def _process_reasons(p: ProcessReport, planned: ProcessPlan | None) -> list[Reason]:
    if planned is not None and not planned.runs_to_end:
        return []
    if lost_session(p, planned):
        return []
    if p.stopped_by_harness:
        why = f"{p.name} did not exit by itself ({p.stopped_by_harness})"
        return [Reason(Code.NOT_SELF_EXIT, why)]
    if p.exit_code not in (planned.ok_exit_codes if planned is not None else [0]):
        return [Reason(Code.EXIT_CODE, f"{p.name} exited with code {p.exit_code}")]
    return []


def cpu_summary(reports: dict[str, NodeReport]) -> dict[str, Any]:
    """Every node's machine CPU (the worst node's figures at the top) and each process's
    share of a core, so the emulator's cost stands beside the endpoints'."""
    nodes = {n: summarise(r.cpu_samples, r.cpu_interval_s or 0.5) for n, r in reports.items()}
    worst = max(nodes.values(), key=lambda c: c.get("utilisation_mean_pct", 0.0),
                default={"samples": 0, "saturated": False})  # fmt: skip
    processes = {
        p.name: {"node": n, **p.cpu.model_dump(exclude_none=False)}
        for n, r in reports.items()
        for p in r.processes
        if p.cpu is not None
    }
    return {**worst, "saturated": any(c["saturated"] for c in nodes.values()),
            "nodes": nodes, "processes": processes}  # fmt: skip


def judge(
    plan: RunPlan,
    reports: dict[str, NodeReport],
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
    for node, np_ in plan.nodes.items():
        if node not in reports:
            reasons.append(Reason(Code.NO_REPORT, f"no report from the {node} node ({np_.name})"))
    planned = planned_processes(plan)
    procs: list[ProcessReport] = []
    link_procs: list[ProcessReport] = []
    for node, rep in reports.items():
        reasons += [Reason(Code.NODE_ERROR, str(e), node) for e in rep.errors]
        for p in rep.processes:
            pp = planned.get(p.name)
            (link_procs if pp is not None and pp.link else procs).append(p)
    procs.sort(key=lambda p: p.planned_start_time or 0.0)
    for p in procs:
        reasons += _process_reasons(p, planned.get(p.name))
    lost = [p.name for p in procs if lost_session(p, planned.get(p.name))]
    for p in procs + link_procs:
        late = (p.start_time or 0.0) - (p.planned_start_time or 0.0)
        if p.start_time is not None and late > LATE_START_LIMIT_S:
            why = f"{p.name} started {late:.2f} s after its planned time"
            reasons.append(Reason(Code.LATE_START, why))
        if p.start_error:
            reasons.append(Reason(Code.START_ERROR, f"{p.name}: {p.start_error}"))
    starts = [p.start_time for p in procs if p.start_time]
    t_start = min(starts) if starts else 0.0
    ends = [p.end_time for p in procs if p.end_time]
    t_stop = max(ends) if ends else t_start
    enders = [p for p in procs if (pp := planned.get(p.name)) is None or pp.runs_to_end]
    ran_s = (min((p.end_time or t_stop) for p in enders) if enders else t_stop) - t_start
    if ran_s + DURATION_SLACK_S < plan.duration_s and not lost:
        reasons.append(Reason(Code.SHORT_RUN, f"ran {ran_s:.1f} s of {plan.duration_s:g} s"))
    linkem = next((p for p in link_procs if p.name == "linkem"), None)
    if linkem is not None and starts and (linkem.ready_time is None or linkem.ready_time > t_start):
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
        chrony = rep.clock.chrony
        if chrony and abs(chrony["system_offset_s"]) > CLOCK_OFFSET_LIMIT_S:
            why = (f"clock offset {chrony['system_offset_s'] * 1e3:.3f} ms exceeds "
                   f"{CLOCK_OFFSET_LIMIT_S * 1e3:g} ms (chrony)")  # fmt: skip
            reasons.append(Reason(Code.CLOCK_OFFSET, why, node))
    drops = udp_drops(reports)
    if plan.workload_kind not in RCVBUF_EXEMPT_WORKLOADS:
        for node, d in drops.items():
            if d and d.get("RcvbufErrors", 0) > 0:
                why = (
                    f"the kernel dropped {d['RcvbufErrors']} UDP datagrams from full "
                    "socket receive buffers (RcvbufErrors): losses the link did not make"
                )
                reasons.append(Reason(Code.RCVBUF_DROPS, why, node))
    strip = {"ready_time"}
    return {
        "link_final": link_final,
        "cpu": cpu,
        "udp_drops": drops,
        "start_time": t_start,
        "stop_time": t_stop,
        "ran_s": round(ran_s, 3),
        "session": {"failed": bool(lost), "lost": lost},
        "processes": [p.model_dump(mode="json", exclude=strip) for p in procs],
        "link_processes": [p.model_dump(mode="json", exclude=strip) for p in link_procs],
        **verdict_fields(reasons),
    }


# --------------------------------------------------------------------------- link counters


def sim_link_final(stats: Path, sim_report: dict[str, Any] | None) -> dict[str, Any]:
    """The sim's link: its stats file, and the final counters sim-report.json gives."""
    out = final_counters(stats)
    out.update(exit_code=None, sim_counters=(sim_report or {}).get("link"))
    return out


def linkem_final(stats: Path, linkem: ProcessReport | None) -> dict[str, Any]:
    """linkem's final counters (its stats file) and whether it ran and stopped as planned."""
    out = final_counters(stats)
    errors = out["errors"]
    code = linkem.exit_code if linkem else None
    if linkem is None:
        errors.append("linkem did not run on the emulator node")
    elif linkem.stopped_by_harness is None:
        errors.append(f"linkem exited by itself with code {code} before the run ended")
    elif linkem.stopped_by_harness == "SIGKILL":
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


def read_link_final(run: Path, plan: RunPlan, reports: dict[str, NodeReport]) -> dict[str, Any]:
    """The link's counters from the files in a run folder (the only reading part)."""
    if plan.link.backend == "sim":
        try:
            report = json.loads((run / rundir.SIM_REPORT).read_text())
        except (OSError, ValueError):
            report = None  # the site's errors say why
        return sim_link_final(run / rundir.LINK_STATS, report)
    if plan.link.backend == "userspace":
        procs = [p for r in reports.values() for p in r.processes]
        return linkem_final(run / rundir.LINK_STATS,
                            next((p for p in procs if p.name == "linkem"), None))  # fmt: skip
    stats: dict[str, Any] = {}
    for f in sorted(run.glob(rundir.TC_STATS_GLOB)):
        stats.update(json.loads(f.read_text()))
        f.unlink()
    replayers = []
    for name, p in planned_processes(plan).items():
        if name.startswith(rundir.TC_REPLAY_PREFIX):
            out = run / p.stdout
            try:
                replayers.append(json.loads(out.read_text().strip().splitlines()[-1]))
            except (OSError, ValueError, IndexError):
                replayers.append({"errors": [f"{name}: no summary in {p.stdout}"]})
    return tc_final(stats, replayers)
