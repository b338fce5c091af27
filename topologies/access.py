"""The access topology: guest — emu — host.

`emu` is a middlebox where the link emulation happens for both directions (the
asymmetric access link). Its interface `emu-eth0` faces the guest and `emu-eth1` the host;
the endpoints' own interfaces are not shaped. Guest and host share one /24.

Also usable from Mininet's own CLI (no switch, no controller, Linux bridge unused):
    mn --custom topologies/access.py --topo access --controller none
"""

from __future__ import annotations

from mininet.topo import Topo

GUEST_IP = "10.0.0.1"
HOST_IP = "10.0.0.2"


class AccessTopo(Topo):
    """guest — emu — host; `prefix` renames the nodes so two can coexist."""

    def build(self, prefix: str = "") -> None:  # type: ignore[override]
        guest = self.addHost(f"{prefix}guest", ip=f"{GUEST_IP}/24")
        emu = self.addHost(f"{prefix}emu", ip=None)
        host = self.addHost(f"{prefix}host", ip=f"{HOST_IP}/24")
        self.addLink(guest, emu)  # guest-eth0 <-> emu-eth0
        self.addLink(emu, host)  # emu-eth1 <-> host-eth0


topos = {"access": AccessTopo}
