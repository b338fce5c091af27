"""Mininet on Open vSwitch with the stock kernel's openvswitch datapath: Mininet's own test,
and priolab's dumbbell built on OVS switches with the tc backend shaping its bottleneck."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from netem.model import Link
from netem.tc import TcBackend
from priolab.net import build
from priolab.scenario import Topology
from topologies.common import ovs_available


def _bridges() -> list[str]:
    out = subprocess.run(["ovs-vsctl", "list-br"], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_ovs_is_available() -> None:
    assert ovs_available()


def test_mininet_pingall_on_ovs() -> None:
    res = subprocess.run(
        ["mn", "--switch", "ovsbr", "--controller", "none", "--topo", "linear,3", "--test",
         "pingall"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Results: 0% dropped" in res.stdout + res.stderr, res.stderr[-3000:]
    subprocess.run(["mn", "-c"], capture_output=True, timeout=120)


def test_dumbbell_on_ovs_with_tc_bottleneck(tmp_path: Path) -> None:
    net = build(Topology(kind="dumbbell", pairs=2))
    backend = TcBackend()
    try:
        assert sorted(s.name for s in net.net.switches) == ["left", "right"]
        assert {"left", "right"} <= set(_bridges())
        link = Link.model_validate(
            {d: {"rate_mbps": 20, "delay_ms": 15, "queue": {"limit_packets": 100}}
             for d in ("uplink", "downlink")}
        )  # fmt: skip
        backend.apply(net.emu, net.emu_up_in, net.emu_up_out, link,
                      base_dir=tmp_path, run_dir=tmp_path / "run", seed=3)  # fmt: skip
        for pair in net.pairs:
            out = net.node(pair.guest).run(
                ["ping", "-c", "5", "-i", "0.2", pair.host_ip], check=False
            )
            assert out.returncode == 0, out.stdout + out.stderr
            rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", out.stdout)]
            assert len(rtts) >= 4 and min(rtts) >= 30.0, out.stdout  # 15 ms each way
    finally:
        backend.stop()
        net.net.stop()
    assert not {"left", "right"} & set(_bridges())
