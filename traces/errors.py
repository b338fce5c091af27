"""The one error type of the traces package."""

from __future__ import annotations

from pathlib import Path


class TraceError(ValueError):
    """Bad trace input. The message names the file, the line (if known) and the problem."""

    def __init__(self, path: Path | str | None, problem: str, line: int | None = None) -> None:
        self.path = None if path is None else Path(path)
        self.line = line
        self.problem = problem
        where = "<trace>" if path is None else str(path)
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {problem}")
