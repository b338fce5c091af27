"""Remove everything a killed run can leave behind (like `mn -c`, but only priolab's own).

A run records what it builds in a state file under STATE_DIR before it builds it, and again
once it exists: its run folder and plan, its nodes' names and network namespaces, their
interfaces. Cleaning derives what to remove from those records alone: it kills every
process living in a recorded namespace or in the namespace of a leftover Mininet shell of a
recorded node, stops what the node agents registered (engine/agent.py's registries), deletes
recorded interfaces left in the root namespace, then the state files. Nothing is matched by
a name pattern, so a bystander's namespace with a node called `host` is left alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

STATE_DIR = Path(os.environ.get("PRIOLAB_STATE_DIR", "/run/priolab"))
SHELL_PREFIX = "bash --norc --noediting -is mininet:"
"""How Mininet starts a node's shell; the node's name follows."""


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


def _states() -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in sorted(STATE_DIR.glob("*.json")) if STATE_DIR.is_dir() else []:
        try:
            out.append((path, json.loads(path.read_text())))
        except (OSError, ValueError):
            out.append((path, {}))
    return out


def leftovers() -> dict[str, list[str]]:
    """What a clean would remove: Mininet shells, processes in their namespaces, interfaces."""
    own_ns = _netns(os.getpid())
    states = _states()
    namespaces: set[str] = set()
    names: set[str] = set()
    recorded_intfs: set[str] = set()
    for _, st in states:
        namespaces |= set(st.get("netns", []))
        names |= set(st.get("nodes", []))
        recorded_intfs |= set(st.get("interfaces", []))
    shells: list[str] = []
    for pid in _pids():
        cmd = _cmdline(pid)
        if cmd.startswith(SHELL_PREFIX) and cmd[len(SHELL_PREFIX) :] in names:
            shells.append(f"{pid} {cmd}")
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
        if name in recorded_intfs:
            intfs.append(name)
    return {"shells": shells, "processes": procs, "interfaces": intfs,
            "state_files": [str(p) for p, _ in states]}  # fmt: skip


def clean(verbose: bool = True) -> dict[str, list[str]]:
    """Kill leftover processes, delete leftover interfaces and state; return what was found."""
    from priolab.engine.agent import clean as clean_registries

    found = leftovers()
    _kill_all({int(p.split()[0]) for p in found["processes"] + found["shells"]})
    if STATE_DIR.is_dir():
        clean_registries(STATE_DIR)  # what agents registered outside the namespaces
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
