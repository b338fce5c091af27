"""Errors a user sees: each names the file, the key path and what is allowed.

`UserError` is the one family: a scenario that does not validate (`ScenarioError`), a trace
that does not parse (`traces.errors.TraceError`), a link that does not resolve
(`netem.resolve.ResolveError`) and a bad command-line choice are all `UserError`s. The CLI
prints every one as `<file>: <key>: <problem>` lines and exits 2. Long values are cut
(`shorten`) so that a message stays readable whatever the input held.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ValidationError

MAX_VALUE_CHARS = 80
"""A value quoted in a message is cut to this many characters."""
MAX_MESSAGE_CHARS = 400
"""One problem's message is cut to this many characters."""


def shorten(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """`text` if short enough, else its start and end around `…(N chars)…`."""
    if len(text) <= limit:
        return text
    keep = max(limit - 20, 10)
    head, tail = text[: keep * 2 // 3], text[-(keep // 3) :]
    return f"{head}…({len(text)} chars)…{tail}"


def show(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """repr() of a value for a message, cut to `limit` characters."""
    return shorten(repr(value), limit)


class UserError(ValueError):
    """Bad input from a user. `file` (may be None) and `problems`: (key path, message) pairs;
    the key is "" where the file itself is the problem. `title` heads the CLI's message."""

    title = "bad input"

    def __init__(self, file: Path | str | None, problems: list[tuple[str, str]]) -> None:
        self.file = None if file is None else str(file)
        self.problems = [(k, shorten(m, MAX_MESSAGE_CHARS)) for k, m in problems]
        super().__init__(self.render())

    def render(self) -> str:
        lines = []
        for key, msg in self.problems:
            parts = [p for p in (self.file, key) if p]
            lines.append(": ".join([*parts, msg]))
        return "\n".join(lines)


class ScenarioError(UserError):
    """A scenario file is invalid."""

    title = "invalid scenario"


_TYPE_TAGS = {"int", "str", "float", "bool", "bytes", "path", "dict", "list", "none"}


def _model_names(cls: type[BaseModel] = BaseModel) -> set[str]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub.__name__} | _model_names(sub)
    return out


def key_path(loc: tuple[int | str, ...], prefix: str = "") -> str:
    """Render a pydantic error location as `a.b[0].c`, skipping union tags (the member
    types pydantic tried: `int`, `str`, a model's class name, `function-after[...]`)."""
    out = prefix
    models = _model_names()
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif (
            part in {"function-after", "function-before"}
            or "[" in str(part)
            or part in _TYPE_TAGS
            or part in models
        ):
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
        if (
            "input" in e
            and e["type"] not in {"missing", "extra_forbidden"}
            and not isinstance(e["input"], dict)  # a model-level check: the key says where
        ):
            msg += f" (got {show(e['input'])})"
        out.append((key_path(loc, prefix), msg))
    # the members of a union fail at the same key: one problem, their messages joined
    merged: dict[str, list[str]] = {}
    for k, text in out:
        merged.setdefault(k, [])
        if text not in merged[k]:
            merged[k].append(text)
    # a union member that got further (a mapping's key) says more than the ones that did not
    deeper = {k for k in merged if any(o.startswith(k + ".") for o in merged)}
    return [(k, " or ".join(ms)) for k, ms in merged.items() if k not in deeper]
