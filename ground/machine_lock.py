"""The machine lock: one holder at a time builds namespaces, Mininet hosts or the VM.

Runs use fixed node names (g1, h1, e1, ...), so two real runs on one machine at once tear
down each other's network. Whoever builds network state takes an exclusive `flock` on
LOCK_PATH; by hand that is `flock /tmp/priolab-netns.lock <command>`. `hold()` takes the
same lock from Python, unless an ancestor process already holds it (a test session started
under `flock`), in which case waiting would deadlock and is not needed.
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path
from typing import IO

LOCK_PATH = Path(os.environ.get("PRIOLAB_MACHINE_LOCK", "/tmp/priolab-netns.lock"))
"""The lock file; PRIOLAB_MACHINE_LOCK names another (tests of the lock itself)."""

_held_until_exit: list[IO[str] | None] = []


def _ancestors(pid: int) -> set[int]:
    """pid and every parent up to init, read from /proc/<pid>/stat."""
    seen: set[int] = set()
    while pid > 0 and pid not in seen:
        seen.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        # the command name is in parentheses and may itself hold spaces or parentheses
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
    return seen


def flock_holders(path: Path, locks_text: str) -> set[int]:
    """PIDs that /proc/locks lists as holding a FLOCK on `path` (matched by device and inode)."""
    try:
        st = path.stat()
    except OSError:
        return set()
    holders: set[int] = set()
    for line in locks_text.splitlines():
        f = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF" (device in hex);
        # a waiter has "->" after the id and is not a holder
        if len(f) < 6 or f[1] != "FLOCK":
            continue
        try:
            pid = int(f[4])
            major, minor, inode = f[5].split(":")
            same = (int(major, 16), int(minor, 16), int(inode)) == (
                os.major(st.st_dev),
                os.minor(st.st_dev),
                st.st_ino,
            )
        except ValueError:
            continue
        if same:
            holders.add(pid)
    return holders


def held_by_ancestor(path: Path | None = None, pid: int | None = None) -> bool:
    """Whether a process in our own ancestry holds the lock (e.g. `flock ... pytest`)."""
    try:
        text = Path("/proc/locks").read_text()
    except OSError:
        return False
    return bool(flock_holders(path or LOCK_PATH, text) & _ancestors(pid or os.getpid()))


def hold(path: Path | None = None, who: str = "") -> IO[str] | None:
    """Take the machine lock, waiting for it; return the open file that holds it.

    Returns None when an ancestor already holds it. The lock is released when the
    returned file is closed or the process exits.
    """
    path = path or LOCK_PATH
    if held_by_ancestor(path):
        return None
    try:
        f = open(path, "a")  # noqa: SIM115 (held open on purpose: closing releases the lock)
    except PermissionError:  # another user's lock file: a read-only file locks as well
        f = open(path)  # noqa: SIM115
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(
            f"{who or 'priolab'}: waiting for the machine lock {path} "
            "(another run holds the namespaces)",
            file=sys.stderr,
            flush=True,
        )
        fcntl.flock(f, fcntl.LOCK_EX)
    return f


def hold_until_exit(who: str) -> None:
    """hold() for a command-line process: the lock is kept until the process exits.

    Commands call it after their input is validated, so a typo never waits for the lock.
    """
    _held_until_exit.append(hold(who=who))
