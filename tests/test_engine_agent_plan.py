"""engine.plan and engine.agent without root: what a plan holds, what the agent does with it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from ground import rundir
from priolab.engine.plan import LINK_SETTLE_S, plan
from priolab.engine.sites.mininet import AGENT, REPLAY, mininet_site
from priolab.scenario import expand, load
from priolab.workloads.base import Pair
from tests.conftest import REPO

NET = SimpleNamespace(
    pairs=(Pair("guest", "host", "10.0.0.1", "10.0.0.2"),), emu_up_in="emu-eth0",
    emu_up_out="emu-eth1",
    interfaces=lambda: {"emu": ["emu-eth0", "emu-eth1"], "guest": ["guest-eth0"],
                        "host": ["host-eth0"]},
)  # fmt: skip


def _mininet_plan(path: Path, backend: str, tmp: Path) -> dict:
    spec = expand(load(path), path)[0]
    site = mininet_site(NET, spec, tmp / "r1.partial", backend, "test")
    return plan(spec, site, tmp).to_json()


def test_capture_plans_tcpdump_on_the_link_and_the_tls_key_log(tmp_path: Path) -> None:
    data = yaml.safe_load((REPO / "scenarios" / "quick.yaml").read_text())
    data["capture"] = {"snaplen_bytes": 128}
    path = tmp_path / "cap.yaml"
    path.write_text(yaml.safe_dump(data))
    p = _mininet_plan(path, "userspace", tmp_path)
    for node in ("guest", "host"):
        procs = {x["name"]: x for x in p["nodes"][node]["spec"]["processes"]}
        tcpdump = procs[f"tcpdump-{node}"]
        assert tcpdump["argv"][:5] == ["tcpdump", "-i", f"{node}-eth0", "-s", "128"]
        assert tcpdump["argv"][-1] == f"{tmp_path}/r1.partial/capture-{node}.pcap"
        assert tcpdump["link"] and not tcpdump["runs_to_end"]
    guest = next(x for x in p["nodes"]["guest"]["spec"]["processes"] if x["name"] == "rise-guest")[
        "argv"
    ]
    assert guest[guest.index("--keylog") + 1] == f"{tmp_path}/r1.partial/tls-keys.log"
    # without the key, neither
    q = _mininet_plan(REPO / "scenarios" / "quick.yaml", "userspace", tmp_path)
    assert "--keylog" not in q["nodes"]["guest"]["spec"]["processes"][0]["argv"]
    assert [x["name"] for x in q["nodes"]["emu"]["spec"]["processes"]] == ["linkem"]


def _uplink_trace_scenario(tmp_path: Path, steps: str) -> tuple[Path, dict]:
    """standin.yaml with its uplink on the schedule trace `steps` (lines "t_s rate_mbps")."""
    (tmp_path / "steps.txt").write_text(steps)
    data = yaml.safe_load((REPO / "scenarios" / "standin.yaml").read_text())
    data["link"]["uplink"] = {"trace": {"file": "steps.txt", "format": "schedule"},
                              "queue": {"limit_bytes": 30000}}  # fmt: skip
    path = tmp_path / "tr.yaml"
    path.write_text(yaml.safe_dump(data))
    return path, data


def test_a_trace_on_tc_is_replayed_by_a_process_of_the_plan(tmp_path: Path) -> None:
    path, _ = _uplink_trace_scenario(tmp_path, "0 20\n1 5\n")
    p = _mininet_plan(path, "tc", tmp_path)
    (rep,) = p["nodes"]["emu"]["spec"]["processes"]
    assert rep["name"] == "tc-replay-uplink" and rep["argv"][1] == str(REPLAY)
    assert rep["argv"][2] == f"{tmp_path}/r1.partial/tc-replay-uplink.json"
    sched = p["nodes"]["emu"]["spec"]["files"]["tc-replay-uplink.json"]
    assert [s["t_ms"] for s in sched["steps"]] == [0, 1000]
    assert sched["steps"][1]["argv"][:6] == ["tc", "class", "change", "dev", "emu-eth1", "parent"]
    assert "5000000bit" in sched["steps"][1]["argv"]


def _agent(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(AGENT), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_replay_keeps_time_until_stopped(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    steps = [{"t_ms": t, "argv": ["sh", "-c", f"echo {t} >> {out}"]} for t in (0, 100, 200)]
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"steps": steps, "period_ms": 300, "loop": False}))
    p = subprocess.Popen([sys.executable, str(REPLAY), str(f)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)  # fmt: skip
    time.sleep(0.6)
    assert p.poll() is None  # a process of the plan: it ends when stopped
    p.send_signal(signal.SIGTERM)
    stdout, _ = p.communicate(timeout=5)
    assert json.loads(stdout) == {"changes": 2, "errors": []}
    assert out.read_text().split() == ["100", "200"]  # the first step came with the link


def test_agent_honours_env_and_reports_cpu_per_process(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    # spins until it has used 0.6 s of CPU, however busy the machine is
    burn = "import time\nwhile time.process_time() < 0.6: pass"
    spec = {
        "node": "guest", "run_dir": str(run_dir), "deadline_s": 10, "term_wait_s": 2,
        "report": rundir.node_report("guest"),
        "stop_file": None, "registry_dir": None, "tools": [], "check_clock": False,
        "processes": [
            {"name": "env", "argv": ["sh", "-c", "echo $PRIOLAB_X"], "start_at_s": 0,
             "runs_to_end": True, "env": {"PRIOLAB_X": "from-the-plan"},
             "stdout": "logs/env.stdout", "stderr": "logs/env.stderr"},
            {"name": "burn", "argv": [sys.executable, "-c", burn], "start_at_s": 0,
             "runs_to_end": True, "stdout": "logs/burn.stdout", "stderr": "logs/burn.stderr"},
        ],
        "outputs": [], "archive": None,
    }  # fmt: skip
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    p = _agent("run", str(tmp_path / "spec.json"), "--t0", str(time.time()))
    assert p.wait(timeout=20) == 0, p.communicate()
    assert (run_dir / "logs" / "env.stdout").read_text() == "from-the-plan\n"
    rep = json.loads((run_dir / rundir.node_report("guest")).read_text())
    by = {x["name"]: x for x in rep["processes"]}
    burn_cpu = by["burn"]["cpu"]
    assert burn_cpu["cpu_s"] >= 0.55  # it spun for 0.6 s of CPU (minus clock-tick rounding)
    wall_s = by["burn"]["end_time"] - by["burn"]["start_time"]
    assert burn_cpu["core_mean_pct"] == pytest.approx(100 * burn_cpu["cpu_s"] / wall_s, rel=0.02)
    assert rep["cpu_samples"] and rep["clock"]["chrony"] is None


def test_agent_reports_the_udp_drops_its_processes_cause(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    # a receiver that never reads, with the smallest buffer, and 300 datagrams sent to it
    overflow = (
        "import socket\n"
        "r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)\n"
        "r.bind(('127.0.0.1', 0))\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "for _ in range(300): s.sendto(b'x' * 1000, r.getsockname())\n"
    )
    spec = {
        "node": "guest", "run_dir": str(run_dir), "deadline_s": 10, "term_wait_s": 2,
        "report": rundir.node_report("guest"),
        "stop_file": None, "registry_dir": None, "tools": [], "check_clock": False,
        "processes": [
            {"name": "overflow", "argv": [sys.executable, "-c", overflow], "start_at_s": 0,
             "runs_to_end": True, "stdout": "logs/o.stdout", "stderr": "logs/o.stderr"},
        ],
        "outputs": [], "archive": None,
    }  # fmt: skip
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    p = _agent("run", str(tmp_path / "spec.json"), "--t0", str(time.time()))
    assert p.wait(timeout=20) == 0, p.communicate()
    rep = json.loads((run_dir / rundir.node_report("guest")).read_text())
    assert rep["processes"][0]["exit_code"] == 0
    c = rep["udp_counters"]
    # at least the datagrams beyond what a minimal buffer holds (others' may add, never remove)
    grew = c["end"]["udp"]["RcvbufErrors"] - c["start"]["udp"]["RcvbufErrors"]
    assert grew >= 250, c


def test_a_trace_starts_when_the_endpoints_do_on_every_backend(tmp_path: Path) -> None:
    """The link starts LINK_SETTLE_S before the endpoints (linkem; tc with a capture); the
    trace is led by as much, so the endpoints meet its time 0, as on the sim site."""
    path, data = _uplink_trace_scenario(tmp_path, "0 20\n1 5\n2 8\n")
    p = _mininet_plan(path, "userspace", tmp_path)
    starts = [
        x["start_at_s"] for n in ("guest", "host") for x in p["nodes"][n]["spec"]["processes"]
    ]
    assert min(starts) == LINK_SETTLE_S == 1.0
    rate = p["nodes"]["emu"]["spec"]["files"]["linkem.json"]["a_to_b"]["rate"]
    # the trace (looped, 3 s) rotated by 1 s: its 20 Mbit/s second 0 lands at link time 1 s
    assert rate["points"] == [[0, 8_000_000], [1000, 20_000_000], [2000, 5_000_000]]
    assert p["link"]["applied"]["trace_lead_ms"] == 1000
    data["capture"] = {"snaplen_bytes": 128}
    path.write_text(yaml.safe_dump(data))
    tc = _mininet_plan(path, "tc", tmp_path)
    sched = tc["nodes"]["emu"]["spec"]["files"]["tc-replay-uplink.json"]
    assert [s["t_ms"] for s in sched["steps"]] == [0, 1000, 2000]
    assert "20000000bit" in sched["steps"][1]["argv"]
    assert tc["link"]["applied"]["trace_lead_ms"] == 1000
    data.pop("capture")
    path.write_text(yaml.safe_dump(data))
    plain = _mininet_plan(path, "tc", tmp_path)  # no settle, no lead
    assert plain["link"]["applied"]["trace_lead_ms"] == 0


def test_qlog_gives_each_quic_endpoint_its_qlog_folder(tmp_path: Path) -> None:
    """`qlog: true`: every endpoint writes its traces into rundir.QLOG_DIR of its own log
    folder (so on a testbed each node's archive carries its own); roq's receiver also writes
    the TLS key log of a captured run, as every QuicPair's connector does."""
    for source, names in (("quick.yaml", ("rise-host", "rise-guest")),
                          ("roq-rfc8867-d50.yaml", ("roq-sender", "roq-receiver"))):  # fmt: skip
        data = yaml.safe_load((REPO / "scenarios" / source).read_text())
        data.update(qlog=True, capture={})
        if source.startswith("roq"):  # one QUIC scheme, its link without the trace files
            data["link"] = yaml.safe_load((REPO / "scenarios" / "quick.yaml").read_text())["link"]
            data["settings"] = {"s": {}}
            data["schemes"] = {"scream": data["schemes"]["scream"]}
            data.pop("compare", None)
        path = tmp_path / f"q-{source}"
        path.write_text(yaml.safe_dump(data))
        p = _mininet_plan(path, "userspace", tmp_path)
        procs = {x["name"]: x["argv"] for n in p["nodes"].values() for x in n["spec"]["processes"]}
        for name, folder in zip(names, ("host", "guest"), strict=True):
            argv = procs[name]
            assert argv[argv.index("--qlog-dir") + 1] == f"{tmp_path}/r1.partial/{folder}/qlog"
        connector = procs[names[1]]
        assert connector[connector.index("--keylog") + 1] == f"{tmp_path}/r1.partial/tls-keys.log"
