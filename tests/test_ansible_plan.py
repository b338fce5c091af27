"""The controller side of the testbed without root: plans, the node agent, finish, lint."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import priolab.testbed as pt
from ground import rundir
from netem.resolve import resolve_link
from netem.tc import direction_commands, local_netem_seed
from priolab.scenario import expand, load
from priolab.workloads.roq.workload import NODE_PACKAGES
from tests.conftest import REPO

AGENT = REPO / "ansible" / "roles" / "endpoints" / "files" / "priolab_node.py"


def make_testbed(shaper: str = "router", backend: str = "tc") -> pt.Testbed:
    node = {"run_root": "/r", "bin_dir": "/b"}
    return pt.Testbed.model_validate({
        "shaper": shaper, "backend": backend,
        "guest": {"name": "g1", "test_ip": "10.9.0.1", "iface": "eg", **node},
        "host": {"name": "h1", "test_ip": "10.9.0.2", "iface": "eh", **node},
        "router": {"name": "r1", "iface_guest": "rg", "iface_host": "rh", **node},
    })  # fmt: skip


def standin_run():
    path = REPO / "scenarios" / "standin.yaml"
    return expand(load(path), path)[0]


def test_router_tc_plan_uses_netem_tc_argv(tmp_path: Path) -> None:
    spec = standin_run()
    plan = pt.plan_run(spec, make_testbed(), tmp_path)
    resolved = resolve_link(spec.link, spec.base_dir)
    seeded = local_netem_seed()  # the plan leaves `seed` out where this tc does not know it
    up, _ = direction_commands("rh", resolved.uplink, spec.seed if seeded else None)
    down, _ = direction_commands("rg", resolved.downlink, spec.seed + 1 if seeded else None)
    setup = [c["argv"] for c in plan["link"]["setup"]["router"] if c["check"]]
    assert setup[-len(up) - len(down) :] == up + down  # exactly netem/tc.py's argv lists
    assert ["ip", "link", "set", "rg", "master", "nebr0"] in setup
    assert set(plan["link"]["setup"]) == {"router"}
    guest = plan["nodes"]["guest"]["spec"]["processes"]
    assert [p["name"] for p in guest] == ["iperf3-client", "ping"]
    assert "10.9.0.2" in guest[0]["argv"]
    assert plan["rel_dir"] == str(spec.rel_dir)
    assert plan["partial_dir"].endswith("r1.partial")


def test_endpoints_plan_shapes_each_egress(tmp_path: Path) -> None:
    plan = pt.plan_run(standin_run(), make_testbed(shaper="endpoints"), tmp_path)
    setup = plan["link"]["setup"]
    assert set(setup) == {"guest", "host"} and "router" not in plan["nodes"]
    assert all("eg" in c["argv"] for c in setup["guest"])  # uplink leaves the guest
    assert any("20000000bit" in c["argv"] for c in setup["guest"])
    assert any("1000000000bit" in c["argv"] for c in setup["host"])


def test_userspace_plan_runs_linkem_on_the_router(tmp_path: Path) -> None:
    plan = pt.plan_run(standin_run(), make_testbed(backend="userspace"), tmp_path)
    router = plan["nodes"]["router"]["spec"]
    assert router["processes"][0]["argv"][:5] == ["/b/linkem", "--iface-a", "rg", "--iface-b", "rh"]
    assert router["files"]["linkem.json"]["a_to_b"]["rate"]["rate_bps"] == 20_000_000
    assert router["stop_file"]
    assert min(p["start_at_s"] for p in plan["nodes"]["guest"]["spec"]["processes"]) >= 1.0


def test_bad_combinations_are_named(tmp_path: Path, write_scenario, standin_dict) -> None:
    with pytest.raises(ValueError, match="needs shaper 'router'"):
        p = tmp_path / "tb.json"
        p.write_text(make_testbed(shaper="endpoints", backend="userspace").model_dump_json())
        pt.load_testbed(p)
    standin_dict["link"]["backend"] = "userspace"
    path = write_scenario(standin_dict)
    spec = expand(load(path), path)[0]
    with pytest.raises(pt.TestbedError, match="link.backend"):
        pt.plan_run(spec, make_testbed(backend="tc"), tmp_path)


def test_rise_plan_transfers_the_certificate(tmp_path: Path) -> None:
    path = REPO / "scenarios" / "quick.yaml"
    sc = load(path)
    if sc.workload.kind != "rise":
        pytest.skip("scenarios/quick.yaml is not a rise scenario")
    spec = expand(sc, path)[0]
    tb = pt.Testbed.model_validate({
        "shaper": "router", "backend": "tc",
        "guest": {"name": "g", "test_ip": "10.9.0.1", "iface": "eg", "run_root": "/G",
                  "bin_dir": "/gb"},
        "host": {"name": "h", "test_ip": "10.9.0.2", "iface": "eh", "run_root": "/H",
                 "bin_dir": "/hb"},
        "router": {"name": "r", "iface_guest": "rg", "iface_host": "rh", "run_root": "/R",
                   "bin_dir": "/rb"},
    })  # fmt: skip
    try:
        plan = pt.plan_run(spec, tb, tmp_path)
    except pt.TestbedError as e:
        pytest.skip(f"quick.yaml cannot run on tc here: {e}")
    (t,) = plan["transfers"]
    rel = spec.rel_dir
    assert t == {"from": "host", "src": f"/H/{rel}/host/cert.der", "to": "guest",
                 "dest": f"/G/{rel}/host/cert.der"}  # fmt: skip
    g = plan["nodes"]["guest"]["spec"]
    assert g["processes"][0]["argv"][0] == "/gb/rise"
    # rise waits for its --cert itself: the agent starts it on time while the file travels
    assert g["processes"][0]["wait_for_file"] is None
    assert g["processes"][0]["argv"][g["processes"][0]["argv"].index("--cert") + 1] == t["dest"]
    assert "guest" in g["outputs"] and "host" not in g["outputs"]


ENDPOINTS_TASKS = REPO / "ansible" / "roles" / "endpoints" / "tasks" / "main.yml"


def test_roq_plan_runs_the_roq_the_endpoints_role_installs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the source clip is an input the controller copies; a stand-in file suffices for a plan
    monkeypatch.setenv("PRIOLAB_ROQ_CACHE", str(tmp_path / "cache"))
    path = REPO / "scenarios" / "roq-quick.yaml"
    spec = next(r for r in expand(load(path), path) if r.scheme == "scream")
    from priolab.workloads.roq.source import source_path
    from priolab.workloads.roq.workload import RoqParams

    assert isinstance(spec.params, RoqParams)
    src = source_path(spec.params)
    src.parent.mkdir(parents=True)
    src.write_bytes(b"\0")
    plan = pt.plan_run(spec, make_testbed(), tmp_path)
    host = plan["nodes"]["host"]["spec"]["processes"]
    guest = plan["nodes"]["guest"]["spec"]["processes"]
    assert [p["argv"][0] for p in host] == ["/b/roq"]  # bin_dir/roq: what the role installs
    assert [p["argv"][0] for p in guest] == ["/b/roq"]
    (clip,) = plan["inputs"]
    assert clip["node"] == "host" and clip["src"] == str(src)
    assert clip["dest"] in host[0]["argv"]
    (cert,) = plan["transfers"]
    assert (cert["from"], cert["to"]) == ("host", "guest")
    # the role builds and installs exactly that binary on guest and host, with GStreamer
    assert pt.needs([path]) == {"endpoints": ["roq"], "router": ["linkem"],
                                "packages": sorted(NODE_PACKAGES)}  # fmt: skip


def test_endpoints_get_the_gstreamer_runtime_the_controller_builds_against() -> None:
    """Every GStreamer package the Makefile installs to build and test roq, in its runtime
    form: the plugins as they are, each -dev package as its library package."""
    block = subprocess.run(
        ["make", "-s", "-C", str(REPO), "print-APT_TEST"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    runtime = {
        "libgstreamer1.0-dev": "libgstreamer1.0-0",
        "libgstreamer-plugins-base1.0-dev": "libgstreamer-plugins-base1.0-0",
    }
    wanted = {runtime.get(p, p) for p in block.replace("\\", " ").split() if "gst" in p}
    assert {"gstreamer1.0-plugins-ugly", "gstreamer1.0-libav"} <= wanted  # x264enc, avdec_h264
    assert not any(p.endswith("-dev") for p in wanted), wanted
    assert set(NODE_PACKAGES) == wanted


def test_the_endpoints_role_installs_what_the_workloads_say() -> None:
    """Every workload's programs without a scenario (the five QUIC pairs; iperf3 and ping are
    Debian's); the role builds, installs and requires what `priolab testbed needs` prints."""
    assert pt.needs([]) == {"endpoints": ["dtp", "moq", "qpr", "rise", "roq"],
                            "router": ["linkem"], "packages": sorted(NODE_PACKAGES)}  # fmt: skip
    standin = REPO / "scenarios" / "standin.yaml"
    assert pt.needs([standin])["endpoints"] == [] and pt.needs([standin])["packages"] == []
    tasks = {t["name"]: t for t in yaml.safe_load(ENDPOINTS_TASKS.read_text())}
    ask = tasks["Ask the workloads what the nodes need (priolab testbed needs)"]
    assert "'testbed', 'needs'" in ask["ansible.builtin.command"]["argv"]
    build = tasks["Build the endpoints and linkem on the controller"]["ansible.builtin.command"]
    assert "endpoints_needs.endpoints + endpoints_needs.router" in build["argv"]
    install = tasks["Install the workloads' programs on the endpoints"]
    assert install["ansible.builtin.copy"]["dest"] == "{{ priolab_bin_dir }}/{{ item }}"
    assert "endpoints_needs.endpoints" in install["loop"]
    assert "priolab_role in ['guest', 'host']" in install["when"]
    apt = tasks["Install the runtime packages of the workloads on the endpoints"]
    assert apt["ansible.builtin.apt"]["name"] == "{{ endpoints_needs.packages }}"


def _agent(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(AGENT), *args], capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def test_agent_runs_and_stops_a_spec(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    spec = {
        "node": "host", "run_dir": str(run_dir), "deadline_s": 10, "term_wait_s": 2,
        "report": rundir.node_report("host"),
        "stop_file": None, "registry_dir": str(tmp_path / ".pids"), "tools": [["true"]],
        "files": {"x.json": {"a": 1}},
        "processes": [
            {"name": "server", "argv": ["sleep", "30"], "start_at_s": 0, "runs_to_end": False,
             "stdout": "logs/server.stdout", "stderr": "logs/server.stderr"},
            {"name": "client", "argv": ["echo", "hi"], "start_at_s": 0.3, "runs_to_end": True,
             "stdout": "logs/client.stdout", "stderr": "logs/client.stderr"},
        ],
        "outputs": ["logs/client.stdout", "x.json"], "archive": str(tmp_path / "a.tar.gz"),
    }  # fmt: skip
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    t0 = time.time() + 0.2
    r = _agent("run", str(tmp_path / "spec.json"), "--t0", str(t0))
    assert r.returncode == 0, r.stderr
    rep = json.loads((run_dir / rundir.node_report("host")).read_text())
    by = {p["name"]: p for p in rep["processes"]}
    assert by["client"]["exit_code"] == 0 and by["client"]["stopped_by_harness"] is None
    assert by["server"]["stopped_by_harness"] == "SIGTERM"  # stopped once the client ended
    assert by["client"]["start_time"] >= t0 + 0.3 - 0.01
    assert (run_dir / "logs" / "client.stdout").read_text() == "hi\n"
    assert not list((tmp_path / ".pids").glob("*.json"))  # registry removed at the end
    import tarfile

    with tarfile.open(tmp_path / "a.tar.gz") as tar:
        assert set(tar.getnames()) == {"logs/client.stdout", "x.json", "node-host.json"}


def test_agent_clean_stops_only_what_is_registered(tmp_path: Path) -> None:
    mine = subprocess.Popen(["sleep", "300"])
    other = subprocess.Popen(["sleep", "301"])
    try:
        reg = tmp_path / ".pids"
        reg.mkdir()
        (reg / "host-1.json").write_text(json.dumps([
            {"pid": mine.pid, "cmdline": ["sleep", "300"]},
            {"pid": other.pid, "cmdline": ["sleep", "999"]},  # pid reused by another command
        ]))  # fmt: skip
        r = _agent("clean", str(tmp_path))
        assert r.returncode == 0, r.stderr
        assert [k["pid"] for k in json.loads(r.stdout)["killed"]] == [mine.pid]
        assert mine.wait(timeout=5) is not None
        assert other.poll() is None
    finally:
        for p in (mine, other):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_finish_assembles_a_mininet_like_run_dir(tmp_path: Path) -> None:
    """Fake node reports through `finish`: layout, metadata keys and the validity rules."""
    tb = make_testbed(backend="tc")
    (plan,) = pt.plan_scenario(REPO / "scenarios" / "standin.yaml", tb, tmp_path, write=True)
    partial = Path(plan["partial_dir"])
    t0 = time.time()
    for role in ("guest", "host", "router"):
        procs = []
        for p in plan["nodes"][role]["spec"]["processes"]:
            start = t0 + p["start_at_s"]
            code = 1 if p["name"] == "ping" else 0
            procs.append({"name": p["name"], "node": role, "argv": p["argv"], "pid": 1,
                          "planned_start_time": start, "start_time": start,
                          "end_time": start + 5.0, "ready_time": None, "exit_code": code,
                          "stopped_by_harness": None, "start_error": None,
                          "stdout": p["stdout"], "stderr": p["stderr"]})  # fmt: skip
            (partial / p["stdout"]).write_text("")
        (partial / f"node-{role}.json").write_text(json.dumps({
            "node": role, "hostname": role, "t0": t0, "processes": procs,
            "cpu_samples": [0.2] * 10, "cpu_interval_s": 0.5, "versions": {},
            "kernel": "k", "clock": {"chrony": None}, "errors": []}))  # fmt: skip
    (partial / "tc-stats-router.json").write_text(json.dumps({"rh": []}))
    meta = pt.finish(partial)
    out = Path(plan["out_dir"])
    assert not partial.exists() and (out / "metadata.json").is_file()
    assert (out / "tc-applied.json").is_file()
    for key in ("run", "backend", "git", "versions", "host", "interfaces", "link_applied",
                "link_final", "cpu", "start_time", "stop_time", "ran_s", "processes", "valid",
                "invalid_reasons"):  # fmt: skip
        assert key in meta
    assert meta["valid"] is False
    assert meta["invalid_reasons"] == ["ping exited with code 1"]
    assert meta["link_final"]["qdisc_stats"] == {"rh": []}


def test_ansible_lint_is_clean() -> None:
    lint = REPO / ".venv" / "bin" / "ansible-lint"
    if not lint.exists() or shutil.which("git") is None:
        pytest.skip("ansible-lint is not installed in .venv (testbed extra)")
    r = subprocess.run([str(lint), "--format=pep8", "--nocolor"], cwd=REPO / "ansible",
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_example_inventory_names_every_node_variable() -> None:
    inv = yaml.safe_load((REPO / "ansible" / "inventory.example.yml").read_text())
    kids = inv["all"]["children"]
    assert set(kids) == {"guest", "host", "router"}
    for role in ("guest", "host"):
        (node,) = kids[role]["hosts"].values()
        assert {"priolab_test_ip", "priolab_test_iface"} <= node.keys()
    (router,) = kids["router"]["hosts"].values()
    assert {"priolab_iface_guest", "priolab_iface_host"} <= router.keys()


def test_a_scenario_builds_only_the_crates_its_workloads_run(capsys) -> None:
    """`priolab testbed needs --cargo` (make build-quick, and the workflow's build rule on a
    real-time site): quick's RISE builds rise and linkem, not roq (so no GStreamer), and no
    scenario builds every crate of the workspace (priolab-sim, proctest)."""
    from priolab import cli

    assert cli.main(["testbed", "needs", "--cargo", str(REPO / "scenarios" / "quick.yaml")]) == 0
    assert capsys.readouterr().out.split() == ["--package=linkem", "--package=rise"]
    everything = pt.cargo_packages(pt.needs([]))
    assert "--package=roq" in everything and "--package=priolab-sim" not in everything
    assert pt.cargo_packages(pt.needs([REPO / "scenarios" / "standin.yaml"])) == [
        "--package=linkem"
    ]


def test_a_roq_scenario_also_builds_the_scoring_kernel_its_analysis_loads(capsys) -> None:
    """roq's analysis scores with roq-score (priolab/workloads/roq/kernel.py) on the machine
    that runs the workflow: `--cargo` (make build-quick, the build rule) builds it there, and
    the nodes are never asked to install it."""
    from priolab import cli

    roq = REPO / "scenarios" / "roq-quick.yaml"
    assert cli.main(["testbed", "needs", "--cargo", str(roq)]) == 0
    assert capsys.readouterr().out.split() == [
        "--package=linkem",
        "--package=roq",
        "--package=roq-score",
    ]
    assert pt.analysis_crates([roq]) == ["roq-score"]
    assert "roq-score" not in pt.needs([roq])["endpoints"]
    assert pt.analysis_crates([REPO / "scenarios" / "quick.yaml"]) == []
