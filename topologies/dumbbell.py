"""The dumbbell: n senders and n receivers across one emulated bottleneck.

    snd1..sndN — left — emu — right — rcv1..rcvN

`left` and `right` are plain nodes with a Linux bridge joining their interfaces (no OVS
here); `emu` emulates the bottleneck between them exactly as in the access topology
(`emu-eth0` faces the senders: "uplink" is sender → receiver). Pair i is (snd_i, rcv_i),
and every pair can carry its own workload or cross traffic.
"""

from __future__ import annotations

from mininet.topo import Topo


def sender_ip(i: int) -> str:
    return f"10.0.1.{i}"


def receiver_ip(i: int) -> str:
    return f"10.0.2.{i}"


class DumbbellTopo(Topo):
    def build(self, n: int = 2, prefix: str = "") -> None:  # type: ignore[override]
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
