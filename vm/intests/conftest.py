"""Fixtures of the tests that run inside the priolab VM (tests/test_vm.py boots it and runs
them; `priolab vm test` does the same by hand). On any other machine they skip."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vm.linkbench import Bench

IN_VM = os.environ.get("PRIOLAB_IN_VM") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if IN_VM:
        return
    skip = pytest.mark.skip(reason="runs inside the priolab VM (tests/test_vm.py boots it)")
    for item in items:
        item.add_marker(skip)


def out_dir() -> Path:
    """Where files for the host go ($PRIOLAB_VM_OUT, shared over 9p)."""
    return Path(os.environ.get("PRIOLAB_VM_OUT", "/tmp/priolab-vm-out"))


@pytest.fixture(scope="session")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    b = Bench(tmp_path_factory.mktemp("bench"))
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="session")
def record() -> Iterator[dict[str, Any]]:
    """Figures measured by the tests, written to $PRIOLAB_VM_OUT/figures.json at the end."""
    figures: dict[str, Any] = {}
    yield figures
    d = out_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / "figures.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps(old | figures, indent=1, default=str))
