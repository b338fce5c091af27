"""The Mininet site: runs on this machine, their nodes real Mininet hosts.

`run_one` is one run on its own network; `session` + `execute` run a series of plans on one
network (the calibration, priolab/workloads/probe/calibrate.py), each exactly as `run_one`
runs its one.

Build the topology → plan the run (engine/plan.py) → apply the link's setup commands in
their nodes → start the node agent (engine/agent.py, the very file testbed nodes run) inside
every node that has a share of the plan, all with one t0 → wait for the endpoints' agents →
tell the emulator node the run is over → read the link's counters, reset it → judge, write
metadata.json (engine/finish.py) → tear down. Teardown runs on every exit path (SIGINT,
SIGTERM, exceptions); the run writes into `<out>.partial/` and renames it to `<out>` only
when complete (engine/rundir.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

from ground import rundir
from ground.reasons import Reason, aborted, first_abort, site_error
from netem import replay
from netem.model import BackendName
from priolab import clean as cleaning
from priolab.engine.finish import finish
from priolab.engine.plan import TERM_WAIT_S, Command, LinkPlan, RunPlan, Site, SiteNode, plan
from priolab.scenario import RunSpec, Topology
from priolab.workloads import WORKLOADS
from priolab.workloads.base import RunContext

AGENT = Path(__file__).resolve().parent.parent / "agent.py"
REPLAY = Path(replay.__file__).resolve()
"""tc's trace replayer, a process of a plan with a trace on tc (netem/replay.py)."""
START_MARGIN_S = 0.5
"""t0 is this far after the agents are launched (assumption: a stdlib Python starts in
well under 0.5 s; the judge flags a process that starts > 1 s late). The environment
variable PRIOLAB_START_MARGIN_S overrides it (the vm site: Python starts slowly under TCG)."""
AGENT_STOP_WAIT_S = TERM_WAIT_S + 10.0
"""How long an agent may take to stop its processes and write its report."""


class RunAborted(Exception):
    """SIGINT/SIGTERM arrived during a run."""


def on_signal(signum: int, frame: FrameType | None) -> None:
    raise RunAborted(signal.Signals(signum).name)


def mininet_site(network: Any, spec: RunSpec, work: Path, backend: str, why: str) -> Site:
    """The nodes that have a share of the plan: every pair's ends and the emulator."""
    from netem.probe import linkem_path

    binaries = {"linkem": str(linkem_path()), "python": sys.executable, "agent": str(AGENT),
                "replay": str(REPLAY)}  # fmt: skip
    keys = [n for p in network.pairs for n in (p.guest, p.host)] + ["emu"]
    ifaces = network.interfaces()
    nodes = {
        k: SiteNode(key=k, name=k, run_dir=str(work), binaries=binaries,
                    registry_dir=str(cleaning.STATE_DIR / ".pids"), stop_file=k == "emu",
                    iface=ifaces[k][0] if k != "emu" else None)
        for k in keys
    }  # fmt: skip
    return Site(
        kind="mininet", backend=backend, backend_reason=why,  # type: ignore[arg-type]
        requested_backend=spec.link.backend, shaper="router", pairs=network.pairs, nodes=nodes,
        emulator="emu", emu_ifaces=(network.emu_up_in, network.emu_up_out),
        interfaces=ifaces, shared_fs=True, topology=spec.topology.kind,
    )  # fmt: skip


def _commands(network: Any, per_node: dict[str, list[Command]]) -> None:
    for node, cmds in per_node.items():
        for c in cmds:
            network.node(node).run(c.argv, check=c.check)


def _link_stats(network: Any, run_plan: RunPlan, work: Path) -> None:
    """tc's counters before the reset, as the testbed's link role hands them over."""
    for node, items in run_plan.link.stats.items():
        stats: dict[str, Any] = {}
        for item in items:
            res = network.node(node).run(item.argv, check=False)
            try:
                stats[item.dev] = json.loads(res.stdout) if res.returncode == 0 else []
            except json.JSONDecodeError:
                stats[item.dev] = res.stdout
        (work / rundir.tc_stats(node)).write_text(json.dumps(stats))


def _wait(agents: dict[str, subprocess.Popen[bytes]], names: list[str], until: float) -> None:
    while time.time() < until and any(agents[n].poll() is None for n in names):
        time.sleep(0.05)


def _stop_agents(agents: dict[str, subprocess.Popen[bytes]]) -> None:
    """SIGTERM: each agent stops its processes (TERM, then KILL) and writes its report."""
    for a in agents.values():
        if a.poll() is None:
            a.send_signal(signal.SIGTERM)
    deadline = time.time() + AGENT_STOP_WAIT_S
    for a in agents.values():
        try:
            a.wait(timeout=max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            a.kill()
            a.wait()


@contextlib.contextmanager
def session(
    topology: Topology, state_id: str, *, quiet: bool = False, run_dir: Path | None = None
) -> Iterator[Any]:
    """The topology as Mininet hosts for one run or a series of runs (the calibration).
    Stale state of a killed run is cleaned first; the nodes are recorded for `priolab clean`
    before they exist and again once they do (with each plan `execute` writes); the network
    is stopped and cleaned on every exit path."""
    from priolab.net import build, node_names

    cleaning.clean(verbose=False)  # stale state of a killed run must not disturb this one
    base: dict[str, Any] = {"run_dir": str(run_dir) if run_dir else None, "plans": []}
    cleaning.write_state(state_id, {**base, "nodes": node_names(topology), "netns": []})
    network = None
    try:
        network = build(topology, quiet=quiet)
        network.state_id = state_id
        network.state = {
            **base,
            "nodes": [h.name for h in network.net.hosts],
            "netns": [os.readlink(f"/proc/{h.pid}/ns/net") for h in network.net.hosts],
            "interfaces": sorted({i for h in network.net.hosts + network.net.switches
                                  for i in h.intfNames() if i != "lo"}),
        }  # fmt: skip
        cleaning.write_state(state_id, network.state)
        yield network
    finally:
        if network is not None:
            network.net.stop()
        cleaning.clean(verbose=False)


def execute(
    network: Any,
    spec: RunSpec,
    work: Path,
    out_dir: Path,
    backend: tuple[str, str, str],
    errors: list[Reason],
) -> tuple[RunPlan | None, dict[str, str]]:
    """Plan one run on a built network and carry it out in `work` (the run's `.partial`):
    the link's setup, an agent per node with one t0, the wait, the link's counters and
    teardown (on every exit path). Errors (and SIGINT/SIGTERM) are appended to `errors`.
    Returns (the plan, or None if planning failed; the workload's inputs).
    `backend` = (requested, used, why)."""
    requested, backend_used, why = backend
    run_plan: RunPlan | None = None
    agents: dict[str, subprocess.Popen[bytes]] = {}
    agent_logs: list[Any] = []
    inputs: dict[str, str] = {}
    try:
        ctx = RunContext(work, spec.duration_s, spec.seed, spec.base_dir, network.pairs)
        inputs = WORKLOADS[spec.workload_kind].prepare(spec.params, ctx)
        site = mininet_site(network, spec, work, backend_used, why)
        run_plan = plan(spec, site, out_dir.parent)
        run_plan.out_dir, run_plan.partial_dir = str(out_dir), str(work)
        run_plan.backend["requested"] = requested
        (work / rundir.PLAN).write_text(json.dumps(run_plan.to_json(), indent=1))
        if network.state_id:  # clean knows every plan this network ran
            network.state["plans"].append(str(out_dir / rundir.PLAN))
            network.state["plan"] = str(work / rundir.PLAN)
            cleaning.write_state(network.state_id, network.state)
        _commands(network, run_plan.link.setup)
        specs = work / ".agents"
        specs.mkdir()
        t0 = time.time() + float(os.environ.get("PRIOLAB_START_MARGIN_S", START_MARGIN_S))
        for node, np_ in run_plan.nodes.items():
            f = specs / f"{node}.json"
            f.write_text(np_.spec.model_dump_json())
            out_rel, err_rel = rundir.log_files(f"agent-{node}")
            out, err = open(work / out_rel, "wb"), open(work / err_rel, "wb")  # noqa: SIM115
            agent_logs += [out, err]
            agents[node] = network.node(node).popen(
                [sys.executable, str(AGENT), "run", str(f), "--t0", repr(t0)],
                stdout=out, stderr=err,
            )  # fmt: skip
        enders = [n for n in agents if n != run_plan.emulator]
        _wait(agents, enders, t0 + run_plan.deadline_s + AGENT_STOP_WAIT_S)
    except RunAborted as e:
        errors.append(aborted(e))
    except Exception as e:  # recorded in metadata; the run is invalid, teardown still runs
        errors.append(site_error(f"{type(e).__name__}: {e}"))
    finally:
        if errors:
            _stop_agents(agents)
        elif run_plan is not None and run_plan.emulator in agents:
            (work / rundir.STOP_FILE).touch()
            _wait(agents, [run_plan.emulator], time.time() + AGENT_STOP_WAIT_S)
            _stop_agents(agents)
        for f in agent_logs:
            f.close()
        if run_plan is not None:
            try:
                _link_stats(network, run_plan, work)
                _commands(network, run_plan.link.teardown)
            except Exception as e:  # noqa: BLE001
                errors.append(site_error(f"link reset failed: {e}"))
    for f in (work / ".agents").glob("*.json"):
        f.unlink()
    (work / ".agents").rmdir() if (work / ".agents").is_dir() else None
    return run_plan, inputs


def run_one(
    spec: RunSpec,
    out_dir: Path,
    backend_name: BackendName | None = None,
    promote: bool = True,
) -> dict[str, Any]:
    """Run one matrix point into `out_dir`; return its metadata. `promote` False: leave the
    judged run in `<out_dir>.partial` (engine/finish.py `rejudge`)."""
    from netem.probe import choose_backend, probe_kernel

    out_dir = out_dir.resolve()
    work = rundir.begin(out_dir)
    requested = backend_name or spec.link.backend
    backend_used, why = choose_backend(requested, probe_kernel())
    if backend_name:
        spec = replace(spec, link=spec.link.model_copy(update={"backend": backend_used}))
    old_handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    run_plan: RunPlan | None = None
    errors: list[Reason] = []
    inputs: dict[str, str] = {}
    try:
        with session(spec.topology, f"run-{os.getpid()}", run_dir=work) as network:
            run_plan, inputs = execute(
                network, spec, work, out_dir, (requested, backend_used, why), errors
            )
    except RunAborted as e:
        errors.append(aborted(e))
    except Exception as e:  # the network could not be built: recorded, the run is invalid
        errors.append(site_error(f"{type(e).__name__}: {e}"))
    finally:
        for s, h in old_handlers.items():
            signal.signal(s, h)

    if run_plan is None:  # failed before a plan existed: record what is known
        run_plan = _empty_plan(spec, out_dir, work, requested, backend_used, why)
    meta = finish(work, run_plan, site_errors=errors, extra={"inputs": inputs}, promote=promote)
    abort = first_abort(errors)
    if abort is not None:
        raise KeyboardInterrupt(abort.detail)
    return meta


def _empty_plan(
    spec: RunSpec,
    out_dir: Path,
    work: Path,
    requested: str,
    used: str,
    why: str,
    site: str = "mininet",
) -> RunPlan:
    """The plan of a run that failed before it had one: what is known, and no nodes."""
    return RunPlan(
        site=site, rel_dir=str(spec.rel_dir), out_dir=str(out_dir), partial_dir=str(work),
        run=spec.to_json(), backend={"requested": requested, "used": used, "reason": why},
        shaper="router", python=None, duration_s=spec.duration_s, deadline_s=0.0, nodes={},
        transfers=[], inputs=[], interfaces={}, emulator=None,
        link=LinkPlan(applied={"backend": used if site != "sim" else "sim"}),
    )  # fmt: skip
