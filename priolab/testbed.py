"""Physical testbed glue: the controller side of the Ansible roles in ansible/.

`priolab testbed needs [SCENARIO ...]` says what the endpoints role installs for those
scenarios (every workload's, without one): the programs `Workload.binaries()` lists, built
with cargo on the controller, and the Debian packages they need on the nodes
(`Workload.node_packages`, e.g. roq's GStreamer runtime); linkem goes on the router. With
`--cargo` it prints the `cargo build` arguments of those programs and of the crates the
scenarios' analyses load on this machine (`Workload.analysis_crates`, roq's scoring kernel).
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
import shutil
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ground import rundir
from ground.errors import ScenarioError, problems_from
from priolab.engine.finish import finish as engine_finish
from priolab.engine.plan import PlanError, RunPlan, Site, SiteNode, plan
from priolab.scenario import RunSpec, expand, load
from priolab.workloads import WORKLOADS
from priolab.workloads.base import Pair, RunContext

PLAN_FILE = rundir.PLAN
PROVIDED = frozenset({"python"})
"""Programs a workload names that the testbed description provides (the nodes' Python):
not built, not installed."""
ROUTER_PROGRAMS = ("linkem",)
AGENT_FILE = "priolab_node.py"
"""The name the endpoints role installs the node agent (priolab/engine/agent.py) under."""
REPLAY_FILE = "priolab_replay.py"
"""The name the endpoints role installs tc's trace replayer (netem/replay.py) under."""


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


TestbedError = PlanError
"""A scenario that this testbed cannot run; the message says why."""


# --------------------------------------------------------------------------- plan


def site(tb: Testbed) -> Site:
    """The testbed as an engine site: separate machines, files travel through Ansible."""

    def node(key: str, n: EndpointNode | RouterNode, stop: bool = False) -> SiteNode:
        iface = n.iface if isinstance(n, EndpointNode) else None
        return SiteNode(
            key=key, name=n.name, run_dir="", registry_dir=f"{n.run_root}/.pids",
            binaries={"linkem": f"{n.bin_dir}/linkem", "python": tb.python,
                      "agent": f"{n.bin_dir}/{AGENT_FILE}",
                      "replay": f"{n.bin_dir}/{REPLAY_FILE}"},
            stop_file=stop, inputs_dir=f"{n.run_root}/{rundir.INPUTS}", bin_dir=n.bin_dir,
            iface=iface,
        )  # fmt: skip

    nodes = {"guest": node("guest", tb.guest), "host": node("host", tb.host)}
    interfaces = {tb.guest.name: [tb.guest.iface], tb.host.name: [tb.host.iface]}
    emulator = None
    if tb.shaper == "router":
        assert tb.router is not None
        nodes["router"] = node("router", tb.router, stop=True)
        interfaces[tb.router.name] = [tb.router.iface_guest, tb.router.iface_host]
        emulator, ifaces = "router", (tb.router.iface_guest, tb.router.iface_host)
    else:  # uplink leaves the guest (its egress), downlink the host
        ifaces = (tb.host.iface, tb.guest.iface)
    return Site(
        kind="testbed", backend=tb.backend, requested_backend="auto",
        backend_reason=f"testbed: priolab_link_backend={tb.backend}, priolab_shaper={tb.shaper}",
        shaper=tb.shaper, pairs=(Pair("guest", "host", tb.guest.test_ip, tb.host.test_ip),),
        nodes=nodes, emulator=emulator, emu_ifaces=ifaces, interfaces=interfaces,
        shared_fs=False,
    )  # fmt: skip


def _run_root(tb: Testbed, key: str) -> str:
    n = {"guest": tb.guest, "host": tb.host, "router": tb.router}[key]
    assert n is not None
    return n.run_root


PREPARED_KEY = "prepared_inputs"
"""plan.json: what the workload's prepare() returned on the controller (metadata's `inputs`,
as the Mininet site records them)."""


def plan_run(spec: RunSpec, tb: Testbed, results: Path) -> dict[str, Any]:
    """Everything the nodes do for one matrix point, as JSON-ready data (plan.json)."""
    s = site(tb)
    rel = spec.rel_dir
    nodes = {k: replace(n, run_dir=f"{_run_root(tb, k)}/{rel}",
                        archive=f"{_run_root(tb, k)}/{rel}.{k}.tar.gz")
             for k, n in s.nodes.items()}  # fmt: skip
    # The workload's inputs are made on the controller, as the Mininet site makes them before
    # planning (e.g. roq's source clip): the plan then ships every input file to the nodes.
    # Inputs written into the run folder itself (rise's resampled tracking trace) would not
    # reach them: the controller's copy is under results/.prepare.
    ctx = RunContext(results / ".prepare" / rel, spec.duration_s, spec.seed, spec.base_dir,
                     s.pairs)  # fmt: skip
    prepared = WORKLOADS[spec.workload_kind].prepare(spec.params, ctx)
    p = plan(spec, replace(s, nodes=nodes, requested_backend=spec.link.backend), results)
    p.prepared_inputs = prepared
    return p.to_json()


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


def _extract(partial: Path) -> list[str]:
    problems = []
    for tgz in sorted(partial.glob(rundir.NODE_ARCHIVES_GLOB)):
        with tarfile.open(tgz) as tar:
            for m in tar.getmembers():
                if m.name.startswith("/") or ".." in Path(m.name).parts:
                    problems.append(f"{tgz.name}: unsafe member {m.name!r} skipped")
                    continue
                if m.isfile() or m.isdir():
                    tar.extract(m, partial)  # noqa: S202 (members checked above)
        tgz.unlink()
    return problems


def finish(partial: Path) -> dict[str, Any]:
    """Assemble metadata.json from the nodes' reports; rename `<dir>.partial` to `<dir>`."""
    partial = partial.resolve()
    run_plan = RunPlan.read(partial / rundir.PLAN)
    problems = _extract(partial)
    shutil.rmtree(partial / ".transfer", ignore_errors=True)  # files copied between nodes
    return engine_finish(partial, run_plan, site_errors=problems,
                         extra={"inputs": run_plan.prepared_inputs or {}})  # fmt: skip


def _kinds(scenarios: list[Path]) -> set[str]:
    """The workloads these scenarios run (every testbed workload when none is given)."""
    return ({s.workload_kind for p in scenarios for s in expand(load(p), p)} if scenarios
            else set(WORKLOADS) - {"probe"})  # fmt: skip


def analysis_crates(scenarios: list[Path]) -> list[str]:
    """The cargo packages these scenarios' analyses load on the machine that runs the workflow
    (`Workload.analysis_crates`, e.g. roq's scoring kernel): built there, never on the nodes."""
    kinds = _kinds(scenarios)
    return sorted({c for k in kinds for c in getattr(WORKLOADS[k], "analysis_crates", ())})


def needs(scenarios: list[Path]) -> dict[str, list[str]]:
    """What the nodes need for these scenarios' workloads (every testbed workload's when
    none is given): `endpoints`, the programs guest and host run (cargo packages of the
    same name); `router`, the router's; `packages`, the Debian packages of the endpoints."""
    from priolab.workloads import WORKLOADS

    kinds = _kinds(scenarios)
    programs = {n for k in kinds for n in WORKLOADS[k].binaries()} - PROVIDED
    packages = {p for k in kinds for p in getattr(WORKLOADS[k], "node_packages", ())}
    return {"endpoints": sorted(programs), "router": list(ROUTER_PROGRAMS),
            "packages": sorted(packages)}  # fmt: skip


# --------------------------------------------------------------------------- CLI


def cargo_packages(n: dict[str, list[str]]) -> list[str]:
    """`cargo build` arguments for what `needs` lists: each program is the cargo package of its
    name (linkem's package also builds lkprobe, the calibration's probe)."""
    return [f"--package={p}" for p in sorted(set(n["endpoints"] + n["router"]))]


def build_packages(scenarios: list[Path]) -> list[str]:
    """`cargo build` arguments for everything these scenarios need on a real-time site: what
    the nodes run (`needs`) and what their analyses load here (`analysis_crates`)."""
    crates = {a.removeprefix("--package=") for a in cargo_packages(needs(scenarios))}
    return [f"--package={p}" for p in sorted(crates | set(analysis_crates(scenarios)))]


def _needs_cmd(args: argparse.Namespace) -> int:
    scenarios = [Path(p) for p in args.scenario]
    print(" ".join(build_packages(scenarios)) if args.cargo else json.dumps(needs(scenarios)))
    return 0


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
    p.add_argument("scenario", help="a scenario file (scenarios/*.yaml)")
    p.add_argument("--nodes", required=True, help="testbed description JSON (see run.yml)")
    p.add_argument(
        "--results", default="results", help="the results folder runs go under (default: results)"
    )
    p.add_argument("--setting", help="only this setting (default: every one)")
    p.add_argument("--scheme", help="only this scheme (default: every one)")
    p.add_argument("--speed", help="only this speed (default: every one)")
    p.add_argument("--rep", type=int, help="only this repetition (default: every one)")
    p.add_argument("--write", action="store_true", help="create each <run>.partial/ with plan")
    p.set_defaults(func=_plan_cmd)
    n = tsub.add_parser("needs", help="programs and packages the nodes need (JSON)")
    n.add_argument("scenario", nargs="*", help="default: what every workload needs")
    n.add_argument("--cargo", action="store_true",
                   help="print `cargo build` package arguments instead of JSON: the nodes' "
                   "programs and what the analysis loads on this machine")  # fmt: skip
    n.set_defaults(func=_needs_cmd)
    f = tsub.add_parser("finish", help="assemble a fetched run into the run-directory layout")
    f.add_argument("partial_dir", help="the run's <run>.partial/ folder, as the nodes filled it")
    f.set_defaults(func=_finish_cmd)
