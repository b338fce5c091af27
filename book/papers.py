"""The papers priolab reproduces: every workload folder that declares one (`paper.py`, whose
`PAPER` is an analysis.claims.Paper with its claims, their conditions, the metrics they read,
the page's notes and its section hooks), in the bibliography's order (book/bibliography.py).

Each paper is cited by its short key (`Paper.short`), whose reference and BibTeX entry are
book/bibliography.py's (docs/bibliography.md). The book holds no paper of its own: a sixth
workload with a `paper.py` (and a reference under its key) gets a results page and a line on
the scoreboard without a line here.
"""

from __future__ import annotations

import importlib

from analysis.claims import Paper
from book.bibliography import REFERENCES
from priolab.workloads import PACKAGES

ORDER = [r.key for r in REFERENCES]


def discover() -> tuple[Paper, ...]:
    found = []
    for package in PACKAGES.values():
        try:
            mod = importlib.import_module(f"{package}.paper")
        except ModuleNotFoundError as e:
            if e.name != f"{package}.paper":
                raise
            continue
        paper = mod.PAPER
        if paper.short not in ORDER:
            raise ValueError(
                f"{package}.paper: PAPER.short {paper.short!r} is no key of "
                f"book/bibliography.py (allowed: {', '.join(ORDER)})"
            )
        found.append(paper)
    return tuple(sorted(found, key=lambda p: ORDER.index(p.short)))


PAPERS: tuple[Paper, ...] = discover()
