"""The VM image: its recipe (build-image.sh, packages.txt, guest/), the cache that holds one
built image per recipe hash, and the build that fills it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECIPE_FILES = ("build-image.sh", "packages.txt", "guest/priolab-job", "guest/priolab-job.service")
DEFAULT_CACHE = Path("/var/cache/priolab-vm")
BUILD_TOOLS = ("debootstrap", "mkfs.ext4", "chroot", "qemu-system-x86_64")
APT_PACKAGES = ("debootstrap", "qemu-system-x86", "e2fsprogs")
"""Debian packages the host needs to build and boot the image (the Makefile installs them)."""


class VmUnavailable(RuntimeError):
    """The VM cannot be built or booted here; the message says why."""


@dataclass(frozen=True)
class Image:
    dir: Path

    @property
    def rootfs(self) -> Path:
        return self.dir / "rootfs.img"

    @property
    def kernel(self) -> Path:
        return self.dir / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.dir / "initrd.img"


def cache_root() -> Path:
    return Path(os.environ.get("PRIOLAB_VM_CACHE", str(DEFAULT_CACHE)))


def recipe_hash() -> str:
    """sha256 over the recipe files (name and content): the cache key."""
    h = hashlib.sha256()
    for name in RECIPE_FILES:
        h.update(name.encode() + b"\0" + (HERE / name).read_bytes() + b"\0")
    return h.hexdigest()


def image_dir(digest: str | None = None) -> Path:
    return cache_root() / (digest or recipe_hash())[:16]


def cached_image() -> Image | None:
    """The image for the current recipe, if a complete one is cached."""
    d = image_dir()
    stamp = d / "recipe.sha256"
    if stamp.is_file() and stamp.read_text().strip() == recipe_hash():
        img = Image(d)
        if all(p.is_file() for p in (img.rootfs, img.kernel, img.initrd)):
            return img
    return None


def missing_tools() -> list[str]:
    return [t for t in BUILD_TOOLS if shutil.which(t) is None]


def why_unavailable() -> str | None:
    """None if the image can be built (or is cached) and booted here, else the reason."""
    if os.geteuid() != 0:
        return "building and booting the VM needs root (debootstrap, chroot)"
    if cached_image() is not None:
        return None if shutil.which("qemu-system-x86_64") else "qemu-system-x86_64 is missing"
    missing = missing_tools()
    if missing:
        return f"missing {', '.join(missing)} (Debian packages: {' '.join(APT_PACKAGES)})"
    return None


def build(*, force: bool = False, mirror: str | None = None, log: bool = True) -> Image:
    """Return the cached image for the current recipe, building it first if absent (or if
    `force`). Older images in the cache are removed once the new one is complete."""
    if not force:
        img = cached_image()
        if img is not None:
            return img
    reason = why_unavailable()
    if reason is not None:
        raise VmUnavailable(reason)
    digest = recipe_hash()
    out = image_dir(digest)
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    if out.exists():
        shutil.rmtree(out)
    argv = [str(HERE / "build-image.sh"), str(out), digest]
    if mirror:
        argv.append(mirror)
    t0 = time.monotonic()
    res = subprocess.run(argv, capture_output=not log, text=True)
    if res.returncode != 0:
        shutil.rmtree(out, ignore_errors=True)
        detail = (res.stderr or "")[-2000:] if not log else "see the output above"
        raise VmUnavailable(f"image build failed (exit {res.returncode}): {detail}")
    for old in root.iterdir():
        if old.is_dir() and old != out and (old / "recipe.sha256").exists():
            shutil.rmtree(old, ignore_errors=True)
    if log:
        print(f"vm: image built in {time.monotonic() - t0:.0f} s: {out}")
    return Image(out)
