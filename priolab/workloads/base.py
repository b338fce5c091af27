"""What a workload is to the run of one experiment: a parameter model and a process plan."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel


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


@dataclass(frozen=True)
class ProcessSpec:
    """One process to start in one node, as an argv list.

    `wait_for_file`: start only once this file exists (e.g. the host's certificate).
    `waits_itself`: the process waits for `wait_for_file` by itself (with a timeout), so a
    site that has to copy the file between machines starts it on time instead.
    `start_delay_s`: wait this long after the previous process started (e.g. a server binding).
    `runs_to_end`: True if the process exits by itself at the end of the run (exit code
    0 expected); False for servers the harness stops with SIGTERM.
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
    # Optional: `sim_problems(params) -> list[(key, why)]`, what the sim site (one
    # priolab-sim process, virtual time) cannot run of these parameters. A workload without it
    # cannot run on the sim site at all (engine/sim_spec.py says so, naming its programs).


def all_in_sim(params: BaseModel) -> list[tuple[str, str]]:
    """`sim_problems` of a workload whose every process is a Rust endpoint priolab-sim hosts,
    whatever its parameters: none."""
    return []
