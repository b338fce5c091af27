"""Build a scenario's topology as a real Mininet network, and run commands in its nodes."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import Any

from mininet.net import Mininet

from priolab.scenario import Topology
from priolab.workloads.base import Pair
from topologies.access import GUEST_IP, HOST_IP, AccessTopo
from topologies.common import bridge, disable_offloads, ovs_available
from topologies.dumbbell import DumbbellTopo, receiver_ip, sender_ip


class MininetExec:
    """`netem.backend.NodeExec` over a Mininet node: argv lists run in the node's namespace."""

    def __init__(self, node: Any) -> None:
        self.node = node
        self.name: str = node.name

    def _argv(self, argv: list[str]) -> list[str]:
        # mnexec -a PID: attach to the node's namespaces (as Mininet's popen does).
        return ["mnexec", "-da", str(self.node.pid), *argv]

    def run(self, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self._argv(argv), capture_output=True, text=True, check=check)

    def popen(self, argv: list[str], *, stdout: Any, stderr: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self._argv(argv), stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL
        )


def _runner(node: Any) -> Any:
    ex = MininetExec(node)
    return lambda argv: ex.run(argv, check=False)


def _intfs(node: Any) -> list[str]:
    return [i for i in node.intfNames() if i != "lo"]


@dataclass
class Network:
    net: Mininet
    emu: MininetExec
    emu_up_in: str  # the emulator's interface facing the guest/senders
    emu_up_out: str  # the one facing the host/receivers
    pairs: tuple[Pair, ...]
    state_id: str = ""  # its record for `priolab clean` (engine/sites/mininet.py's session)
    state: dict[str, Any] = field(default_factory=dict)

    def node(self, name: str) -> MininetExec:
        return MininetExec(self.net[name])

    def interfaces(self) -> dict[str, list[str]]:
        return {n.name: _intfs(n) for n in self.net.hosts}


def _topo(topology: Topology) -> tuple[Any, tuple[Pair, ...]]:
    if topology.kind == "access":
        return AccessTopo(), (Pair("guest", "host", GUEST_IP, HOST_IP),)
    pairs = tuple(
        Pair(f"snd{i}", f"rcv{i}", sender_ip(i), receiver_ip(i))
        for i in range(1, topology.pairs + 1)
    )
    # OVS switches where the kernel has the datapath, else Linux bridges in nodes
    switch = "ovs" if ovs_available() else "bridge"
    return DumbbellTopo(n=topology.pairs, switch=switch), pairs


def node_names(topology: Topology) -> list[str]:
    """The Mininet nodes `build` will create (recorded for clean before they exist)."""
    return list(_topo(topology)[0].hosts())


def _quiet(net: Mininet, pairs: tuple[Pair, ...]) -> None:
    """Only the workload's own packets cross the link: IPv6 off in every node (no router or
    neighbour solicitations), static ARP entries between each pair (no ARP exchange)."""
    for h in net.hosts:
        for key in ("all", "default"):
            MininetExec(h).run(["sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1"],
                               check=False)  # fmt: skip
    for p in pairs:
        g, h = net[p.guest], net[p.host]
        gi, hi = g.defaultIntf(), h.defaultIntf()
        MininetExec(g).run(["ip", "neigh", "replace", p.host_ip, "lladdr", hi.MAC(), "dev",
                            gi.name])  # fmt: skip
        MininetExec(h).run(["ip", "neigh", "replace", p.guest_ip, "lladdr", gi.MAC(), "dev",
                            hi.name])  # fmt: skip


def build(topology: Topology, *, quiet: bool = False) -> Network:
    """Build and start the network. The caller must call `net.stop()` (see run.py).
    `quiet` (the calibration): IPv6 off and static ARP, so nothing but the workload's own
    packets crosses the emulated link."""
    topo, pairs = _topo(topology)
    net = Mininet(topo=topo, controller=None, switch=None, build=False, waitConnected=False)
    try:
        net.build()
        net.start()
        for h in net.hosts + net.switches:
            disable_offloads(_runner(h), _intfs(h))
        if topology.kind == "dumbbell" and not net.switches:
            for side in ("left", "right"):
                bridge(_runner(net[side]), "br0", _intfs(net[side]))
        if quiet:
            _quiet(net, pairs)
    except BaseException:
        net.stop()
        raise
    return Network(net, MininetExec(net["emu"]), "emu-eth0", "emu-eth1", pairs)
