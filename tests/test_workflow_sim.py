"""The workflow's sim site, planned only (`snakemake -n`): nothing runs, no root needed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
pytestmark = pytest.mark.skipif(not SNAKEMAKE.is_file(), reason="snakemake is not installed")


def _run_jobs(stdout: str) -> list[str]:
    """The `run` jobs of a dry run's listing, one text block each."""
    return [b for b in re.split(r"\n(?=rule \w+:)", stdout) if b.startswith("rule run:")]


def _plan(*config: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{SNAKEMAKE.parent}:{os.environ['PATH']}"}
    return subprocess.run(
        [str(SNAKEMAKE), "-n", "--cores", "2", "--config", *config],
        cwd=REPO, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


def test_sim_runs_take_no_netns_resource_and_no_calibration(tmp_path: Path) -> None:
    r = _plan("site=sim", "scenario=scenarios/quick.yaml", f"results={tmp_path}", "calibrate=true")
    assert r.returncode == 0, r.stderr[-2000:]
    runs = _run_jobs(r.stdout)
    assert len(runs) == 16 and all("netns=0" in b for b in runs)
    assert "rule calibrate:" not in r.stdout
    mininet = _plan("scenario=scenarios/quick.yaml", f"results={tmp_path}", "calibrate=false")
    assert _run_jobs(mininet.stdout) and all("netns=1" in b for b in _run_jobs(mininet.stdout))


def test_a_scenario_the_sim_cannot_run_is_refused_naming_the_key(tmp_path: Path) -> None:
    r = _plan("site=sim", "scenario=scenarios/qpr-quick.yaml", f"results={tmp_path}")
    assert r.returncode == 2, r.stderr[-2000:]
    assert ("scenarios/qpr-quick.yaml: settings.driving-loss0 + schemes.h2 + speeds.default "
            "→ workload.transport: 'h2' is HTTP/2 over the kernel's TCP") in r.stderr  # fmt: skip
    assert "Traceback" not in r.stderr
