"""`priolab evidence status`: per scenario and site, the records, how many are valid and how
many are stale (made by other code than the checkout's: scenarios.Expected), with why."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from priolab.evidence import store
from priolab.evidence.records import RunRecord
from priolab.evidence.scenarios import expected


@dataclass
class FileStatus:
    site: str
    scenario: str
    path: Path
    records: int = 0
    valid: int = 0
    stale: int = 0
    why: Counter[str] = field(default_factory=Counter)
    size_bytes: int = 0


def stale_reason(rec: RunRecord, repo: Path) -> str | None:
    """Why `rec` is stale (None: it is what the checkout's code would produce)."""
    return expected(repo, rec.scenario).why_not(rec)


def status(store_dir: Path, repo: Path) -> list[FileStatus]:
    out = []
    for p in store.files(store_dir):
        recs = store.read(p)
        s = FileStatus(p.parent.name, p.stem, p, len(recs), sum(r.valid for r in recs),
                       size_bytes=p.stat().st_size)  # fmt: skip
        for r in recs:
            why = stale_reason(r, repo)
            if why is not None:
                s.stale += 1
                s.why[why] += 1
        out.append(s)
    return out


def table(rows: list[FileStatus]) -> list[str]:
    """The status as aligned text lines (the command's output)."""
    head = f"{'site':<8} {'scenario':<28} {'records':>7} {'valid':>6} {'stale':>6} {'kB':>7}"
    lines = [head]
    for s in rows:
        lines.append(f"{s.site:<8} {s.scenario:<28} {s.records:>7} {s.valid:>6} {s.stale:>6} "
                     f"{s.size_bytes / 1e3:>7.1f}")  # fmt: skip
        lines += [f"{'':<8} stale: {n} {why}" for why, n in s.why.most_common()]
    total = sum(s.size_bytes for s in rows)
    n = sum(s.records for s in rows)
    lines.append(f"{len(rows)} files, {n} records, {sum(s.stale for s in rows)} stale, "
                 f"{total / 1e6:.2f} MB")  # fmt: skip
    return lines
