"""`priolab evidence verify --sample N [--seed S]`: rerun N random sim records that are current
(their code digest is what this checkout's code gives their point) and require the same
results.

Each sampled record's point runs again on the sim site into a scratch folder, through the
same steps as the workflow (priolab run-one --site sim, analysis.tables, analysis.metrics),
and is compared with the record:

- the verdict: `valid` and the reasons' codes, exactly;
- every metric of metrics.json: a metric whose value is an integer in both (a count of
  frames, packets, bytes, freezes, or a share of them that came out whole) must be equal; any
  other must agree within REL_TOL relative (ABS_TOL near zero); NaN matches only NaN and an
  infinity only itself. Why: the sim site is deterministic, and counts are sums of events that
  come out exact on any CPU; a measured float passes through libm and vectorised reductions
  whose last bits may differ between CPUs (numpy picks kernels by the CPU's vector units), so
  it may differ in its last digits and nowhere else.
"""

from __future__ import annotations

import math
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from priolab.evidence import collect, store
from priolab.evidence.records import REPLAYABLE_SITES, RunRecord
from priolab.evidence.scenarios import expected

REL_TOL = 1e-9
"""Relative tolerance of a float metric (last digits of a double; see the module's doc)."""
ABS_TOL = 1e-12
"""Below this, two floats near zero agree (a mean of zeros may come out as 1e-17)."""


def is_count(x: float) -> bool:
    return math.isfinite(x) and float(x).is_integer()


def same(a: float | None, b: float | None) -> bool:
    """Whether a recorded metric and its rerun agree (the module's rule)."""
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    if is_count(a) and is_count(b):
        return a == b
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def differences(old: RunRecord, new: RunRecord) -> list[str]:
    """What differs between a record and its rerun, one line per field."""
    out = []
    if old.valid != new.valid:
        out.append(f"valid: recorded {old.valid}, rerun {new.valid}")
    codes = sorted(r.code for r in old.reasons), sorted(r.code for r in new.reasons)
    if codes[0] != codes[1]:
        out.append(f"reasons: recorded {codes[0]}, rerun {codes[1]}")
    for k in sorted(set(old.metrics) | set(new.metrics)):
        if k not in old.metrics or k not in new.metrics:
            out.append(f"{k}: only {'recorded' if k in old.metrics else 'in the rerun'}")
        elif not same(old.metrics[k], new.metrics[k]):
            out.append(f"{k}: recorded {old.metrics[k]!r}, rerun {new.metrics[k]!r}")
    return out


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
