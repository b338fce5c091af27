"""The machine lock: taken from Python, not waited for when an ancestor holds it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from priolab import machine_lock

REPO = Path(__file__).resolve().parent.parent
HELD = "from pathlib import Path; from priolab import machine_lock as m; "


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
    lock = tmp_path / "machine.lock"
    other = subprocess.Popen(["flock", str(lock), "sleep", "1.5"])
    try:
        deadline = time.monotonic() + 10
        while not machine_lock.flock_holders(lock, Path("/proc/locks").read_text()):
            assert time.monotonic() < deadline, "the other process never took the lock"
            time.sleep(0.05)
        held = machine_lock.hold(lock, who="test")
        assert other.poll() is not None, "hold() returned while the other process held the lock"
        assert held is not None
        assert "test: waiting for the machine lock" in capsys.readouterr().err
        held.close()
    finally:
        other.kill()
        other.wait()


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
