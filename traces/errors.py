"""The one error type of the traces package: a `ground.errors.UserError`, so the CLI prints it
like every other bad input (file, line, problem; exit code 2)."""

from __future__ import annotations

from pathlib import Path

from ground.errors import UserError


class TraceError(UserError):
    """Bad trace input. The message names the file, the line (if known) and the problem."""

    title = "invalid trace"

    def __init__(self, path: Path | str | None, problem: str, line: int | None = None) -> None:
        self.path = None if path is None else Path(path)
        self.line = line
        super().__init__(path if path is not None else "<trace>", [("", problem)])
        self.problem = self.problems[0][1]

    def render(self) -> str:
        where = self.file or "<trace>"
        if self.line is not None:
            where += f", line {self.line}"
        return f"{where}: {self.problems[0][1]}"


class TraceWindowError(TraceError):
    """A trace window (`start_s`, `end_s`) that does not lie within the trace. `key` is the
    option at fault, as a scenario names it (`start_s` or `end_s`); the message names the
    file and the trace's length."""

    def __init__(self, path: Path | str | None, key: str, problem: str) -> None:
        self.key = key
        self.bare = problem
        """The problem without the key (for callers that name the key themselves)."""
        super().__init__(path, f"{key}: {problem}")
