"""Helpers shared by the topologies: offloads off, layer-2 bridges inside a node.

Each takes a `run(argv)` function that runs an argv list inside the node.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from typing import Any

Run = Callable[[list[str]], Any]

# ethtool feature names; "tx" is TX checksum offload (veth leaves partial checksums).
OFFLOAD_FEATURES = ("tx", "rx", "sg", "gso", "tso", "gro", "lro", "ufo")


def disable_offloads(run: Run, intfs: list[str]) -> None:
    """Turn offloads off on each interface. ethtool rejects a whole call if one feature is
    fixed on the device, so features go one per call and fixed ones are left as they are."""
    for intf in intfs:
        for f in OFFLOAD_FEATURES:
            run(["ethtool", "-K", intf, f, "off"])


def bridge(run: Run, name: str, intfs: list[str]) -> None:
    """A Linux bridge inside a node joining `intfs`."""
    run(["ip", "link", "add", name, "type", "bridge"])
    for i in intfs:
        run(["ip", "link", "set", i, "master", name])
    run(["ip", "link", "set", name, "up"])


def ovs_available() -> bool:
    """Whether Open vSwitch can switch here: its tools, a running ovsdb/vswitchd and the
    kernel's openvswitch datapath (absent on kernels built without it)."""
    if shutil.which("ovs-vsctl") is None:
        return False
    if subprocess.run(["modprobe", "openvswitch"], capture_output=True).returncode != 0:
        return False
    res = subprocess.run(["ovs-vsctl", "--timeout=5", "show"], capture_output=True)
    return res.returncode == 0
