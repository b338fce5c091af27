"""The machine lock: taken from Python, not waited for when an ancestor holds it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ground import machine_lock

REPO = Path(__file__).resolve().parent.parent
HELD = "from pathlib import Path; from ground import machine_lock as m; "


def _other_holds(lock: Path, script: str) -> subprocess.Popen:
    """Another process group holding the lock while `script` runs."""
    other = subprocess.Popen(["flock", str(lock), "sh", "-c", script], start_new_session=True)
    deadline = time.monotonic() + 10
    while not machine_lock.flock_holders(lock, Path("/proc/locks").read_text()):
        assert time.monotonic() < deadline, "the other process never took the lock"
        time.sleep(0.05)
    return other


def _stop(other: subprocess.Popen) -> None:
    """Kill the whole group: the lock lives on in any child that inherited the file."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(other.pid, signal.SIGKILL)
    other.wait()


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_session_under_flock_sees_its_ancestor_holding_the_lock(tmp_path: Path) -> None:
    lock = tmp_path / "machine.lock"
    code = HELD + f"print(m.held_by_ancestor(Path({str(lock)!r})))"
    under = subprocess.run(["flock", str(lock), *_python(code)], cwd=REPO, text=True,
                           capture_output=True, check=True)  # fmt: skip
    alone = subprocess.run(_python(code), cwd=REPO, text=True, capture_output=True, check=True)
    assert under.stdout.strip() == "True"
    assert alone.stdout.strip() == "False"
    # and hold() returns at once without a second lock (waiting would deadlock)
    code = HELD + f"print(m.hold(Path({str(lock)!r})))"
    nested = subprocess.run(["flock", str(lock), *_python(code)], cwd=REPO, text=True,
                            capture_output=True, check=True, timeout=20)  # fmt: skip
    assert nested.stdout.strip() == "None"


def test_hold_waits_for_another_holder_and_says_so(tmp_path: Path, capsys) -> None:
    lock, done = tmp_path / "machine.lock", tmp_path / "other-done"
    other = _other_holds(lock, f"sleep 1; touch {done}")
    try:
        held = machine_lock.hold(lock, who="test")
        assert done.exists(), "hold() returned while the other process held the lock"
        assert held is not None
        assert "test: waiting for the machine lock" in capsys.readouterr().err
        held.close()
    finally:
        _stop(other)


def test_holders_are_matched_by_device_and_inode_not_waiters(tmp_path: Path) -> None:
    lock = tmp_path / "machine.lock"
    lock.touch()
    st = lock.stat()
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}"
    text = "\n".join([
        f"1: FLOCK  ADVISORY  WRITE 111 {dev}:{st.st_ino} 0 EOF",
        f"1: -> FLOCK  ADVISORY  WRITE 222 {dev}:{st.st_ino} 0 EOF",
        f"2: FLOCK  ADVISORY  WRITE 333 {dev}:{st.st_ino + 1} 0 EOF",
        f"3: POSIX  ADVISORY  WRITE 444 {dev}:{st.st_ino} 0 EOF",
    ])  # fmt: skip
    assert machine_lock.flock_holders(lock, text) == {111}


def test_run_one_checks_its_input_first_then_waits_for_the_machine(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from priolab import cli, run

    lock = tmp_path / "machine.lock"
    monkeypatch.setattr(machine_lock, "LOCK_PATH", lock)
    calls: list[tuple[bool, set[int]]] = []

    def fake_run_one(spec, out, backend, promote=True):  # who held the lock when it began
        holders = machine_lock.flock_holders(lock, Path("/proc/locks").read_text())
        calls.append((done.exists(), holders))
        return {"valid": True, "invalid_reasons": []}

    monkeypatch.setattr(run, "run_one", fake_run_one)
    scenario = str(REPO / "scenarios" / "standin.yaml")
    other = _other_holds(lock, "sleep 30")
    try:
        t0 = time.monotonic()
        rc = cli.main(["run-one", scenario, "--setting", "no-such-setting"])
        assert rc == 2 and time.monotonic() - t0 < 10, "a bad setting waited for the lock"
        assert "no-such-setting" in capsys.readouterr().err
    finally:
        _stop(other)
    done = tmp_path / "other-done"
    other = _other_holds(lock, f"sleep 1; touch {done}")
    try:
        rc = cli.main(["run-one", scenario, "--setting", "20M-up", "--out", str(tmp_path / "r")])
    finally:
        _stop(other)
        for f in machine_lock._held_until_exit:
            if f is not None:
                f.close()
        machine_lock._held_until_exit.clear()
    assert rc == 0
    assert calls == [(True, {os.getpid()})], calls
    assert "priolab run-one: waiting for the machine lock" in capsys.readouterr().err
