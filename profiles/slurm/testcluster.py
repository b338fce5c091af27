#!/usr/bin/env python3
"""A throw-away one-node Slurm cluster on this machine, from Debian's packages (slurmctld,
slurmd, slurm-client, munge), for the profile's test and for trying the profile by hand.

    python3 profiles/slurm/testcluster.py run -- CMD ARG...    up, CMD with SLURM_CONF set, down
    python3 profiles/slurm/testcluster.py up                   up, print its environment, wait
                                                                for Ctrl-C, down

Everything lives in one temporary folder (munge key and socket, slurm.conf, state, spool,
logs; no cgroup.conf: no cgroup plugin is configured, so slurmd reads none); nothing under
/etc is read or written, the daemons listen on free ports picked at start, and a running system
Slurm or munged is left alone. munged, slurmctld and slurmd run as children in the foreground
(-F / -D), their pids kept; every exit path (an error, Ctrl-C, SIGTERM, the parent dying:
PR_SET_PDEATHSIG) stops them and removes the folder. Needs root
(slurmd starts jobs as their user). Standard library only.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")  # /usr/sbin
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo", "scontrol", "srun")  # /usr/bin
CPUS = 2
PARTITION = "main"
UP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
# Finished jobs stay visible to `squeue --states=all` this long: the executor plugin reads job
# states with squeue when MinJobAge is at least 3x its first status-check delay (no slurmdbd).
MIN_JOB_AGE_S = 600


class ClusterError(RuntimeError):
    """The cluster could not be brought up; the message names the step and its log."""


def missing_tools() -> list[str]:
    """The Slurm/munge programs this machine lacks (empty: the cluster can be brought up)."""
    return [t for t in DAEMONS + CLIENTS if shutil.which(t, path=f"/usr/sbin:/usr/bin:{_path()}")
            is None]  # fmt: skip


def _path() -> str:
    return os.environ.get("PATH", "")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _real_memory_mb() -> int:
    """What slurmd itself finds (`slurmd -C`): configuring more drains the node."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    for word in out.split():
        if word.startswith("RealMemory="):
            return int(word.split("=", 1)[1])
    raise ClusterError(f"slurmd -C printed no RealMemory: {out!r}")


def slurm_conf(d: Path, node: str, ports: tuple[int, int], memory_mb: int) -> str:
    """slurm.conf for one node `node` with CPUS CPUs, everything under `d`. Pure."""
    return "\n".join([
        "ClusterName=priolabtest",
        f"SlurmctldHost={node}(127.0.0.1)",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={d / 'munge.socket'}",
        f"StateSaveLocation={d / 'state'}",
        f"SlurmdSpoolDir={d / 'spool'}",
        f"SlurmctldPidFile={d / 'slurmctld.pid'}",
        f"SlurmdPidFile={d / 'slurmd.pid'}",
        f"SlurmctldLogFile={d / 'slurmctld.log'}",
        f"SlurmdLogFile={d / 'slurmd.log'}",
        f"PlugStackConfig={d / 'plugstack.conf'}",
        # no cgroup plugin: the test machine may be a container without cgroup delegation;
        # linuxproc tracks a job's processes by parent pid, enough to cancel them
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        f"MinJobAge={MIN_JOB_AGE_S}",
        "ReturnToService=2",
        "MpiDefault=none",
        "KillWait=5",
        f"NodeName={node} NodeAddr=127.0.0.1 CPUs={CPUS} RealMemory={memory_mb} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes={node} Default=YES MaxTime=INFINITE State=UP",
        "",
    ])  # fmt: skip


# The Slurm executor's job step (snakemake-executor-plugin-slurm-jobstep 0.6) starts its `srun`
# with every SLURM_* variable but the job's identity removed, SLURM_CONF included: on a cluster
# whose slurm.conf is where Slurm looks by default (/etc/slurm, or configless) that is harmless,
# but this cluster's config is private, so srun would find none. The shim puts it back.
SHIM_CONF_VAR = "PRIOLAB_TESTCLUSTER_CONF"


def write_srun_shim(bin_dir: Path) -> Path:
    """`srun` that restores SLURM_CONF from SHIM_CONF_VAR and runs the real srun."""
    real = shutil.which("srun", path=f"/usr/bin:{_path()}")
    if real is None:
        raise ClusterError("srun not found (package slurm-client)")
    bin_dir.mkdir()
    shim = bin_dir / "srun"
    shim.write_text(f'#!/bin/sh\nexport SLURM_CONF="${SHIM_CONF_VAR}"\nexec "{real}" "$@"\n')
    shim.chmod(0o755)
    return shim


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Cluster:
    """A running one-node cluster: its folder, node name and the environment for clients."""

    def __init__(self, root: Path, node: str) -> None:
        self.root = root
        self.node = node
        self.conf = root / "slurm.conf"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def env(self) -> dict[str, str]:
        """Variables a Slurm client (sbatch, squeue, snakemake's plugin) needs for this cluster:
        SLURM_CONF, and PATH with the `srun` shim first (see write_srun_shim)."""
        return {
            "SLURM_CONF": str(self.conf),
            SHIM_CONF_VAR: str(self.conf),
            "PATH": f"{self.root / 'bin'}{os.pathsep}{_path()}",
        }

    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self.procs.items()}

    def start(self, name: str, argv: list[str]) -> None:
        log = open(self.root / f"{name}.out", "wb")  # noqa: SIM115 (kept open for the child)
        env = {**os.environ, **self.env}
        self.procs[name] = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
            preexec_fn=_die_with_parent,
        )  # fmt: skip
        log.close()

    def check_alive(self) -> None:
        for name, p in self.procs.items():
            if p.poll() is not None:
                raise ClusterError(
                    f"{name} exited with {p.returncode} while starting; its output: "
                    f"{self.tail(name)}"
                )

    def tail(self, name: str, n_bytes: int = 2000) -> str:
        texts = []
        for f in (self.root / f"{name}.out", self.root / f"{name}.log"):
            if f.is_file():
                texts.append(f"{f.name}: {f.read_text(errors='replace')[-n_bytes:]}")
        return "\n".join(texts) or "(nothing)"

    def node_state(self) -> str:
        r = subprocess.run(
            ["sinfo", "--noheader", "--Node", "--format=%T", "--nodes", self.node],
            capture_output=True, text=True, env={**os.environ, **self.env}, timeout=10,
        )  # fmt: skip
        return r.stdout.strip() if r.returncode == 0 else ""

    def _client(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, capture_output=True, text=True, env={**os.environ, **self.env}, timeout=30
        )

    def cancel_jobs(self) -> None:
        """Cancel every job still queued or running and wait (up to STOP_TIMEOUT_S) until
        slurmd has ended them: a step daemon whose slurmd is gone would linger."""
        if self.procs.get("slurmctld") is None or self.procs["slurmctld"].poll() is not None:
            return
        ids = self._client(["squeue", "--noheader", "--format=%i"]).stdout.split()
        if not ids:
            return
        self._client(["scancel", *ids])
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            r = self._client(["squeue", "--noheader", "--format=%i"])
            if r.returncode != 0 or not r.stdout.split():
                return
            time.sleep(0.5)

    def stop(self) -> None:
        """Cancel the jobs, stop the daemons newest first (SIGTERM, then SIGKILL after
        STOP_TIMEOUT_S), then kill what is left of this cluster's jobs (stray_pids)."""
        try:
            self.cancel_jobs()
        except (OSError, subprocess.SubprocessError):
            pass  # the daemons are stopped all the same
        for name in reversed(list(self.procs)):
            p = self.procs[name]
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for pid in stray_pids(self.root):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def stray_pids(root: Path) -> list[int]:
    """Processes (step daemons, job scripts) with a file or working folder under `root`, this
    cluster's private folder, and their descendants: nothing of another cluster or user."""
    prefix = str(root) + os.sep
    holders: set[int] = set()
    parents: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        pid = int(d.name)
        try:
            parents[pid] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            links = [d / "cwd", *(d / "fd").iterdir()]
            if any(os.readlink(link).startswith(prefix) for link in links):
                holders.add(pid)
        except (OSError, ValueError, IndexError):
            continue  # gone, or not ours to read
    out = set(holders)
    grown = True
    while grown:
        children = {p for p, pp in parents.items() if pp in out and p not in out}
        out |= children
        grown = bool(children)
    return sorted(out)


def _wait_for(what: str, cond: object, cluster: Cluster, deadline: float) -> None:
    while not cond():  # type: ignore[operator]
        cluster.check_alive()
        if time.monotonic() > deadline:
            logs = "\n".join(cluster.tail(n) for n in cluster.procs)
            raise ClusterError(f"timed out after {UP_TIMEOUT_S:.0f} s waiting for {what}\n{logs}")
        time.sleep(0.2)


@contextmanager
def cluster(timeout_s: float = UP_TIMEOUT_S) -> Iterator[Cluster]:
    """Bring the cluster up, yield it once its node is idle, always take it down."""
    if os.geteuid() != 0:
        raise ClusterError("a Slurm test cluster needs root (slurmd runs jobs as their user)")
    if missing_tools():
        raise ClusterError(f"not installed: {missing_tools()} (make apt installs them)")
    root = Path(tempfile.mkdtemp(prefix="priolab-slurm-"))  # 0700: munged checks it
    node = socket.gethostname().split(".")[0]
    c = Cluster(root, node)
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}

    def raise_exit(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)  # unwinds through `finally`: everything is stopped

    try:
        for s in previous:
            signal.signal(s, raise_exit)
        deadline = time.monotonic() + timeout_s
        for sub in ("state", "spool"):
            (root / sub).mkdir()
        key = root / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o600)
        (root / "plugstack.conf").write_text("")
        write_srun_shim(root / "bin")
        ports = (_free_port(), _free_port())
        c.conf.write_text(slurm_conf(root, node, ports, _real_memory_mb()))
        sock = root / "munge.socket"
        c.start("munged", [
            "munged", "--foreground", "--force", f"--key-file={key}", f"--socket={sock}",
            f"--pid-file={root / 'munged.pid'}", f"--log-file={root / 'munged.log'}",
            f"--seed-file={root / 'munged.seed'}",
        ])  # fmt: skip
        _wait_for("munged's socket", sock.exists, c, deadline)
        c.start("slurmctld", ["slurmctld", "-D", "-i", "-f", str(c.conf)])
        c.start("slurmd", ["slurmd", "-D", "-f", str(c.conf), "-N", node])
        _wait_for(f"node {node} idle", lambda: c.node_state() == "idle", c, deadline)
        yield c
    finally:
        try:
            c.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)
            for s, h in previous.items():
                signal.signal(s, h)


def main(argv: list[str]) -> int:
    if argv[:1] == ["run"] and argv[1:2] == ["--"] and len(argv) > 2:
        t0 = time.monotonic()
        with cluster() as c:
            print(f"testcluster: node {c.node} idle after {time.monotonic() - t0:.1f} s "
                  f"(SLURM_CONF={c.conf})", file=sys.stderr, flush=True)  # fmt: skip
            return subprocess.run(argv[2:], env={**os.environ, **c.env}).returncode
    if argv == ["up"]:
        t0 = time.monotonic()
        with cluster() as c:
            exports = "\n".join(f"export {k}={v}" for k, v in c.env.items())
            print(
                f"testcluster: node {c.node} idle after {time.monotonic() - t0:.1f} s; "
                f"pids {c.pids()}\n{exports}\nCtrl-C stops it",
                flush=True,
            )
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ClusterError as e:
        print(f"testcluster: {e}", file=sys.stderr)
        sys.exit(1)
