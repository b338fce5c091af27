"""Why a run is invalid, as data: a `Reason` is a code (what kind of failure) and a detail
(the particulars, for people), optionally the node it arose on.

metadata.json carries both forms: `invalid` (a list of {code, detail, node}) for programs and
`invalid_reasons` (the same reasons rendered to prose, one line each) for people and for the
readers of run folders written before the codes existed. Programs decide on `code`, never on
the prose: `from_metadata` reads either form (a prose-only reason gets the code
`unstructured`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Code(StrEnum):
    """The kinds of invalid runs (DESIGN.md, the validity rules)."""

    SITE = "site"  # the site could not run or record part of the run
    ABORTED = "aborted"  # a signal stopped the run
    NO_REPORT = "no_report"  # a node's agent wrote no report
    BAD_REPORT = "bad_report"  # a node's report does not match the contract (engine/report.py)
    NODE_ERROR = "node_error"  # a node's agent reported an error
    NOT_SELF_EXIT = "not_self_exit"  # a process that should end by itself was stopped
    EXIT_CODE = "exit_code"  # a process exited with a code it should not
    LATE_START = "late_start"  # a process started late
    START_ERROR = "start_error"  # a process could not start
    SHORT_RUN = "short_run"  # the run ended before its duration
    LINK_NOT_READY = "link_not_ready"  # linkem was not forwarding at the start
    CPU_SATURATED = "cpu_saturated"  # a node's CPU
    HOST_CPU_SATURATED = "host_cpu_saturated"  # the VM site's host CPU
    OVERSIZED_FRAMES = "oversized_frames"
    LINK_ERROR = "link_error"  # the link emulation reported an error
    CLOCK_OFFSET = "clock_offset"  # testbed clocks disagree
    RCVBUF_DROPS = "rcvbuf_drops"  # the kernel dropped datagrams from full socket buffers
    ANALYSIS = "analysis"  # the run's logs could not be analysed
    UNRECORDED = "unrecorded"  # metadata says invalid without a reason
    UNSTRUCTURED = "unstructured"  # prose from a run folder written before the codes


@dataclass(frozen=True)
class Reason:
    code: Code
    detail: str
    node: str | None = None

    def prose(self) -> str:
        """The reason as one line for people."""
        return f"{self.node}: {self.detail}" if self.node else self.detail

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code.value, "detail": self.detail, "node": self.node}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Reason:
        try:
            code = Code(str(obj.get("code")))
        except ValueError:
            code = Code.UNSTRUCTURED
        node = obj.get("node")
        return cls(code, str(obj.get("detail", "")), node if isinstance(node, str) else None)


def site_error(detail: str) -> Reason:
    """A problem of the site (not of a node's report): its prose as the detail."""
    return Reason(Code.SITE, detail)


def aborted(signal_name: object) -> Reason:
    return Reason(Code.ABORTED, f"aborted by {signal_name}")


def first_abort(reasons: list[Reason]) -> Reason | None:
    """The reason that says a signal stopped the run, if one does."""
    return next((r for r in reasons if r.code is Code.ABORTED), None)


def verdict_fields(reasons: list[Reason]) -> dict[str, Any]:
    """metadata.json's verdict keys: `valid`, the structured `invalid`, the prose
    `invalid_reasons` (same order)."""
    return {
        "valid": not reasons,
        "invalid": [r.to_json() for r in reasons],
        "invalid_reasons": [r.prose() for r in reasons],
    }


def from_metadata(meta: dict[str, Any]) -> list[Reason]:
    """The reasons of a metadata.json (or metrics.json): the structured `invalid` list when it
    is there, else the prose `invalid_reasons` of an older run folder, each as `unstructured`;
    an invalid run with neither gets one `unrecorded` reason."""
    structured = meta.get("invalid")
    if isinstance(structured, list):
        out = [Reason.from_json(r) for r in structured if isinstance(r, dict)]
    else:
        prose = meta.get("invalid_reasons")
        prose = prose if isinstance(prose, list) else []
        out = [Reason(Code.UNSTRUCTURED, str(r)) for r in prose]
    if not out and meta.get("valid") is False:
        out = [Reason(Code.UNRECORDED, "metadata says valid=false without a reason")]
    return out


def kind(reason: Reason) -> str:
    """What equal causes count together under: the code; an unstructured reason's prose (an
    old run folder's reason cannot be classified without parsing it)."""
    return reason.detail if reason.code is Code.UNSTRUCTURED else reason.code.value


def without(reasons: list[Reason], *codes: Code) -> list[Reason]:
    """The reasons whose code is none of `codes` (e.g. a test that tolerates a busy CPU)."""
    return [r for r in reasons if r.code not in codes]
