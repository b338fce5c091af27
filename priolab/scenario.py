"""Scenario files: typed models, validation with errors that name the key, matrix expansion.

A scenario file holds a base link and workload, and three named families of variants —
settings (may change the link and the workload), schemes and speeds (workload only). The
matrix is settings × schemes × speeds × repetitions; each point is one run in
`results/<scenario>/<setting>/<scheme>/<speed>/r<rep>/`.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from netem.model import Link
from priolab.errors import ScenarioError, problems_from
from priolab.workloads import WORKLOADS

Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$", max_length=64)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Topology(Strict):
    kind: Literal["access", "dumbbell"] = "access"
    pairs: int = Field(default=1, ge=1, le=8, description="dumbbell: sender/receiver pairs")

    @model_validator(mode="after")
    def _pairs(self) -> Topology:
        if self.kind == "access" and self.pairs != 1:
            raise ValueError("the access topology has exactly one pair")
        return self


class WorkloadSpec(Strict):
    kind: Literal["rise", "iperf-ping"]
    params: dict[str, Any] = Field(default_factory=dict)


class Variant(Strict):
    """A named variant. `link` holds partial overrides of the base link (settings only)."""

    description: str | None = None
    link: dict[str, Any] | None = None
    workload: dict[str, Any] = Field(default_factory=dict)


class Matrix(Strict):
    """Which variants to run; each list defaults to every variant defined."""

    setting: list[Name] | None = None
    scheme: list[Name] | None = None
    speed: list[Name] | None = None


class Scenario(Strict):
    name: Name
    description: str = ""
    topology: Topology = Field(default_factory=Topology)
    duration_s: float = Field(gt=0.0, le=86_400.0)
    repetitions: int = Field(default=1, ge=1, le=1000)
    seed: int = Field(default=1, ge=0, le=2**32 - 1)
    link: Link
    workload: WorkloadSpec
    settings: dict[Name, Variant] = Field(min_length=1)
    schemes: dict[Name, Variant] = Field(default_factory=lambda: {"default": Variant()})
    speeds: dict[Name, Variant] = Field(default_factory=lambda: {"default": Variant()})
    matrix: Matrix = Field(default_factory=Matrix)

    @model_validator(mode="after")
    def _variants(self) -> Scenario:
        for family in ("schemes", "speeds"):
            for name, v in getattr(self, family).items():
                if v.link is not None:
                    raise ValueError(f"{family}.{name}.link: only settings may change the link")
        for key, family in (("setting", "settings"), ("scheme", "schemes"), ("speed", "speeds")):
            chosen = getattr(self.matrix, key)
            for n in chosen or []:
                if n not in getattr(self, family):
                    raise ValueError(
                        f"matrix.{key}: '{n}' is not defined under {family} "
                        f"(defined: {', '.join(getattr(self, family))})"
                    )
        return self


@dataclass(frozen=True)
class RunSpec:
    """One point of the matrix, fully resolved."""

    scenario: str
    setting: str
    scheme: str
    speed: str
    rep: int
    seed: int
    duration_s: float
    topology: Topology
    link: Link
    workload_kind: str
    params: BaseModel
    base_dir: Path

    @property
    def rel_dir(self) -> Path:
        return Path(self.scenario, self.setting, self.scheme, self.speed, f"r{self.rep}")

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "setting": self.setting,
            "scheme": self.scheme,
            "speed": self.speed,
            "rep": self.rep,
            "seed": self.seed,
            "duration_s": self.duration_s,
            "topology": self.topology.model_dump(mode="json"),
            "link": self.link.model_dump(mode="json"),
            "workload": {"kind": self.workload_kind, **self.params.model_dump(mode="json")},
        }


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Recursive dict merge; override wins; a mapping replaces a mapping only key by key.

    A direction's `rate_mbps`, `trace` and `unlimited` are alternatives: an override that
    names one of them drops the others from the base.
    """
    out = copy.deepcopy(base)
    rate_keys = {"rate_mbps", "trace", "unlimited"}
    if rate_keys & override.keys():
        for k in rate_keys - override.keys():
            out.pop(k, None)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k not in {"loss", "queue"}:
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def run_seed(base_seed: int, setting: str, speed: str, rep: int) -> int:
    """The seed of one run. Schemes share it (common random numbers): w/ and w/o Pri see the
    same loss pattern, frame sizes and head movement, so differences come from the scheme."""
    h = hashlib.sha256(f"{base_seed}/{setting}/{speed}/{rep}".encode()).digest()
    return int.from_bytes(h[:4], "big")


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as e:
        raise ScenarioError(path, [("(file)", f"cannot read: {e.strerror}")]) from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ScenarioError(path, [("(file)", f"not valid YAML: {e}")]) from e
    if not isinstance(data, dict):
        raise ScenarioError(path, [("(top level)", "must be a mapping of keys to values")])
    return data


def load(path: Path | str) -> Scenario:
    """Read and validate a scenario file, expanding it once so that every run resolves."""
    path = Path(path)
    data = read_yaml(path)
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(path, problems_from(e)) from e
    expand(sc, path)  # raises ScenarioError on any per-run problem
    return sc


def _variant_names(sc: Scenario) -> tuple[list[str], list[str], list[str]]:
    return (
        sc.matrix.setting or list(sc.settings),
        sc.matrix.scheme or list(sc.schemes),
        sc.matrix.speed or list(sc.speeds),
    )


def expand(sc: Scenario, path: Path) -> list[RunSpec]:
    """Every run of the matrix, resolved and validated; errors name the key that caused them."""
    base_dir = path.resolve().parent
    workload = WORKLOADS[sc.workload.kind]
    problems: list[tuple[str, str]] = []
    runs: list[RunSpec] = []
    settings, schemes, speeds = _variant_names(sc)
    base_link = sc.link.model_dump(mode="json", exclude_unset=True)
    links: dict[str, Link] = {}
    for s in settings:
        merged = deep_merge(base_link, sc.settings[s].link or {})
        try:
            links[s] = Link.model_validate(merged)
        except ValidationError as e:
            problems += problems_from(e, f"settings.{s}.link (merged with link)")
            continue
        for d in ("uplink", "downlink"):
            tr = getattr(links[s], d).trace
            if tr is not None:
                f = tr.file if tr.file.is_absolute() else base_dir / tr.file
                if not f.is_file():
                    where = f"settings.{s}.link.{d}.trace.file"
                    if "trace" not in ((sc.settings[s].link or {}).get(d) or {}):
                        where = f"link.{d}.trace.file"
                    problems.append((where, f"file not found: {f}"))
    checked: set[tuple[str, str, str]] = set()
    for s in settings:
        for sch in schemes:
            for sp in speeds:
                params_dict = {
                    **sc.workload.params,
                    **sc.settings[s].workload,
                    **sc.schemes[sch].workload,
                    **sc.speeds[sp].workload,
                }
                where = f"workload.params + settings.{s} + schemes.{sch} + speeds.{sp}"
                try:
                    params = workload.params_model.model_validate(params_dict)
                except ValidationError as e:
                    problems += problems_from(e, f"{where} → workload")
                    continue
                if (s, sch, sp) not in checked:
                    checked.add((s, sch, sp))
                    problems += [
                        (f"{where} → workload.{k}", m) for k, m in workload.check(params, base_dir)
                    ]
                if s not in links:
                    continue
                for rep in range(1, sc.repetitions + 1):
                    runs.append(
                        RunSpec(
                            scenario=sc.name,
                            setting=s,
                            scheme=sch,
                            speed=sp,
                            rep=rep,
                            seed=run_seed(sc.seed, s, sp, rep),
                            duration_s=sc.duration_s,
                            topology=sc.topology,
                            link=links[s],
                            workload_kind=sc.workload.kind,
                            params=params,
                            base_dir=base_dir,
                        )
                    )
    if problems:
        # one message per distinct problem, in order
        raise ScenarioError(path, list(dict.fromkeys(problems)))
    return runs


def find_run(runs: list[RunSpec], setting: str, scheme: str, speed: str, rep: int) -> RunSpec:
    for r in runs:
        if (r.setting, r.scheme, r.speed, r.rep) == (setting, scheme, speed, rep):
            return r
    raise KeyError(f"no run {setting}/{scheme}/{speed}/r{rep} in the matrix")


def json_schema() -> dict[str, Any]:
    """JSON schema of a scenario file, for Snakemake's `validate`."""
    schema = Scenario.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "priolab scenario"
    return schema
