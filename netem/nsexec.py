"""NodeExec implementations for plain network namespaces (`ip netns`) and the root namespace.

Used by the probe, the tests and the calibrator's helpers; Mininet hosts get their own NodeExec
in priolab. Every argv is a list, never a shell string.
"""

from __future__ import annotations

import subprocess
from typing import Any


class NetnsExec:
    """Runs argv lists inside `ip netns` namespace `name` (None: the current namespace)."""

    def __init__(self, name: str | None) -> None:
        self.name = name or "root"
        self._prefix = ["ip", "netns", "exec", name] if name else []

    def run(self, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self._prefix + argv, capture_output=True, text=True, check=check, timeout=60
        )

    def popen(self, argv: list[str], *, stdout: Any, stderr: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen(self._prefix + argv, stdout=stdout, stderr=stderr)


def add_netns(name: str) -> NetnsExec:
    subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True, text=True)
    ex = NetnsExec(name)
    ex.run(["ip", "link", "set", "lo", "up"])
    return ex


def del_netns(name: str) -> None:
    subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)


def offloads_off(node: NetnsExec, dev: str) -> subprocess.CompletedProcess[str]:
    """Turn off the offloads that make AF_PACKET see super-packets or partial checksums."""
    return node.run(
        ["ethtool", "-K", dev, "tx", "off", "rx", "off", "gso", "off", "tso", "off",
         "gro", "off"],
        check=False,
    )  # fmt: skip
