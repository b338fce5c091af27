"""Provenance where git is missing (the stock-kernel VM's first image had none: a run crashed)."""

from __future__ import annotations

from priolab import provenance


def test_git_info_without_git(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on the PATH
    assert provenance.git_info() == {"commit": None, "dirty": None}


def test_git_info_in_this_checkout() -> None:
    info = provenance.git_info()
    assert info["commit"] is not None and len(info["commit"]) == 40
    assert info["dirty"] in (True, False)
