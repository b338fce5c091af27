"""The evidence store on disk: `evidence/records/<site>/<scenario>.parquet`, one file of run
records per scenario and site (evidence/README.md says why Parquet).

Deterministic: rows sorted by their matrix point, columns in a fixed order (records.py's
scalars, digests and nested JSON, then the metric columns by name), one row group, no
statistics, so writing the same records gives the same bytes and a refresh rewrites a file
rather than growing it. `merge` replaces a record by the newer one of the same point.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from priolab.evidence.records import METRIC_PREFIX, NESTED, SCALARS, Digests, RunRecord
from priolab.paths import REPO_ROOT

STORE = REPO_ROOT / "evidence"
RECORDS = "records"
SUFFIX = ".parquet"
COMPRESSION = "zstd"
COMPRESSION_LEVEL = 19  # assumption: files are written rarely and read often; smallest wins

_TYPES: dict[str, pa.DataType] = {
    "scenario": pa.string(), "site": pa.string(), "setting": pa.string(), "scheme": pa.string(),
    "speed": pa.string(), "rep": pa.int64(), "seed": pa.int64(), "valid": pa.bool_(),
    "commit": pa.string(), "dirty": pa.bool_(), "lock_digest": pa.string(),
}  # fmt: skip


def path_of(store: Path, site: str, scenario: str) -> Path:
    return store / RECORDS / site / f"{scenario}{SUFFIX}"


def files(store: Path) -> list[Path]:
    """Every record file of the store, sorted (site, then scenario)."""
    return sorted((store / RECORDS).glob(f"*/*{SUFFIX}"))


def sort_key(r: RunRecord) -> tuple[str, str, str, int]:
    return (r.setting, r.scheme, r.speed, r.rep)


def table(records: Iterable[RunRecord]) -> pa.Table:
    """The records as one table, rows in `sort_key` order, columns in the fixed order."""
    rows = [r.to_row() for r in sorted(records, key=sort_key)]
    metrics = sorted({k for row in rows for k in row if k.startswith(METRIC_PREFIX)})
    fields = [pa.field(k, _TYPES[k]) for k in SCALARS]
    fields += [pa.field(f"digest.{k}", pa.string()) for k in Digests.model_fields]
    fields += [pa.field(k, pa.string()) for k in NESTED]
    fields += [pa.field(k, pa.float64()) for k in metrics]
    schema = pa.schema(fields)
    cols = {f.name: [row.get(f.name) for row in rows] for f in fields}
    return pa.Table.from_pydict(cols, schema=schema)


def write(path: Path, records: list[RunRecord]) -> Path:
    """Write the records (all of one scenario and site) to `path`, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    t = table(records)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    os.chmod(tmp, 0o644)  # a file of the repository, not a private temporary one
    try:
        pq.write_table(t, tmp, compression=COMPRESSION, compression_level=COMPRESSION_LEVEL,
                       use_dictionary=True, write_statistics=False,
                       row_group_size=max(1, t.num_rows), store_schema=False)  # fmt: skip
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def read(path: Path) -> list[RunRecord]:
    """The records of one file, as written."""
    return [RunRecord.from_row(row) for row in pq.read_table(path).to_pylist()]


def read_all(store: Path) -> list[RunRecord]:
    return [r for f in files(store) for r in read(f)]


def merge(old: list[RunRecord], new: list[RunRecord]) -> list[RunRecord]:
    """`old` with every record of a point in `new` replaced by `new`'s, and `new`'s others
    added."""
    by_key = {sort_key(r): r for r in old}
    by_key.update({sort_key(r): r for r in new})
    return sorted(by_key.values(), key=sort_key)
