"""The import graph of the top-level Python packages has no cycle. Drawn with `ast` from
every import statement, at module level or inside a function; test files (test_*.py, here and
in vm/intests/) import what they test and are left out. The packages form layers (PACKAGES,
lowest first) and each imports only layers below it: analysis owns the generic steps and finds
workloads through an entry point (analysis/workload.py); priolab runs them and its workloads
implement analysis's protocol; book, the results pages, reads both."""

from __future__ import annotations

import ast
import subprocess
import tomllib
from pathlib import Path

from tests.conftest import REPO

PACKAGES = ("ground", "topologies", "traces", "netem", "vm", "analysis", "priolab", "book")
"""The top-level packages of the checkout, lowest layer first (tests/ imports them all and is
left out)."""


def _python_files() -> list[Path]:
    argv = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"]
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=True).stdout
    return [REPO / f for f in out.split()
            if f.split("/")[0] in PACKAGES and not Path(f).name.startswith("test_")
            and (REPO / f).is_file()]  # fmt: skip


def _imported(tree: ast.AST) -> set[str]:
    """The top-level packages a module imports (absolute imports only; relative ones stay
    inside the package)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out & set(PACKAGES)


def import_graph() -> dict[str, dict[str, list[str]]]:
    """{package: {imported package: [files that import it]}}, self-imports left out."""
    graph: dict[str, dict[str, list[str]]] = {p: {} for p in PACKAGES}
    for f in _python_files():
        pkg = f.relative_to(REPO).parts[0]
        for dep in _imported(ast.parse(f.read_text(), str(f))) - {pkg}:
            graph[pkg].setdefault(dep, []).append(str(f.relative_to(REPO)))
    return graph


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """Every elementary cycle's packages, found by depth-first search from each package."""
    found: set[tuple[str, ...]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in graph[node]:
            if nxt == start:
                i = path.index(min(path))
                found.add(tuple(path[i:] + path[:i]))
            elif nxt not in path and nxt > start:
                walk(start, nxt, [*path, nxt])

    for p in graph:
        walk(p, p, [p])
    return sorted(list(c) for c in found)


def test_cycles_finds_a_cycle_and_only_cycles() -> None:
    g = {"a": {"b": []}, "b": {"c": []}, "c": {"a": []}, "d": {"a": []}}
    assert cycles(g) == [["a", "b", "c"]]
    assert cycles({"a": {"b": []}, "b": {}}) == []


def test_no_cycle_between_top_level_packages() -> None:
    graph = import_graph()
    found = cycles(graph)
    where = {" → ".join([*c, c[0]]): {f"{a} imports {b}": graph[a][b][:3]
                                       for a, b in zip(c, [*c[1:], c[0]], strict=True)}
             for c in found}  # fmt: skip
    assert not found, where


def test_each_package_imports_only_layers_below_it() -> None:
    graph = import_graph()
    up = {f"{a} imports {b}": files[:3] for a, deps in graph.items() for b, files in deps.items()
          if PACKAGES.index(b) > PACKAGES.index(a)}  # fmt: skip
    assert not up, up


def test_packages_are_the_ones_pyproject_installs() -> None:
    """A new top-level package joins PACKAGES (and so these checks) at its layer."""
    find = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert {p.rstrip("*") for p in find["find"]["include"]} == set(PACKAGES)
