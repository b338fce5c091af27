"""A clone stands alone: nothing it ships names a path outside the repository, and no page or
comment cites a paper by a file a reader does not have. Only `.ci/` (CI's copy of the datasets
beside the clone) and `docs/investigations/` (dated history, kept verbatim) may name the shared
folder beside the clone or its files."""

from __future__ import annotations

import subprocess

from tests.conftest import REPO

ALLOWED = (".ci/", "docs/investigations/")


def _grep(pattern: str) -> list[str]:
    """`git grep -n` over tracked and untracked (not ignored) files: the lines that match."""
    r = subprocess.run(
        ["git", "grep", "-n", "-I", "--untracked", "-E", pattern],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr  # 1: no match
    return [line for line in r.stdout.splitlines() if not line.startswith(ALLOWED)]


def test_grep_finds_what_it_is_asked_for() -> None:
    """The check below cannot pass by a grep that finds nothing at all."""
    assert any(line.startswith("tests/test_standalone.py:") for line in _grep(r"ALLOWED = "))


def test_nothing_names_the_shared_folder_beside_the_clone() -> None:
    found = [
        line for line in _grep(r"\.\./shared") if not line.startswith("tests/test_standalone.py:")
    ]
    assert found == []


def test_papers_are_cited_by_key_not_by_seed_file() -> None:
    """A paper is [RoQ §5.2] (docs/bibliography.md), the RISE setup [RISE setup]
    (docs/rise-setup.md): never a seed file or the setup file of the shared folder."""
    found = [
        line
        for line in _grep(r"seeds/00[0-4]|SPEC-ris[e]")
        if not line.startswith("tests/test_standalone.py:")
    ]
    assert found == []
