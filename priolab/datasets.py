"""`priolab data`: the public datasets of data/manifest.toml, fetched by checksum.

    priolab data list                 each dataset, its licence, and where its copy is
    priolab data fetch [NAME ...]     download into data/ (git-ignored), verifying each sha256
    priolab data verify [NAME ...]    check the copies found (PRIOLAB_DATA, then data/)

A file is downloaded into a temporary file beside its destination, hashed as it arrives,
and renamed over the destination only when its size and sha256 are the manifest's: a
download that fails, is cut short or differs leaves nothing behind, and a file already
present with the right checksum is not downloaded again. Where each copy is looked for, and
how a scenario names a file (`data:<dataset>/<file>`): ground/data.py, data/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ground.cli import documented
from ground.data import (
    DATA_DIR,
    MANIFEST,
    DataError,
    DataFile,
    Dataset,
    read_manifest,
    roots,
    sha256_of,
)

TIMEOUT_S = 60.0
"""How long one read of a download may stall before it is given up (assumption: generous for
the largest file, a few MB, on a slow link)."""
CHUNK_BYTES = 1 << 16


class FetchError(DataError):
    """A download failed or did not match the manifest."""

    title = "data fetch failed"


@dataclass(frozen=True)
class Outcome:
    dataset: str
    file: str
    path: Path
    state: str  # "present" (checksum matched, not downloaded), "fetched"


def download(entry: DataFile, dest: Path, timeout_s: float = TIMEOUT_S) -> None:
    """Download `entry.url` to `dest`: into a temporary file in dest's folder, refused (and
    removed) unless its size and sha256 are the manifest's, then renamed over `dest`."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        h, size = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out:
            req = urllib.request.Request(entry.url, headers={"User-Agent": "priolab-data-fetch"})
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                while block := resp.read(CHUNK_BYTES):
                    size += len(block)
                    if size > entry.size_bytes:
                        raise FetchError(
                            entry.url, [("", f"more than the manifest's {entry.size_bytes} bytes")]
                        )
                    h.update(block)
                    out.write(block)
        if size != entry.size_bytes:
            raise FetchError(
                entry.url, [("", f"{size} bytes, the manifest says {entry.size_bytes}")]
            )
        if h.hexdigest() != entry.sha256:
            raise FetchError(
                entry.url,
                [("", f"sha256 {h.hexdigest()}, the manifest says {entry.sha256}: refused")],
            )
        os.replace(tmp, dest)
    except urllib.error.HTTPError as e:
        raise FetchError(entry.url, [("", f"HTTP {e.code} {e.reason}")]) from e
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", None) or e.strerror or e
        raise FetchError(entry.url, [("", f"cannot download: {reason}")]) from e
    finally:
        tmp.unlink(missing_ok=True)


def fetch(
    datasets: list[Dataset],
    into: Path = DATA_DIR,
    say: Callable[[str], None] = print,
    timeout_s: float = TIMEOUT_S,
) -> list[Outcome]:
    """Every file of `datasets` into `into/<dir>/`, verified. A file present with the right
    checksum is kept; one with another checksum is downloaded again. Raises FetchError naming
    every file that failed, after trying them all."""
    outcomes: list[Outcome] = []
    failed: list[tuple[str, str]] = []
    for ds in datasets:
        for f in ds.files:
            dest = into / ds.dir / f.name
            if dest.is_file() and sha256_of(dest) == f.sha256:
                outcomes.append(Outcome(ds.name, f.name, dest, "present"))
                continue
            try:
                download(f, dest, timeout_s)
            except FetchError as e:
                failed += [(f"{ds.name}/{f.name}", f"{e.file}: {m}") for _, m in e.problems]
                say(f"FAILED {ds.name}/{f.name}")
                continue
            outcomes.append(Outcome(ds.name, f.name, dest, "fetched"))
            say(f"fetched {ds.name}/{f.name} ({f.size_bytes} bytes, sha256 verified)")
    if failed:
        raise FetchError(None, failed)
    return outcomes


def copy_of(ds: Dataset, f: DataFile) -> Path | None:
    """The copy of a file a scenario would read: in the first data folder that holds it."""
    return next((p for r in roots() if (p := r / ds.dir / f.name).is_file()), None)


def verify(datasets: list[Dataset]) -> list[tuple[str, str, Path | None, str]]:
    """(dataset, file, copy found or None, "ok" | "absent" | "sha256 differs") per file, for the
    copy a scenario would read (the first data folder that holds it)."""
    out: list[tuple[str, str, Path | None, str]] = []
    for ds in datasets:
        for f in ds.files:
            found = copy_of(ds, f)
            if found is None:
                out.append((ds.name, f.name, None, "absent"))
            else:
                ok = sha256_of(found) == f.sha256
                out.append((ds.name, f.name, found, "ok" if ok else "sha256 differs"))
    return out


def _chosen(names: list[str], manifest: Path) -> list[Dataset]:
    sets = read_manifest(manifest)
    unknown = [n for n in names if n not in sets]
    if unknown:
        raise DataError(
            manifest, [("", f"no dataset {n!r}; known: {sorted(sets)}") for n in unknown]
        )
    return [sets[n] for n in names] if names else list(sets.values())


def _list(args: argparse.Namespace) -> int:
    for ds in read_manifest(args.manifest).values():
        have = sum(copy_of(ds, f) is not None for f in ds.files)
        print(f"{ds.name}: {ds.title}")
        print(f"  files: {have} of {len(ds.files)} here; folder: {ds.dir}")
        print(f"  licence: {ds.licence}")
        print(f"  source: {ds.source}")
    print("data folders, in order: " + ", ".join(str(r) for r in roots()))
    return 0


def _fetch(args: argparse.Namespace) -> int:
    fetch(_chosen(args.names, args.manifest), Path(args.dir))
    return 0


def _verify(args: argparse.Namespace) -> int:
    bad = 0
    for name, file, path, state in verify(_chosen(args.names, args.manifest)):
        print(f"{state:<15} {name}/{file}" + (f"  ({path})" if path else ""))
        bad += state != "ok"
    if bad:
        print(f"{bad} file(s) absent or differing: `priolab data fetch` replaces them",
              file=sys.stderr)  # fmt: skip
    return 1 if bad else 0


HELP = "the public datasets (data/manifest.toml): list, fetch by checksum, verify"
"""The subcommand's line in `priolab --help`."""


def register(sub: argparse._SubParsersAction) -> None:
    d = documented(sub, "data", HELP, __doc__)
    dsub = d.add_subparsers(dest="data_command", required=True)
    manifest_help = "the manifest to read (default: data/manifest.toml of this checkout)"

    ls = dsub.add_parser(
        "list", help="each dataset, its licence and source, how many files are here"
    )
    ls.add_argument("--manifest", type=Path, default=MANIFEST, help=manifest_help)
    ls.set_defaults(func=_list)

    f = dsub.add_parser("fetch", help="download datasets, verify each sha256, refuse a mismatch")
    f.add_argument("names", nargs="*", metavar="NAME", help="datasets to fetch (default: all)")
    f.add_argument(
        "--dir",
        default=str(DATA_DIR),
        help="the data folder to fill (default: data/ of this checkout, git-ignored); "
        "point PRIOLAB_DATA at another one to use it",
    )
    f.add_argument("--manifest", type=Path, default=MANIFEST, help=manifest_help)
    f.set_defaults(func=_fetch)

    v = dsub.add_parser("verify", help="check the sha256 of the copies a scenario would read")
    v.add_argument("names", nargs="*", metavar="NAME", help="datasets to check (default: all)")
    v.add_argument("--manifest", type=Path, default=MANIFEST, help=manifest_help)
    v.set_defaults(func=_verify)
