"""The sim site's pure parts: plan → SPEC.json, what a sim run cannot do (and the message that
says so), the judge's CPU rule on sim runs, sim-report.json → node reports and errors."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from ground.errors import ScenarioError
from ground.reasons import Code, from_metadata
from priolab.engine import judge as judging
from priolab.engine.judge import sim_link_final
from priolab.engine.plan import GRACE_S, RunPlan, plan
from priolab.engine.sim_report import CANCELLED, node_reports, recv_drops, run_errors
from priolab.engine.sim_spec import (
    SIM_EPOCH_UNIX_NS,
    SimPlanError,
    SimSiteError,
    check,
    pairs,
    sim_check,
    sim_problems,
    sim_site,
    sim_spec,
)
from priolab.scenario import (
    Capture,
    RecvBuffers,
    RunSpec,
    SimOptions,
    Topology,
    expand,
    find_run,
    load,
)
from priolab.workloads import WORKLOADS
from tests.conftest import REPO
from tests.engine_plans import node_reports as typed_reports
from tests.engine_plans import run_plan
from tests.test_netem_linkem_stats import line, write

QUICK = REPO / "scenarios" / "quick.yaml"


def quick_run(path: Path = QUICK) -> RunSpec:
    return find_run(expand(load(path), path), "FB-4K-Low-L0.05", "pri", "moderate", 1)


def planned(spec: RunSpec, work: Path) -> tuple[RunPlan, Any]:
    site = sim_site(spec, work)
    return plan(spec, site, work.parent), site


def test_the_plan_becomes_the_contracts_spec(tmp_path: Path) -> None:
    spec = quick_run()
    work = tmp_path / "r1.partial"
    rp, site = planned(spec, work)
    s = sim_spec(rp, site, work)
    assert s["seed"] == spec.seed and s["epoch_unix_ns"] == SIM_EPOCH_UNIX_NS
    # no link process to wait for: the workload starts at virtual 0, and runs its duration
    # plus the grace every site gives
    assert s["deadline_s"] == spec.duration_s + GRACE_S
    assert s["nodes"] == {
        "guest": {"addr": "10.0.0.1", "side": "a", "recv_buffer_bytes": None},
        "host": {"addr": "10.0.0.2", "side": "b", "recv_buffer_bytes": None},
    }
    assert s["link"] == {"config": f"{work}/linkem.json", "stats": f"{work}/linkem-stats.jsonl",
                         "stats_interval_ms": 1000,
                         "packet_log": f"{work}/linkem-packets.log"}  # fmt: skip
    assert s["report"] == f"{work}/sim-report.json"
    by_name = {p["name"]: p for p in s["processes"]}
    assert set(by_name) == {"rise-guest", "rise-host"}
    for node in ("guest", "host"):
        p, pl = by_name[f"rise-{node}"], rp.to_json()["nodes"][node]["spec"]["processes"][0]
        assert p["node"] == node and p["cwd"] == str(work)
        assert p["argv"][0] == "rise"  # the registry's name, not a path
        assert p["argv"][1:] == pl["argv"][1:]  # the very argv the Mininet site runs
        assert p["start_at_s"] == 0.0 and p["runs_to_end"] and p["ok_exit_codes"] == [0]
        assert p["stdout"] == f"{work}/logs/rise-{node}.stdout"
        assert p["stderr"] == f"{work}/logs/rise-{node}.stderr"
    # every path in the SPEC is absolute
    paths = [s["link"]["config"], s["report"]] + [
        p[k] for p in s["processes"] for k in ("cwd", "stdout", "stderr")
    ]
    assert all(Path(x).is_absolute() for x in paths)
    # the link the sim builds is the one the userspace backend would: linkem's config
    cfg = rp.link.applied["config"]
    assert rp.link.backend == "sim"
    assert cfg["seed"] == spec.seed and cfg["a_to_b"]["loss"]["kind"] == "iid"
    assert rp.site == "sim" and rp.emulator is None and set(rp.nodes) == {"guest", "host"}


ROQ = REPO / "scenarios" / "roq-rfc8867.yaml"


@pytest.mark.parametrize("scheme", ["scream", "udp-scream"])
def test_a_roq_run_plans_on_sim_as_on_mininet(tmp_path: Path, scheme: str) -> None:
    """roq's two processes with the registry's name and the Mininet site's argv (the source
    clip among them); over UDP the receiver binds first and the sender starts 0.5 s later."""
    spec = find_run(expand(load(ROQ), ROQ), "d50", scheme, "default", 1)
    assert sim_problems(spec) == []
    rp, site = planned(spec, tmp_path / "w")
    procs = {p["name"]: p for p in sim_spec(rp, site, tmp_path / "w")["processes"]}
    assert set(procs) == {"roq-sender", "roq-receiver"}
    sender, receiver = procs["roq-sender"], procs["roq-receiver"]
    assert sender["node"] == "host" and receiver["node"] == "guest"
    assert sender["argv"][0] == receiver["argv"][0] == "roq"
    source = sender["argv"][sender["argv"].index("--source") + 1]
    assert Path(source).is_absolute() and source.endswith(".yuv")
    udp = scheme.startswith("udp")
    assert sender["argv"][sender["argv"].index("--transport") + 1] == ("udp" if udp else "quic")
    assert (sender["start_at_s"], receiver["start_at_s"]) == ((0.5, 0.0) if udp else (0.0, 0.0))


def test_without_packet_log_the_spec_asks_for_none(tmp_path: Path) -> None:
    spec = find_run(expand(load(QUICK), QUICK), "FB-4K-Low", "pri", "moderate", 1)
    rp, site = planned(spec, tmp_path / "w")
    assert sim_spec(rp, site, tmp_path / "w")["link"]["packet_log"] is None


def test_the_dumbbell_puts_senders_on_side_a_and_receivers_on_side_b(tmp_path: Path) -> None:
    spec = dataclasses.replace(quick_run(), topology=Topology(kind="dumbbell", pairs=2))
    rp, site = planned(spec, tmp_path / "w")
    s = sim_spec(rp, site, tmp_path / "w", SimOptions(recv_buffer_bytes=RecvBuffers(guest=212_992)))
    assert s["nodes"] == {
        "snd1": {"addr": "10.0.1.1", "side": "a", "recv_buffer_bytes": 212_992},
        "rcv1": {"addr": "10.0.2.1", "side": "b", "recv_buffer_bytes": None},
        "snd2": {"addr": "10.0.1.2", "side": "a", "recv_buffer_bytes": 212_992},
        "rcv2": {"addr": "10.0.2.2", "side": "b", "recv_buffer_bytes": None},
    }
    guest2 = next(p for p in s["processes"] if p["name"] == "rise-guest-2")
    assert guest2["node"] == "snd2" and "10.0.2.2:4433" in guest2["argv"]


def test_addresses_agree_with_the_mininet_topologies() -> None:
    pytest.importorskip("mininet", reason="the Mininet topologies need the mininet package")
    from topologies.access import GUEST_IP, HOST_IP
    from topologies.dumbbell import receiver_ip, sender_ip

    (access,) = pairs(Topology())
    assert (access.guest_ip, access.host_ip) == (GUEST_IP, HOST_IP)
    third = pairs(Topology(kind="dumbbell", pairs=3))[2]
    assert (third.guest_ip, third.host_ip) == (sender_ip(3), receiver_ip(3))


def test_the_receive_buffer_key_is_validated_and_reaches_the_spec(
    tmp_path: Path, write_scenario
) -> None:
    data = yaml.safe_load(QUICK.read_text())
    data["sim"] = {"recv_buffer_bytes": {"guest": 212_992}}
    spec = quick_run(write_scenario(data))
    assert spec.sim is not None and spec.to_json()["sim"] == {
        "recv_buffer_bytes": {"guest": 212_992, "host": None},
        "reader_stall": {"guest": None, "host": None},
    }
    rp, site = planned(spec, tmp_path / "w")
    s = sim_spec(rp, site, tmp_path / "w", spec.sim)
    assert s["nodes"]["guest"]["recv_buffer_bytes"] == 212_992
    assert s["nodes"]["host"]["recv_buffer_bytes"] is None
    assert "reader_stall" not in s["nodes"]["guest"]  # none asked for: the contract's nodes
    assert "sim" not in quick_run().to_json()  # a scenario without the key keeps its JSON
    for bad, words in (({"guest": 100}, "sim.recv_buffer_bytes.guest"),
                       ({"client": 5000}, "sim.recv_buffer_bytes.client")):  # fmt: skip
        data["sim"] = {"recv_buffer_bytes": bad}
        with pytest.raises(ScenarioError) as e:
            load(write_scenario(data, "bad.yaml"))
        assert words in str(e.value), str(e.value)


def test_a_reader_stall_reaches_the_spec_of_its_node_only(tmp_path: Path, write_scenario) -> None:
    data = yaml.safe_load(QUICK.read_text())
    data["sim"] = {"reader_stall": {"guest": {"every_ms": 50, "for_ms": 5}}}
    spec = quick_run(write_scenario(data))
    rp, site = planned(spec, tmp_path / "w")
    s = sim_spec(rp, site, tmp_path / "w", spec.sim)
    assert s["nodes"]["guest"]["reader_stall"] == {"every_ms": 50.0, "for_ms": 5.0}
    assert s["nodes"]["guest"]["recv_buffer_bytes"] is None
    assert "reader_stall" not in s["nodes"]["host"]
    for bad, words in (({"every_ms": 5, "for_ms": 5}, "for_ms (5) must be below every_ms (5)"),
                       ({"every_ms": 0, "for_ms": 1}, "sim.reader_stall.guest.every_ms"),
                       ({"every_ms": 5}, "sim.reader_stall.guest.for_ms")):  # fmt: skip
        data["sim"] = {"reader_stall": {"guest": bad}}
        with pytest.raises(ScenarioError) as e:
            load(write_scenario(data, "bad.yaml"))
        assert words in str(e.value), str(e.value)


def _with(spec: RunSpec, kind: str, **params: Any) -> RunSpec:
    model = WORKLOADS[kind].params_model
    return dataclasses.replace(spec, workload_kind=kind, params=model.model_validate(params))


PROBLEMS = [
    # (how the run is changed, the key named, words of the why)
    (lambda s: _with(s, "iperf-ping"), "workload.kind", "iperf3"),
    (lambda s: dataclasses.replace(s, link=s.link.model_copy(update={"backend": "tc"})),
     "link.backend", "'tc'"),
    (lambda s: _with(s, "qpr", transport="h2", q_pct=0),
     "settings.FB-4K-Low-L0.05 + schemes.pri + speeds.moderate → workload.transport", "TCP"),
]  # fmt: skip


@pytest.mark.parametrize("change,key,why", PROBLEMS, ids=[p[1] for p in PROBLEMS])
def test_what_a_sim_run_cannot_do_is_a_plan_error_naming_the_key(
    change: Any, key: str, why: str
) -> None:
    spec = change(quick_run())
    with pytest.raises(SimPlanError) as e:
        check(spec)
    ((k, msg),) = e.value.problems
    assert key in k and why in msg, (k, msg)
    assert key in str(e.value)


def test_a_sim_run_of_a_rust_workload_has_no_problem() -> None:
    spec = quick_run()
    assert sim_problems(spec) == []
    # the sim captures packets itself: a pcap per endpoint node, no tcpdump
    assert sim_problems(dataclasses.replace(spec, capture=Capture())) == []
    assert sim_problems(_with(spec, "qpr")) == []  # QUIC
    assert sim_problems(_with(spec, "dtp")) == []
    assert sim_problems(_with(spec, "roq")) == []  # GStreamer's codecs in zero virtual time
    assert sim_problems(_with(spec, "roq", transport="udp")) == []  # the sim's UDP sockets
    assert sim_problems(spec, backend="userspace") == []
    assert [k for k, _ in sim_problems(spec, backend="tc")] == ["--backend"]


def test_the_workflow_check_names_the_file_and_each_problem_once(tmp_path: Path) -> None:
    runs = [quick_run(), dataclasses.replace(quick_run(), rep=2)]
    runs = [dataclasses.replace(r, link=r.link.model_copy(update={"backend": "tc"})) for r in runs]
    with pytest.raises(SimSiteError) as e:
        sim_check(runs, tmp_path / "s.yaml")
    assert str(e.value).count("link.backend") == 1
    assert str(e.value).startswith(f"{tmp_path / 's.yaml'}: link.backend: 'tc'")


def test_a_process_environment_cannot_be_given_in_one_process(tmp_path: Path) -> None:
    spec = quick_run()
    rp, site = planned(spec, tmp_path / "w")
    rp.nodes["host"].spec.processes[0].env = {"RUST_LOG": "debug"}
    with pytest.raises(SimPlanError, match="rise-host.*RUST_LOG"):
        sim_spec(rp, site, tmp_path / "w")


# ------------------------------------------------------------------ the judge on sim runs

T0 = SIM_EPOCH_UNIX_NS / 1e9


def judge(plan: dict[str, Any] | RunPlan, reports: dict[str, Any], *args: Any) -> dict[str, Any]:
    """The judge on a plan and reports given as JSON (or as the models)."""
    typed = plan if isinstance(plan, RunPlan) else run_plan(plan)
    return judging.judge(typed, typed_reports(reports), *args)


def _judge_plan(site: str) -> dict[str, Any]:
    def proc(name: str) -> dict[str, Any]:
        return {"name": name, "argv": [name], "start_at_s": 0.0, "runs_to_end": True,
                "ok_exit_codes": [0], "stdout": "o", "stderr": "e", "env": {}}  # fmt: skip

    return {"site": site, "duration_s": 10.0, "run": {"workload": {"kind": "rise"}},
            "link": {"applied": {"backend": "sim"}},
            "nodes": {"guest": {"name": "guest", "spec": {"processes": [proc("c")]}},
                      "host": {"name": "host", "spec": {"processes": [proc("s")]}}}}  # fmt: skip


def _judge_reports(code: int = 0, samples: list[float] | None = None) -> dict[str, Any]:
    def rep(node: str, name: str, c: int) -> dict[str, Any]:
        p = {"name": name, "node": node, "planned_start_time": T0, "start_time": T0,
             "end_time": T0 + 10.2, "exit_code": c, "stopped_by_harness": None,
             "start_error": None}  # fmt: skip
        return {"node": node, "processes": [p], "cpu_samples": samples or [],
                "cpu_interval_s": 0.5, "errors": []}  # fmt: skip

    return {"guest": rep("guest", "c", code), "host": rep("host", "s", 0)}


def test_cpu_saturation_does_not_apply_to_a_sim_run_and_metadata_says_so() -> None:
    busy = [1.0] * 20
    sim = judge(_judge_plan("sim"), _judge_reports(samples=busy), {"errors": []})
    assert sim["valid"], sim["invalid_reasons"]
    assert sim["cpu"]["applies"] is False and "virtual clock" in sim["cpu"]["why"]
    mininet = judge(_judge_plan("mininet"), _judge_reports(samples=busy), {"errors": []})
    assert mininet["cpu"]["applies"] is True
    assert [r.code for r in from_metadata(mininet)] == [Code.CPU_SATURATED]


def test_process_failures_and_site_errors_still_invalidate_a_sim_run() -> None:
    v = judge(_judge_plan("sim"), _judge_reports(code=1), {"errors": []})
    assert v["invalid_reasons"] == ["c exited with code 1"]
    v = judge(_judge_plan("sim"), _judge_reports(), {"errors": []}, ["priolab-sim exited"])
    assert v["invalid_reasons"] == ["priolab-sim exited"]
    v = judge(_judge_plan("sim"), _judge_reports(), {"errors": ["no final stats line for b_to_a"]})
    assert v["invalid_reasons"] == ["link emulation: no final stats line for b_to_a"]


# ------------------------------------------------------------ sim-report.json → reports

SPEC = {
    "seed": 1, "epoch_unix_ns": SIM_EPOCH_UNIX_NS, "deadline_s": 45.0,
    "link": {"packet_log": None},
    "nodes": {"guest": {"addr": "10.0.0.1", "side": "a", "recv_buffer_bytes": 212_992},
              "host": {"addr": "10.0.0.2", "side": "b", "recv_buffer_bytes": None}},
    "processes": [{"node": "guest", "name": "c", "stdout": "/r/logs/c.stdout",
                   "stderr": "/r/logs/c.stderr"},
                  {"node": "host", "name": "s", "stdout": "/r/logs/s.stdout",
                   "stderr": "/r/logs/s.stderr"}],
}  # fmt: skip
RUN_PLAN = {
    "nodes": {
        "guest": {"spec": {"processes": [{"name": "c", "argv": ["/bin/c"], "start_at_s": 0.5,
                                          "stdout": "logs/c.stdout", "stderr": "logs/c.stderr"}]}},
        "host": {"spec": {"processes": [{"name": "s", "argv": ["/bin/s"], "start_at_s": 0.0,
                                         "stdout": "logs/s.stdout", "stderr": "logs/s.stderr"}]}},
    }
}  # fmt: skip
REPORT = {
    "virtual_s": 33.2, "wall_s": 0.9, "cpu_s": 0.88, "speedup": 36.9,
    "processes": [{"node": "guest", "name": "c", "exit_code": 0, "started_at_s": 0.5,
                   "ended_at_s": 33.0, "cancelled": False},
                  {"node": "host", "name": "s", "exit_code": None, "started_at_s": 0.0,
                   "ended_at_s": 33.2, "cancelled": True}],
    "link": {"a_to_b": {}, "b_to_a": {}},
    "sockets": {"10.0.0.1:50000": {"recv_buffer_drops": 4},
                "10.0.0.1:50001": {"recv_buffer_drops": 1},
                "10.0.0.2:4433": {"recv_buffer_drops": 0}},
    "errors": [],
}  # fmt: skip
HOST = {"hostname": "m", "kernel": "6.1"}


def test_node_reports_carry_virtual_times_cancellations_and_drops() -> None:
    reps = {n: r.to_json() for n, r in node_reports(run_plan(RUN_PLAN), SPEC, REPORT, HOST).items()}
    (c,) = reps["guest"]["processes"]
    assert (c["planned_start_time"], c["start_time"], c["end_time"]) == (T0 + 0.5, T0 + 0.5,
                                                                         T0 + 33.0)  # fmt: skip
    assert c["exit_code"] == 0 and c["stopped_by_harness"] is None and c["start_error"] is None
    assert c["argv"] == ["/bin/c"] and c["stdout"] == "logs/c.stdout"
    (s,) = reps["host"]["processes"]
    assert s["stopped_by_harness"] == CANCELLED
    assert reps["guest"]["udp_counters"]["end"]["udp"]["RcvbufErrors"] == 5
    assert reps["host"]["udp_counters"]["end"]["udp"]["RcvbufErrors"] == 0
    assert reps["guest"]["cpu_samples"] == [] and reps["guest"]["hostname"] == "m"
    assert recv_drops(SPEC, REPORT) == {"guest": 5, "host": 0}


def _sim_plan() -> RunPlan:
    """RUN_PLAN as the judge reads it: the guest's process runs to the end, the host's not."""
    nodes = {}
    for n in ("guest", "host"):
        procs = [{**p, "runs_to_end": n == "guest", "ok_exit_codes": [0]}
                 for p in RUN_PLAN["nodes"][n]["spec"]["processes"]]  # fmt: skip
        nodes[n] = {"name": n, "spec": {"processes": procs}}
    return run_plan({"site": "sim", "duration_s": 30.0, "run": {"workload": {"kind": "rise"}},
                     "link": {"applied": {"backend": "sim"}}, "nodes": nodes})  # fmt: skip


def test_the_judge_reads_sim_reports_as_any_site_s() -> None:
    plan_ = _sim_plan()
    reps = node_reports(plan_, SPEC, REPORT, HOST)
    v = judge(plan_, reps, {"errors": []})
    # the guest's modelled buffer dropped 5 datagrams: invalid, as on Mininet
    assert v["invalid_reasons"] == [
        "guest: the kernel dropped 5 UDP datagrams from full socket receive buffers "
        "(RcvbufErrors): losses the link did not make"
    ]
    assert v["udp_drops"]["guest"]["RcvbufErrors"] == 5 and v["ran_s"] == 33.0
    no_drops = copy.deepcopy(REPORT)
    no_drops["sockets"] = {}
    assert judge(plan_, node_reports(plan_, SPEC, no_drops, HOST), {"errors": []})["valid"]
    missing = copy.deepcopy(REPORT)
    missing["processes"] = missing["processes"][1:]
    v = judge(plan_, node_reports(plan_, SPEC, missing, HOST), {"errors": []})
    assert "c: not in sim-report.json: priolab-sim did not report it" in v["invalid_reasons"]


def test_run_errors_name_what_failed_or_is_missing() -> None:
    logs = {p[k] for p in SPEC["processes"] for k in ("stdout", "stderr")}
    assert run_errors(SPEC, REPORT, 0, "", logs) == []
    assert run_errors(SPEC, None, 101, "thread 'main' panicked at x\n", set()) == [
        "priolab-sim exited with code 101: thread 'main' panicked at x",
        "priolab-sim wrote no readable sim-report.json",
    ]
    bad = {**REPORT, "errors": ["rise-guest: unknown program"]}
    assert run_errors(SPEC, bad, 0, "", logs - {"/r/logs/s.stderr"}) == [
        "sim: rise-guest: unknown program",
        "s: its stderr file s.stderr is missing",
    ]
    asked = {**SPEC, "link": {"packet_log": "/r/linkem-packets.log"}}
    assert run_errors(asked, REPORT, 0, "", logs) == [
        "link.packet_log: asked for, but priolab-sim wrote no linkem-packets.log"
    ]


def test_the_sim_link_reads_linkems_stats_format(tmp_path: Path) -> None:
    stats = tmp_path / "linkem-stats.jsonl"
    write(stats, line("a_to_b", 1.0, True, departures=5))
    out = sim_link_final(stats, REPORT)
    assert out["uplink"]["departures"] == 5 and out["sim_counters"] == REPORT["link"]
    assert out["errors"] == ["no final stats line for b_to_a in linkem-stats.jsonl"]
    assert sim_link_final(tmp_path / "none.jsonl", None)["errors"][0].endswith("no stats file")
