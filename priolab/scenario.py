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

from ground.data import Dataset, missing_hint, read_manifest
from ground.data import is_ref as is_data_ref
from ground.data import resolve as resolve_data
from ground.errors import ScenarioError, problems_from, shorten
from netem.model import Link
from netem.resolve import ResolvedLink, ResolveError, resolve_link
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


# the workload kinds, for the JSON schema editors read
WORKLOAD_ENUM: dict[str, Any] = {"enum": sorted(WORKLOADS)}


class WorkloadSpec(Strict):
    kind: str = Field(
        description="a workload folder of priolab/workloads/",
        json_schema_extra=WORKLOAD_ENUM,
    )
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known(self) -> WorkloadSpec:
        if self.kind not in WORKLOADS:
            raise ValueError(f"kind: unknown workload {self.kind!r}; allowed: {sorted(WORKLOADS)}")
        return self


class Variant(Strict):
    """A named variant. `link` holds partial overrides of the base link (settings only)."""

    description: str | None = None
    link: dict[str, Any] | None = None
    workload: dict[str, Any] = Field(default_factory=dict)


class Compare(Strict):
    """Which schemes analysis compares: every scheme's metrics ÷ the reference's."""

    reference: Name = Field(description="the scheme every other scheme is divided by")
    order: list[Name] | None = Field(
        default=None, description="schemes in tables and figures (default: as defined)"
    )
    labels: dict[Name, str] = Field(default_factory=dict, description="display names")

    def resolved(self, schemes: list[str]) -> dict[str, Any]:
        order = list(self.order or [])
        return {"reference": self.reference, "labels": dict(self.labels),
                "order": order + [s for s in schemes if s not in order]}  # fmt: skip


class Capture(Strict):
    """Packet capture on each endpoint's interface on the emulated link (tcpdump), one pcap
    per endpoint in the run folder beside the TLS key log the endpoints write, so Wireshark
    decrypts QUIC."""

    snaplen_bytes: int = Field(
        default=262_144, ge=64, le=262_144,
        description="bytes kept per packet (tcpdump -s; default: tcpdump's, whole packets)",
    )  # fmt: skip


class RecvBuffers(Strict):
    """Receive buffer of each endpoint's sockets, modelled by the sim site (bytes; absent =
    unbounded, as with the 4 MiB buffers the real endpoints ask for). `guest` applies to every
    pair's guest end (access: guest; dumbbell: snd<i>), `host` to every host end."""

    guest: int | None = Field(default=None, ge=1500, le=1 << 31,
                              description="bytes; at least one 1500-byte datagram")  # fmt: skip
    host: int | None = Field(default=None, ge=1500, le=1 << 31,
                             description="bytes; at least one 1500-byte datagram")  # fmt: skip


class ReaderStall(Strict):
    """A crude model of an endpoint's reader waiting for a core (simnet's ReaderStall): every
    `every_ms` of virtual time, for `for_ms`, the endpoint's sockets hand nothing to their
    reader while datagrams keep arriving into the receive buffer. Virtual time has no CPU time
    of its own; this puts back the stalls that made a small receive buffer overflow for real."""

    every_ms: float = Field(gt=0.0, le=60_000.0, description="period of the stalls (ms)")
    for_ms: float = Field(gt=0.0, le=60_000.0, description="length of each stall (ms)")

    @model_validator(mode="after")
    def _shorter(self) -> ReaderStall:
        if self.for_ms >= self.every_ms:
            raise ValueError(f"for_ms ({self.for_ms:g}) must be below every_ms "
                             f"({self.every_ms:g}): a reader that never reads")  # fmt: skip
        return self


class ReaderStalls(Strict):
    """Reader stalls per endpoint, modelled by the sim site (absent = none). `guest` applies
    to every pair's guest end, `host` to every host end, as RecvBuffers."""

    guest: ReaderStall | None = None
    host: ReaderStall | None = None


class SimOptions(Strict):
    """What only the sim site (priolab-sim, virtual time) reads; the Mininet site's endpoints
    have the kernel's own buffers."""

    recv_buffer_bytes: RecvBuffers = Field(
        default_factory=RecvBuffers,
        description="model each endpoint's socket receive buffer (a full buffer drops, counted "
        "as RcvbufErrors); absent = unbounded",
    )
    reader_stall: ReaderStalls = Field(
        default_factory=ReaderStalls,
        description="model a reader waiting for a core: periodic stalls during which the "
        "endpoint's sockets are not read (datagrams queue in the receive buffer); absent = none",
    )


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
    capture: Capture | None = Field(
        default=None, description="packet capture on the emulated link (off when absent)"
    )
    qlog: bool = Field(
        default=False,
        description="one qlog trace (JSON-SEQ, quinn's qlog) per QUIC connection of every "
        "endpoint, in its log folder's qlog/ (a QUIC workload only)",
    )
    compare: Compare | None = Field(
        default=None, description="which schemes analysis compares (no ratios when absent)"
    )
    sim: SimOptions | None = Field(
        default=None, description="options of the sim site only (engine/sites/sim.py)"
    )

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
        if self.compare is not None:
            named = [("compare.reference", [self.compare.reference]),
                     ("compare.order", self.compare.order or []),
                     ("compare.labels", list(self.compare.labels))]  # fmt: skip
            for key, names in named:
                for n in names:
                    if n not in self.schemes:
                        raise ValueError(
                            f"{key}: '{n}' is not defined under schemes "
                            f"(defined: {', '.join(self.schemes)})"
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
    capture: Capture | None = None
    compare: dict[str, Any] | None = None
    sim: SimOptions | None = None
    qlog: bool = False

    @property
    def rel_dir(self) -> Path:
        from ground import rundir

        return rundir.rel_dir(self.scenario, self.setting, self.scheme, self.speed, self.rep)

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
            "capture": self.capture.model_dump(mode="json") if self.capture else None,
            "compare": self.compare,
            # what the relative file names above (traces, workload inputs) are relative to
            "base_dir": str(self.base_dir.resolve()),
            # only when set: the runs of scenarios without it keep their JSON
            **({"sim": self.sim.model_dump(mode="json")} if self.sim else {}),
            **({"qlog": True} if self.qlog else {}),
        }


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Recursive dict merge; override wins; a mapping replaces a mapping only key by key.

    A direction's `rate_mbps`, `trace`, `unlimited` and `policer` are alternatives: an
    override that names one of them drops the others from the base; one that names `policer`
    also drops the base's `queue` (a policer has none).
    """
    out = copy.deepcopy(base)
    rate_keys = {"rate_mbps", "trace", "unlimited", "policer"}
    if rate_keys & override.keys():
        for k in rate_keys - override.keys():
            out.pop(k, None)
        if "policer" in override:
            out.pop("queue", None)
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
    except UnicodeDecodeError as e:
        raise ScenarioError(path, [("(file)", "not a text file (YAML is text)")]) from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"(line {mark.line + 1}, column {mark.column + 1})" if mark else "(file)"
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ScenarioError(path, [(where, f"not valid YAML: {problem}")]) from e
    if not isinstance(data, dict):
        raise ScenarioError(path, [("(top level)", "must be a mapping of keys to values")])
    return data


def resolve_data_refs(raw: dict[str, Any], path: Path, need_data: bool = True) -> dict[str, Any]:
    """The one place a scenario's `data:<dataset>/<file>` references become paths: every
    string value of that form, anywhere in the file (a trace's `file`, a workload's tracking
    or frame trace), is replaced by the absolute path of the file's copy (ground/data.py:
    PRIOLAB_DATA, then the checkout's data/). A reference that data/manifest.toml does not
    list is an error naming the key. With `need_data`, so is one whose dataset is in neither
    folder, naming the fetch command; without it (the workflow's input lists) it resolves to
    where `priolab data fetch` would put it, so the caller can see the file is absent."""
    problems: list[tuple[str, str]] = []
    missing: list[tuple[str, str, str]] = []
    manifest: dict[str, Dataset] | None = None

    def walk(value: Any, key: str) -> Any:
        nonlocal manifest
        if isinstance(value, dict):
            return {k: walk(v, f"{key}.{k}" if key else str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, f"{key}[{i}]") for i, v in enumerate(value)]
        if not is_data_ref(value):
            return value
        if manifest is None:
            manifest = read_manifest()
        try:
            found = resolve_data(value, manifest)
        except ValueError as e:
            problems.append((key, str(e)))
            return value
        if not found.found:
            missing.append((key, value, found.dataset.name))
        return str(found.path)

    out = walk(raw, "")
    if need_data:
        names = [name for *_, name in missing]
        problems += [(key, f"{ref}: {missing_hint(names)}") for key, ref, _ in missing]
    if problems:
        raise ScenarioError(path, problems)
    return out


def _validate(path: Path, need_data: bool = True) -> Scenario:
    data = resolve_data_refs(read_yaml(path), path, need_data)
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(path, problems_from(e)) from e


def load(path: Path | str) -> Scenario:
    """Read and validate a scenario file, expanding it once so that every run resolves."""
    path = Path(path)
    sc = _validate(path)
    expand(sc, path)  # raises ScenarioError on any per-run problem
    return sc


def _variant_names(sc: Scenario) -> tuple[list[str], list[str], list[str]]:
    return (
        sc.matrix.setting or list(sc.settings),
        sc.matrix.scheme or list(sc.schemes),
        sc.matrix.speed or list(sc.speeds),
    )


def _setting_links(sc: Scenario) -> tuple[dict[str, Link], list[tuple[str, str]]]:
    """The link of every selected setting (base merged with its override), and problems."""
    base_link = sc.link.model_dump(mode="json", exclude_unset=True)
    links: dict[str, Link] = {}
    problems: list[tuple[str, str]] = []
    for s in _variant_names(sc)[0]:
        try:
            links[s] = Link.model_validate(deep_merge(base_link, sc.settings[s].link or {}))
        except ValidationError as e:
            problems += problems_from(e, f"settings.{s}.link (merged with link)")
    return links, problems


def _combinations(sc: Scenario) -> list[tuple[str, str, str, str, dict[str, Any]]]:
    """(setting, scheme, speed, where, merged workload params) of every matrix point."""
    settings, schemes, speeds = _variant_names(sc)
    return [
        (
            s,
            sch,
            sp,
            f"workload.params + settings.{s} + schemes.{sch} + speeds.{sp}",
            {
                **sc.workload.params,
                **sc.settings[s].workload,
                **sc.schemes[sch].workload,
                **sc.speeds[sp].workload,
            },
        )
        for s in settings
        for sch in schemes
        for sp in speeds
    ]


def _trace_path(link: Link, direction: str, base_dir: Path) -> Path | None:
    tr = getattr(link, direction).trace
    if tr is None:
        return None
    return tr.file if tr.file.is_absolute() else base_dir / tr.file


def _param_files(params: BaseModel, base_dir: Path) -> list[Path]:
    """Every file a workload's parameters name (fields holding a Path, or a mapping with a
    `file` path such as a tracking trace with reading options), resolved."""
    found = [getattr(v, "file", v) for v in params.__dict__.values()]
    return [f if f.is_absolute() else (base_dir / f) for f in found if isinstance(f, Path)]


def input_files(path: Path | str) -> list[Path]:
    """Every file the runs of a scenario read (throughput traces, frame and tracking traces),
    as absolute paths, sorted, without duplicates. Needs only a scenario that validates as a
    model: the files themselves may be missing (the workflow declares them as inputs, and
    leaves out a scenario whose datasets are not fetched: a `data:` reference then names
    where `priolab data fetch` would put its file)."""
    path = Path(path)
    sc = _validate(path, need_data=False)
    base_dir = path.resolve().parent
    files: set[Path] = set()
    links, _ = _setting_links(sc)
    for link in links.values():
        for d in ("uplink", "downlink"):
            f = _trace_path(link, d, base_dir)
            if f is not None:
                files.add(f.resolve())
    model = WORKLOADS[sc.workload.kind].params_model
    for *_, params_dict in _combinations(sc):
        try:
            params = model.model_validate(params_dict)
        except ValidationError:
            continue  # reported by load()
        files.update(f.resolve() for f in _param_files(params, base_dir))
    return sorted(files)


def _link_problems(link: Link, base_dir: Path) -> list[tuple[str, str]]:
    """Resolve a link exactly as a run does (netem.resolve.resolve_link: loss models, BDP
    queues, trace files read and parsed); (key within the link, problem) pairs."""
    missing = []
    for d in ("uplink", "downlink"):
        f = _trace_path(link, d, base_dir)
        if f is not None and not f.is_file():
            missing.append((f"{d}.trace.file", f"file not found: {f}"))
    if missing:
        return missing
    try:
        resolve_cached(link, base_dir)
    except ResolveError as e:
        return e.problems
    return []


_RESOLVED: dict[tuple[str, Path, tuple[tuple[str, int, int], ...]], ResolvedLink] = {}


def resolve_cached(link: Link, base_dir: Path) -> ResolvedLink:
    """`netem.resolve.resolve_link`, remembered per link, folder and trace files' mtime/size
    (a scenario names the same trace in many settings; the workflow loads it more than once)."""
    stamps = []
    for d in ("uplink", "downlink"):
        f = _trace_path(link, d, base_dir)
        if f is not None:
            st = f.stat()
            stamps.append((str(f), st.st_mtime_ns, st.st_size))
    key = (link.model_dump_json(), base_dir, tuple(stamps))
    if key not in _RESOLVED:
        _RESOLVED[key] = resolve_link(link, base_dir)
    return _RESOLVED[key]


def expand(sc: Scenario, path: Path) -> list[RunSpec]:
    """Every run of the matrix, resolved and validated as a run would: each link through
    netem.resolve (trace files read), each workload's parameters and files. Errors name the
    key that caused them."""
    base_dir = path.resolve().parent
    workload = WORKLOADS[sc.workload.kind]
    links, problems = _setting_links(sc)
    # a problem the base link has too is named under `link.`, one only a setting's merged
    # link has under `settings.<s>.link.`
    base_problems = set(_link_problems(sc.link, base_dir))
    if sc.qlog:
        problems += _qlog_problem(sc.workload.kind)
    for s, link in links.items():
        problems += [
            (f"link.{k}" if (k, m) in base_problems else f"settings.{s}.link.{k}", m)
            for k, m in _link_problems(link, base_dir)
        ]
    runs: list[RunSpec] = []
    checked: set[tuple[str, str, str]] = set()
    for s, sch, sp, where, params_dict in _combinations(sc):
        try:
            params = workload.params_model.model_validate(params_dict)
        except ValidationError as e:
            problems += problems_from(e, f"{where} → workload")
            continue
        if (s, sch, sp) not in checked:
            checked.add((s, sch, sp))
            found = workload.check(params, base_dir)
            qlog_check = getattr(workload, "qlog_problems", None)
            if sc.qlog and qlog_check is not None:
                found += qlog_check(params)
            problems += [(f"{where} → workload.{k}", m) for k, m in found]
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
                    capture=sc.capture,
                    compare=sc.compare.resolved(list(sc.schemes)) if sc.compare else None,
                    sim=sc.sim,
                    qlog=sc.qlog,
                )
            )
    if problems:
        # one message per distinct problem, in order
        raise ScenarioError(path, list(dict.fromkeys(problems)))
    return runs


def _qlog_problem(kind: str) -> list[tuple[str, str]]:
    """`qlog: true` with a workload that opens no QUIC connection (one without
    `qlog_problems`, which says what of its parameters open none)."""
    if hasattr(WORKLOADS[kind], "qlog_problems"):
        return []
    quic = sorted(k for k, w in WORKLOADS.items() if hasattr(w, "qlog_problems"))
    return [("qlog", f"true, but workload {kind!r} opens no QUIC connection to trace; "
             f"allowed with the QUIC workloads: {', '.join(quic)}")]  # fmt: skip


def _rate_key(link: Link, direction: str) -> str:
    d = getattr(link, direction)
    if d.trace is not None:
        return f"{direction}.trace"
    return f"{direction}.policer.rate_mbps" if d.policer is not None else f"{direction}.rate_mbps"


def _idle_starts(link: Link, base_dir: Path) -> list[tuple[str, str]]:
    """(key within the link, warning) for each direction that starts idle."""
    from netem.idle_start import idle_start_warning

    try:
        resolved = resolve_cached(link, base_dir)
    except (ResolveError, OSError):
        return []  # reported as a problem by expand()
    out = []
    for d in ("uplink", "downlink"):
        tr = getattr(link, d).trace
        msg = idle_start_warning(getattr(resolved, d), tr.start_s if tr else 0.0)
        if msg is not None:
            out.append((_rate_key(link, d), msg))
    return out


def link_warnings(sc: Scenario, path: Path) -> list[tuple[str, str]]:
    """Warnings about a valid scenario's links, (key path, message): a direction that carries
    next to nothing over the first seconds of a run (netem.idle_start). A warning the base
    link has too is named under `link.`, one only a setting's link has under
    `settings.<s>.link.`."""
    base_dir = path.resolve().parent
    links, _ = _setting_links(sc)
    base = set(_idle_starts(sc.link, base_dir))
    out: list[tuple[str, str]] = []
    for s, link in links.items():
        for k, m in _idle_starts(link, base_dir):
            out.append((f"link.{k}" if (k, m) in base else f"settings.{s}.link.{k}", m))
    return list(dict.fromkeys(out))


def find_run(
    runs: list[RunSpec], setting: str, scheme: str, speed: str, rep: int, file: Path | str = ""
) -> RunSpec:
    """The run of one matrix point; a ScenarioError naming the option and what is allowed."""
    for r in runs:
        if (r.setting, r.scheme, r.speed, r.rep) == (setting, scheme, speed, rep):
            return r
    problems = []
    for opt, given, have in (
        ("--setting", setting, [r.setting for r in runs]),
        ("--scheme", scheme, [r.scheme for r in runs]),
        ("--speed", speed, [r.speed for r in runs]),
        ("--rep", rep, [r.rep for r in runs]),
    ):
        allowed = list(dict.fromkeys(have))
        if given not in allowed:
            shown = ", ".join(str(a) for a in allowed)
            problems.append((opt, f"{given!r} is not in the matrix; allowed: {shorten(shown)}"))
    raise ScenarioError(file, problems or [("(matrix)", "no such run")])


def json_schema() -> dict[str, Any]:
    """JSON schema of a scenario file, for Snakemake's `validate`."""
    schema = Scenario.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "priolab scenario"
    return schema
