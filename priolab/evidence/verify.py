"""`priolab evidence verify --sample N [--seed S]`: rerun N random sim records that are current
(their code digest is what this checkout's code gives their point) and require the same
results.

Each sampled record's point runs again on the sim site into a scratch folder, through the
same steps as the workflow (priolab run-one --site sim, analysis.tables, analysis.metrics),
and is compared with the record:

- the verdict: `valid` and the reasons' codes, exactly;
- every metric of metrics.json, by analysis/sameness.py's rule (the sim golden tests' too): a
  metric whose value is a whole number on both sides (a count of frames, packets, bytes,
  freezes) must be equal; any other must agree within `sameness.REL_TOL` relative; NaN
  matches only NaN. Why: the sim site is deterministic, and counts are sums of events that
  come out exact on any CPU; a measured float passes through libm and vectorised reductions
  whose last bits may differ between CPUs (numpy picks kernels by the CPU's vector units), so
  it may differ in its last digits and nowhere else.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from analysis.sameness import moved
from priolab.evidence import collect, store
from priolab.evidence.records import REPLAYABLE_SITES, RunRecord
from priolab.evidence.scenarios import expected


def differences(old: RunRecord, new: RunRecord) -> list[str]:
    """What differs between a record and its rerun, one line per field."""
    out = []
    if old.valid != new.valid:
        out.append(f"valid: recorded {old.valid}, rerun {new.valid}")
    codes = sorted(r.code for r in old.reasons), sorted(r.code for r in new.reasons)
    if codes[0] != codes[1]:
        out.append(f"reasons: recorded {codes[0]}, rerun {codes[1]}")
    return out + moved(old.metrics, new.metrics)


@dataclass
class Outcome:
    record: RunRecord
    differences: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.differences and not self.error

    @property
    def where(self) -> str:
        r = self.record
        return f"{r.scenario}/{r.setting}/{r.scheme}/{r.speed}/r{r.rep}"


def current_sim_records(store_dir: Path, repo: Path) -> tuple[list[RunRecord], int]:
    """(the sim records whose code digest is the checkout's, how many sim records are not)."""
    current, stale = [], 0
    for p in store.files(store_dir):
        for r in store.read(p):
            if r.site not in REPLAYABLE_SITES:
                continue
            if expected(repo, r.scenario).why_not(r) is None:
                current.append(r)
            else:
                stale += 1
    return current, stale


def sample(records: list[RunRecord], n: int, seed: int) -> list[RunRecord]:
    """n records drawn without replacement by a seeded RNG, from the records in store order."""
    ordered = sorted(records, key=lambda r: (r.scenario, *store.sort_key(r)))
    return random.Random(seed).sample(ordered, min(n, len(ordered)))


def rerun(rec: RunRecord, repo: Path, work: Path) -> RunRecord:
    """Run the record's point again on the sim site into `work` and record it."""
    from analysis.metrics import run_metrics
    from analysis.tables import write_tables
    from priolab.engine.sites.sim import run_one

    spec = expected(repo, rec.scenario).spec(rec)
    if spec is None:
        raise ValueError(f"{rec.scenario}: no such point in its scenario file any more")
    out = work / rec.scenario / rec.setting / rec.scheme / rec.speed / f"r{rec.rep}"
    run_one(spec, out)
    write_tables(out)
    run_metrics(out)
    return collect.record(out, repo, work)


def verify(records: list[RunRecord], repo: Path) -> list[Outcome]:
    out = []
    work = Path(tempfile.mkdtemp(prefix="priolab-verify-"))
    try:
        for rec in records:
            try:
                out.append(Outcome(rec, differences(rec, rerun(rec, repo, work))))
            except Exception as e:  # reported per record; the others still run
                out.append(Outcome(rec, error=f"{type(e).__name__}: {e}"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out
