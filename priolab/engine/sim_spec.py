"""The sim site's planning half (pure): what a sim run cannot do, the site it plans against,
and the run plan turned into the SPEC.json `priolab-sim run` reads.

A sim run is one process, `priolab-sim` (endpoints/sim): both endpoints and both directions
of the link (linkem's `Direction` core, built from the same linkem.json the userspace backend
writes) on one virtual clock. The engine plans it exactly as a Mininet run (engine/plan.py,
the same workload argv lists and start offsets); this module only turns that plan into the
contract's SPEC.json (notes/sim-contract.md): per node its address and side of the link, per
process its argv (argv[0] = the program's name, which priolab-sim looks up in its registry),
start offset, expected exit codes and log files, all paths absolute; with `capture:`, a
pcap per endpoint node (`capture-<node>.pcap`, as tcpdump's on the real sites).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ground import rundir
from ground.errors import UserError
from priolab.engine.plan import PlanError, RunPlan, Site, SiteNode
from priolab.scenario import ReaderStall, RunSpec, SimOptions, Topology
from priolab.workloads import WORKLOADS
from priolab.workloads.base import Pair

SIM_EPOCH_UNIX_NS = 1_767_225_600_000_000_000
"""Virtual t = 0 of every sim run (2026-01-01T00:00:00Z): a fixed epoch, so that the wall-clock
times the endpoints log are the same in two runs of one scenario and seed."""
STATS_INTERVAL_MS = 1000
"""The link's stats lines, as real linkem writes them (analysis/link.py reads per second)."""
LINK_CONFIG = rundir.LINKEM_CONFIG
LINK_STATS = rundir.LINK_STATS
BACKEND_REASON = "sim site: linkem's Direction core (the userspace backend's) in virtual time"
GUEST_IP, HOST_IP = "10.0.0.1", "10.0.0.2"
"""The access topology's addresses (topologies/access.py; a test checks they agree)."""


def sender_ip(i: int) -> str:
    return f"10.0.1.{i}"  # topologies/dumbbell.py's (a test checks they agree)


def receiver_ip(i: int) -> str:
    return f"10.0.2.{i}"


class SimPlanError(PlanError):
    """What a sim run cannot do, as (scenario key, why) pairs; raised before anything runs."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{k}: {m}" for k, m in problems))


def pairs(topology: Topology) -> tuple[Pair, ...]:
    """The guest/host pairs of a topology, with the Mininet topologies' names and addresses."""
    if topology.kind == "access":
        return (Pair("guest", "host", GUEST_IP, HOST_IP),)
    return tuple(Pair(f"snd{i}", f"rcv{i}", sender_ip(i), receiver_ip(i))
                 for i in range(1, topology.pairs + 1))  # fmt: skip


def sim_problems(spec: RunSpec, backend: str | None = None) -> list[tuple[str, str]]:
    """Everything in a run that the sim site cannot do: (scenario key, why). `backend` is the
    command line's --backend, if given."""
    out: list[tuple[str, str]] = []
    for key, value in (("--backend", backend), ("link.backend", spec.link.backend)):
        if value not in (None, "auto", "userspace"):
            out.append((key, f"{value!r}: the sim site's link is linkem's core (the userspace "
                             "backend's model), not tc; allowed: auto, userspace"))  # fmt: skip
    workload = WORKLOADS[spec.workload_kind]
    where = f"settings.{spec.setting} + schemes.{spec.scheme} + speeds.{spec.speed} → workload"
    check = getattr(workload, "sim_problems", None)
    if check is None:
        programs = ", ".join(sorted({Path(t[0]).name for t in workload.tools()}))
        out.append(("workload.kind", f"{spec.workload_kind!r} runs programs priolab-sim cannot "
                    f"host ({programs}): the sim site runs only the Rust endpoints linked into "
                    "it"))  # fmt: skip
    else:
        out += [(f"{where}.{k}", m) for k, m in check(spec.params)]
    return out


def check(spec: RunSpec, backend: str | None = None) -> None:
    """SimPlanError naming every key a sim run of `spec` cannot honour."""
    problems = sim_problems(spec, backend)
    if problems:
        raise SimPlanError(problems)


class SimSiteError(UserError):
    """A scenario's runs ask for what the sim site cannot do (file, key, why)."""

    title = "the sim site cannot run this"


def sim_check(runs: list[RunSpec], file: Path | str, backend: str | None = None) -> None:
    """SimSiteError naming the scenario file and every key its runs ask for that the sim site
    cannot do, each once (the workflow checks a whole scenario before any job starts)."""
    problems = list(dict.fromkeys(p for r in runs for p in sim_problems(r, backend)))
    if problems:
        raise SimSiteError(file, problems)


def sim_site(spec: RunSpec, run_dir: Path) -> Site:
    """The site a sim run plans against: the topology's endpoints, no emulator node (the link
    is inside priolab-sim), one file system, no interfaces."""
    ps = pairs(spec.topology)
    nodes = {k: SiteNode(key=k, name=k, run_dir=str(run_dir), binaries={"python": sys.executable},
                         registry_dir="")
             for p in ps for k in (p.guest, p.host)}  # fmt: skip
    return Site(
        kind="sim", backend="userspace", backend_reason=BACKEND_REASON,
        requested_backend=spec.link.backend, shaper="router", pairs=ps, nodes=nodes,
        emulator=None, emu_ifaces=("", ""), interfaces={}, shared_fs=True,
        topology=spec.topology.kind,
    )  # fmt: skip


def _node(addr: str, side: str, recv: int | None, stall: ReaderStall | None) -> dict[str, Any]:
    """One node of the SPEC; `reader_stall` (beyond the contract's example) only when set."""
    node: dict[str, Any] = {"addr": addr, "side": side, "recv_buffer_bytes": recv}
    if stall is not None:
        node["reader_stall"] = {"every_ms": stall.every_ms, "for_ms": stall.for_ms}
    return node


def sim_spec(
    run_plan: RunPlan, site: Site, run_dir: Path, options: SimOptions | None = None
) -> dict[str, Any]:
    """The SPEC.json of one planned sim run (notes/sim-contract.md). Processes keep the plan's
    order, stably sorted by start offset. A plan's `wait_for_file` has no place in it: every
    Rust endpoint waits for its server's certificate itself (quicsetup::connect). `options`:
    the scenario's `sim` key (modelled receive buffers and reader stalls)."""
    rd = Path(run_dir)
    options = options or SimOptions()
    recv, stall = options.recv_buffer_bytes, options.reader_stall
    nodes: dict[str, dict[str, Any]] = {}
    for p in site.pairs:
        nodes[p.guest] = _node(p.guest_ip, "a", recv.guest, stall.guest)
        nodes[p.host] = _node(p.host_ip, "b", recv.host, stall.host)
    processes: list[dict[str, Any]] = []
    term_wait_s = 0.0
    for node, np_ in run_plan.nodes.items():
        ns = np_.spec
        term_wait_s = max(term_wait_s, ns.term_wait_s)
        for proc in ns.processes:
            if proc.env:
                raise SimPlanError([(f"workload (process {proc.name})", "sets environment "
                                     f"variables {sorted(proc.env)}: the endpoints of a sim "
                                     "run share one process and its one environment")])  # fmt: skip
            processes.append({
                "node": node, "name": proc.name,
                "argv": [Path(proc.argv[0]).name, *proc.argv[1:]],
                "cwd": str(rd), "start_at_s": proc.start_at_s, "runs_to_end": proc.runs_to_end,
                "ok_exit_codes": list(proc.ok_exit_codes),
                "stdout": str(rd / proc.stdout), "stderr": str(rd / proc.stderr),
            })  # fmt: skip
    processes.sort(key=lambda x: x["start_at_s"])
    capture = run_plan.run.get("capture")
    extra: dict[str, Any] = {}
    if capture is not None:  # beyond the contract's example: what tcpdump would capture
        extra["capture"] = {
            "snaplen_bytes": capture["snaplen_bytes"],
            "files": {n: str(rd / rundir.capture(n)) for n in nodes},
        }
    return {
        "seed": run_plan.run["seed"],
        "epoch_unix_ns": SIM_EPOCH_UNIX_NS,
        "deadline_s": run_plan.deadline_s,
        "term_wait_s": term_wait_s,
        "link": {
            "config": str(rd / LINK_CONFIG),
            "stats": str(rd / LINK_STATS),
            "stats_interval_ms": STATS_INTERVAL_MS,
            # beyond the contract's example: linkem's per-packet log (link.packet_log), or null
            "packet_log": str(rd / rundir.PACKET_LOG)
            if run_plan.run["link"]["packet_log"]
            else None,
        },
        "nodes": nodes,
        "processes": processes,
        "report": str(rd / rundir.SIM_REPORT),
        **extra,
    }
