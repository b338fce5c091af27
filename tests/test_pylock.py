"""The locked Python environment (priolab/pylock.py, requirements.lock, `make lock`)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from priolab import pylock
from tests.conftest import REPO


def test_read_pins_takes_name_and_version_and_normalises(tmp_path: Path):
    lock = tmp_path / "r.lock"
    lock.write_text(
        "# comment\n"
        "Pydantic_Core==2.50.5 \\\n"
        "    --hash=sha256:00\n"
        "    # via pydantic\n"
        "numpy==2.4.6 ; python_version >= '3.11' \\\n"
        "    --hash=sha256:11\n"
    )
    assert pylock.read_pins(lock) == {"pydantic-core": "2.50.5", "numpy": "2.4.6"}


def test_mismatches_names_wrong_and_missing_packages():
    have = pylock.installed_version("pytest")
    assert have is not None
    assert pylock.mismatches({"pytest": have}) == []
    bad = pylock.mismatches({"pytest": have + ".post999", "no-such-package-xyz": "1.0"})
    assert bad == [
        "no-such-package-xyz: locked 1.0, installed nothing",
        f"pytest: locked {have}.post999, installed {have}",
    ]


def test_check_fails_on_a_drifted_environment(tmp_path: Path, capsys):
    lock = tmp_path / "r.lock"
    lock.write_text(f"pytest=={pylock.installed_version('pytest')}.post999\n")
    assert pylock.main(["check", str(lock)]) == 1
    assert "pytest: locked" in capsys.readouterr().err
    assert pylock.main(["check", str(tmp_path / "absent.lock")]) == 2


def test_the_lock_covers_every_dependency_of_pyproject():
    """Editing pyproject.toml without `make lock` leaves a dependency out of the lock."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():  # make lock resolves every extra
        wanted += extra
    pins = pylock.read_pins(REPO / "requirements.lock")
    names = {pylock.canonical(re.split(r"[<>=!~\[; ]", w, maxsplit=1)[0]) for w in wanted}
    assert names - pins.keys() == set(), "run `make lock`: pyproject.toml has more than the lock"


def test_this_environment_is_the_locked_one():
    """`make venv` installs requirements.lock exactly; a test run in any other environment
    (a package upgraded by hand, a stale venv) says which packages differ."""
    info = pylock.python_packages()
    assert info["lock"] == "requirements.lock" and len(info["lock_sha256"]) == 64
    assert info["drift"] == []


def test_a_lock_with_a_local_package_source_is_refused(tmp_path: Path, capsys):
    """pip-compile once wrote the environment's PIP_FIND_LINKS into the lock (`--find-links
    /opt/wheels`): such a lock installs differently on another machine. `check` refuses it,
    and the shipped lock and `make lock`'s command have none."""
    lock = tmp_path / "r.lock"
    have = pylock.installed_version("pytest")
    lock.write_text(f"--find-links /opt/wheels\n\npytest=={have} \\\n    --hash=sha256:00\n")
    assert pylock.local_lines(lock) == ["line 1: --find-links /opt/wheels"]
    assert pylock.main(["check", str(lock)]) == 2
    assert "line 1: --find-links /opt/wheels: a local package source" in capsys.readouterr().err
    assert pylock.local_lines(REPO / "requirements.lock") == []
    make_lock = (REPO / "Makefile").read_text().split("\nlock:", 1)[1].split("\n\n", 1)[0]
    assert "--no-emit-find-links" in make_lock and "--no-emit-index-url" in make_lock
