"""The command line as a whole (priolab/cli.py): help text on every argument of every
subcommand, `--version`, a subcommand whose import fails, and shell completion."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from priolab import __version__, cli
from priolab.completion import script
from priolab.provenance import version_text
from tests.conftest import REPO


def _arguments(
    p: argparse.ArgumentParser, path: tuple[str, ...] = ("priolab",)
) -> Iterator[tuple[str, argparse.Action]]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in a._choices_actions}
            for name, sub in a.choices.items():
                yield " ".join((*path, name)), argparse.Action([], name, help=helps.get(name))
                yield from _arguments(sub, (*path, name))
        elif not isinstance(a, argparse._HelpAction):
            yield " ".join(path), a


def test_every_subcommand_and_argument_has_help() -> None:
    found = list(_arguments(cli.parser()))
    missing = [f"{where}: {a.option_strings or a.dest}" for where, a in found if not a.help]
    assert missing == []
    # the ones the issue named, and a sample of every folder's subcommands
    where = {(w, a.dest) for w, a in found}
    for dest in ("setting", "scheme", "speed", "rep", "results", "backend"):
        assert ("priolab run-one", dest) in where
    for cmd in ("trace info", "testbed plan", "vm build", "data fetch", "export", "completion"):
        assert any(w == f"priolab {cmd}" for w, _ in found), cmd


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


def test_a_subcommand_whose_import_fails_stays_listed_and_says_why(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "traces.cli", None)  # `import traces.cli` now fails
    helptext = cli.parser().format_help()
    why = r"trace\s+unavailable \(importing traces\.cli failed: ModuleNotFoundError"
    assert re.search(why, helptext)
    assert "check" in helptext and "data" in helptext  # the others are all there
    assert cli.main(["trace", "info", "some-file.txt", "--json"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: priolab trace is unavailable: importing traces.cli failed")


def test_a_subcommand_whose_import_raises_anything_stays_listed(monkeypatch, capsys) -> None:
    import importlib

    real = importlib.import_module

    def broken(name: str, *args, **kwargs):
        if name == "vm.cli":
            raise RuntimeError("no image recipe")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(cli.importlib, "import_module", broken)
    assert cli.main(["vm", "status"]) == 1
    assert "RuntimeError: no image recipe" in capsys.readouterr().err


def _bash_complete(script_text: str, words: list[str]) -> list[str]:
    """What bash completes for the command line `words` (the last one being typed)."""
    prog = (
        f"{script_text}\n"
        f"COMP_WORDS=({' '.join(words)})\nCOMP_CWORD={len(words) - 1}\n"
        f'COMP_LINE="{" ".join(words)}"\nCOMP_POINT=${{#COMP_LINE}}\n'
        "_shtab_priolab\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    r = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, check=True)
    return r.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is absent")
def test_bash_completion_completes_subcommands_and_options() -> None:
    text = script("bash")
    registered = subprocess.run(["bash", "-c", f"{text}\ncomplete -p priolab"],
                                capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "priolab" in registered
    assert _bash_complete(text, ["priolab", "ru"]) == ["run-one"]
    assert "--setting" in _bash_complete(text, ["priolab", "run-one", "--se"])
    assert set(_bash_complete(text, ["priolab", "data", ""])) == {"list", "fetch", "verify"}
    assert _bash_complete(text, ["priolab", "export", "x", "--format", ""]) == ["csv", "parquet"]
    assert _bash_complete(text, ["priolab", "completion", ""]) == ["bash", "zsh"]


def test_zsh_completion_defines_the_command_and_its_subcommands() -> None:
    text = script("zsh")
    assert text.startswith("#compdef priolab")
    for cmd in ("run-one", "check", "data", "export", "completion"):
        assert cmd in text


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is absent: no syntax check")
def test_zsh_completion_is_valid_zsh() -> None:
    subprocess.run(["zsh", "-n", "-c", script("zsh")], check=True)


def test_completion_on_the_command_line(capsys) -> None:
    assert cli.main(["completion", "bash"]) == 0
    assert "_shtab_priolab" in capsys.readouterr().out
