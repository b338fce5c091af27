"""The workflow rejects a bad scenario as `priolab check` does: file, key, exit code 2.

Only Snakemake's planning runs (`-n`): no network state is built, so no root is needed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def _plan(scenario: Path, results: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{SNAKEMAKE.parent}:{os.environ['PATH']}"}
    return subprocess.run(
        [str(SNAKEMAKE), "-n", "--cores", "1", "--config", f"scenario={scenario}",
         f"results={results}", "calibrate=false"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


@pytest.mark.skipif(not SNAKEMAKE.is_file(), reason="snakemake is not installed in this venv")
def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nduration_s: [1\n")
    r = _plan(bad, tmp_path / "results")
    assert r.returncode == 2, r.stderr[-2000:]
    assert f"{bad}: (line 3, column 1): not valid YAML" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.skipif(not SNAKEMAKE.is_file(), reason="snakemake is not installed in this venv")
def test_out_of_range_value_names_the_key(tmp_path: Path) -> None:
    data = yaml.safe_load((REPO / "scenarios" / "quick.yaml").read_text())
    data["duration_s"] = -5
    bad = tmp_path / "neg.yaml"
    bad.write_text(yaml.safe_dump(data))
    r = _plan(bad, tmp_path / "results")
    assert r.returncode == 2, r.stderr[-2000:]
    assert f"{bad}: duration_s:" in r.stderr
    assert "Traceback" not in r.stderr
