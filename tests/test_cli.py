"""The command line as a whole (priolab/cli.py): `--version`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from priolab import __version__, cli
from priolab.provenance import version_text
from tests.conftest import REPO


def test_version_prints_the_version_and_the_commit(capsys) -> None:
    with pytest.raises(SystemExit) as ei:
        cli.main(["--version"])
    assert ei.value.code == 0
    out = capsys.readouterr().out.strip()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    assert out.startswith(f"priolab {__version__} (commit {head}")
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_version_outside_a_checkout_says_the_commit_is_unknown(tmp_path: Path) -> None:
    assert version_text(tmp_path) == f"priolab {__version__} (commit unknown)"


def test_version_of_an_installed_console_script() -> None:
    exe = Path(sys.executable).parent / "priolab"
    if not exe.is_file():
        pytest.skip(f"{exe} is absent: priolab is not installed in this environment (make venv)")
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith(f"priolab {__version__} (commit ")
