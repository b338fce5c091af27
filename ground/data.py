"""The public datasets by manifest (data/manifest.toml): which files exist, and where a
`data:<name>/<file>` reference finds its copy.

A data folder holds each dataset under its `dir` (`traces/mahimahi-cellular/...`). Two are
looked in, in this order:

1. `PRIOLAB_DATA`, if set: an existing copy (CI's is the one beside the clone, `.ci/run`);
2. `data/` of the checkout, where `priolab data fetch` puts what it downloads (git-ignored).

A file is found in the first folder that holds it. The checksums are checked where a copy is
made (`priolab data fetch`) and on request (`priolab data verify`), not on every read.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ground.errors import UserError

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
MANIFEST = DATA_DIR / "manifest.toml"
ENV = "PRIOLAB_DATA"
PREFIX = "data:"
FETCH = "priolab data fetch"
REF = re.compile(r"^data:([A-Za-z0-9][A-Za-z0-9._+-]*)/([^/\s]+)$")
"""A reference as a scenario writes it: `data:<dataset>/<file>`, no spaces, one file name."""
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class DataError(UserError):
    """A data reference or the manifest is wrong, or a dataset is not here."""

    title = "data"


@dataclass(frozen=True)
class DataFile:
    name: str
    url: str
    sha256: str
    size_bytes: int


@dataclass(frozen=True)
class Dataset:
    name: str
    dir: str  # relative to a data folder
    title: str
    source: str
    licence: str
    citation: tuple[str, ...]
    files: tuple[DataFile, ...]

    def file(self, name: str) -> DataFile | None:
        return next((f for f in self.files if f.name == name), None)


def _str(entry: dict[str, object], key: str, where: str, problems: list[tuple[str, str]]) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        problems.append((f"{where}.{key}", "required: a non-empty string"))
        return ""
    return value


def _file(entry: object, where: str, problems: list[tuple[str, str]]) -> DataFile | None:
    if not isinstance(entry, dict):
        problems.append((where, "must be a table"))
        return None
    name, url = _str(entry, "name", where, problems), _str(entry, "url", where, problems)
    sha = _str(entry, "sha256", where, problems)
    size = entry.get("size_bytes")
    if name and ("/" in name or name.startswith(".")):
        problems.append((f"{where}.name", f"{name!r}: a plain file name (no '/', no leading '.')"))
    if url and not url.startswith(("https://", "http://")):
        problems.append((f"{where}.url", f"{url!r}: an http(s) URL"))
    if sha and not SHA256.match(sha):
        problems.append((f"{where}.sha256", "64 lowercase hexadecimal digits"))
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        problems.append((f"{where}.size_bytes", "required: an integer ≥ 0"))
        size = 0
    return DataFile(name, url, sha, size)


def read_manifest(path: Path = MANIFEST) -> dict[str, Dataset]:
    """name → Dataset, checked: every key present and well-formed, names unique."""
    try:
        raw = tomllib.loads(path.read_text())
    except OSError as e:
        raise DataError(path, [("", f"cannot read: {e.strerror or e}")]) from e
    except tomllib.TOMLDecodeError as e:
        raise DataError(path, [("", f"not valid TOML: {e}")]) from e
    problems: list[tuple[str, str]] = []
    out: dict[str, Dataset] = {}
    for i, entry in enumerate(raw.get("dataset", [])):
        where = f"dataset[{i}]"
        if not isinstance(entry, dict):
            problems.append((where, "must be a table ([[dataset]])"))
            continue
        name = _str(entry, "name", where, problems)
        if name and not REF.match(f"{PREFIX}{name}/x"):
            problems.append((f"{where}.name", f"{name!r}: letters, digits, '._+-'"))
        if name in out:
            problems.append((f"{where}.name", f"{name!r} is named twice"))
        rel = _str(entry, "dir", where, problems)
        if rel and (Path(rel).is_absolute() or ".." in Path(rel).parts):
            problems.append((f"{where}.dir", f"{rel!r}: a relative path inside a data folder"))
        cites = entry.get("citation")
        if not isinstance(cites, list) or not cites or not all(isinstance(c, str) for c in cites):
            problems.append((f"{where}.citation", "required: a list of one or more strings"))
            cites = []
        files = [
            _file(f, f"{where}.file[{j}]", problems) for j, f in enumerate(entry.get("file", []))
        ]
        if not files:
            problems.append((f"{where}.file", "required: one [[dataset.file]] or more"))
        names = [f.name for f in files if f]
        if len(set(names)) != len(names):
            problems.append((f"{where}.file", "a file name is listed twice"))
        out[name] = Dataset(
            name=name,
            dir=rel,
            title=_str(entry, "title", where, problems),
            source=_str(entry, "source", where, problems),
            licence=_str(entry, "licence", where, problems),
            citation=tuple(cites),
            files=tuple(f for f in files if f),
        )
    if not out and not problems:
        problems.append(("dataset", "no [[dataset]] in the manifest"))
    if problems:
        raise DataError(path, problems)
    return out


def roots(env: dict[str, str] | None = None) -> list[Path]:
    """The data folders looked in, in order: PRIOLAB_DATA (if set), then the checkout's data/."""
    env = dict(os.environ) if env is None else env
    named = env.get(ENV, "").strip()
    return ([Path(named).expanduser().resolve()] if named else []) + [DATA_DIR]


def external_root(env: dict[str, str] | None = None) -> Path | None:
    """PRIOLAB_DATA as a folder, if set (the VM shares it; the checkout's data/ it sees anyway)."""
    found = roots(env)
    return found[0] if len(found) > 1 else None


def is_ref(value: object) -> bool:
    """A string meant as a data reference: `data:` and no whitespace (a description that
    starts with "data: " is prose, not a reference)."""
    return (
        isinstance(value, str) and value.startswith(PREFIX) and not any(c.isspace() for c in value)
    )


def missing_hint(names: list[str]) -> str:
    """What to do about absent datasets: the fetch command, or PRIOLAB_DATA."""
    where = " or ".join(str(r) for r in roots())
    return (
        f"not in {where}: run `{FETCH} {' '.join(sorted(set(names)))}`, or set {ENV} to a "
        "folder that holds a copy (data/README.md)"
    )


@dataclass(frozen=True)
class Resolved:
    """A reference resolved: the dataset, the file, and the path (the fetch destination under
    the checkout's data/ when no data folder holds it: `found` is then False)."""

    dataset: Dataset
    file: DataFile
    path: Path
    found: bool


def resolve(ref: str, manifest: dict[str, Dataset] | None = None) -> Resolved:
    """A `data:<dataset>/<file>` reference → where its file is. Raises ValueError, worded for a
    key's message, when the reference is malformed or names what the manifest does not list."""
    m = REF.match(ref)
    if not m:
        raise ValueError(
            f"{ref!r}: a data reference is `data:<dataset>/<file>` (one file name, no spaces)"
        )
    sets = read_manifest() if manifest is None else manifest
    name, file = m.groups()
    ds = sets.get(name)
    if ds is None:
        raise ValueError(
            f"{ref!r}: no dataset {name!r} in data/manifest.toml; known: {sorted(sets)}"
        )
    entry = ds.file(file)
    if entry is None:
        raise ValueError(
            f"{ref!r}: dataset {name!r} has no file {file!r} in data/manifest.toml; "
            f"its files: {[f.name for f in ds.files]}"
        )
    for root in roots():
        p = root / ds.dir / file
        if p.is_file():
            return Resolved(ds, entry, p, True)
    return Resolved(ds, entry, DATA_DIR / ds.dir / file, False)


def dataset_dir(name: str) -> Path | None:
    """The folder of a dataset in the first data folder that holds all its files, or None."""
    ds = read_manifest()[name]
    for root in roots():
        if all((root / ds.dir / f.name).is_file() for f in ds.files):
            return root / ds.dir
    return None


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def skip_reason(name: str) -> str:
    """Why a test that needs a dataset skips: it is in neither data folder."""
    return f"dataset {name} absent: {missing_hint([name])}"
