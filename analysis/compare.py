"""Which schemes a scenario compares: its `compare:` key, recorded in every run's metadata.

`reference` is the scheme every other is divided by (ratios.csv, the ratio columns of
summary.md); `order` is the order of schemes in tables and figures; `labels` their display
names. A scenario without the key compares nothing (no ratios) and orders schemes by name.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ground import rundir


@dataclass(frozen=True)
class Comparison:
    reference: str | None = None
    order: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)

    def key(self, scheme: str) -> tuple[int, str]:
        """Sort key: the scenario's order first, unknown schemes after, by name."""
        return (self.order.index(scheme) if scheme in self.order else len(self.order), scheme)

    def label(self, scheme: str) -> str:
        return f"{self.labels[scheme]} ({scheme})" if scheme in self.labels else scheme

    def others(self, schemes: list[str] | set[str]) -> list[str]:
        """The schemes compared with the reference, in order (none without a reference)."""
        if self.reference is None or self.reference not in schemes:
            return []
        return sorted((s for s in schemes if s != self.reference), key=self.key)

    def pair(self, schemes: list[str] | set[str]) -> list[str]:
        """[first scheme compared, the reference]: the two the paper's figures contrast."""
        others = self.others(schemes)
        assert self.reference is not None or not others
        return [others[0], self.reference] if others and self.reference else []


def from_metadata(meta: dict[str, Any]) -> Comparison:
    c = (meta.get("run") or {}).get("compare")
    if not isinstance(c, dict):
        return Comparison()
    return Comparison(c.get("reference"), tuple(c.get("order") or ()), dict(c.get("labels") or {}))


def first(metas: Iterable[dict[str, Any]]) -> Comparison:
    """The comparison the first run that recorded one recorded (a broken run may not)."""
    for meta in metas:
        c = from_metadata(meta)
        if c.reference is not None:
            return c
    return Comparison()


def for_scenario(scenario_dir: Path) -> Comparison:
    """The comparison the scenario's finished runs recorded in their metadata."""

    def metas() -> Iterator[dict[str, Any]]:
        for run in rundir.find_runs(scenario_dir):
            try:
                yield json.loads((run / rundir.METADATA).read_text())
            except (OSError, ValueError):
                continue

    return first(metas())
