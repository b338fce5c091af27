"""plan(run, site) → RunPlan: everything every node does for one matrix point. Pure.

A site (priolab/engine/sites/: Mininet hosts on this machine, or testbed nodes reached by
Ansible) describes its nodes: where each writes the run, where the binaries are, which
interfaces the emulated link sits between. The planner turns a `RunSpec` into one
`NodePlan` per node — the workload's argv lists (`Workload.plan`), the link's processes
(linkem, the tc trace replayer), start offsets, wait-files, environment, outputs — plus the
link's setup/teardown/stats commands (netem/tc.py's argv lists) and what the judge needs.
Backends only plan: nothing here runs a command. The plan is saved as `plan.json` in the
run folder; the node agent (engine/agent.py) executes one node's share of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ground import rundir
from netem.linkem_config import linkem_config
from netem.resolve import resolve_link
from netem.tc import (
    BRIDGE_NAME,
    TcBackend,
    replay_schedule,
    teardown_argv,
    teardown_police_argv,
)
from netem.trace_lead import lead_link, lead_points
from priolab.scenario import RunSpec
from priolab.workloads import WORKLOADS
from priolab.workloads.base import Pair, RunContext

GRACE_S = 15.0
"""How long after the duration processes may take to finish by themselves."""
TERM_WAIT_S = 5.0
"""SIGTERM → SIGKILL."""
LINK_SETTLE_S = 1.0
"""With linkem (or a packet capture), workload processes start this long after t0, so the
emulator is forwarding (tcpdump capturing) first (assumption: linkem binds two AF_PACKET
sockets, tcpdump opens one, in well under a second; the judge checks linkem's ready time)."""
CAPTURE_PREFIX = rundir.CAPTURE_PREFIX
"""Packet captures are `capture-<node>.pcap` in the run folder."""
STOP_FILE = rundir.STOP_FILE
"""Created in a node's run folder when the run is over (nodes with only servers)."""
RUN_SENTINEL = Path("/@priolab-run@")
"""The run folder the workload plans against; replaced per node by its own run folder."""


class PlanError(ValueError):
    """A scenario this site cannot run; the message names the key and why."""


@dataclass(frozen=True)
class SiteNode:
    """One node of a site."""

    key: str  # the node's name in the plan (guest, host, router, emu, snd1, ...)
    name: str  # its host name (inventory) or Mininet node name
    run_dir: str  # absolute folder this node writes the run into
    binaries: dict[str, str]  # program → path on the node (linkem, python, agent, ...)
    registry_dir: str  # where the agent lists what it started (for clean)
    archive: str | None = None  # pack the outputs here (testbed: fetched by Ansible)
    stop_file: bool = False  # a node with only servers stops when the run is over
    inputs_dir: str | None = None  # where input files are copied (sites without shared fs)
    bin_dir: str | None = None  # where a workload's own programs are installed (else: as is)
    iface: str | None = None  # an endpoint's interface on the emulated link (packet capture)

    def program(self, name: str, local: str) -> str:
        """Where a program the plan names by its local path is on this node."""
        if name in self.binaries:
            return self.binaries[name]
        return f"{self.bin_dir}/{name}" if self.bin_dir else local


@dataclass(frozen=True)
class Site:
    """Where a run happens: its nodes and how the emulated link is placed."""

    kind: Literal["mininet", "testbed", "sim"]  # sim: one priolab-sim process (sites/sim.py)
    backend: Literal["tc", "userspace", "bridge"]  # bridge: no emulation (the direct path)
    backend_reason: str
    requested_backend: str
    shaper: Literal["router", "endpoints"]
    pairs: tuple[Pair, ...]  # the workload's guest/host pairs (node keys and addresses)
    nodes: dict[str, SiteNode]
    emulator: str | None  # key of the node between the pairs (shaper router)
    emu_ifaces: tuple[str, str]  # (facing the guests, facing the hosts) or endpoint ifaces
    interfaces: dict[str, list[str]]  # host name → test interfaces, for metadata
    shared_fs: bool  # every node sees one file system (no transfers, inputs, archives)
    topology: str = "access"
    extra: dict[str, Any] = field(default_factory=dict)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProcessPlan(_Model):
    name: str
    argv: list[str]
    start_at_s: float
    runs_to_end: bool
    ok_exit_codes: list[int]
    stdout: str
    stderr: str
    env: dict[str, str] = Field(default_factory=dict)
    wait_for_file: str | None = None
    ready_file: str | None = None
    link: bool = False  # part of the link emulation, not the workload


class NodeSpec(_Model):
    """One node's share: what the agent executes (engine/agent.py reads this JSON)."""

    node: str
    run_dir: str
    report: str  # the node's report, relative to run_dir (rundir.node_report)
    deadline_s: float
    term_wait_s: float
    stop_file: str | None
    processes: list[ProcessPlan]
    tools: list[list[str]]
    files: dict[str, Any]
    outputs: list[str]
    archive: str | None
    registry_dir: str
    check_clock: bool  # separate machines: report chrony's offset (the judge checks it)


class NodePlan(_Model):
    name: str
    run_dir: str
    spec: NodeSpec


class Command(_Model):
    """An argv list a site runs on a node for the link (`check`: a failure is an error)."""

    argv: list[str]
    check: bool


class StatsCommand(_Model):
    """tc's counters of one device, read before the link is reset."""

    dev: str
    argv: list[str]


class LinkPlan(_Model):
    """The link's commands per node key, and what was applied (the backend's own record:
    commands, linkem's config, resolved numbers; metadata.json `link_applied`)."""

    setup: dict[str, list[Command]] = Field(default_factory=dict)
    teardown: dict[str, list[Command]] = Field(default_factory=dict)
    stats: dict[str, list[StatsCommand]] = Field(default_factory=dict)
    applied: dict[str, Any]

    @property
    def backend(self) -> str:
        return str(self.applied["backend"])


class RunPlan(_Model):
    """Everything every node does for one run: written as plan.json, read back by the judge
    (engine/finish.py) and by a wrapping site (`rejudge`), typed all the way."""

    site: str
    rel_dir: str
    out_dir: str
    partial_dir: str
    run: dict[str, Any]  # the RunSpec as JSON (scenario.RunSpec.to_json)
    backend: dict[str, str]  # requested, used, reason
    shaper: str
    python: str | None
    duration_s: float
    deadline_s: float
    link: LinkPlan
    nodes: dict[str, NodePlan]
    transfers: list[dict[str, str]]
    inputs: list[dict[str, str]]
    interfaces: dict[str, list[str]]
    emulator: str | None
    prepared_inputs: dict[str, str] | None = None
    """(testbed) what the workload's prepare() returned on the controller."""

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=False)

    @classmethod
    def read(cls, path: Path) -> RunPlan:
        return cls.model_validate_json(path.read_text())

    def processes(self) -> dict[str, ProcessPlan]:
        """Every planned process by name."""
        return {p.name: p for n in self.nodes.values() for p in n.spec.processes}

    @property
    def workload_kind(self) -> str:
        return str(self.run["workload"]["kind"])


def _map_arg(arg: str, run_dir: str) -> str:
    s = str(RUN_SENTINEL)
    return run_dir + arg[len(s) :] if arg == s or arg.startswith(s + "/") else arg


def _first_component(arg: str) -> str | None:
    s = str(RUN_SENTINEL) + "/"
    return arg[len(s) :].split("/", 1)[0] if arg.startswith(s) else None


def _link_process(name: str, argv: list[str], **kw: Any) -> ProcessPlan:
    out, err = rundir.log_files(name)
    return ProcessPlan(name=name, argv=argv, start_at_s=0.0, runs_to_end=False, ok_exit_codes=[0],
                       stdout=out, stderr=err, link=True, **kw)  # fmt: skip


def _bridge_argv(up_in: str, up_out: str) -> list[list[str]]:
    """A plain Linux bridge joining the emulator node's two interfaces."""
    return [
        ["ip", "link", "add", "name", BRIDGE_NAME, "type", "bridge"],
        ["ip", "link", "set", up_in, "master", BRIDGE_NAME],
        ["ip", "link", "set", up_out, "master", BRIDGE_NAME],
        ["ip", "link", "set", BRIDGE_NAME, "up"],
    ]


def _link_plan(spec: RunSpec, site: Site, lead_ms: int) -> dict[str, Any]:
    """The link part of a run: setup/teardown/stats argv lists per node, and link processes
    (linkem; the tc trace replayer) with the files they read. `lead_ms`: how long before the
    endpoints the link starts; a trace starts that much later than the link (netem.trace_lead),
    so the endpoints meet its time 0 on every site."""
    link: dict[str, Any] = {"setup": {}, "teardown": {}, "stats": {}, "processes": {},
                            "files": {}, "outputs": {}}  # fmt: skip
    up_in, up_out = site.emu_ifaces
    if site.kind == "sim":  # linkem's Direction core inside priolab-sim: no node, no process
        resolved = resolve_link(spec.link, spec.base_dir)
        link["applied"] = {"backend": "sim", "core": "linkem::Direction",
                           "config": linkem_config(resolved, spec.seed),
                           "resolved": resolved.to_json()}  # fmt: skip
        return link
    if site.backend == "bridge":  # the direct path (calibration's reference): no emulation
        if site.emulator is None:
            raise PlanError("link.backend: 'bridge' needs a node between guest and host")
        bridge = _bridge_argv(up_in, up_out)
        link["setup"][site.emulator] = [{"argv": a, "check": True} for a in bridge]
        link["teardown"][site.emulator] = [
            {"argv": ["ip", "link", "del", BRIDGE_NAME], "check": False}
        ]
        link["applied"] = {"backend": "bridge", "commands": bridge,
                           "node": site.nodes[site.emulator].name}  # fmt: skip
        return link
    if site.backend == "userspace":
        if site.emulator is None:
            raise PlanError("link.backend: 'userspace' (linkem) is a bump in the wire: it needs "
                            "a node between guest and host")  # fmt: skip
        emu = site.nodes[site.emulator]
        resolved = resolve_link(spec.link, spec.base_dir)
        config = linkem_config(lead_link(resolved, lead_ms), spec.seed)
        rd = emu.run_dir
        argv = [
            emu.binaries["linkem"],
            "--iface-a", up_in,
            "--iface-b", up_out,
            "--config", f"{rd}/{rundir.LINKEM_CONFIG}",
            "--stats", f"{rd}/{rundir.LINK_STATS}",
            "--ready-file", f"{rd}/{rundir.LINKEM_READY}",
        ]  # fmt: skip
        lk_out, lk_err = rundir.LINKEM_STDOUT, rundir.LINKEM_STDERR
        outputs = [rundir.LINKEM_CONFIG, rundir.LINK_STATS, lk_err]
        if spec.link.packet_log:  # per-packet log (analysis.microbursts)
            argv += ["--packet-log", f"{rd}/{rundir.PACKET_LOG}"]
            outputs.append(rundir.PACKET_LOG)
        lk = _link_process("linkem", argv, ready_file=f"{rd}/{rundir.LINKEM_READY}")
        lk.stdout, lk.stderr = lk_out, lk_err
        link["processes"][emu.key] = [lk]
        link["files"][emu.key] = {rundir.LINKEM_CONFIG: config}
        link["outputs"][emu.key] = outputs
        link["applied"] = {"backend": "userspace", "argv": argv, "config": config,
                           "resolved": resolved.to_json(), "trace_lead_ms": lead_ms,
                           "node": emu.name}  # fmt: skip
        return link
    # tc: netem.tc computes the argv lists; the uplink goes on the egress of `up_out`.
    plan = TcBackend().plan(up_in, up_out, spec.link, base_dir=spec.base_dir, seed=spec.seed)
    if site.shaper == "router":
        assert site.emulator is not None
        where = {"uplink": site.emulator, "downlink": site.emulator}
    else:  # uplink leaves the guest, downlink leaves the host
        where = {"uplink": site.pairs[0].guest, "downlink": site.pairs[0].host}
    commands: list[list[str]] = []
    for key in set(where.values()):
        link["setup"][key], link["teardown"][key], link["stats"][key] = [], [], []
    if site.shaper == "router":
        assert site.emulator is not None
        bridge = _bridge_argv(up_in, up_out)
        link["setup"][site.emulator] += [{"argv": a, "check": True} for a in bridge]
        commands += bridge
    for key in ("uplink", "downlink"):
        node, dev = where[key], plan[key]["dev"]
        link["setup"][node].append({"argv": teardown_argv(dev), "check": False})
        link["setup"][node].append({"argv": teardown_police_argv(dev), "check": False})
        link["setup"][node] += [{"argv": a, "check": True} for a in plan[key]["commands"]]
        commands += plan[key]["commands"]
        link["stats"][node].append({"dev": dev, "argv": ["tc", "-s", "-j", "qdisc", "show",
                                                          "dev", dev]})  # fmt: skip
        link["teardown"][node].append({"argv": teardown_argv(dev), "check": False})
        link["teardown"][node].append({"argv": teardown_police_argv(dev), "check": False})
        trace = plan[key]["trace"]
        if trace is not None:  # the tc trace replayer: a process of the shaping node
            trace_points, trace_period_ms, loop = trace
            points, period_ms = lead_points(trace_points, trace_period_ms, loop, lead_ms)
            sn = site.nodes[node]
            fname = f"{rundir.tc_replay(key)}.json"
            schedule = replay_schedule(dev, points, period_ms, loop)
            argv = [sn.binaries["python"], sn.binaries["replay"], f"{sn.run_dir}/{fname}"]
            replayer = _link_process(rundir.tc_replay(key), argv)
            link["processes"].setdefault(node, []).append(replayer)
            link["files"].setdefault(node, {})[fname] = schedule
            link["outputs"].setdefault(node, []).append(fname)
    if site.shaper == "router":
        assert site.emulator is not None
        link["teardown"][site.emulator].append(
            {"argv": ["ip", "link", "del", BRIDGE_NAME], "check": False}
        )
    link["applied"] = {"backend": "tc", "commands": commands,
                       "resolved": plan["resolved"].to_json(), "seed_uplink": spec.seed,
                       "seed_downlink": spec.seed + 1, "notes": plan["notes"],
                       "trace_lead_ms": lead_ms,
                       "nodes": {k: site.nodes[n].name for k, n in where.items()}}  # fmt: skip
    return link


def _capture_plan(link: dict[str, Any], site: Site, snaplen_bytes: int) -> None:
    """tcpdump on the interface each endpoint has on the emulated link: every packet of both
    directions, before the link where it leaves, after it where it arrives. (On the emulator
    node's own interfaces, the packets linkem sends bypass the kernel's taps.) One pcap per
    endpoint in the run folder (`capture-<node>.pcap`), beside the TLS key log."""
    for key in [n for p in site.pairs for n in (p.guest, p.host)]:
        node = site.nodes[key]
        if node.iface is None:
            raise PlanError(f"capture: the site does not say which interface {key} uses")
        pcap = rundir.capture(key)
        argv = ["tcpdump", "-i", node.iface, "-s", str(snaplen_bytes), "-n", "-U", "-Z", "root",
                "-w", f"{node.run_dir}/{pcap}"]  # fmt: skip
        p = _link_process(f"tcpdump-{key}", argv)
        link["processes"].setdefault(key, []).append(p)
        link["outputs"].setdefault(key, []).append(pcap)


def plan(spec: RunSpec, site: Site, results: Path) -> RunPlan:
    """Everything the nodes of `site` do for one matrix point (pure: no file written)."""
    if spec.topology.kind != site.topology:
        raise PlanError(
            f"topology.kind: this site runs the {site.topology} topology, not "
            f"{spec.topology.kind!r}"
        )
    if spec.link.backend not in ("auto", site.backend):
        raise PlanError(
            f"link.backend: the scenario asks for {spec.link.backend!r} but the site runs "
            f"{site.backend!r} ({site.backend_reason})"
        )
    rel = spec.rel_dir
    workload = WORKLOADS[spec.workload_kind]
    ctx = RunContext(RUN_SENTINEL, spec.duration_s, spec.seed, spec.base_dir, site.pairs,
                     tls_keylog=spec.capture is not None, qlog=spec.qlog)  # fmt: skip
    # (the sim's link exists before its first process starts: nothing to settle)
    settle = site.kind != "sim" and (site.backend == "userspace" or spec.capture is not None)
    offset = LINK_SETTLE_S if settle else 0.0
    link = _link_plan(spec, site, lead_ms=round(offset * 1000))
    if spec.capture is not None and site.kind != "sim":  # the sim captures itself (sim_spec)
        _capture_plan(link, site, spec.capture.snaplen_bytes)
    keys = list(site.nodes)
    procs: dict[str, list[ProcessPlan]] = {k: list(link["processes"].get(k, [])) for k in keys}
    outputs: dict[str, list[str]] = {k: list(link["outputs"].get(k, [])) for k in keys}
    for k in keys:
        for p in procs[k]:
            outputs[k] += [p.stdout, p.stderr]
    owner: dict[str, str] = {}  # first component of a run-dir path → the node that writes it
    transfers: list[dict[str, str]] = []
    inputs: list[dict[str, str]] = []
    local = {path: name for name, path in workload.binaries().items()}
    for ps in workload.plan(spec.params, ctx):
        if ps.node not in site.nodes:
            raise PlanError(f"workload {spec.workload_kind}: unknown node {ps.node!r}")
        node = site.nodes[ps.node]
        rd = node.run_dir
        offset += ps.start_delay_s
        argv = [_map_arg(a, rd) for a in ps.argv]
        if ps.argv[0] in local:
            argv[0] = node.program(local[ps.argv[0]], ps.argv[0])
        for i, a in enumerate(ps.argv):
            comp = _first_component(a)
            if comp is not None:
                owner.setdefault(comp, ps.node)
                if owner[comp] == ps.node and comp not in outputs[ps.node]:
                    outputs[ps.node].append(comp)
            elif i > 0 and a.startswith("/") and Path(a).is_file() and node.inputs_dir:
                dest = f"{node.inputs_dir}/{Path(a).name}"
                inputs.append({"node": ps.node, "src": a, "dest": dest})
                argv[i] = dest
        wait = None
        if ps.wait_for_file is not None:
            wait = _map_arg(str(ps.wait_for_file), rd)
            comp = _first_component(str(ps.wait_for_file))
            src_node = owner.get(comp or "", ps.node)
            if src_node != ps.node and not site.shared_fs:
                src = _map_arg(str(ps.wait_for_file), site.nodes[src_node].run_dir)
                transfers.append({"from": src_node, "src": src, "to": ps.node, "dest": wait})
                if ps.waits_itself:  # copied while it runs; the agent starts it on time
                    wait = None
        stdout, stderr = rundir.log_files(ps.name)
        outputs[ps.node] += [stdout, stderr]
        procs[ps.node].append(
            ProcessPlan(name=ps.name, argv=argv, start_at_s=round(offset, 3),
                        runs_to_end=ps.runs_to_end, ok_exit_codes=list(ps.ok_exit_codes),
                        stdout=stdout, stderr=stderr, env=dict(ps.env), wait_for_file=wait)
        )  # fmt: skip
    deadline_s = offset + spec.duration_s + GRACE_S
    workload_nodes = {n for p in site.pairs for n in (p.guest, p.host)}
    nodes: dict[str, NodePlan] = {}
    for k, node in site.nodes.items():
        if k in workload_nodes:
            tools = [[node.program(local[a], a) if a in local else a for a in t]
                     for t in workload.tools()]  # fmt: skip
        else:
            tools = [["tc", "-V"], ["ethtool", "--version"]]
        spec_json = NodeSpec(
            node=k, run_dir=node.run_dir, report=rundir.node_report(k), deadline_s=deadline_s,
            term_wait_s=TERM_WAIT_S,
            stop_file=f"{node.run_dir}/{STOP_FILE}" if node.stop_file else None,
            processes=procs[k], tools=tools, files=link["files"].get(k, {}),
            outputs=outputs[k], archive=node.archive, registry_dir=node.registry_dir,
            check_clock=not site.shared_fs,
        )  # fmt: skip
        nodes[k] = NodePlan(name=node.name, run_dir=node.run_dir, spec=spec_json)
    out_dir = (results / rel).resolve()
    python = next(iter(site.nodes.values())).binaries["python"]
    return RunPlan(
        site=site.kind,
        rel_dir=str(rel),
        out_dir=str(out_dir),
        partial_dir=str(rundir.partial(out_dir)),
        run=spec.to_json(),
        backend={
            "requested": site.requested_backend,
            "used": site.backend,
            "reason": site.backend_reason,
        },  # fmt: skip
        shaper=site.shaper,
        python=python,
        duration_s=spec.duration_s,
        deadline_s=deadline_s,
        link=LinkPlan.model_validate(
            {k: link[k] for k in ("setup", "teardown", "stats", "applied")}
        ),  # fmt: skip
        nodes=nodes,
        transfers=transfers,
        inputs=inputs,
        interfaces=site.interfaces,
        emulator=site.emulator,
    )
