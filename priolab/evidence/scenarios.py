"""Scenario files by name, and what main's code would make of one record's matrix point."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from priolab.evidence import digest
from priolab.evidence.records import Digests, RunRecord

if TYPE_CHECKING:
    from priolab.scenario import RunSpec


def scenario_files(repo: Path) -> dict[str, Path]:
    """Scenario name → its file under scenarios/ or a folder of it (the `name:` key),
    relative to the checkout."""
    out: dict[str, Path] = {}
    for f in sorted((repo / "scenarios").rglob("*.yaml")):
        try:
            name = (yaml.safe_load(f.read_text()) or {}).get("name")
        except yaml.YAMLError:
            continue
        if isinstance(name, str):
            out[name] = f.relative_to(repo)
    return out


class Expected:
    """The code digests main's checkout would give the records of one scenario: the
    scenario file expanded as a run would expand it (with as many repetitions as a record
    asks), each point's inputs hashed, the Rust and Python parts per workload and site.
    `why_not(record)`: None when the record is current, else why it is stale."""

    def __init__(self, repo: Path, name: str) -> None:
        self.repo = repo
        self.name = name
        self.file = scenario_files(repo).get(name)
        self._specs: dict[tuple[str, str, str, int], RunSpec] = {}
        self._digests: dict[tuple[tuple[str, str, str, int], str], Digests] = {}
        self._reps = 0
        self.error = "" if self.file else f"no scenario named {name!r} under scenarios/"

    def _expand(self, reps: int) -> None:
        from ground.errors import UserError
        from priolab.scenario import expand, load

        if reps <= self._reps or self.file is None:
            return
        try:
            sc = load(self.repo / self.file)
            sc = sc.model_copy(update={"repetitions": max(reps, sc.repetitions)})
            runs = expand(sc, self.repo / self.file)
        except UserError as e:
            self.error = f"{self.file}: {e.title}"
            self._specs = {}
            self._reps = reps
            return
        self._specs = {(r.setting, r.scheme, r.speed, r.rep): r for r in runs}
        self._reps = reps

    def spec(self, rec: RunRecord) -> RunSpec | None:
        """The checkout's run of `rec`'s point, or None when the scenario or point is gone."""
        self._expand(rec.rep)
        return self._specs.get(rec.key)

    def digests(self, rec: RunRecord) -> Digests | None:
        """What main would record for `rec`'s point on its site, or None when it cannot say
        (the scenario or the point is gone)."""
        spec = self.spec(rec)
        if spec is None:
            return None
        key = (rec.key, rec.site)
        if key not in self._digests:
            self._digests[key] = _spec_digests(self.repo, spec, rec.site)
        return self._digests[key]

    def why_not(self, rec: RunRecord) -> str | None:
        want = self.digests(rec)
        if want is None:
            return self.error or (
                f"{self.file} has no point {'/'.join(map(str, rec.key))} any more"
            )
        if want.code == rec.digests.code:
            return None
        parts = [k for k in ("inputs", "rust", "python")
                 if getattr(want, k) != getattr(rec.digests, k)]  # fmt: skip
        return (
            "made by other "
            + " and ".join(
                {"inputs": "inputs", "rust": "Rust", "python": "Python"}[k] for k in parts
            )
            + " than main's"
        )


def _spec_digests(repo: Path, spec: RunSpec, site: str) -> Digests:
    from priolab.scenario import run_input_files, trace_names

    files = run_input_files(trace_names(spec.link), spec.params, spec.base_dir)
    return digest.digests(spec.to_json(), files, spec.workload_kind, site, repo)


@functools.cache
def expected(repo: Path, name: str) -> Expected:
    """One `Expected` per scenario and process (the book, status and verify share it)."""
    return Expected(repo, name)
