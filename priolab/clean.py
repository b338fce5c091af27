"""Remove everything a killed run can leave behind (like `mn -c`, but only priolab's own).

A run records its nodes' network namespaces and the processes it started in a state file
under STATE_DIR. Cleaning kills every process living in a recorded namespace or in the
namespace of a leftover Mininet shell of one of priolab's node names, then deletes
leftover interfaces of those names in the root namespace, then the state files.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

STATE_DIR = Path(os.environ.get("PRIOLAB_STATE_DIR", "/run/priolab"))
NODE_NAMES = r"(guest|emu|host|left|right|snd\d+|rcv\d+)"
SHELL_RE = re.compile(rf"^bash --norc --noediting -is mininet:{NODE_NAMES}$")
INTF_RE = re.compile(rf"^{NODE_NAMES}-eth\d+$")


def write_state(run_id: str, state: dict[str, Any]) -> Path:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    path = STATE_DIR / f"{run_id}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    tmp.replace(path)
    return path


def _netns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _kill_all(pids: set[int]) -> None:
    me = os.getpid()
    pids.discard(me)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.time() + 2.0
        while time.time() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.05)
        pids = {p for p in pids if Path(f"/proc/{p}").exists()}
        if not pids:
            return


def leftovers() -> dict[str, list[str]]:
    """What a clean would remove: Mininet shells, processes in their namespaces, interfaces."""
    own_ns = _netns(os.getpid())
    namespaces: set[str] = set()
    shells: list[str] = []
    for state in STATE_DIR.glob("*.json") if STATE_DIR.is_dir() else []:
        try:
            namespaces |= set(json.loads(state.read_text()).get("netns", []))
        except (OSError, ValueError):
            continue
    for pid in _pids():
        if SHELL_RE.match(_cmdline(pid)):
            shells.append(f"{pid} {_cmdline(pid)}")
            ns = _netns(pid)
            if ns:
                namespaces.add(ns)
    namespaces.discard(own_ns or "")
    procs = [
        f"{pid} {_cmdline(pid)}"
        for pid in _pids()
        if _netns(pid) in namespaces and pid != os.getpid()
    ]
    r = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=False)
    intfs = []
    for line in r.stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if INTF_RE.match(name):
            intfs.append(name)
    states = [str(p) for p in STATE_DIR.glob("*.json")] if STATE_DIR.is_dir() else []
    return {"shells": shells, "processes": procs, "interfaces": intfs, "state_files": states}


def clean(verbose: bool = True) -> dict[str, list[str]]:
    """Kill leftover processes, delete leftover interfaces and state; return what was found."""
    found = leftovers()
    _kill_all({int(p.split()[0]) for p in found["processes"] + found["shells"]})
    for intf in found["interfaces"]:
        subprocess.run(["ip", "link", "del", intf], capture_output=True, check=False)
    for s in found["state_files"]:
        Path(s).unlink(missing_ok=True)
    if verbose:
        for kind, items in found.items():
            for item in items:
                print(f"removed {kind[:-1] if kind.endswith('s') else kind}: {item}")
        if not any(found.values()):
            print("nothing to clean")
    return found
