"""The stock-kernel VM: one boot per session runs every in-VM test file (vm/intests/), and
each test here checks one file's results (the tc backend, Open vSwitch, linkem against netem).

The VM is built (vm/image.py, cached under /var/cache/priolab-vm) if absent. These tests skip,
saying why, only where it cannot be built or booted (not root, no debootstrap/qemu); set
PRIOLAB_VM_REQUIRED=1 (CI does) to make that a failure instead.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.netns, pytest.mark.slow]

IN_VM_FILES = {
    "tc": "vm/intests/test_tc_backend.py",
    "ovs": "vm/intests/test_ovs.py",
    "compare": "vm/intests/test_linkem_vs_netem.py",
}
"""vm/intests/test_ansible_tc.py is not run yet: its one boot (image without git) failed in
`priolab testbed finish` (provenance needs git, now in the image) and was not re-run."""
TIMEOUT_S = 1800.0


def _unavailable(reason: str) -> None:
    if os.environ.get("PRIOLAB_VM_REQUIRED") == "1":
        pytest.fail(f"PRIOLAB_VM_REQUIRED=1 but the VM cannot run: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def vm_job(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
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
    files = [f for f in IN_VM_FILES.values() if (REPO / f).exists()]
    res = run_job(
        [Command(in_vm_pytest_argv(files), timeout_s=TIMEOUT_S - 200, cwd=str(REPO))],
        timeout_s=TIMEOUT_S,
        job_dir=job_dir,
        image=img,
    )
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


def _check(vm_job: dict[str, Any], key: str) -> None:
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
