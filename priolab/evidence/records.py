"""The run record: one row of the evidence store per run, valid or not (evidence/README.md).

`RunRecord` is the schema, in one place: every other module of the store builds, reads or
writes records through it. A record holds what a page rests on and nothing a page cannot
use: the matrix point and seed, the site, the verdict with its typed reasons, every field of
the run's metrics.json, the provenance (commit, lock digest, code digest and its parts), the
facts of metadata.json the pages and figures read (the resolved run, the site's block, CPU,
cost), the machine and calibration report of a real-time run, and the compact data the
figures draw (figure data: quantile vectors, binned series; never raw logs).

On disk a record is a flat row (`to_row`/`from_row`): scalars as columns, every metric as a
float column of its own (`metric.<name>`: NaN where the metric had no data, null where the
record has no such metric), the nested parts as canonical JSON text.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ground.reasons import Reason

REAL_TIME_SITES = ("mininet", "vm", "testbed")
"""Sites whose runs happen in real time and cannot be replayed (their records carry the
machine and its calibration report instead)."""
REPLAYABLE_SITES = ("sim",)
"""Sites whose runs are deterministic per seed: a record can be re-run and compared."""

METRIC_PREFIX = "metric."
KEY = ("setting", "scheme", "speed", "rep")
"""A record's place in its scenario's matrix; with scenario and site, unique in the store."""


class ReasonRecord(BaseModel):
    """A typed reason why a run is invalid (ground/reasons.py's `Reason`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    code: str
    detail: str
    node: str | None = None

    @classmethod
    def of(cls, r: Reason) -> ReasonRecord:
        return cls(code=r.code.value, detail=r.detail, node=r.node)

    def reason(self) -> Reason:
        return Reason.from_json(self.model_dump())


class Digests(BaseModel):
    """The parts of a code digest (digest.py): what the run read, the Rust it ran, the Python
    that planned it and computed its metrics. `code` hashes the three."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    code: str
    inputs: str
    rust: str
    python: str


class RunRecord(BaseModel):
    """One run of one scenario on one site."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario: str
    site: str  # sim, mininet, vm, testbed (metadata.json's site.kind)
    setting: str
    scheme: str
    speed: str
    rep: int = Field(ge=1)
    seed: int
    valid: bool
    reasons: tuple[ReasonRecord, ...] = ()
    # metrics.json: the metrics (None: no data) and what the analysis assumed
    metrics: dict[str, float | None] = Field(default_factory=dict)
    analysis: dict[str, Any] = Field(default_factory=dict)
    # provenance
    commit: str | None = None
    dirty: bool | None = None
    lock_digest: str | None = None
    digests: Digests
    # metadata.json's facts the pages read (normalised: no run-folder or checkout paths)
    meta: dict[str, Any] = Field(default_factory=dict)
    # a real-time run: the machine it ran on and that machine's calibration report
    machine: dict[str, Any] | None = None
    calibration: dict[str, Any] | None = None
    # the compact data the figures draw (figure_data.py)
    figure_data: dict[str, dict[str, list[float | int | str | None]]] = Field(default_factory=dict)
    # scores of a separate step over the run (the RISE page's Fig. 7 picture quality)
    picture: dict[str, float | int | str | None] | None = None

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.setting, self.scheme, self.speed, self.rep)

    @property
    def real_time(self) -> bool:
        return self.site not in REPLAYABLE_SITES

    @property
    def code_digest(self) -> str:
        return self.digests.code

    def to_row(self) -> dict[str, Any]:
        """The flat row written to disk (see the module's docstring)."""
        d = self.model_dump(mode="json")
        row: dict[str, Any] = {k: d[k] for k in SCALARS}
        for k, v in d["digests"].items():
            row[f"digest.{k}"] = v
        for k in NESTED:
            row[k] = canonical(d[k])
        for k, v in self.metrics.items():
            row[METRIC_PREFIX + k] = math.nan if v is None else float(v)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RunRecord:
        d: dict[str, Any] = {k: row[k] for k in SCALARS}
        d["digests"] = {k: row[f"digest.{k}"] for k in Digests.model_fields}
        for k in NESTED:
            d[k] = json.loads(row[k]) if row.get(k) is not None else None
        for k in ("reasons", "analysis", "meta", "figure_data"):
            d[k] = (
                d[k]
                if d[k] is not None
                else RunRecord.model_fields[k].get_default(call_default_factory=True)
            )
        d["metrics"] = {
            k[len(METRIC_PREFIX) :]: (None if math.isnan(v) else float(v))
            for k, v in row.items() if k.startswith(METRIC_PREFIX) and v is not None
        }  # fmt: skip
        return cls.model_validate(d)


SCALARS = ("scenario", "site", "setting", "scheme", "speed", "rep", "seed", "valid", "commit",
           "dirty", "lock_digest")  # fmt: skip
NESTED = ("reasons", "analysis", "meta", "machine", "calibration", "figure_data", "picture")


def canonical(obj: Any) -> str | None:
    """Canonical JSON: sorted keys, no spaces, NaN written as null (JSON has no NaN)."""
    if obj is None:
        return None
    return json.dumps(_no_nan(obj), sort_keys=True, separators=(",", ":"), allow_nan=False)


def _no_nan(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: _no_nan(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_no_nan(v) for v in obj]
    return obj
