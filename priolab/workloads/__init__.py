"""Workloads a scenario can run: the RISE endpoints, the MoQ endpoints and a stand-in of real
tools."""

from __future__ import annotations

from priolab.workloads.base import Workload
from priolab.workloads.iperf_ping import IperfPing
from priolab.workloads.moq.workload import Moq
from priolab.workloads.rise import Rise

WORKLOADS: dict[str, Workload] = {w.kind: w for w in (Rise(), IperfPing(), Moq())}
