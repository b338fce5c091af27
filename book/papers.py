"""The papers priolab reproduces: every workload folder that declares one (`paper.py`, whose
`PAPER` is an analysis.claims.Paper with its claims, their conditions, the metrics they read,
the page's notes and its section hooks), in the order of the seeds (../shared/seeds/README.md).

The book holds no paper of its own: a sixth workload with a `paper.py` gets a results page
and a line on the scoreboard without a line here.
"""

from __future__ import annotations

import importlib

from analysis.claims import Paper
from priolab.workloads import PACKAGES


def discover() -> tuple[Paper, ...]:
    found = []
    for package in PACKAGES.values():
        try:
            mod = importlib.import_module(f"{package}.paper")
        except ModuleNotFoundError as e:
            if e.name != f"{package}.paper":
                raise
            continue
        found.append(mod.PAPER)
    return tuple(sorted(found, key=lambda p: p.seed))


PAPERS: tuple[Paper, ...] = discover()
