"""Shared fixtures: scenario files written to tmp, root/namespace availability."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import IO

import pytest
import yaml

from ground import data, machine_lock

REPO = Path(__file__).resolve().parent.parent


def dataset(name: str) -> Path:
    """The folder of a dataset of data/manifest.toml with all its files (PRIOLAB_DATA, then
    the checkout's data/), or a skip that names the fetch command: a test that needs real data
    skips only when neither folder holds it."""
    found = data.dataset_dir(name)
    if found is None:
        pytest.skip(data.skip_reason(name))
    return found


def has_dataset(name: str) -> bool:
    """For skipif marks: whether `dataset(name)` would find the folder."""
    return data.dataset_dir(name) is not None


NEEDS_ROOT_REASON = "needs root and Mininet's mnexec to build real network namespaces"
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mnexec") is None, reason=NEEDS_ROOT_REASON
)

_machine_lock: list[IO[str] | None] = []


def builds_network_state(item: pytest.Item) -> bool:
    """A test marked `netns`, or one that uses `needs_root`."""
    if item.get_closest_marker("netns") is not None:
        return True
    return any(m.kwargs.get("reason") == NEEDS_ROOT_REASON for m in item.iter_markers("skipif"))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the session's first test that builds network state, take the machine lock
    (ground/machine_lock.py) and hold it to the end of the session, so that a test run
    never tears down another run's namespaces. A test that skips never gets here (pytest
    evaluates skip marks first), and a session started under `flock` on the same file
    does not wait for itself."""
    if _machine_lock or os.geteuid() != 0 or not builds_network_state(item):
        return
    _machine_lock.append(machine_lock.hold(who=f"pytest ({item.nodeid})"))


GENERIC_LIBM = {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX"}
"""The second code path of the tests that check numbers are the same on every CPU: glibc's
dynamic loader then picks its generic (SSE2) math kernels instead of the FMA/AVX2 ones, and
numpy's exp, sin and log, which call glibc's below AVX-512, follow. Set it in a subprocess's
environment: the loader reads it at start-up."""


def cpu_has_fma() -> bool:
    """Whether this CPU has FMA, so that GENERIC_LIBM selects other kernels than the default."""
    try:
        return " fma " in f" {Path('/proc/cpuinfo').read_text()} ".replace("\n", " ")
    except OSError:
        return False


VM_JOB_SUMMARY = pytest.StashKey[str]()
"""tests/test_vm.py puts the VM job's boot, probe start-up, budget and wall time here."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the VM job's timing at the end of every run that booted it (pytest -q hides a
    passing fixture's output; a slow host shows up here before it fails a budget)."""
    summary = terminalreporter.config.stash.get(VM_JOB_SUMMARY, None)
    if summary:
        terminalreporter.write_sep("-", "stock-kernel VM job")
        terminalreporter.write_line(summary)


def copy_rust_sources(dst: Path) -> None:
    """The workspace's manifests and every crate's build sources into `dst` (a copy a test
    may change: the checkout's files are never touched)."""
    from priolab.evidence import crates

    for name in ("Cargo.toml", "Cargo.lock"):
        shutil.copy(REPO / name, dst / name)
    for m in crates.members(REPO).values():
        for f in crates.crate_files(REPO, m):
            (dst / f.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, dst / f.relative_to(REPO))


def mark_built(results: Path, site: str = "sim") -> None:
    """Every workload's build stamp in a results tree (rules/build.smk), as if built: a test
    of the workflow whose binaries `make build` made already."""
    from priolab.evidence.digest import build_stamp
    from priolab.workloads import WORKLOADS

    for kind in WORKLOADS:
        stamp = build_stamp(results, kind, site, REPO)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()


@pytest.fixture
def standin_dict() -> dict:
    return yaml.safe_load((REPO / "scenarios" / "standin.yaml").read_text())


@pytest.fixture
def write_scenario(tmp_path: Path):
    def write(data: dict, name: str = "scenario.yaml") -> Path:
        p = tmp_path / name
        p.write_text(yaml.safe_dump(data))
        return p

    return write
