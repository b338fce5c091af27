"""Physical testbed glue: the controller side of the Ansible roles in ansible/.

`priolab testbed plan` turns a scenario's matrix points into everything the nodes execute,
computed here from the same models as a Mininet run — the workload's argv lists
(`Workload.plan`), the tc argv lists (`netem.tc`) or the linkem config
(`netem.linkem_config`) — so the Ansible roles only copy, run and fetch; the link model is
never re-implemented in YAML. `priolab testbed finish` turns what the nodes sent back into
the run directory a Mininet run writes (`logs/`, link files, `metadata.json` with the same
keys and validity rules as priolab/run.py), then renames `<dir>.partial` to `<dir>`.

The nodes: a guest and a host (the endpoints of the access topology) and optionally a
router between them. `shaper: router` shapes both directions on the router (tc on its two
interfaces, bridged; or linkem between them); `shaper: endpoints` shapes each direction on
the egress of the endpoint it leaves (uplink on the guest, downlink on the host; tc only).
"""

from __future__ import annotations

import argparse
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from netem.linkem_config import linkem_config
from netem.resolve import resolve_link
from netem.tc import BRIDGE_NAME, TcBackend, teardown_argv
from netem.userspace import read_stats, totals_from_finals
from priolab import provenance
from priolab.cpu import summarise
from priolab.engine import rundir
from priolab.errors import ScenarioError, problems_from
from priolab.run import GRACE_S, TERM_WAIT_S, judge
from priolab.scenario import RunSpec, expand, load
from priolab.workloads import WORKLOADS
from priolab.workloads.base import Pair, RunContext
from priolab.workloads.rise import rise_binary

RUN_SENTINEL = Path("/@priolab-run@")
"""The run directory the workload plans against; replaced per node by its own run dir."""
LINK_SETTLE_S = 1.0
"""Workload processes start this long after t0, so linkem on the router is forwarding first
(assumption: linkem binds two AF_PACKET sockets in well under a second)."""
LATE_START_LIMIT_S = 1.0
"""A process that started more than this after its planned time makes the run invalid."""
CLOCK_OFFSET_LIMIT_S = 0.001
"""|chrony system offset| above this on any node makes the run invalid (assumption: one-way
delays are analysed at ms resolution)."""
PLAN_FILE = rundir.PLAN


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EndpointNode(Strict):
    name: str = Field(description="inventory hostname")
    test_ip: str = Field(description="address on the test network")
    iface: str = Field(description="test-network interface")
    run_root: str = Field(description="absolute directory for run data on the node")
    bin_dir: str = Field(description="where the endpoints role installed the binaries")


class RouterNode(Strict):
    name: str
    iface_guest: str = Field(description="interface facing the guest")
    iface_host: str = Field(description="interface facing the host")
    run_root: str
    bin_dir: str


class Testbed(Strict):
    """The testbed as the inventory describes it (written by ansible/run.yml)."""

    shaper: Literal["router", "endpoints"]
    backend: Literal["tc", "userspace"]
    python: str = "/usr/bin/python3"
    guest: EndpointNode
    host: EndpointNode
    router: RouterNode | None = None


def load_testbed(path: Path) -> Testbed:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ScenarioError(path, [("(file)", f"cannot read testbed description: {e}")]) from e
    try:
        tb = Testbed.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(path, problems_from(e)) from e
    if tb.shaper == "router" and tb.router is None:
        raise ScenarioError(path, [("router", "shaper 'router' needs a host in group router")])
    if tb.shaper == "endpoints" and tb.backend == "userspace":
        raise ScenarioError(
            path,
            [("backend", "'userspace' (linkem) is a bump in the wire: it needs shaper 'router'")],
        )
    return tb


class TestbedError(ValueError):
    """A scenario that this testbed cannot run; the message says why."""


# --------------------------------------------------------------------------- plan


def _node_dirs(tb: Testbed, rel: Path) -> dict[str, str]:
    out = {"guest": f"{tb.guest.run_root}/{rel}", "host": f"{tb.host.run_root}/{rel}"}
    if tb.router is not None and tb.shaper == "router":
        out["router"] = f"{tb.router.run_root}/{rel}"
    return out


def _bin_dir(tb: Testbed, role: str) -> str:
    node = {"guest": tb.guest, "host": tb.host, "router": tb.router}[role]
    assert node is not None
    return node.bin_dir


def _map_arg(arg: str, run_dir: str) -> str:
    s = str(RUN_SENTINEL)
    return run_dir + arg[len(s) :] if arg == s or arg.startswith(s + "/") else arg


def _first_component(arg: str) -> str | None:
    s = str(RUN_SENTINEL) + "/"
    return arg[len(s) :].split("/", 1)[0] if arg.startswith(s) else None


def _link_plan(spec: RunSpec, tb: Testbed, dirs: dict[str, str]) -> dict[str, Any]:
    """The link part of a run: setup/teardown/stats argv lists per node, or linkem."""
    link: dict[str, Any] = {"setup": {}, "teardown": {}, "stats": {}, "processes": {}}
    if tb.backend == "userspace":
        assert tb.router is not None
        resolved = resolve_link(spec.link, spec.base_dir)
        config = linkem_config(resolved, spec.seed)
        rd = dirs["router"]
        argv = [
            f"{tb.router.bin_dir}/linkem",
            "--iface-a", tb.router.iface_guest,
            "--iface-b", tb.router.iface_host,
            "--config", f"{rd}/linkem.json",
            "--stats", f"{rd}/linkem-stats.jsonl",
            "--ready-file", f"{rd}/linkem.ready",
        ]  # fmt: skip
        link["processes"]["router"] = [
            {"name": "linkem", "argv": argv, "start_at_s": 0.0, "runs_to_end": False,
             "ok_exit_codes": [0], "ready_file": f"{rd}/linkem.ready", "link": True,
             "stdout": "linkem.stdout", "stderr": "linkem.stderr"}
        ]  # fmt: skip
        link["files"] = {"router": {"linkem.json": config}}
        link["outputs"] = {"router": ["linkem.json", "linkem-stats.jsonl", "linkem.stderr"]}
        link["applied"] = {"backend": "userspace", "argv": argv, "config": config,
                           "resolved": resolved.to_json(), "node": tb.router.name}  # fmt: skip
        return link
    # tc: netem.tc computes the argv lists; uplink goes on the egress of `iface_up_out`.
    if tb.shaper == "router":
        assert tb.router is not None
        up_in, up_out = tb.router.iface_guest, tb.router.iface_host
    else:  # uplink leaves the guest, downlink leaves the host
        up_in, up_out = tb.host.iface, tb.guest.iface
    plan = TcBackend().plan(up_in, up_out, spec.link, base_dir=spec.base_dir, seed=spec.seed)
    for key in ("uplink", "downlink"):
        if plan[key]["trace"] is not None:
            raise TestbedError(
                f"link.{key}.trace: trace-driven rates need the tc trace replayer, which the "
                "testbed roles do not run yet; use priolab_link_backend: userspace"
            )
    where = {"uplink": "router", "downlink": "router"}
    if tb.shaper == "endpoints":
        where = {"uplink": "guest", "downlink": "host"}
    commands: list[list[str]] = []
    for role in set(where.values()):
        link["setup"][role], link["teardown"][role], link["stats"][role] = [], [], []
    if tb.shaper == "router":
        bridge = [
            ["ip", "link", "add", "name", BRIDGE_NAME, "type", "bridge"],
            ["ip", "link", "set", up_in, "master", BRIDGE_NAME],
            ["ip", "link", "set", up_out, "master", BRIDGE_NAME],
            ["ip", "link", "set", BRIDGE_NAME, "up"],
        ]
        link["setup"]["router"] += [{"argv": a, "check": True} for a in bridge]
        commands += bridge
    for key in ("uplink", "downlink"):
        role, dev = where[key], plan[key]["dev"]
        link["setup"][role].append({"argv": teardown_argv(dev), "check": False})
        link["setup"][role] += [{"argv": a, "check": True} for a in plan[key]["commands"]]
        commands += plan[key]["commands"]
        link["stats"][role].append({"dev": dev, "argv": ["tc", "-s", "-j", "qdisc", "show",
                                                          "dev", dev]})  # fmt: skip
        link["teardown"][role].append({"argv": teardown_argv(dev), "check": False})
    if tb.shaper == "router":
        link["teardown"]["router"].append(
            {"argv": ["ip", "link", "del", BRIDGE_NAME], "check": False}
        )
    link["applied"] = {"backend": "tc", "commands": commands,
                       "resolved": plan["resolved"].to_json(), "seed_uplink": spec.seed,
                       "seed_downlink": spec.seed + 1, "notes": plan["notes"],
                       "nodes": {k: getattr(tb, r).name for k, r in where.items()}}  # fmt: skip
    return link


def plan_run(spec: RunSpec, tb: Testbed, results: Path) -> dict[str, Any]:
    """Everything the nodes do for one matrix point, as JSON-ready data."""
    if spec.topology.kind != "access":
        raise TestbedError(
            f"topology.kind: the testbed runs the access topology (guest, host, optional "
            f"router), not {spec.topology.kind!r}"
        )
    requested = spec.link.backend
    if requested not in ("auto", tb.backend):
        raise TestbedError(
            f"link.backend: the scenario asks for {requested!r} but the testbed is set up for "
            f"{tb.backend!r} (inventory variable priolab_link_backend)"
        )
    rel = spec.rel_dir
    dirs = _node_dirs(tb, rel)
    workload = WORKLOADS[spec.workload_kind]
    pair = Pair("guest", "host", tb.guest.test_ip, tb.host.test_ip)
    ctx = RunContext(RUN_SENTINEL, spec.duration_s, spec.seed, spec.base_dir, (pair,))
    link = _link_plan(spec, tb, dirs)
    offset = LINK_SETTLE_S if tb.backend == "userspace" else 0.0
    procs: dict[str, list[dict[str, Any]]] = {r: list(link["processes"].get(r, [])) for r in dirs}
    outputs: dict[str, list[str]] = {r: list(link.get("outputs", {}).get(r, [])) for r in dirs}
    owner: dict[str, str] = {}  # first component of a run-dir path → the node that writes it
    transfers: list[dict[str, str]] = []
    inputs: list[dict[str, str]] = []
    for ps in workload.plan(spec.params, ctx):
        if ps.node not in ("guest", "host"):
            raise TestbedError(f"workload {spec.workload_kind}: unknown node {ps.node!r}")
        role, rd = ps.node, dirs[ps.node]
        offset += ps.start_delay_s
        argv = [_map_arg(a, rd) for a in ps.argv]
        if ps.argv[0] == rise_binary():
            argv[0] = f"{_bin_dir(tb, role)}/rise"
        for i, a in enumerate(ps.argv):
            comp = _first_component(a)
            if comp is not None:
                owner.setdefault(comp, role)
                if owner[comp] == role and comp not in outputs[role]:
                    outputs[role].append(comp)
            elif i > 0 and a.startswith("/") and Path(a).is_file():
                root = (tb.guest if role == "guest" else tb.host).run_root
                dest = f"{root}/inputs/{Path(a).name}"
                inputs.append({"node": role, "src": a, "dest": dest})
                argv[i] = dest
        wait = None
        if ps.wait_for_file is not None:
            wait = _map_arg(str(ps.wait_for_file), rd)
            comp = _first_component(str(ps.wait_for_file))
            src_role = owner.get(comp or "", role)
            if src_role != role:
                src = _map_arg(str(ps.wait_for_file), dirs[src_role])
                transfers.append({"from": src_role, "src": src, "to": role, "dest": wait})
        stdout, stderr = rundir.log_files(ps.name)
        outputs[role] += [stdout, stderr]
        procs[role].append(
            {"name": ps.name, "argv": argv, "start_at_s": round(offset, 3),
             "runs_to_end": ps.runs_to_end, "ok_exit_codes": list(ps.ok_exit_codes),
             "wait_for_file": wait, "env": ps.env, "stdout": stdout, "stderr": stderr}
        )  # fmt: skip
    tools = {r: [[a if a != rise_binary() else f"{_bin_dir(tb, r)}/rise" for a in t]
                 for t in workload.tools()] for r in ("guest", "host")}  # fmt: skip
    tools["router"] = [["tc", "-V"], ["ethtool", "--version"]]
    nodes: dict[str, Any] = {}
    for role, rd in dirs.items():
        node = getattr(tb, role)
        spec_json = {
            "node": role,
            "run_dir": rd,
            "deadline_s": offset + spec.duration_s + GRACE_S,
            "term_wait_s": TERM_WAIT_S,
            "stop_file": f"{rd}/.stop" if role == "router" else None,
            "processes": procs[role],
            "tools": tools[role],
            "files": link.get("files", {}).get(role, {}),
            "outputs": outputs[role],
            "archive": f"{rd}.{role}.tar.gz",
            "registry_dir": f"{node.run_root}/.pids",
        }
        nodes[role] = {"name": node.name, "run_dir": rd, "spec": spec_json}
    out_dir = (results / rel).resolve()
    partial = rundir.partial(out_dir)
    return {
        "rel_dir": str(rel),
        "out_dir": str(out_dir),
        "partial_dir": str(partial),
        "run": spec.to_json(),
        "backend": {
            "requested": requested,
            "used": tb.backend,
            "reason": f"testbed: priolab_link_backend={tb.backend}, priolab_shaper={tb.shaper}",
        },  # fmt: skip
        "shaper": tb.shaper,
        "python": tb.python,
        "duration_s": spec.duration_s,
        "deadline_s": offset + spec.duration_s + GRACE_S,
        "link": {k: link[k] for k in ("setup", "teardown", "stats", "applied")},
        "nodes": nodes,
        "transfers": transfers,
        "inputs": inputs,
        "interfaces": {
            tb.guest.name: [tb.guest.iface],
            tb.host.name: [tb.host.iface],
            **(
                {tb.router.name: [tb.router.iface_guest, tb.router.iface_host]}
                if tb.router is not None and "router" in dirs
                else {}
            ),
        },  # fmt: skip
    }


def select_runs(
    runs: list[RunSpec],
    setting: str | None = None,
    scheme: str | None = None,
    speed: str | None = None,
    rep: int | None = None,
) -> list[RunSpec]:
    out = [
        r
        for r in runs
        if (setting in (None, "", r.setting))
        and (scheme in (None, "", r.scheme))
        and (speed in (None, "", r.speed))
        and (rep in (None, r.rep))
    ]
    if not out:
        raise TestbedError(
            f"no run of the matrix matches setting={setting} scheme={scheme} speed={speed} "
            f"rep={rep}; the matrix has {sorted({(r.setting, r.scheme, r.speed) for r in runs})}"
        )
    return out


def plan_scenario(
    scenario: Path, tb: Testbed, results: Path, *, write: bool = False, **select: Any
) -> list[dict[str, Any]]:
    sc = load(scenario)
    runs = select_runs(expand(sc, scenario), **select)
    plans = [plan_run(r, tb, results) for r in runs]
    if write:
        for p in plans:
            partial = rundir.begin(Path(p["out_dir"]))
            (partial / PLAN_FILE).write_text(json.dumps(p, indent=1))
    return plans


# --------------------------------------------------------------------------- finish


@dataclass
class _Spec:
    name: str
    runs_to_end: bool
    ok_exit_codes: tuple[int, ...]


@dataclass
class _Popen:
    returncode: int | None


@dataclass
class _Proc:
    """What priolab.run.judge reads of a process, built from a node's report."""

    spec: _Spec
    popen: _Popen
    signalled: str | None


def _extract(partial: Path) -> list[str]:
    problems = []
    for tgz in sorted(partial.glob(".node-*.tar.gz")):
        with tarfile.open(tgz) as tar:
            for m in tar.getmembers():
                if m.name.startswith("/") or ".." in Path(m.name).parts:
                    problems.append(f"{tgz.name}: unsafe member {m.name!r} skipped")
                    continue
                if m.isfile() or m.isdir():
                    tar.extract(m, partial)  # noqa: S202 (members checked above)
        tgz.unlink()
    return problems


def _linkem_final(partial: Path, report: dict[str, Any]) -> dict[str, Any]:
    finals, per_second, errors = read_stats(partial / "linkem-stats.jsonl")
    for key in ("a_to_b", "b_to_a"):
        if key not in finals:
            errors.append(f"no final stats line for {key} in linkem-stats.jsonl")
    out = totals_from_finals(finals)
    proc = next((p for p in report.get("processes", []) if p["name"] == "linkem"), None)
    code = proc["exit_code"] if proc else None
    if proc is None:
        errors.append("linkem did not run on the router")
    elif proc["stopped_by_harness"] is None:
        errors.append(f"linkem exited by itself with code {code} before the run ended")
    elif proc["stopped_by_harness"] == "SIGKILL":
        errors.append("linkem did not stop on SIGTERM; killed")
    elif code != 0:
        errors.append(f"linkem exited with code {code}")
    out.update(exit_code=code, stats_file="linkem-stats.jsonl",
               seconds_reported=len(per_second) // 2, errors=errors)  # fmt: skip
    return out


def finish(partial: Path) -> dict[str, Any]:
    """Assemble metadata.json from the nodes' reports; rename `<dir>.partial` to `<dir>`."""
    partial = partial.resolve()
    plan = json.loads((partial / PLAN_FILE).read_text())
    reasons = _extract(partial)
    reports: dict[str, dict[str, Any]] = {}
    for role in plan["nodes"]:
        f = partial / f"node-{role}.json"
        if f.is_file():
            reports[role] = json.loads(f.read_text())
        else:
            reasons.append(f"no report from the {role} node ({plan['nodes'][role]['name']})")
    procs: list[dict[str, Any]] = []
    for role, rep in reports.items():
        reasons += [f"{role}: {e}" for e in rep.get("errors", [])]
        procs += [p for p in rep["processes"] if p["name"] != "linkem"]
    procs.sort(key=lambda p: p["planned_start_time"] or 0.0)
    planned = {p["name"]: p for r in plan["nodes"].values() for p in r["spec"]["processes"]}
    shims = [
        _Proc(_Spec(p["name"], planned[p["name"]]["runs_to_end"],
                    tuple(planned[p["name"]]["ok_exit_codes"])),
              _Popen(p["exit_code"]), p["stopped_by_harness"])
        for p in procs
    ]  # fmt: skip
    for p in procs:
        late = (p["start_time"] or 0.0) - (p["planned_start_time"] or 0.0)
        if p["start_time"] is not None and late > LATE_START_LIMIT_S:
            reasons.append(f"{p['name']} started {late:.2f} s after its planned time")
        if p.get("start_error"):
            reasons.append(f"{p['name']}: {p['start_error']}")
    starts = [p["start_time"] for p in procs if p["start_time"]]
    t_start = min(starts) if starts else 0.0
    ends = [p["end_time"] for p in procs if p["end_time"]]
    t_stop = max(ends) if ends else t_start
    enders = [p for p in procs if planned[p["name"]]["runs_to_end"]]
    ran_s = (min((p["end_time"] or t_stop) for p in enders) if enders else t_stop) - t_start
    # link
    link_final: dict[str, Any]
    if plan["link"]["applied"]["backend"] == "userspace":
        link_final = _linkem_final(partial, reports.get("router", {}))
        lk = next((p for p in reports.get("router", {}).get("processes", [])
                   if p["name"] == "linkem"), None)  # fmt: skip
        if lk is not None and starts and (lk["ready_time"] is None or lk["ready_time"] > t_start):
            reasons.append("linkem was not forwarding when the workload started")
    else:
        stats = {}
        for f in sorted(partial.glob("tc-stats-*.json")):
            stats.update(json.loads(f.read_text()))
            f.unlink()
        link_final = {"oversized_frames": None, "oversized_note": "tc cannot count them",
                      "trace_rate_changes": 0, "qdisc_stats": stats, "errors": []}  # fmt: skip
        (partial / "tc-applied.json").write_text(json.dumps(plan["link"]["applied"], indent=1))
    # CPU: every node's own; the run is invalid if any node saturated
    cpu_nodes = {r: summarise(rep.get("cpu_samples", []), rep.get("cpu_interval_s", 0.5))
                 for r, rep in reports.items()}  # fmt: skip
    worst = max(cpu_nodes.values(), key=lambda c: c.get("utilisation_mean_pct", 0.0),
                default={"samples": 0, "saturated": False})  # fmt: skip
    cpu = {**worst, "saturated": any(c["saturated"] for c in cpu_nodes.values()),
           "nodes": cpu_nodes}  # fmt: skip
    for role, rep in reports.items():
        chrony = (rep.get("clock") or {}).get("chrony")
        if chrony and abs(chrony["system_offset_s"]) > CLOCK_OFFSET_LIMIT_S:
            reasons.append(
                f"{role}: clock offset {chrony['system_offset_s'] * 1e3:.3f} ms exceeds "
                f"{CLOCK_OFFSET_LIMIT_S * 1e3:g} ms (chrony)"
            )
    verdict = judge(shims, ran_s, plan["duration_s"], cpu, link_final)  # type: ignore[arg-type]
    reasons = verdict.reasons + reasons
    workload = WORKLOADS[plan["run"]["workload"]["kind"]]
    meta: dict[str, Any] = {
        "run": plan["run"],
        "backend": plan["backend"],
        "git": provenance.git_info(),
        "versions": provenance.versions(workload.tools()),
        "host": provenance.host_info(),
        "interfaces": plan["interfaces"],
        "link_applied": plan["link"]["applied"],
        "link_final": link_final,
        "cpu": cpu,
        "start_time": t_start,
        "stop_time": t_stop,
        "ran_s": round(ran_s, 3),
        "processes": [{k: v for k, v in p.items() if k != "ready_time"} for p in procs],
        "valid": not reasons,
        "invalid_reasons": reasons,
        "target": "testbed",
        "testbed": {
            "shaper": plan["shaper"],
            "nodes": {
                r: {
                    "name": plan["nodes"][r]["name"],
                    "hostname": rep.get("hostname"),
                    "kernel": rep.get("kernel"),
                    "versions": rep.get("versions"),
                    "clock": rep.get("clock"),
                    "t0": rep.get("t0"),
                }
                for r, rep in reports.items()
            },
        },  # fmt: skip
    }
    tmp = partial / "metadata.tmp"
    tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n")
    tmp.replace(partial / rundir.METADATA)
    (partial / ".stop").unlink(missing_ok=True)
    rundir.promote(partial)
    return meta


# --------------------------------------------------------------------------- CLI


def _plan_cmd(args: argparse.Namespace) -> int:
    tb = load_testbed(Path(args.nodes))
    try:
        plans = plan_scenario(
            Path(args.scenario), tb, Path(args.results), write=args.write,
            setting=args.setting, scheme=args.scheme, speed=args.speed, rep=args.rep,
        )  # fmt: skip
    except (TestbedError, ValueError) as e:
        if isinstance(e, ScenarioError):
            raise
        raise ScenarioError(Path(args.scenario), [("(testbed)", str(e))]) from e
    print(json.dumps({"runs": plans}))
    return 0


def _finish_cmd(args: argparse.Namespace) -> int:
    meta = finish(Path(args.partial_dir))
    verdict = "valid" if meta["valid"] else "INVALID: " + "; ".join(meta["invalid_reasons"])
    r = meta["run"]
    where = rundir.rel_dir(r["scenario"], r["setting"], r["scheme"], r["speed"], r["rep"])
    print(f"{where}: {verdict}")
    return 0


def register(sub: Any) -> None:
    t = sub.add_parser("testbed", help="physical testbed (Ansible) plans and results")
    tsub = t.add_subparsers(dest="testbed_command", required=True)
    p = tsub.add_parser("plan", help="what the nodes run for a scenario's matrix points (JSON)")
    p.add_argument("scenario")
    p.add_argument("--nodes", required=True, help="testbed description JSON (see run.yml)")
    p.add_argument("--results", default="results")
    p.add_argument("--setting")
    p.add_argument("--scheme")
    p.add_argument("--speed")
    p.add_argument("--rep", type=int)
    p.add_argument("--write", action="store_true", help="create each <run>.partial/ with plan")
    p.set_defaults(func=_plan_cmd)
    f = tsub.add_parser("finish", help="assemble a fetched run into the run-directory layout")
    f.add_argument("partial_dir")
    f.set_defaults(func=_finish_cmd)
