"""The Rust crate graph of the workspace, read from the Cargo.toml files and Cargo.lock.

No cargo is run: the workspace's members (the root Cargo.toml), each member's normal and
build dependencies (its Cargo.toml; dev-dependencies build tests, not a run's binary) and the
resolved external crates (Cargo.lock, with the version each member's dependency resolved to)
give what a binary links. `closure` is the set of packages a set of roots links;
`digest_lines` the lines a code digest hashes for them: every file of a workspace crate that
goes into its build (Cargo.toml, build.rs, src/), and an external crate's name, version,
source and checksum as Cargo.lock pins it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEP_TABLES = ("dependencies", "build-dependencies")
"""The dependency tables whose crates a binary links (dev-dependencies only build tests)."""


class CrateGraphError(ValueError):
    """The workspace's manifests do not describe a graph this module can read."""


@dataclass(frozen=True)
class Member:
    """One workspace crate: its name, folder, binaries and the dependencies it builds with."""

    name: str
    dir: Path  # relative to the repository
    bins: tuple[str, ...]
    path_deps: tuple[str, ...]  # workspace crates (by package name)
    registry_deps: tuple[str, ...]  # external crates (by package name, before resolution)


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise CrateGraphError(f"{path}: {e}") from e


def _dep_tables(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """A manifest's normal and build dependency tables, platform-specific ones included."""
    out = [manifest.get(t) or {} for t in DEP_TABLES]
    for spec in (manifest.get("target") or {}).values():
        out += [spec.get(t) or {} for t in DEP_TABLES]
    return out


def _bins(manifest: dict[str, Any], crate_dir: Path) -> tuple[str, ...]:
    """The binaries of a crate: its [[bin]] tables, else the package's name when src/main.rs
    exists (cargo's default target), plus src/bin/*.rs (cargo's auto-discovered ones)."""
    explicit = [b for b in manifest.get("bin") or [] if "name" in b]
    named = [str(b["name"]) for b in explicit]
    used = {(crate_dir / str(b["path"])).resolve() for b in explicit if "path" in b}
    if not named and (crate_dir / "src" / "main.rs").is_file():
        named.append(str(manifest["package"]["name"]))
    auto = manifest.get("package", {}).get("autobins", True)
    if auto and (crate_dir / "src" / "bin").is_dir():  # cargo's auto-discovered binaries
        named += [p.stem for p in sorted((crate_dir / "src" / "bin").glob("*.rs"))
                  if p.resolve() not in used]  # fmt: skip
    return tuple(dict.fromkeys(named))


@functools.cache
def members(repo: Path) -> dict[str, Member]:
    """Package name → its member record, for every member of the root Cargo.toml."""
    root = _toml(repo / "Cargo.toml")
    out: dict[str, Member] = {}
    for rel in (root.get("workspace") or {}).get("members") or []:
        crate_dir = repo / rel
        manifest = _toml(crate_dir / "Cargo.toml")
        name = str(manifest["package"]["name"])
        paths, registry = [], []
        for table in _dep_tables(manifest):
            for key, spec in table.items():
                pkg = spec.get("package", key) if isinstance(spec, dict) else key
                if isinstance(spec, dict) and "path" in spec:
                    dep = _toml(crate_dir / spec["path"] / "Cargo.toml")["package"]["name"]
                    paths.append(str(dep))
                else:
                    registry.append(str(pkg))
        out[name] = Member(name, Path(rel), _bins(manifest, crate_dir),
                           tuple(sorted(set(paths))), tuple(sorted(set(registry))))  # fmt: skip
    return out


@dataclass(frozen=True)
class Locked:
    """One external crate as Cargo.lock pins it."""

    name: str
    version: str
    source: str
    checksum: str
    deps: tuple[str, ...]  # Cargo.lock's entries: "name" or "name version"

    @property
    def id(self) -> str:
        return f"{self.name} {self.version}"


def _locked(repo: Path) -> tuple[dict[str, Locked], dict[str, tuple[str, ...]]]:
    """(external crates by "name version", workspace members' lock entries by name)."""
    lock = _toml(repo / "Cargo.lock")
    external: dict[str, Locked] = {}
    member_deps: dict[str, tuple[str, ...]] = {}
    for p in lock.get("package") or []:
        deps = tuple(str(d) for d in p.get("dependencies") or [])
        if "source" not in p:  # a workspace member (or a path crate)
            member_deps[str(p["name"])] = deps
            continue
        c = Locked(str(p["name"]), str(p["version"]), str(p["source"]),
                   str(p.get("checksum", "")), deps)  # fmt: skip
        external[c.id] = c
    return external, member_deps


def _resolve(entry: str, external: dict[str, Locked]) -> str:
    """A lock entry ("name" when one version is locked, "name version" otherwise, possibly
    with a source in parentheses) → the locked crate's id."""
    parts = entry.split(" ")
    if len(parts) >= 2 and f"{parts[0]} {parts[1]}" in external:
        return f"{parts[0]} {parts[1]}"
    found = [k for k, c in external.items() if c.name == parts[0]]
    if len(found) != 1:
        raise CrateGraphError(f"Cargo.lock: dependency {entry!r} resolves to {found or 'nothing'}")
    return found[0]


@dataclass(frozen=True)
class Closure:
    """What a set of root crates links: workspace crates and locked external crates."""

    workspace: tuple[str, ...]
    external: tuple[Locked, ...]


def closure(repo: Path, roots: list[str], shallow: tuple[str, ...] = ()) -> Closure:
    """The crates the root packages link (normal and build dependencies, transitively).
    A `shallow` root counts with its own files and external crates but not its workspace
    dependencies: priolab-sim, which links every endpoint, so that its dispatch code counts
    for every workload while one endpoint's sources count only for its own."""
    mem = members(repo)
    external, member_deps = _locked(repo)
    unknown = [r for r in [*roots, *shallow] if r not in mem]
    if unknown:
        raise CrateGraphError(f"{repo / 'Cargo.toml'}: no workspace member named {unknown}")
    ws: set[str] = set()
    todo = [*roots, *shallow]
    ext_todo: list[str] = []
    while todo:
        name = todo.pop()
        if name in ws:
            continue
        ws.add(name)
        m = mem[name]
        todo += m.path_deps if name not in shallow else ()
        wanted = set(m.registry_deps)  # the lock entries of this member's non-dev deps
        ext_todo += [_resolve(e, external) for e in member_deps.get(name, ())
                     if e.split(" ")[0] in wanted]  # fmt: skip
    ext: set[str] = set()
    while ext_todo:
        cid = ext_todo.pop()
        if cid in ext:
            continue
        ext.add(cid)
        ext_todo += [_resolve(e, external) for e in external[cid].deps]
    return Closure(tuple(sorted(ws)), tuple(external[c] for c in sorted(ext)))


def crate_files(repo: Path, m: Member) -> list[Path]:
    """The files of a workspace crate that go into its build: Cargo.toml, build.rs, src/."""
    d = repo / m.dir
    files = [d / "Cargo.toml", *([d / "build.rs"] if (d / "build.rs").is_file() else [])]
    files += sorted(p for p in (d / "src").rglob("*") if p.is_file())
    return files


def package_of_binary(repo: Path, binary: str) -> str | None:
    """The workspace package that builds `binary`, or None (not a Rust program of ours)."""
    found = [m.name for m in members(repo).values() if binary in m.bins]
    return found[0] if found else None


def profile_lines(repo: Path) -> list[str]:
    """The root Cargo.toml's [profile.*] tables (how every binary is compiled), canonical."""
    root = _toml(repo / "Cargo.toml")
    return [f"profile {json.dumps(root.get('profile') or {}, sort_keys=True)}"]


def digest_lines(repo: Path, c: Closure) -> list[str]:
    """The lines a digest hashes for closure `c`: the compile profiles, each workspace
    crate's files (path and sha256), each external crate as locked."""
    mem = members(repo)
    lines = profile_lines(repo)
    for name in c.workspace:
        for f in crate_files(repo, mem[name]):
            lines.append(f"file {f.relative_to(repo).as_posix()} {sha256_file(f)}")
    lines += [f"crate {x.name} {x.version} {x.source} {x.checksum}" for x in c.external]
    return lines


def sha256_file(p: Path) -> str:
    """The file's sha256 (cached per path, size and modification time: a trace many runs
    read is hashed once)."""
    st = p.stat()
    return _sha256(p.resolve(), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _sha256(p: Path, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()
