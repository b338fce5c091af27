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

from ground.data import external_root
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


MIN_PROBES = 3
"""Probes whose start-up a Budget waits for before it judges the host too slow by them."""
STARTUP_FILE = "probe-startup.json"
"""Written into the job's out/ by the in-VM bench (vm/linkbench.py): each probe's start-up s."""


@dataclass(frozen=True)
class Budget:
    """A job's time limit that scales with how slow this host is. `base_s` of work after boot
    is what the job needs on a host that boots in `reference_boot_s` and starts a probe
    process in `reference_startup_s`; a slower host gets `base_s` times the larger of the two
    measured ratios (at least 1, at most `max_scale`). The limit is known once the guest
    reports its boot and is raised as probe start-up times arrive."""

    base_s: float
    reference_boot_s: float
    reference_startup_s: float
    max_scale: float

    def scale(self, boot_s: float | None, startup_s: float | None) -> float:
        ratios = [1.0]
        if boot_s is not None:
            ratios.append(boot_s / self.reference_boot_s)
        if startup_s is not None:
            ratios.append(startup_s / self.reference_startup_s)
        return min(self.max_scale, max(ratios))

    def limit_s(self, boot_s: float | None, startup_s: float | None) -> float:
        """Seconds from qemu's start; before the boot is known, the longest boot allowed."""
        if boot_s is None:
            return self.reference_boot_s * self.max_scale
        return boot_s + self.base_s * self.scale(boot_s, startup_s)

    def cap_s(self) -> float:
        """The most any job may take (boot and work at max_scale)."""
        return (self.reference_boot_s + self.base_s) * self.max_scale

    def too_slow(self, boot_s: float | None, startups_s: Sequence[float]) -> str | None:
        """Why the job should stop now rather than run out its budget, or None: the boot, or
        the median start-up of at least MIN_PROBES probes, is more than max_scale times its
        reference, so the job's work would take longer than the cap allows on this host."""
        st = sorted(startups_s)
        for what, got, ref in (
            ("boot", boot_s, self.reference_boot_s),
            ("probe start-up median", st[len(st) // 2] if len(st) >= MIN_PROBES else None,
             self.reference_startup_s),
        ):  # fmt: skip
            if got is not None and got > ref * self.max_scale:
                return (
                    f"the VM's {what} took {got:.2f} s, {got / ref:.1f}x the reference "
                    f"{ref:g} s: this host emulates the guest more than {self.max_scale:g}x "
                    f"slower than the budget allows (base {self.base_s:g} s, at most "
                    f"{self.cap_s():.0f} s), so the in-VM tests were stopped before they ran "
                    "out the clock"
                )
        return None


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
    budget_s: float | None = None  # the limit in force when the job ended (a Budget's)
    probe_startup_s: list[float] = field(default_factory=list)
    too_slow: str | None = None  # why a Budget stopped the job early (Budget.too_slow)

    @property
    def out_dir(self) -> Path:
        return self.job_dir / "out"

    def ok(self) -> bool:
        return not self.timed_out and all(r.get("rc") == 0 for r in self.results)

    def summary(self) -> str:
        head = f"VM job: boot {self.boot_s} s"
        if self.probe_startup_s:
            st = sorted(self.probe_startup_s)
            head += (f", probe start-up median {st[len(st) // 2]:.2f} s max {st[-1]:.2f} s"
                     f" ({len(st)} probes)")  # fmt: skip
        head += f", wall {self.wall_s:.0f} s"
        if self.budget_s is not None:
            head += f" of a {self.budget_s:.0f} s budget"
        lines = [head + f", qemu rc {self.qemu_rc}" + (", TIMED OUT" if self.timed_out else "")]
        if self.too_slow:
            lines.append(f"  stopped early: {self.too_slow}")
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
    budget: Budget | None = None,
) -> JobResult:
    """Boot, run `commands` in order inside the VM, power off. Files the commands write to
    $PRIOLAB_VM_OUT are in `result.out_dir`; `shares` are more host folders, read-write,
    mounted at their own paths inside (outside the checkout and the data, e.g. a results
    folder). The job is killed after `timeout_s`, or earlier by `budget` (scaled by the boot
    and probe start-up measured as the job runs). Raises VmUnavailable if the image cannot be
    built."""
    img = image or build()
    if data is None:  # PRIOLAB_DATA, if set (the checkout's data/ is inside src anyway)
        data = external_root()
    job_dir = Path(job_dir) if job_dir else Path(tempfile.mkdtemp(prefix="priolab-vm-job-"))
    job_dir.mkdir(parents=True, exist_ok=True)
    cmds = [c if isinstance(c, Command) else Command(list(c)) for c in commands]
    extra = extra_shares(shares, src, data)
    mounts = [{"tag": f"x{i}", "path": str(p)} for i, p in enumerate(extra)]
    job = {"commands": [c.to_json() for c in cmds], "mounts": mounts}
    (job_dir / "job.json").write_text(json.dumps(job))
    for stale in ("results.json", "guest.log", "console.log", f"out/{STARTUP_FILE}"):
        (job_dir / stale).unlink(missing_ok=True)
    argv = qemu_argv(img, job_dir, src.resolve(), data.resolve() if data else None, extra)
    t0 = time.monotonic()
    timed_out = False
    budget_s: float | None = None
    too_slow: str | None = None
    with _signals_raise():
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(job_dir / "qemu.stderr", "wb"),  # noqa: SIM115
            start_new_session=True,
        )
        try:
            budget_s, timed_out, too_slow = _wait(proc, t0, timeout_s, budget, job_dir)
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
        budget_s=budget_s,
        probe_startup_s=_startups(job_dir),
        too_slow=too_slow,
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}  # absent, or caught between the guest's write and rename


def _startups(job_dir: Path) -> list[float]:
    return [float(x) for x in _read_json(job_dir / "out" / STARTUP_FILE).get("startup_s", [])]


def _wait(
    proc: subprocess.Popen[bytes],
    t0: float,
    timeout_s: float,
    budget: Budget | None,
    job_dir: Path,
) -> tuple[float | None, bool, str | None]:
    """Wait for qemu to exit: (the limit in force at the end, whether it was exceeded, why
    the budget stopped it early)."""
    if budget is None:
        try:
            proc.wait(timeout=timeout_s)
            return None, False, None
        except subprocess.TimeoutExpired:
            return None, True, None
    boot_s: float | None = None
    while True:
        if boot_s is None:
            boot_s = _read_json(job_dir / "results.json").get("boot_s")
        st = sorted(_startups(job_dir))
        limit = min(timeout_s, budget.limit_s(boot_s, st[len(st) // 2] if st else None))
        why = budget.too_slow(boot_s, st)
        if why is not None:
            return limit, True, why
        try:
            proc.wait(timeout=min(2.0, max(0.0, t0 + limit - time.monotonic())))
            return limit, False, None
        except subprocess.TimeoutExpired:
            if time.monotonic() - t0 >= limit:
                return limit, True, None


__all__ = [
    "Budget",
    "Command",
    "JobResult",
    "VmUnavailable",
    "extra_shares",
    "qemu_argv",
    "run_job",
]
