"""What a workload is to the run of one experiment: a parameter model and a process plan."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from ground import rundir
from priolab.paths import REPO_ROOT

CERT_FILE = "cert.der"
"""The listener's certificate, in its log folder; the connector trusts it."""
PEER_LOST_EXIT = 3
"""The exit code of an endpoint whose connection the protocol lost mid-run (an idle timeout
or a connection error: quicsetup's contract, endpoints/README.md). Under the scenario's
conditions that is the scheme's result, not the harness's fault: the judge keeps the run
valid and records its session as failed (priolab/engine/judge.py)."""


@dataclass(frozen=True)
class Pair:
    """One guest/host pair of a topology: node names and the host's address."""

    guest: str
    host: str
    guest_ip: str
    host_ip: str


@dataclass(frozen=True)
class RunContext:
    run_dir: Path
    duration_s: float
    seed: int
    base_dir: Path  # the scenario file's folder: relative paths resolve here
    pairs: tuple[Pair, ...]
    tls_keylog: bool = False  # packets are captured: write the TLS keys beside the pcaps
    qlog: bool = False  # one qlog trace per QUIC connection (rundir.QLOG_DIR of each endpoint)


@dataclass(frozen=True)
class ProcessSpec:
    """One process to start in one node, as an argv list.

    `wait_for_file`: start only once this file exists (e.g. the host's certificate).
    `waits_itself`: the process waits for `wait_for_file` by itself (with a timeout), so a
    site that has to copy the file between machines starts it on time instead.
    `start_delay_s`: wait this long after the previous process started (e.g. a server binding).
    `runs_to_end`: True if the process exits by itself at the end of the run (exit code
    0 expected); False for servers the harness stops with SIGTERM.
    `lost_exit_codes`: exit codes that mean the protocol lost the session (PEER_LOST_EXIT):
    the run stays valid and its session failed.
    """

    name: str
    node: str
    argv: list[str]
    wait_for_file: Path | None = None
    waits_itself: bool = False
    start_delay_s: float = 0.0
    runs_to_end: bool = True
    ok_exit_codes: tuple[int, ...] = (0,)
    env: dict[str, str] = field(default_factory=dict)
    lost_exit_codes: tuple[int, ...] = ()


class Workload(Protocol):
    kind: str
    params_model: type[BaseModel]

    def check(self, params: BaseModel, base_dir: Path) -> list[tuple[str, str]]:
        """Problems that need the file system (missing files): (key, message)."""
        ...

    def prepare(self, params: BaseModel, ctx: RunContext) -> dict[str, str]:
        """Write the run's derived inputs into ctx.run_dir (e.g. a converted trace); return
        {input name: path} for metadata.json. Called before `plan`."""
        ...

    def plan(self, params: BaseModel, ctx: RunContext) -> list[ProcessSpec]:
        """The processes of one run, in start order (pure: no files written)."""
        ...

    def tools(self) -> list[list[str]]:
        """argv lists that print the versions of the tools this workload runs."""
        ...

    def binaries(self) -> dict[str, str]:
        """The workload's own programs: {name: path on this machine}. A site that installs
        them elsewhere (testbed nodes) puts its own path where an argv names this one."""
        ...

    # Optional: `node_packages`, the Debian packages a node needs to run the programs (a
    # testbed's endpoints role installs them; priolab/testbed.py `needs`).
    # Optional: `analysis_crates`, the cargo packages the workload's analysis loads on the
    # machine that runs the workflow (roq's scoring kernel); the build rule and `make
    # build-quick` build them on every site (priolab/testbed.py `analysis_crates`).
    # Optional: `sim_problems(params) -> list[(key, why)]`, what the sim site (one
    # priolab-sim process, virtual time) cannot run of these parameters. A workload without it
    # cannot run on the sim site at all (engine/sim_spec.py says so, naming its programs).
    # Optional: `qlog_problems(params) -> list[(key, why)]`, what of these parameters opens no
    # QUIC connection for `qlog: true` to trace. A workload without it opens none at all
    # (priolab/scenario.py refuses `qlog: true` for it); with it, `plan` honours ctx.qlog.


def no_problems(params: BaseModel) -> list[tuple[str, str]]:
    """A check that finds nothing, whatever the parameters."""
    return []


def no_quic(key: str, value: str) -> list[tuple[str, str]]:
    """`qlog_problems`' answer for a parameter `key` whose `value` opens no QUIC connection
    (the others of the workload do: `quic`)."""
    return [(key, f"{value!r} opens no QUIC connection for `qlog: true` to trace; allowed "
             "with qlog: quic")]  # fmt: skip


all_in_sim = no_problems
"""`sim_problems` of a workload whose every process is a Rust endpoint priolab-sim hosts,
whatever its parameters: none."""


class QuicPair:
    """A workload of one Rust QUIC endpoint program per guest/host pair: the listener (the
    QUIC server, `--bind`, writing its certificate) in the host and the connector
    (`--connect`, trusting that certificate) in the guest, each logging into its own folder
    of the run (host[-N]/, guest[-N]/). A protocol names its program and what its listener
    and connector are (`listener`, `connector`: the `--role` values and the processes'
    names, `<program>-<role>[-N]`) and adds its own flags (`listener_args`,
    `connector_args`); the pair loop, the folders, the certificate hand-over, the TLS key
    log of captured runs, the qlog folders and the program's path are here, once."""

    kind: str
    params_model: type[BaseModel]
    program: str
    """The Rust program: target/release/<program>, or $PRIOLAB_<PROGRAM>."""
    listener: str
    connector: str
    connector_waits_itself: bool = True
    """The connector waits for the certificate by itself (ProcessSpec.waits_itself): every
    QUIC endpoint connects through quicsetup::connect, which waits for `--cert` up to its
    connect timeout. So on a testbed the agent starts it on time while Ansible copies the
    certificate over; an agent that waited for the copy started it seconds late."""

    def binary(self) -> str:
        return os.environ.get(
            f"PRIOLAB_{self.program.upper()}", str(REPO_ROOT / "target" / "release" / self.program)
        )

    def listener_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        return []

    def connector_args(self, params: BaseModel, ctx: RunContext) -> list[str]:
        return []

    def check(self, params: BaseModel, base_dir: Path) -> list[tuple[str, str]]:
        return []

    def prepare(self, params: BaseModel, ctx: RunContext) -> dict[str, str]:
        return {}

    def plan(self, params: BaseModel, ctx: RunContext) -> list[ProcessSpec]:
        assert isinstance(params, self.params_model)
        port: int = getattr(params, "port")  # noqa: B009 (every pair's model has one)
        binary = self.binary()
        specs: list[ProcessSpec] = []
        for i, pair in enumerate(ctx.pairs):
            tag = "" if len(ctx.pairs) == 1 else f"-{i + 1}"
            host_dir, guest_dir = ctx.run_dir / f"host{tag}", ctx.run_dir / f"guest{tag}"
            cert = host_dir / CERT_FILE
            listen = [binary, "--role", self.listener, "--bind", f"0.0.0.0:{port}",
                      "--cert-out", str(cert), "--log-dir", str(host_dir),
                      *self.listener_args(params, ctx)]  # fmt: skip
            connect = [binary, "--role", self.connector, "--connect", f"{pair.host_ip}:{port}",
                       "--cert", str(cert), "--log-dir", str(guest_dir),
                       *self.connector_args(params, ctx)]  # fmt: skip
            if ctx.tls_keylog:  # SSLKEYLOGFILE format, beside the pcaps (engine/plan.py)
                connect += ["--keylog", str(ctx.run_dir / f"{rundir.TLS_KEYLOG}{tag}")]
            if ctx.qlog:
                listen += ["--qlog-dir", str(rundir.qlog_dir(host_dir))]
                connect += ["--qlog-dir", str(rundir.qlog_dir(guest_dir))]
            lost = (PEER_LOST_EXIT,)
            specs.append(ProcessSpec(f"{self.program}-{self.listener}{tag}", pair.host, listen,
                                     lost_exit_codes=lost))  # fmt: skip
            specs.append(
                ProcessSpec(f"{self.program}-{self.connector}{tag}", pair.guest, connect,
                            wait_for_file=cert, waits_itself=self.connector_waits_itself,
                            lost_exit_codes=lost)
            )  # fmt: skip
        return specs

    sim_problems = staticmethod(all_in_sim)  # Rust endpoints only, unless a protocol says
    qlog_problems = staticmethod(no_problems)  # every run is QUIC, unless a protocol says

    def tools(self) -> list[list[str]]:
        return [[self.binary(), "--version"]]

    def binaries(self) -> dict[str, str]:
        return {self.program: self.binary()}
