"""analysis/workload.py: a run's workload analysis is found through the entry-point group
`analysis.workloads`, which priolab fills with its registry (pyproject.toml), so analysis
imports no workload package (tests/test_import_graph.py)."""

import tomllib
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from analysis import workload
from analysis.logs import AnalysisError
from analysis.workload import LinkOnly, analysis_for, workload_packages
from priolab.workloads import PACKAGES
from tests.conftest import REPO


@pytest.fixture
def fresh_lookup() -> Iterator[None]:
    """workload_packages() caches what it found: forget it before and after a test that
    replaces the installed entry points."""
    workload_packages.cache_clear()
    yield
    workload_packages.cache_clear()


@dataclass
class FakeEntryPoint:
    value: str
    provides: dict[str, str]

    def load(self) -> dict[str, str]:
        return self.provides


def test_pyproject_declares_priolab_registry_in_the_group():
    eps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]
    assert eps[workload.ENTRY_POINTS] == {"priolab": "priolab.workloads:PACKAGES"}


def test_installed_entry_point_is_priolab_registry(fresh_lookup):
    """Fails on an install older than pyproject.toml's entry point: `make venv` reinstalls."""
    assert workload_packages() == PACKAGES
    assert {"rise", "dtp", "moq", "qpr", "roq", "iperf-ping"} <= set(workload_packages())


def test_analysis_for_finds_each_kind_and_falls_back_to_the_link():
    from priolab.workloads.dtp.analysis import ANALYSIS as DTP
    from priolab.workloads.rise.analysis import ANALYSIS as RISE

    assert analysis_for("rise") is RISE
    assert analysis_for("dtp") is DTP
    assert isinstance(analysis_for("iperf-ping"), LinkOnly)  # a folder without analysis.py
    with pytest.raises(AnalysisError, match=r"workload kind 'nope': not one of \[.*'rise'"):
        analysis_for("nope")


def test_no_provider_is_an_error_that_says_how_to_install(fresh_lookup, monkeypatch):
    monkeypatch.setattr(workload.importlib.metadata, "entry_points", lambda group: [])
    with pytest.raises(AnalysisError, match=r"'analysis\.workloads'.*make venv"):
        analysis_for("rise")


def test_a_kind_provided_twice_names_both_packages(fresh_lookup, monkeypatch):
    eps = {
        "analysis.workloads": [
            FakeEntryPoint("a:PACKAGES", {"rise": "a.rise", "x": "a.x"}),
            FakeEntryPoint("b:PACKAGES", {"x": "a.x", "rise": "b.rise"}),
        ]
    }
    monkeypatch.setattr(workload.importlib.metadata, "entry_points", lambda group: eps[group])
    with pytest.raises(AnalysisError, match=r"'rise' is provided twice.*'a\.rise'.*'b\.rise'"):
        workload_packages()


def test_providers_are_merged(fresh_lookup, monkeypatch):
    eps = [FakeEntryPoint("a:P", {"one": "a.one"}), FakeEntryPoint("b:P", {"two": "b.two"})]
    monkeypatch.setattr(workload.importlib.metadata, "entry_points", lambda group: eps)
    assert workload_packages() == {"one": "a.one", "two": "b.two"}
