"""The stock-kernel VM: one boot per session runs the in-VM test files (vm/intests/), and
each test here checks one file's results (the tc backend, the policer, Open vSwitch, linkem
against netem; the Ansible playbooks with the tc role when asked for: OPT_IN); one more boot
runs a scenario through the engine's vm site.

The VM is built (vm/image.py, cached under /var/cache/priolab-vm) if absent. These tests skip,
saying why, only where it cannot be built or booted (not root, no debootstrap/qemu); set
PRIOLAB_VM_REQUIRED=1 (CI does) to make that a failure instead.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ground.reasons import Code, from_metadata, without
from tests.conftest import REPO, VM_JOB_SUMMARY
from vm.run import Budget, JobResult

pytestmark = [pytest.mark.netns, pytest.mark.slow]

IN_VM_FILES = {
    "tc": "vm/intests/test_tc_backend.py",
    "policer": "vm/intests/test_policer.py",
    "ovs": "vm/intests/test_ovs.py",
    "compare": "vm/intests/test_linkem_vs_netem.py",
    "ansible": "vm/intests/test_ansible_tc.py",
}
OPT_IN = {
    "ansible": "the in-VM Ansible run (site.yml, run.yml with netem, clean.yml) took more than "
    "half of the in-VM time under TCG and runs only when PRIOLAB_VM_TESTS names it: the link "
    "role runs netem/tc.py's argv lists, which test_tc_backend.py runs on this kernel, and the "
    "playbooks run for real on the host (tests/test_ansible_testbed.py)",
}
"""In-VM files that run only when named (PRIOLAB_VM_TESTS=ansible, or =all), and why."""
BUDGET = Budget(base_s=600.0, reference_boot_s=37.0, reference_startup_s=2.6, max_scale=2.0)
"""The in-VM tests' time after boot: 600 s on a host that boots in 37 s and starts a probe in
2.6 s (an idle 2-core AMD EPYC: the timings page, docs/results/timings.md), scaled up to 2x on
a slower host (vm/run.py Budget; at most 1,274 s). A host more than 2x slower is stopped at its
boot or its third probe (Budget.too_slow), so the whole of `make test` on a host twice as slow
as the reference stays within twice its time there."""
TIMINGS_ENV = "PRIOLAB_TIMINGS_DIR"
"""A folder that receives the job's timing record (vm-job.json), e.g. evidence/timings."""
SELECT_ENV = "PRIOLAB_VM_TESTS"
"""Comma-separated keys of IN_VM_FILES to run (default: all but OPT_IN), or `all`, e.g.
PRIOLAB_VM_TESTS=policer,ovs while working on those; the others then skip, saying so. CI never
sets it."""


def _selected() -> list[str]:
    raw = os.environ.get(SELECT_ENV, "")
    if raw == "all":
        return list(IN_VM_FILES)
    keys = [k for k in raw.split(",") if k]
    unknown = set(keys) - IN_VM_FILES.keys()
    if unknown:
        raise ValueError(
            f"{SELECT_ENV}: unknown {sorted(unknown)}; allowed {list(IN_VM_FILES)} or all"
        )
    return keys or [k for k in IN_VM_FILES if k not in OPT_IN]


def _unavailable(reason: str) -> None:
    if os.environ.get("PRIOLAB_VM_REQUIRED") == "1":
        pytest.fail(f"PRIOLAB_VM_REQUIRED=1 but the VM cannot run: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def vm_job(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> dict[str, Any]:
    from vm.cli import in_vm_pytest_argv
    from vm.image import VmUnavailable, build, why_unavailable
    from vm.run import Command, run_job

    reason = why_unavailable()
    if reason is not None:
        _unavailable(reason)
    try:
        img = build()
    except VmUnavailable as e:
        _unavailable(str(e))
    job_dir = tmp_path_factory.mktemp("vm-job")
    files = [IN_VM_FILES[k] for k in _selected()]
    res = run_job(
        [Command(in_vm_pytest_argv(files), timeout_s=BUDGET.cap_s(), cwd=str(REPO))],
        timeout_s=BUDGET.cap_s(),
        job_dir=job_dir,
        image=img,
        budget=BUDGET,
    )
    pytestconfig.stash[VM_JOB_SUMMARY] = res.summary()
    _keep_timings(res)
    if res.too_slow:  # fail now, naming the slow step, rather than run out CI's clock
        pytest.fail(f"{res.too_slow}\n{res.summary()}")
    junit = res.out_dir / "junit.xml"
    assert junit.exists(), f"no test report from the VM:\n{res.summary()}\n{res.guest_log[-3000:]}"
    cases: dict[str, dict[str, Any]] = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                outcome = child.tag
                message = (child.get("message") or "") + "\n" + (child.text or "")[-3000:]
        cases[f"{tc.get('classname')}::{tc.get('name')}"] = {"outcome": outcome, "msg": message}
    figures = res.out_dir / "figures.json"
    print(res.summary())
    return {
        "cases": cases,
        "figures": json.loads(figures.read_text()) if figures.exists() else {},
        "result": res,
    }


def _keep_timings(res: JobResult) -> None:
    """The job's timing record (vm/timings.py) in its folder, and in $PRIOLAB_TIMINGS_DIR
    when set (the generated timings page reads it from there: book/timings.py)."""
    from priolab.provenance import git_info, host_info
    from vm.timings import RECORD_NAME, record

    rec = record(res.job_dir, {
        "boot_s": res.boot_s, "wall_s": round(res.wall_s, 3), "budget_s": res.budget_s,
        "timed_out": res.timed_out, "host": host_info(), "commit": git_info()["commit"],
        "files": _selected(),
    })  # fmt: skip
    text = json.dumps(rec, indent=1, sort_keys=True) + "\n"
    (res.job_dir / RECORD_NAME).write_text(text)
    if os.environ.get(TIMINGS_ENV):
        out = Path(os.environ[TIMINGS_ENV])
        out.mkdir(parents=True, exist_ok=True)
        (out / RECORD_NAME).write_text(text)


def _check(vm_job: dict[str, Any], key: str) -> None:
    if key not in _selected():
        if key in OPT_IN and not os.environ.get(SELECT_ENV):
            pytest.skip(OPT_IN[key])
        pytest.skip(f"{SELECT_ENV}={os.environ.get(SELECT_ENV)} leaves out {key}")
    module = IN_VM_FILES[key].removesuffix(".py").replace("/", ".")
    mine = {k: v for k, v in vm_job["cases"].items() if k.startswith(module)}
    assert mine, f"no results from {IN_VM_FILES[key]} in the VM"
    bad = {k: v for k, v in mine.items() if v["outcome"] != "passed"}
    assert not bad, "\n\n".join(f"{k}: {v['outcome']}\n{v['msg']}" for k, v in bad.items())


def test_tc_backend_in_vm(vm_job: dict[str, Any]) -> None:
    _check(vm_job, "tc")


def test_ovs_topologies_in_vm(vm_job: dict[str, Any]) -> None:
    _check(vm_job, "ovs")


def test_linkem_vs_netem_in_vm(vm_job: dict[str, Any]) -> None:
    _check(vm_job, "compare")
    assert "compare" in vm_job["figures"], "the comparison sweep wrote no figures"


def test_policer_in_vm(vm_job: dict[str, Any]) -> None:
    _check(vm_job, "policer")


def test_ansible_playbooks_in_vm(vm_job: dict[str, Any]) -> None:
    """site.yml, run.yml (the stand-in's full link on tc with netem) and clean.yml for real."""
    _check(vm_job, "ansible")
    assert {"site.yml", "run.yml", "clean.yml"} <= vm_job["figures"]["ansible_seconds"].keys()


def test_vm_site_runs_a_scenario_on_tc(vm_job: dict[str, Any], tmp_path: Path) -> None:
    """The engine's vm site: the stand-in scenario (iperf3 + ping, 3 s) on the Mininet site
    inside the VM, its link on tc with netem (10.5 ms each way), the run folder on the host.
    Depends on vm_job only so that it runs after the VM is known to work."""
    import yaml

    from priolab.engine.sites.vm import run_one_in_vm
    from priolab.scenario import expand, load
    from tests.test_ansible_testbed import ping_rtts_ms

    data = yaml.safe_load((REPO / "scenarios" / "standin.yaml").read_text())
    data["duration_s"] = 3
    data["workload"]["params"]["udp_rate_mbps"] = 5
    sc = tmp_path / "standin.yaml"
    sc.write_text(yaml.safe_dump(data))
    spec = expand(load(sc), sc)[0]
    out = tmp_path / "results" / spec.rel_dir
    meta = run_one_in_vm(spec, sc, out)
    assert (out / "metadata.json").is_file() and not Path(f"{out}.partial").exists()
    assert meta["site"]["kind"] == "vm" and meta["site"]["inside"] == "mininet"
    assert meta["vm"]["kernel"].endswith("-amd64") and not meta["vm"]["timed_out"]
    assert meta["backend"]["used"] == "tc"
    # the emulated or the host's CPUs may be saturated (the verdict says so); nothing else
    other = without(from_metadata(meta), Code.CPU_SATURATED, Code.HOST_CPU_SATURATED)
    assert "host_cpu" in meta["vm"]
    assert not other, [r.prose() for r in other]
    applied = json.loads((out / "tc-applied.json").read_text())
    assert any("netem" in c for c in applied["commands"]), applied["commands"]
    assert meta["link_final"]["errors"] == []
    rtts = ping_rtts_ms(out)
    assert len(rtts) >= 2 and min(rtts) >= 21.0, rtts  # 10.5 ms each way, on netem
