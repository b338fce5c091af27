"""Shared fixtures: scenario files written to tmp, root/namespace availability."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mnexec") is None,
    reason="needs root and Mininet's mnexec to build real network namespaces",
)


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
