"""priolab/paths.py: which priolab-sim build the sim site runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from priolab import paths


def _build(root: Path, rel: Path, mtime: float) -> Path:
    f = root / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("")
    os.utime(f, (mtime, mtime))
    return f


def test_the_release_build_when_there_is_no_fast_one(tmp_path: Path) -> None:
    assert paths.newest_sim_build(tmp_path) == tmp_path / paths.SIM_RELEASE  # none built yet
    release = _build(tmp_path, paths.SIM_RELEASE, 1000)
    assert paths.newest_sim_build(tmp_path) == release


def test_the_fast_build_when_it_is_the_newer_or_the_only_one(tmp_path: Path) -> None:
    fast = _build(tmp_path, paths.SIM_FAST, 1000)
    assert paths.newest_sim_build(tmp_path) == fast
    _build(tmp_path, paths.SIM_RELEASE, 900)
    assert paths.newest_sim_build(tmp_path) == fast


def test_a_fast_build_older_than_the_release_build_is_not_run(tmp_path: Path) -> None:
    _build(tmp_path, paths.SIM_FAST, 900)
    release = _build(tmp_path, paths.SIM_RELEASE, 1000)
    assert paths.newest_sim_build(tmp_path) == release


def test_priolab_sim_names_the_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PRIOLAB_SIM", str(tmp_path / "other"))
    assert paths.sim_binary() == tmp_path / "other"
    monkeypatch.delenv("PRIOLAB_SIM")
    assert paths.sim_binary() == paths.newest_sim_build(paths.REPO_ROOT)
