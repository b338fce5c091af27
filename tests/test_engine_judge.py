"""engine.judge on plain JSON, read into the typed plan and reports as finish reads them: the
verdict every site gives, without running anything."""

from __future__ import annotations

import copy
from typing import Any

from ground.reasons import aborted, from_metadata
from priolab.engine import judge as judging
from priolab.engine.judge import linkem_final, tc_final
from priolab.engine.report import ProcessReport
from tests.engine_plans import node_reports, run_plan
from tests.test_netem_linkem_stats import line, write


def judge(plan: dict, reports: dict, *args: Any) -> dict[str, Any]:
    """The judge on a plan and reports given as JSON."""
    return judging.judge(run_plan(plan), node_reports(reports), *args)


def codes(verdict: dict[str, Any]) -> list[str]:
    return [r.code.value for r in from_metadata(verdict)]


T0 = 1_700_000_000.0


def proc(name: str, runs_to_end: bool = True, start_at_s: float = 1.0, **kw: Any) -> dict:
    return {"name": name, "argv": [name], "start_at_s": start_at_s, "runs_to_end": runs_to_end,
            "ok_exit_codes": [0], "stdout": f"logs/{name}.stdout",
            "stderr": f"logs/{name}.stderr", "env": {}, "wait_for_file": None,
            "ready_file": None, **kw}  # fmt: skip


PLAN = {
    "duration_s": 10.0,
    "link": {"applied": {"backend": "userspace"}},
    "nodes": {
        "guest": {"name": "g", "spec": {"processes": [proc("client"), proc("ping")]}},
        "host": {"name": "h", "spec": {"processes": [proc("server")]}},
        "emu": {"name": "e", "spec": {"processes": [
            proc("linkem", runs_to_end=False, start_at_s=0.0, link=True)]}},
    },
}  # fmt: skip


def ran(name: str, node: str, start: float, end: float, code: int | None = 0, **kw: Any) -> dict:
    return {"name": name, "node": node, "planned_start_time": start, "start_time": start,
            "end_time": end, "exit_code": code, "stopped_by_harness": None,
            "start_error": None, "ready_time": None,
            "cpu": {"cpu_s": 1.0, "core_mean_pct": 10.0, "core_max_pct": 20.0}, **kw}  # fmt: skip


def reports(samples: float = 0.3) -> dict[str, dict]:
    def node(name: str, procs: list[dict]) -> dict:
        return {
            "node": name,
            "processes": procs,
            "cpu_samples": [samples] * 20,
            "cpu_interval_s": 0.5,
            "clock": {"chrony": None},
            "errors": [],
        }

    return {
        "guest": node("guest", [ran("client", "guest", T0 + 1, T0 + 11),
                                ran("ping", "guest", T0 + 1, T0 + 11)]),
        "host": node("host", [ran("server", "host", T0 + 1, T0 + 11.2)]),
        "emu": node("emu", [ran("linkem", "emu", T0, T0 + 12, stopped_by_harness="SIGTERM",
                                ready_time=T0 + 0.1)]),
    }  # fmt: skip


LINK_OK = {"oversized_frames": 0, "errors": []}


def test_a_clean_run_is_valid_and_linkem_cpu_stands_beside_the_endpoints() -> None:
    v = judge(PLAN, reports(), LINK_OK)
    assert v["valid"] and v["invalid_reasons"] == []
    assert [p["name"] for p in v["processes"]] == ["client", "ping", "server"]
    assert [p["name"] for p in v["link_processes"]] == ["linkem"]
    assert v["ran_s"] == 10.0
    assert set(v["cpu"]["processes"]) == {"client", "ping", "server", "linkem"}
    assert v["cpu"]["processes"]["linkem"]["node"] == "emu"
    assert set(v["cpu"]["nodes"]) == {"guest", "host", "emu"}


def test_each_rule_names_its_reason() -> None:
    r = reports()
    r["guest"]["processes"][1]["exit_code"] = 2
    r["host"]["processes"][0]["stopped_by_harness"] = "SIGKILL"
    assert judge(PLAN, r, LINK_OK)["invalid_reasons"] == [
        "ping exited with code 2", "server did not exit by itself (SIGKILL)"]  # fmt: skip
    r = reports()
    r["guest"]["processes"][0]["end_time"] = T0 + 5
    assert judge(PLAN, r, LINK_OK)["invalid_reasons"] == ["ran 4.0 s of 10 s"]
    r = reports()
    r["guest"]["processes"][0]["start_time"] = T0 + 2.5
    assert "client started 1.50 s after its planned time" in judge(PLAN, r, LINK_OK)[
        "invalid_reasons"]  # fmt: skip
    r = reports()
    r["emu"]["processes"][0]["ready_time"] = T0 + 3
    assert judge(PLAN, r, LINK_OK)["invalid_reasons"] == [
        "linkem was not forwarding when the workload started"]  # fmt: skip
    assert codes(judge(PLAN, reports(samples=0.95), LINK_OK)) == ["cpu_saturated"]
    bad_link = {"oversized_frames": 3, "errors": ["x"]}
    assert judge(PLAN, reports(), bad_link)["invalid_reasons"] == [
        "emulator saw 3 oversized frames", "link emulation: x"]  # fmt: skip
    r = reports()
    r["host"]["clock"] = {"chrony": {"system_offset_s": 0.002}}
    assert judge(PLAN, r, LINK_OK)["invalid_reasons"] == [
        "host: clock offset 2.000 ms exceeds 1 ms (chrony)"]  # fmt: skip


def test_missing_report_and_site_errors_come_first() -> None:
    r = reports()
    del r["host"]
    v = judge(PLAN, r, LINK_OK, [aborted("SIGINT")])
    assert v["invalid_reasons"][:2] == ["aborted by SIGINT", "no report from the host node (h)"]
    assert codes(v)[:2] == ["aborted", "no_report"]
    r = reports()
    r["guest"]["errors"] = ["agent aborted by SIGTERM"]
    v = judge(PLAN, r, LINK_OK)
    assert v["invalid_reasons"] == ["guest: agent aborted by SIGTERM"]
    assert v["invalid"] == [
        {"code": "node_error", "detail": "agent aborted by SIGTERM", "node": "guest"}
    ]


def test_every_reason_has_a_code_and_the_prose_is_its_rendering() -> None:
    """Each rule gives its own code; `invalid_reasons` is `invalid` rendered, in order."""
    r = reports(samples=0.95)
    r["guest"]["processes"][0]["exit_code"] = 3
    r["host"]["clock"] = {"chrony": {"system_offset_s": 0.002}}
    r["guest"]["udp_counters"] = {"start": {"udp": {"RcvbufErrors": 0}},
                                  "end": {"udp": {"RcvbufErrors": 5}}}  # fmt: skip
    host_cpu = {"saturated": True, "utilisation_mean_pct": 99.0, "rule": "mean >= 90 %"}
    v = judge(PLAN, r, {"oversized_frames": 2, "errors": ["x"]}, ["no pcap"], host_cpu)
    assert codes(v) == ["site", "exit_code", "cpu_saturated", "host_cpu_saturated",
                        "oversized_frames", "link_error", "clock_offset",
                        "rcvbuf_drops"]  # fmt: skip
    assert v["invalid_reasons"] == [x.prose() for x in from_metadata(v)]
    assert v["invalid_reasons"][3] == (
        "host CPU saturated (mean 99.0 %, rule: mean >= 90 %): the VM's emulated CPUs were starved"
    )
    assert not judge(PLAN, reports(), LINK_OK, None, {"saturated": False})["invalid"]


def test_judge_does_not_change_its_inputs() -> None:
    plan, r = run_plan(PLAN), node_reports(reports())
    before = (plan.model_copy(deep=True), copy.deepcopy(r))
    judging.judge(plan, r, LINK_OK)
    assert (plan, r) == before


def test_link_counters(tmp_path) -> None:
    stats = tmp_path / "linkem-stats.jsonl"
    write(
        stats, line("a_to_b", 1, departures=5), line("a_to_b", 1, True, departures=9, oversized=1)
    )
    lk = {"name": "linkem", "node": "emu", "argv": ["linkem"], "stdout": "o", "stderr": "e"}
    out = linkem_final(stats, ProcessReport(**lk, exit_code=0, stopped_by_harness="SIGTERM"))
    assert out["uplink"]["departures"] == 9 and out["oversized_frames"] == 1
    assert out["errors"] == ["no final stats line for b_to_a in linkem-stats.jsonl"]
    out = linkem_final(stats, ProcessReport(**lk, exit_code=3, stopped_by_harness=None))
    assert "linkem exited by itself with code 3 before the run ended" in out["errors"]
    t = tc_final({"eth0": []}, [{"changes": 4, "errors": []}, {"changes": 2, "errors": ["e"]}])
    assert t["trace_rate_changes"] == 6 and t["errors"] == ["e"]


def udp(rcvbuf: int, in_errors: int | None = None, v6: int = 0) -> dict:
    v4 = {"InErrors": rcvbuf if in_errors is None else in_errors, "RcvbufErrors": rcvbuf,
          "SndbufErrors": 0}  # fmt: skip
    return {"time": T0, "udp": v4, "udp6": {"InErrors": v6, "RcvbufErrors": v6, "SndbufErrors": 0}}


def with_udp(r: dict, node: str, start: dict, end: dict) -> dict:
    r[node]["udp_counters"] = {"start": start, "end": end}
    return r


def test_receive_buffer_drops_make_a_run_invalid_naming_the_node_and_the_count() -> None:
    plan = {**PLAN, "run": {"workload": {"kind": "rise"}}}
    r = with_udp(reports(), "guest", udp(5), udp(5 + 200, v6=38))
    r = with_udp(r, "host", udp(0), udp(0))
    v = judge(plan, r, LINK_OK)
    assert not v["valid"]
    assert v["invalid_reasons"] == [
        "guest: the kernel dropped 238 UDP datagrams from full socket receive buffers "
        "(RcvbufErrors): losses the link did not make"
    ]
    assert v["udp_drops"]["guest"] == {"InErrors": 238, "RcvbufErrors": 238, "SndbufErrors": 0}
    assert v["udp_drops"]["host"] == {"InErrors": 0, "RcvbufErrors": 0, "SndbufErrors": 0}
    # a node without readings is recorded as unknown, not as zero
    assert v["udp_drops"]["emu"] is None
    # other UDP errors (e.g. checksum) are recorded but do not invalidate the run
    r = with_udp(reports(), "guest", udp(0), udp(0, in_errors=4))
    v = judge(plan, r, LINK_OK)
    assert v["valid"] and v["udp_drops"]["guest"]["InErrors"] == 4


def test_the_probe_workload_records_receive_drops_without_invalidating() -> None:
    plan = {**PLAN, "run": {"workload": {"kind": "probe"}}}
    r = with_udp(reports(), "guest", udp(0), udp(1000))
    v = judge(plan, r, LINK_OK)
    assert v["valid"], v["invalid_reasons"]
    assert v["udp_drops"]["guest"]["RcvbufErrors"] == 1000
