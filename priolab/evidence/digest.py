"""The code digest of a run: a content hash of what produced it (evidence/README.md).

Three parts, each a sha256 over sorted lines, and `code` over the three:

- **inputs**: the run's resolved scenario values (the `run` block of its plan.json and
  metadata.json, RunSpec.to_json: the matrix point, seed, link, workload parameters), normalised
  (the scenario folder relative to the checkout; no run-folder path, no wall-clock value is
  in it), and the content of every file the run reads (its link's traces, the files its
  workload parameters name: `priolab.scenario.run_input_files`). The rest of a plan (argv
  lists, start offsets, the link's resolved schedule) is a function of these and of the
  code below, so two runs with equal parts have equal plans.
- **rust**: the sources of the crates the workload's programs link, with linkem's core (the
  emulator) and, on the sim site, simnet and priolab-sim's own files (crates.py: the graph
  from the Cargo.toml files and Cargo.lock, not a hand list).
- **python**: every module of this repository that the run's Python imports (pyimports.py):
  the scenario model and the planner that resolve its inputs, the site that ran and judged
  it, the generic analysis and the workload's own package and analysis that compute its
  metrics and figure data. A workload's figures (`<package>.figures`, drawn from the
  records) are not in it.

`rust_digest(kind, site)` alone is the content-hashed build stamp of rules/build.smk: a
changed endpoint changes its workload's stamp and no other.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from ground import data
from priolab.evidence import crates, pyimports
from priolab.evidence.records import Digests

SITE_MODULES = {
    "sim": "priolab.engine.sites.sim",
    "mininet": "priolab.engine.sites.mininet",
    "vm": "priolab.engine.sites.vm",
    "testbed": "priolab.testbed",
}
"""The module that runs and judges a run on each site (the root of its Python digest)."""
ANALYSIS_MODULES = ("analysis.tables", "analysis.metrics")
"""The generic steps that turn a run's logs into its metrics and figure data."""
PLANNING_MODULES = ("priolab.scenario", "priolab.engine.plan")
"""What resolves a run's inputs: the scenario model and the planner."""
EMULATOR = "linkem"
"""The link emulator's crate: every run's link goes through its core."""
SIM_CRATES = ("simnet",)
"""What the sim site adds: the in-memory network over linkem's core."""
SIM_PROCESS = "priolab-sim"
"""The sim site's one process: its own files count, not every endpoint it links."""


def _sha(lines: list[str]) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode())
        h.update(b"\n")
    return h.hexdigest()


def workload_package(kind: str) -> str:
    """The package of a workload kind (`priolab.workloads.<folder>`)."""
    from priolab.workloads import PACKAGES

    if kind not in PACKAGES:
        raise ValueError(f"workload kind {kind!r}: not one of {sorted(PACKAGES)}")
    return PACKAGES[kind]


def python_roots(repo: Path, kind: str, site: str) -> list[str]:
    """The modules whose import closure is a run's Python (see the module's docstring)."""
    pkg = workload_package(kind)
    roots = [*PLANNING_MODULES, *ANALYSIS_MODULES, pkg, SITE_MODULES.get(site, SITE_MODULES["sim"])]
    if site == "sim":
        roots.append("priolab.engine.sim_spec")
    if pyimports.module_file(repo, f"{pkg}.analysis") is not None:
        roots.append(f"{pkg}.analysis")
    return roots


def python_files(repo: Path, kind: str, site: str) -> list[Path]:
    return pyimports.closure(repo, python_roots(repo, kind, site))


@functools.cache
def python_digest(repo: Path, kind: str, site: str) -> str:
    """The content hash of the Python a run of `kind` on `site` imports (cached per process:
    `forget` after changing a file)."""
    lines = [f"{f.relative_to(repo).as_posix()} {crates.sha256_file(f)}"
             for f in python_files(repo, kind, site)]  # fmt: skip
    return _sha(lines)


def rust_roots(repo: Path, kind: str, site: str) -> tuple[list[str], tuple[str, ...]]:
    """(root crates, shallow roots) of a run's Rust: the packages that build the workload's
    programs, linkem, the crates its analysis loads to compute the run's metrics
    (`analysis_crates`, e.g. roq's scoring kernel), and on the sim site simnet (deep) and
    priolab-sim (shallow)."""
    from priolab.workloads import WORKLOADS

    if kind not in WORKLOADS:
        raise ValueError(f"workload kind {kind!r}: not one of {sorted(WORKLOADS)}")
    binaries: dict[str, Any] = getattr(WORKLOADS[kind], "binaries", dict)()
    roots = [p for b in sorted(binaries) if (p := crates.package_of_binary(repo, b))]
    roots.append(EMULATOR)
    roots += getattr(WORKLOADS[kind], "analysis_crates", ())
    if site == "sim":
        return [*roots, *SIM_CRATES], (SIM_PROCESS,)
    return roots, ()


def rust_files(repo: Path, kind: str, site: str) -> list[Path]:
    roots, shallow = rust_roots(repo, kind, site)
    c = crates.closure(repo, roots, shallow)
    mem = crates.members(repo)
    return [f for name in c.workspace for f in crates.crate_files(repo, mem[name])]


@functools.cache
def rust_digest(repo: Path, kind: str, site: str) -> str:
    """The content hash of the Rust sources a run of `kind` on `site` depends on (cached per
    process: `forget` after changing a file)."""
    roots, shallow = rust_roots(repo, kind, site)
    return _sha(crates.digest_lines(repo, crates.closure(repo, roots, shallow)))


def forget() -> None:
    """Drop the cached digests (a process that changed a source file and digests again)."""
    python_digest.cache_clear()
    rust_digest.cache_clear()
    crates.members.cache_clear()


OUTSIDE = "<outside>"
"""How a normalised base_dir starts when the scenario's folder is not one of this checkout."""


def checkout_dir(base_dir: str, repo: Path) -> str:
    """A scenario folder as the checkout that made the run had it, relative to that
    checkout: the longest tail of the recorded absolute path that is a folder of this
    checkout (`/elsewhere/priolab/scenarios` → `scenarios`); `<outside>/<name>` when none is."""
    p = Path(base_dir)
    if p.is_relative_to(repo.resolve()):
        return p.relative_to(repo.resolve()).as_posix()
    parts = p.parts[1:] if p.is_absolute() else p.parts
    for i in range(len(parts)):
        tail = Path(*parts[i:])
        if (repo / tail).is_dir():
            return tail.as_posix()
    return f"{OUTSIDE}/{p.name}"


def _data_ref(value: str, sets: dict[str, Any], folders: list[Path]) -> str | None:
    """An absolute path to a file of a data/manifest.toml dataset in one of this machine's
    data folders → its `data:<dataset>/<file>` reference (None for any other string)."""
    p = Path(value)
    if not p.is_absolute():
        return None
    for root in folders:
        if p.is_relative_to(root):
            rel = p.relative_to(root)
            for ds in sets.values():
                if rel.parent.as_posix() == ds.dir and ds.file(rel.name) is not None:
                    return f"{data.PREFIX}{ds.name}/{rel.name}"
    return None


def _walk(value: Any, leaf: Any) -> Any:
    if isinstance(value, dict):
        return {k: _walk(v, leaf) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, leaf) for v in value]
    return leaf(value) if isinstance(value, str) else value


def normalised_run(run: dict[str, Any], repo: Path) -> dict[str, Any]:
    """The `run` block with its scenario folder relative to the checkout (`checkout_dir`) and
    every dataset file the scenario named by `data:<dataset>/<file>` named so again (a
    scenario resolves the reference to wherever this machine keeps its copy: PRIOLAB_DATA or
    data/): the same point gives the same block on every machine and in every checkout."""
    sets, folders = data.read_manifest(), data.roots()
    out = _walk(dict(run), lambda v: _data_ref(v, sets, folders) or v)
    if isinstance(out.get("base_dir"), str):
        out["base_dir"] = checkout_dir(out["base_dir"], repo)
    return out


def _local(run: dict[str, Any]) -> dict[str, Any]:
    """A run block with every `data:` reference resolved to this machine's copy (the inverse
    of `normalised_run`'s; a reference the manifest does not list stays as it is)."""

    def leaf(v: str) -> str:
        if not data.is_ref(v):
            return v
        try:
            return str(data.resolve(v).path)
        except ValueError:
            return v

    return _walk(run, leaf)


def run_files(run: dict[str, Any], repo: Path) -> list[Path]:
    """The files a recorded run read, resolved in this checkout (its scenario folder by
    `checkout_dir`, its datasets' files in this machine's data folders): its link's traces
    and the files its workload parameters name."""
    from pydantic import ValidationError

    from priolab.scenario import run_input_files
    from priolab.workloads import WORKLOADS

    run = _local(run)
    rel = checkout_dir(str(run.get("base_dir") or "scenarios"), repo)
    base = Path(str(run.get("base_dir"))) if rel.startswith(OUTSIDE) else repo / rel
    w = dict(run.get("workload") or {})
    kind = str(w.pop("kind", ""))
    if kind not in WORKLOADS:
        return []
    try:  # a run of other code may not validate: its digest then differs from main's anyway
        params = WORKLOADS[kind].params_model.model_validate(w)
    except ValidationError:
        return []
    link = run.get("link") or {}  # a dump does not validate again (its defaults are explicit)
    named = [(link.get(d) or {}).get("trace") for d in ("uplink", "downlink")]
    traces = [Path(str(t["file"])) for t in named if isinstance(t, dict) and t.get("file")]
    return run_input_files(traces, params, base)


def inputs_digest(run: dict[str, Any], files: list[Path], repo: Path) -> str:
    """The run block (normalised) and the content of every file it reads. A file that is
    missing hashes as `missing <name>`: the digest then differs from a run that read it."""
    lines = [json.dumps(normalised_run(run, repo), sort_keys=True, separators=(",", ":"))]
    for f in sorted(set(files)):
        lines.append(f"file {crates.sha256_file(f)}" if f.is_file() else f"missing {f.name}")
    return _sha([lines[0], *sorted(lines[1:])])


def digests(run: dict[str, Any], files: list[Path], kind: str, site: str, repo: Path) -> Digests:
    """All parts and the code digest over them."""
    i = inputs_digest(run, files, repo)
    r = rust_digest(repo, kind, site)
    p = python_digest(repo, kind, site)
    return Digests(code=_sha([f"inputs {i}", f"rust {r}", f"python {p}"]), inputs=i, rust=r,
                   python=p)  # fmt: skip


STAMP_DIR = ".build"
"""Where a results tree keeps its build stamps (rules/build.smk)."""


def build_stamp(results: Path, kind: str, site: str, repo: Path) -> Path:
    """A workload's content-hashed build stamp in a results tree: `rules/build.smk` builds and
    touches it; a run of the workload depends on it. Its name holds the digest of the Rust
    sources the workload's runs on `site` depend on (`rust_digest`), so a changed source makes
    a new stamp for its workloads only."""
    return results / STAMP_DIR / f"{site}-{kind}-{rust_digest(repo, kind, site)[:16]}.done"
