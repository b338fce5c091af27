"""Errors a user sees: each names the file, the key path and what is allowed."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationError


class ScenarioError(ValueError):
    """A scenario file is invalid. `problems` holds (key path, message) pairs."""

    def __init__(self, file: Path | str, problems: list[tuple[str, str]]) -> None:
        self.file = str(file)
        self.problems = problems
        lines = [f"{self.file}: {key}: {msg}" for key, msg in problems]
        super().__init__("\n".join(lines))


def key_path(loc: tuple[int | str, ...], prefix: str = "") -> str:
    """Render a pydantic error location as `a.b[0].c`, skipping union tags."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in {"function-after", "function-before"} or "[" in str(part):
            continue  # pydantic's validator/union-member markers are not keys
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def problems_from(err: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    """(key path, message) for every error in a pydantic ValidationError."""
    out: list[tuple[str, str]] = []
    for e in err.errors(include_url=False):
        msg = e["msg"].removeprefix("Value error, ")
        loc = tuple(e["loc"])
        m = re.match(r"^([A-Za-z_][\w.\[\]-]*): (.*)$", msg, re.S)
        if m and e["type"] == "value_error":
            # a model-level check names its own key: "matrix.setting: ..."
            loc, msg = (*loc, *m.group(1).split(".")), m.group(2)
        if e["type"] == "extra_forbidden":
            msg = "unknown key (not allowed here)"
        elif e["type"] == "missing":
            msg = "required key is missing"
        if "input" in e and e["type"] not in {"missing", "extra_forbidden"}:
            shown = repr(e["input"])
            if len(shown) <= 60:
                msg += f" (got {shown})"
        out.append((key_path(loc, prefix), msg))
    return out
