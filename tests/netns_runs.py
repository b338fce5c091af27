"""What every netns test of a workload does, once: skip unless its programs are built, write a
shortened copy of a shipped scenario, run one matrix point with `priolab run-one` into a run
folder laid out by ground/rundir.py, and check the verdict (valid, but for a CPU the
machine's other work saturated: that verdict is the harness working, tested in test_cpu.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ground import rundir
from ground.reasons import Code, from_metadata, without
from tests.conftest import REPO

RELEASE = REPO / "target" / "release"


def program(name: str) -> Path:
    """A Rust program of the workspace: $PRIOLAB_<NAME> or target/release/<name>."""
    return Path(os.environ.get(f"PRIOLAB_{name.upper()}", RELEASE / name))


def require_built(*names: str) -> None:
    """Skip (saying which and how to build it) unless every program is built."""
    for name in names:
        p = program(name)
        if not p.is_file():
            pytest.skip(f"{p} is not built; `make build` builds it")


def shortened(
    tmp_path: Path, source: str, edit: Callable[[dict[str, Any]], None], **top: Any
) -> Path:
    """A copy of scenarios/<source> in tmp_path, one repetition, with `top` keys replaced and
    `edit` applied to the parsed YAML."""
    data = yaml.safe_load((REPO / "scenarios" / source).read_text())
    data.update(repetitions=1, **top)
    edit(data)
    p = tmp_path / f"test-{source}"
    p.write_text(yaml.safe_dump(data))
    return p


def run_point(
    scenario: Path,
    setting: str,
    scheme: str = "default",
    speed: str = "default",
    rep: int = 1,
    timeout_s: float = 180.0,
    results: Path | None = None,
    backend: str | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Run one matrix point on the Mininet site into `<results>/<rundir layout>` (default
    results: `results/` beside the scenario); return the run folder and its metadata, checked
    valid but for load."""
    name = yaml.safe_load(scenario.read_text())["name"]
    results = results or scenario.parent / "results"
    out = rundir.run_dir(results, name, setting, scheme, speed, rep)
    r = subprocess.run(
        [sys.executable, "-m", "priolab.cli", "run-one", str(scenario), "--setting", setting,
         "--scheme", scheme, "--speed", speed, "--rep", str(rep), "--out", str(out),
         *(["--backend", backend] if backend else [])],
        capture_output=True, text=True, cwd=REPO, timeout=timeout_s,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    meta = rundir.read_metadata(out)
    valid_but_for_load(meta)
    return out, meta


def valid_but_for_load(meta: dict[str, Any]) -> None:
    """No reason to reject the run but a saturated CPU; `valid` agrees with the reasons."""
    reasons = from_metadata(meta)
    other = without(reasons, Code.CPU_SATURATED)
    assert not other, [r.prose() for r in other]
    assert meta["valid"] == (not reasons)


def process_names(meta: dict[str, Any]) -> set[str]:
    return {p["name"] for p in meta["processes"]}
