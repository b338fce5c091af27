"""What a release carries: the licence, the citation file, the changelog, and one version
number (priolab/__init__.py) that pyproject.toml, `priolab --version`, CITATION.cff,
CHANGELOG.md and the Cargo workspace agree on."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import pytest
import yaml

from priolab import __version__
from tests.conftest import REPO


def test_the_licence_is_mit_as_declared() -> None:
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert re.search(r"Copyright \(c\) \d{4} the priolab authors", text)
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    cargo = tomllib.loads((REPO / "Cargo.toml").read_text())["workspace"]["package"]
    assert project["license"] == cargo["license"] == "MIT"


def test_the_version_is_written_in_one_place() -> None:
    """pyproject.toml reads priolab.__version__; the others must say the same number."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "priolab.__version__"}
    cargo = tomllib.loads((REPO / "Cargo.toml").read_text())["workspace"]["package"]
    assert cargo["version"] == __version__


def test_the_installed_metadata_has_that_version() -> None:
    try:
        installed = metadata.version("priolab")
    except metadata.PackageNotFoundError:
        pytest.skip("priolab is not installed in this environment (make venv installs it)")
    assert installed == __version__


# The Citation File Format 1.2.0's required keys and the types of the ones used here
# (https://github.com/citation-file-format/citation-file-format, schema.json). A full schema
# check: `cffconvert --validate` in a throw-away venv (README.md, "Citing priolab").
CFF_REQUIRED = {"cff-version", "message", "title", "authors"}


def test_the_citation_file_is_valid_cff() -> None:
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert CFF_REQUIRED <= set(cff)
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] in ("software", "dataset")
    assert isinstance(cff["message"], str) and isinstance(cff["title"], str)
    assert cff["authors"] and all(
        isinstance(a, dict) and ("name" in a or "family-names" in a) for a in cff["authors"]
    )
    assert cff["authors"] == [{"name": "the priolab authors"}]
    assert cff["version"] == __version__  # a string, as CFF requires
    assert cff["license"] == "MIT"
    assert all(isinstance(k, str) for k in cff["keywords"])


def test_the_changelog_has_an_entry_for_this_version() -> None:
    text = (REPO / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog")
    assert "https://keepachangelog.com/en/1.1.0/" in text
    versions = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert versions[0] == "Unreleased" and versions[1] == __version__
    entry = text.split(f"## [{__version__}]", 1)[1].split("\n## [", 1)[0]
    sections = re.findall(r"^### (\w+)", entry, re.M)
    assert sections and set(sections) <= {"Added", "Changed", "Deprecated", "Removed", "Fixed",
                                          "Security"}  # fmt: skip
    # no date in the file (book/lint.py): a version's date is its tag's
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text)
