"""The repository's Python modules a set of root modules imports, found with `ast`.

Every `import` and `from ... import` statement counts, at module level or inside a function
(a lazy import runs too when its function does), relative ones resolved against their
package; importing `a.b.c` runs `a/__init__.py` and `a/b/__init__.py` as well. Only modules
of this repository count (third-party packages are pinned by requirements.lock, whose digest
every record carries beside its code digest). Imports made by name at run time
(importlib, pkgutil) are not followed: a root list names what they reach.
"""

from __future__ import annotations

import ast
from pathlib import Path

TOP_PACKAGES = ("ground", "topologies", "traces", "netem", "vm", "analysis", "priolab", "book")
"""The repository's top-level packages (pyproject.toml's package list)."""


def module_file(repo: Path, module: str) -> Path | None:
    """The file of a repository module (`a.b` → a/b.py or a/b/__init__.py), or None."""
    if module.split(".")[0] not in TOP_PACKAGES:
        return None
    base = repo.joinpath(*module.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def _module_name(repo: Path, f: Path) -> str:
    parts = list(f.relative_to(repo).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(repo: Path, f: Path) -> set[str]:
    """The module names a file imports (absolute; relative imports resolved)."""
    tree = ast.parse(f.read_text(), str(f))
    me = _module_name(repo, f)
    package = me if f.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, *([node.module] if node.module else [])])
            else:
                mod = node.module or ""
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}  # a submodule imported by name
    return out


def closure(repo: Path, roots: list[str]) -> list[Path]:
    """Every repository file the root modules import, transitively, the roots included,
    sorted. A root that is not a module of the repository raises ValueError."""
    seen: set[Path] = set()
    todo: list[str] = []
    for r in roots:
        if module_file(repo, r) is None:
            raise ValueError(f"{r}: not a Python module of {repo}")
        todo.append(r)
    while todo:
        mod = todo.pop()
        parts = mod.split(".")
        for i in range(1, len(parts) + 1):  # the packages on the way run their __init__
            f = module_file(repo, ".".join(parts[:i]))
            if f is None or f in seen:
                continue
            seen.add(f)
            todo += sorted(_imports(repo, f))
    return sorted(seen)
