"""Workloads a scenario can run, one folder each (a plug-in): `rise` (the RISE endpoints),
`moq` (the MoQ endpoints), `qpr` (the QPR endpoints), `roq` (RTP over QUIC), `iperf_ping`
(a stand-in of real tools), and whatever folder is added beside them.

A workload folder is a package whose `WORKLOAD` implements `base.Workload`: its parameter
model, the processes it plans per node, the tools whose versions a run records; it may hold
its own log readers and metrics beside them. The registry below finds every folder that
defines `WORKLOAD`, so a new workload plugs in without touching the engine or the scenario
model (`workload.kind` is checked against this registry).

A folder may also hold `analysis.py` whose `ANALYSIS` implements
`analysis.workload.WorkloadAnalysis` (its tables, metrics, summary header and figures);
analysis/ finds it through `PACKAGES`, which pyproject.toml declares as the entry point
`priolab` of the group `analysis.workloads` (analysis imports no workload), and imports it
only when a run of that kind is analysed.
"""

from __future__ import annotations

import importlib
import pkgutil

from priolab.workloads.base import Workload

PACKAGES: dict[str, str] = {}
"""kind → the workload folder's package (`priolab.workloads.<folder>`)."""


def _discover() -> dict[str, Workload]:
    found: dict[str, Workload] = {}
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not mod.ispkg:
            continue
        w = getattr(importlib.import_module(f"{__name__}.{mod.name}"), "WORKLOAD", None)
        if w is not None:
            found[w.kind] = w
            PACKAGES[w.kind] = f"{__name__}.{mod.name}"
    return found


WORKLOADS: dict[str, Workload] = _discover()
