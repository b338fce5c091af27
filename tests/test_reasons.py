"""Invalid-run reasons as data (ground/reasons.py) and the VM site's second judging
(engine/finish.py rejudge): old run folders still read, nothing decides on prose."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from ground import rundir
from ground.reasons import Code, Reason, from_metadata, kind, verdict_fields, without
from priolab.engine.finish import finish, rejudge
from tests.engine_plans import node_report, run_plan

REPO = Path(__file__).resolve().parent.parent


def test_structured_reasons_round_trip_and_render_to_the_prose_list() -> None:
    rs = [Reason(Code.CPU_SATURATED, "CPU saturated (mean 99 %)"),
          Reason(Code.NODE_ERROR, "agent aborted by SIGTERM", "guest")]  # fmt: skip
    meta = json.loads(json.dumps(verdict_fields(rs)))
    assert meta["valid"] is False
    assert meta["invalid_reasons"] == [
        "CPU saturated (mean 99 %)",
        "guest: agent aborted by SIGTERM",
    ]
    assert from_metadata(meta) == rs
    assert [kind(r) for r in rs] == ["cpu_saturated", "node_error"]
    assert without(rs, Code.CPU_SATURATED) == rs[1:]


def test_a_run_folder_from_before_the_codes_still_reads() -> None:
    """Only prose: each reason is `unstructured` and counts whole; invalid with no reason at
    all: `unrecorded`; a valid run: none; an unknown code reads as unstructured."""
    old = {"valid": False, "invalid_reasons": ["ran 2.0 s of 30 s"]}
    assert from_metadata(old) == [Reason(Code.UNSTRUCTURED, "ran 2.0 s of 30 s")]
    assert kind(from_metadata(old)[0]) == "ran 2.0 s of 30 s"
    assert [r.code for r in from_metadata({"valid": False})] == [Code.UNRECORDED]
    assert from_metadata({"valid": True, "invalid_reasons": []}) == []
    odd = {"valid": False, "invalid": [{"code": "from-the-future", "detail": "d"}]}
    assert from_metadata(odd) == [Reason(Code.UNSTRUCTURED, "d")]


def _run_folder(tmp_path: Path) -> Path:
    """A judged, unpromoted run of one process on the userspace link (as the Mininet site
    leaves it inside the VM with --keep-partial)."""
    out = tmp_path / "res" / "sc" / "S" / "pri" / "default" / "r1"
    work = rundir.begin(out)
    t0 = 1_700_000_000.0
    plan = {
        "site": "mininet", "shaper": "router", "backend": {}, "interfaces": {},
        "duration_s": 10.0, "run": {"workload": {"kind": "rise"}},
        "link": {"applied": {"backend": "userspace"}},
        "nodes": {"guest": {"name": "g", "spec": {"processes": [
            {"name": "client", "runs_to_end": True, "ok_exit_codes": [0]}]}}},
    }  # fmt: skip
    report = {"processes": [{"name": "client", "planned_start_time": t0, "start_time": t0,
                             "end_time": t0 + 10, "exit_code": 0, "stopped_by_harness": None}],
              "cpu_samples": [0.2] * 20, "cpu_interval_s": 0.5, "errors": []}  # fmt: skip
    (work / rundir.node_report("guest")).write_text(node_report("guest", report).model_dump_json())
    (work / rundir.PLAN).write_text(json.dumps(run_plan(plan).to_json()))
    return work


def test_rejudge_adds_the_host_cpu_and_only_then_promotes(tmp_path: Path) -> None:
    work = _run_folder(tmp_path)
    meta = finish(work, json.loads((work / rundir.PLAN).read_text()),
                  site_errors=["no pcap"], promote=False)  # fmt: skip
    assert work.is_dir() and not rundir.final(work).exists()
    codes = [r.code for r in from_metadata(meta)]  # no linkem here: link errors
    assert codes[0] == Code.SITE and set(codes[1:]) == {Code.LINK_ERROR}
    busy = {"saturated": True, "utilisation_mean_pct": 97.0, "rule": "mean >= 90 %"}
    meta = rejudge(work, busy, {"vm": {"host_cpu": busy}})
    out = rundir.final(work)
    assert out.is_dir() and not work.exists()
    assert rundir.read_metadata(out) == json.loads(json.dumps(meta, default=str))
    again = [r.code for r in from_metadata(meta)]  # kept, added, read again
    assert again == [Code.SITE, *codes[1:]][:1] + [Code.HOST_CPU_SATURATED] + codes[1:]
    assert meta["vm"]["host_cpu"] is busy and meta["invalid_reasons"][0] == "no pcap"


def test_no_program_matches_a_prefix_of_a_reason() -> None:
    """Decisions use `code`: no `startswith(` on a reason's prose anywhere in the tree."""
    argv = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"]
    files = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=True)
    files = files.stdout.split()
    pattern = re.compile(r"(reason|invalid|\berrors?\[0\]|\bwhy\b).*\.startswith\(", re.I)
    hits = [f"{f}:{n}" for f in files if (REPO / f).is_file()
            for n, line in enumerate((REPO / f).read_text().splitlines(), 1)
            if pattern.search(line) and "pattern" not in line]  # fmt: skip
    assert hits == []


RUN_FILE_NAMES = re.compile(
    r"""["'](metadata\.json|plan\.json|metrics\.json|linkem-stats\.jsonl|sim-spec\.json|"""
    r"""sim-report\.json|tc-applied\.json|tls-keys\.log|linkem\.json|linkem\.ready|"""
    r"""linkem-packets\.log)["'](?![A-Za-z])|["']\.?node-[{*]|["'](tc-stats-|tc-replay-|capture-)"""
)
OWNER = "ground/rundir.py"


def test_every_run_folder_name_comes_from_rundir() -> None:
    """The file names of a run folder are spelled in ground/rundir.py only: every other
    module (netem's backends, the engine, the agent, which has its report's name from its
    spec, and the workloads) asks it. Tests are left out: they check the names."""
    argv = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"]
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=True).stdout
    files = [REPO / f for f in out.split() if not f.startswith("tests/") and f != OWNER
             and not Path(f).name.startswith("test_")]  # fmt: skip
    files = [f for f in files if f.is_file() and not f.is_symlink()]  # the agent's copy
    spelled = {str(f.relative_to(REPO)) for f in files if RUN_FILE_NAMES.search(f.read_text())}
    assert spelled == set()
    owner = (REPO / OWNER).read_text()
    assert RUN_FILE_NAMES.search(owner), "the pattern no longer finds the names where they are"
