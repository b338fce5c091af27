"""The "What ran" block of a scenario's summary: one line per scheme saying what its runs'
workload parameters were. Each run's parameters (metadata.json `run.workload`) are read
through the workload's parameter model, so a key a run does not record reads as the model's
default: no default is typed a second time."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


class RanRun(Protocol):
    """What of a run the block needs (analysis/rundirs.py `Run` has it)."""

    scheme: str

    @property
    def workload(self) -> dict[str, Any]: ...


def params_of(model: type[M], workload: dict[str, Any]) -> M:
    """A run's recorded workload parameters as the model, the model's defaults where the run
    records nothing; not validated again (the run was validated when it ran; `kind` and
    keys the model no longer has are left out)."""
    return model.model_construct(**{k: v for k, v in workload.items() if k in model.model_fields})


def what_ran(
    runs: Iterable[RanRun],
    model: type[M],
    describe: Callable[[M], str],
    key: Callable[[tuple[str, set[str]]], Any] | None = None,
) -> list[str]:
    """`- <scheme>: <description>; ...`, one line per scheme, each distinct description once
    (sorted by scheme, or by `key` on (scheme, descriptions))."""
    seen: dict[str, set[str]] = {}
    for r in runs:
        seen.setdefault(r.scheme, set()).add(describe(params_of(model, r.workload)))
    return [f"- {s}: {'; '.join(sorted(v))}" for s, v in sorted(seen.items(), key=key)]
