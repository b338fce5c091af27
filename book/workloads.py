"""One reference page per workload, generated from its pydantic parameter model, its JSON
schema and its analysis (core metrics), with the parameter and metric sections of its README,
so the page cannot drift from the code."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

from pydantic import BaseModel

from analysis.guards import MetricGuard, guards_for
from priolab.workloads import PACKAGES, WORKLOADS

# README headings whose sections describe parameters or metrics (copied onto the page)
README_SECTIONS = re.compile(r"param|metric|measures|tables|logs|schemes", re.IGNORECASE)
CONSTRAINTS = {
    "minimum": "≥",
    "exclusiveMinimum": ">",
    "maximum": "≤",
    "exclusiveMaximum": "<",
    "minLength": "min length",
    "maxLength": "max length",
    "minItems": "min items",
    "maxItems": "max items",
}


def _type(p: dict, defs: dict) -> str:
    if "$ref" in p:
        return p["$ref"].rsplit("/", 1)[-1]
    if "enum" in p:
        return " \\| ".join(f"`{v}`" for v in p["enum"])
    if "const" in p:
        return f"`{p['const']}`"
    if "anyOf" in p:
        return " or ".join(_type(x, defs) for x in p["anyOf"])
    t = p.get("type", "any")
    if t == "array" and "items" in p:
        return f"list of {_type(p['items'], defs)}"
    if p.get("format") == "path":
        return "path"
    return str(t)


def _limits(p: dict) -> str:
    out = [f"{sym} {p[k]}" for k, sym in CONSTRAINTS.items() if k in p]
    for x in p.get("anyOf", []):
        out += [f"{sym} {x[k]}" for k, sym in CONSTRAINTS.items() if k in x]
    return ", ".join(out)


def params_table(model: type[BaseModel]) -> list[str]:
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    lines = [
        "| key | type | default | allowed | description |",
        "|---|---|---|---|---|",
    ]
    for name, p in schema.get("properties", {}).items():
        default = "required" if name in required else f"`{json.dumps(p.get('default'))}`"
        desc = (p.get("description") or "").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{name}` | {_type(p, defs)} | {default} | {_limits(p)} | {desc} |")
    return lines


def readme_sections(readme: Path) -> list[str]:
    """The README's sections whose heading names parameters, metrics, tables or logs."""
    if not readme.is_file():
        return []
    out: list[str] = []
    keep, code, level = False, False, 0
    for line in readme.read_text().splitlines():
        if line.startswith("```"):
            code = not code
        m = re.match(r"^(#{2,6}) (.*)", line) if not code else None
        if m:
            lvl = len(m.group(1))
            if keep and lvl <= level:
                keep = False
            if not keep and README_SECTIONS.search(m.group(2)):
                keep, level = True, lvl
                line = "###" + "#" * (lvl - 2) + " " + m.group(2)
            elif keep:
                line = "###" + "#" * (lvl - 2) + " " + m.group(2)
        if keep:
            out.append(_unlink(line))
    return out


def _unlink(line: str) -> str:
    """Relative links of a folder README do not resolve on the site: keep their text."""
    return re.sub(r"\[([^\]]+)\]\((?!https?:)[^)]+\)", r"\1", line)


def core_metrics(kind: str) -> tuple[str, ...]:
    try:
        mod = importlib.import_module(f"{PACKAGES[kind]}.analysis")
    except ImportError:
        return ()
    return tuple(getattr(getattr(mod, "ANALYSIS", None), "core_metrics", ()))


def guards_table(guards: tuple[MetricGuard, ...]) -> list[str]:
    """What each metric could hide: the failure that flatters it and what catches it."""
    lines = [
        "| metric | measures | a failure that would flatter it | caught by |",
        "|---|---|---|---|",
    ]
    for g in guards:
        caught = ", ".join(f"`{c}`" for c in g.caught_by) + (f" ({g.how})" if g.how else "")
        lines.append(f"| `{g.metric}` | {g.measures} | {g.flattered_by} | {caught} |")
    return lines


def page(kind: str, repo: Path) -> str:
    w = WORKLOADS[kind]
    pkg = PACKAGES[kind]
    folder = Path(*pkg.split("."))
    lines = [
        f"# Workload `{kind}`",
        "",
        f"Generated from `{pkg}` (its parameter model `{w.params_model.__name__}` and JSON "
        f"schema, its analysis) and from `{folder}/README.md`. Set in a scenario as "
        f"`workload: {{kind: {kind}, params: {{...}}}}`; settings and schemes override the "
        "same keys.",
        "",
        "## Parameters (`workload.params`)",
        "",
        *params_table(w.params_model),
        "",
    ]
    metrics = core_metrics(kind)
    lines += ["## Core metrics", ""]
    if metrics:
        lines += [
            "The first rows of every summary of this workload (`core_metrics` of its "
            "`analysis.py`):",
            "",
            *[f"- `{m}`" for m in metrics],
            "",
        ]
    else:
        lines += ["This workload declares no core metrics; its summary lists every metric.", ""]
    guards = guards_for(pkg)
    lines += ["## What each metric could hide", ""]
    if guards:
        lines += [
            f"From `{pkg}.guards`: read a metric together with the metrics that catch what "
            "would flatter it (every run's metrics.json and runs.csv carry both; the tests "
            "check both names against the metrics a real run writes).",
            "",
            *guards_table(guards),
            "",
        ]
    else:
        lines += ["This workload declares no metric guards (`guards.py`).", ""]
    sections = readme_sections(repo / folder / "README.md")
    if sections:
        lines += ["## From the workload's README", "", *sections, ""]
    lines += [
        "## JSON schema",
        "",
        "```json",
        json.dumps(w.params_model.model_json_schema(), indent=2),
        "```",
        "",
    ]
    return "\n".join(lines).rstrip() + "\n"


def index(kinds: list[str]) -> str:
    lines = [
        "# Workloads",
        "",
        "One generated reference page per workload registered in `priolab/workloads/` "
        "(see [Adding a workload](../adding-a-workload.md)).",
        "",
    ]
    lines += [f"- [`{k}`]({k}.md)" for k in kinds]
    return "\n".join(lines) + "\n"
