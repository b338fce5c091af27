"""`priolab doctor`: what this machine supports and which link backend `auto` picks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any

from priolab.paths import REPO_ROOT

TOOLS = [
    "ip",
    "tc",
    "ethtool",
    "iperf3",
    "ping",
    "mnexec",
    "cargo",
    "snakemake",
    "ansible-playbook",
]


def _mininet() -> dict[str, Any]:
    try:
        import mininet.net

        return {"importable": True, "version": getattr(mininet.net, "VERSION", None)}
    except ImportError as e:
        return {"importable": False, "error": str(e)}


def _binary(name: str) -> dict[str, Any]:
    path = REPO_ROOT / "target" / "release" / name
    return {"path": str(path), "built": path.is_file()}


def diagnose() -> dict[str, Any]:
    from netem.probe import choose_backend, probe_kernel

    support = probe_kernel()
    try:
        chosen, why = choose_backend("auto", support)
    except RuntimeError as e:  # neither backend can run: say why instead of failing
        chosen, why = "none", str(e)
    search_path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    kernel = subprocess.run(["uname", "-r"], capture_output=True, text=True, check=False)
    return {
        "kernel": kernel.stdout.strip(),
        "kernel_support": support.to_json() if hasattr(support, "to_json") else support,
        "auto_backend": {"backend": chosen, "reason": why},
        "mininet": _mininet(),
        "tools": {t: shutil.which(t, path=search_path) for t in TOOLS},
        "binaries": {b: _binary(b) for b in ("linkem", "rise")},
    }


def report(d: dict[str, Any]) -> str:
    lines = [f"kernel {d['kernel']}"]
    ks = d["kernel_support"]
    if isinstance(ks, dict):
        for k, v in ks.items():
            lines.append(f"  {k:<22} {v}")
    lines.append(f"link backend for 'auto': {d['auto_backend']['backend']}")
    lines.append(f"  because {d['auto_backend']['reason']}")
    m = d["mininet"]
    lines.append(
        "mininet: " + (f"importable ({m.get('version')})" if m["importable"] else m["error"])
    )
    for t, p in d["tools"].items():
        lines.append(f"  {t:<18} {p or 'MISSING'}")
    for b, info in d["binaries"].items():
        lines.append(f"  {b:<18} {'built' if info['built'] else 'not built'}: {info['path']}")
    return "\n".join(lines)
