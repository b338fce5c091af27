"""Boot the VM once, run a command list inside it, collect the results, power off.

The image's disk is opened with snapshot=on (the cached image never changes); the checkout
is shared over 9p at its own path (so the host's .venv, Rust binaries and code run unchanged
inside: same Debian release, same /usr/bin/python3), the job directory over 9p for results.
qemu is killed on every exit path: the hard timeout, an exception, SIGTERM or SIGINT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vm.image import Image, VmUnavailable, build

REPO = Path(__file__).resolve().parent.parent
SMP = 2
MEMORY_MB = 1024
DEFAULT_TIMEOUT_S = 900.0


@dataclass
class Command:
    argv: list[str]
    timeout_s: float | None = None
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"argv": self.argv, "timeout_s": self.timeout_s, "cwd": self.cwd, "env": self.env}


@dataclass
class JobResult:
    job_dir: Path
    results: list[dict[str, Any]]
    boot_s: float | None
    wall_s: float
    timed_out: bool
    qemu_rc: int | None
    console: str
    guest_log: str
    mount_errors: list[str] = field(default_factory=list)
    kernel: str | None = None  # the guest's `uname -r`

    @property
    def out_dir(self) -> Path:
        return self.job_dir / "out"

    def ok(self) -> bool:
        return not self.timed_out and all(r.get("rc") == 0 for r in self.results)

    def summary(self) -> str:
        lines = [f"VM job: boot {self.boot_s} s, wall {self.wall_s:.0f} s, qemu rc {self.qemu_rc}"
                 + (", TIMED OUT" if self.timed_out else "")]  # fmt: skip
        lines += [f"  share not mounted: {e}" for e in self.mount_errors]
        for r in self.results:
            lines.append(f"  rc={r.get('rc')} {r.get('duration_s')} s: {' '.join(r['argv'])}")
        return "\n".join(lines)


def qemu_argv(
    img: Image, job_dir: Path, src: Path, data: Path | None, extra: Sequence[Path] = ()
) -> list[str]:
    """`extra` folders are shared as tags x0, x1, ... (guest_run.py mounts them at their
    host paths, as job.json's `mounts` say)."""
    append = f"root=/dev/vda rw console=ttyS0 panic=1 quiet priolab.src={src}"
    shares = [("job", job_dir), ("src", src)]
    if data is not None:
        append += f" priolab.data={data}"
        shares.append(("data", data))
    shares += [(f"x{i}", p) for i, p in enumerate(extra)]
    argv = [
        "qemu-system-x86_64",
        "-accel", "tcg,thread=multi",
        "-cpu", "max",
        "-smp", str(SMP),
        "-m", str(MEMORY_MB),
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        "-serial", f"file:{job_dir / 'console.log'}",
        "-kernel", str(img.kernel),
        "-initrd", str(img.initrd),
        "-append", append,
        "-drive", f"file={img.rootfs},format=raw,if=virtio,snapshot=on",
        "-nic", "none",
    ]  # fmt: skip
    for tag, path in shares:
        argv += ["-virtfs", f"local,path={path},mount_tag={tag},security_model=none,id={tag}"]
    return argv


def extra_shares(shares: Sequence[Path], src: Path, data: Path | None) -> list[Path]:
    """The folders to share besides the checkout and the data: resolved, each made if
    absent, none inside another share (a folder inside one is visible through it)."""
    covered = [src.resolve()] + ([data.resolve()] if data else [])
    out: list[Path] = []
    for p in sorted({Path(s).resolve() for s in shares}, key=lambda p: len(p.parts)):
        if any(p == c or c in p.parents for c in covered + out):
            continue
        p.mkdir(parents=True, exist_ok=True)
        out.append(p)
    return out


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM during a boot raises (like SIGINT does), so `finally` kills qemu."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def run_job(
    commands: Sequence[Command | list[str]],
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    job_dir: Path | None = None,
    src: Path = REPO,
    data: Path | None = None,
    image: Image | None = None,
    shares: Sequence[Path] = (),
) -> JobResult:
    """Boot, run `commands` in order inside the VM, power off. Files the commands write to
    $PRIOLAB_VM_OUT are in `result.out_dir`; `shares` are more host folders, read-write,
    mounted at their own paths inside (outside the checkout and the data, e.g. a results
    folder). Raises VmUnavailable if the image cannot be built."""
    img = image or build()
    if data is None and (src.parent / "shared" / "data").is_dir():
        data = src.parent / "shared" / "data"
    job_dir = Path(job_dir) if job_dir else Path(tempfile.mkdtemp(prefix="priolab-vm-job-"))
    job_dir.mkdir(parents=True, exist_ok=True)
    cmds = [c if isinstance(c, Command) else Command(list(c)) for c in commands]
    extra = extra_shares(shares, src, data)
    mounts = [{"tag": f"x{i}", "path": str(p)} for i, p in enumerate(extra)]
    job = {"commands": [c.to_json() for c in cmds], "mounts": mounts}
    (job_dir / "job.json").write_text(json.dumps(job))
    for stale in ("results.json", "guest.log", "console.log"):
        (job_dir / stale).unlink(missing_ok=True)
    argv = qemu_argv(img, job_dir, src.resolve(), data.resolve() if data else None, extra)
    t0 = time.monotonic()
    timed_out = False
    with _signals_raise():
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(job_dir / "qemu.stderr", "wb"),  # noqa: SIM115
            start_new_session=True,
        )
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill(proc)
    wall = time.monotonic() - t0
    if proc.returncode not in (0, -signal.SIGKILL) and not (job_dir / "results.json").exists():
        err = (job_dir / "qemu.stderr").read_text(errors="replace")[-2000:]
        raise VmUnavailable(f"qemu failed (exit {proc.returncode}): {err}")
    rpath = job_dir / "results.json"
    report = json.loads(rpath.read_text()) if rpath.exists() else {}

    def text(name: str) -> str:
        p = job_dir / name
        return p.read_text(errors="replace") if p.exists() else ""

    return JobResult(
        job_dir=job_dir,
        results=report.get("results", []),
        boot_s=report.get("boot_s"),
        wall_s=wall,
        timed_out=timed_out,
        qemu_rc=proc.returncode,
        console=text("console.log"),
        guest_log=text("guest.log"),
        mount_errors=report.get("mount_errors", []),
        kernel=report.get("kernel"),
    )


__all__ = ["Command", "JobResult", "VmUnavailable", "extra_shares", "qemu_argv", "run_job"]
