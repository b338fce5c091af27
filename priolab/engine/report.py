"""What a node reports about its share of a run (`node-<node>.json`), as typed models.

The node agent (engine/agent.py) writes the report with the standard library only, since it
runs alone on testbed nodes; the sim site writes the same shape from priolab-sim's report
(engine/sim_report.py). Everything that reads a report goes through `NodeReport`: `finish`
reads each node's file once (`read`), and a report that does not match is a reason the run
is invalid (`report` code), not a crash; the judge then works on the models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ground.errors import problems_from


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProcessCpu(_Model):
    """A process's CPU: seconds, and its share of one core (mean over its life, max over the
    agent's sampling intervals); None where there is no reading (sim)."""

    cpu_s: float | None = None
    core_mean_pct: float | None = None
    core_max_pct: float | None = None
    note: str | None = None


class ProcessReport(_Model):
    """One planned process as it ran (agent's `Proc.to_json`); times are epoch seconds."""

    name: str
    node: str
    argv: list[str]
    pid: int | None = None
    planned_start_time: float | None = None
    start_time: float | None = None
    end_time: float | None = None
    ready_time: float | None = None
    exit_code: int | None = None
    stopped_by_harness: str | None = None
    start_error: str | None = None
    stdout: str
    stderr: str
    cpu: ProcessCpu | None = None


class UdpReading(_Model):
    """The kernel's UDP drop counters at one time (IPv4, IPv6; None where unreadable)."""

    time: float | None = None
    udp: dict[str, int] | None = None
    udp6: dict[str, int] | None = None


class UdpCounters(_Model):
    start: UdpReading | None = None
    end: UdpReading | None = None
    note: str | None = None


class ClockState(_Model):
    """chrony's view of the node's clock (None: one clock, or no chrony: `note` says which)."""

    chrony: dict[str, Any] | None = None
    note: str | None = None


class NodeReport(_Model):
    """`node-<node>.json`: what one node's agent did."""

    node: str
    hostname: str | None = None
    t0: float | None = None
    processes: list[ProcessReport] = Field(default_factory=list)
    cpu_samples: list[float] = Field(default_factory=list)
    cpu_interval_s: float | None = None
    udp_counters: UdpCounters | None = None
    versions: dict[str, str | None] = Field(default_factory=dict)
    kernel: str | None = None
    clock: ClockState = Field(default_factory=ClockState)
    errors: list[str] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class ReportError(ValueError):
    """A node report that is not JSON or does not match `NodeReport`; the message names the
    file and the keys."""


def read(path: Path) -> NodeReport:
    """A node report from its file; ReportError if it does not match the contract."""
    try:
        return NodeReport.model_validate_json(path.read_text())
    except ValidationError as e:
        problems = "; ".join(f"{k or '(top)'}: {m}" for k, m in problems_from(e)[:5])
        raise ReportError(f"{path.name}: not a node report: {problems}") from e
