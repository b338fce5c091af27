"""The dumbbell: n senders and n receivers across one emulated bottleneck.

    snd1..sndN — left — emu — right — rcv1..rcvN

`left` and `right` are Open vSwitch switches (`switch="ovs"`: standalone OVS bridges, no
controller) where the kernel has the openvswitch datapath, else (`switch="bridge"`) plain
nodes with a Linux bridge joining their interfaces, made by priolab/net.py; `emu` emulates
the bottleneck between them exactly as in the access topology
(`emu-eth0` faces the senders: "uplink" is sender → receiver). Pair i is (snd_i, rcv_i),
and every pair can carry its own workload or cross traffic.
"""

from __future__ import annotations

from typing import Literal

from mininet.node import OVSBridge
from mininet.topo import Topo

Switch = Literal["bridge", "ovs"]


def sender_ip(i: int) -> str:
    return f"10.0.1.{i}"


def receiver_ip(i: int) -> str:
    return f"10.0.2.{i}"


class DumbbellTopo(Topo):
    def build(  # type: ignore[override]
        self, n: int = 2, prefix: str = "", switch: Switch = "bridge"
    ) -> None:
        if switch == "ovs":  # names without digits: OVS needs explicit datapath ids
            left = self.addSwitch(f"{prefix}left", cls=OVSBridge, dpid="1")
            right = self.addSwitch(f"{prefix}right", cls=OVSBridge, dpid="2")
        else:
            left = self.addHost(f"{prefix}left", ip=None)
            right = self.addHost(f"{prefix}right", ip=None)
        emu = self.addHost(f"{prefix}emu", ip=None)
        self.addLink(left, emu)  # emu-eth0 faces the senders
        self.addLink(emu, right)  # emu-eth1 faces the receivers
        for i in range(1, n + 1):
            s = self.addHost(f"{prefix}snd{i}", ip=f"{sender_ip(i)}/16")
            r = self.addHost(f"{prefix}rcv{i}", ip=f"{receiver_ip(i)}/16")
            self.addLink(s, left)
            self.addLink(r, right)


topos = {"dumbbell": DumbbellTopo}
