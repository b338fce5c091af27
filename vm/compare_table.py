"""The side-by-side table of linkem and netem (tc) from the in-VM comparison sweep.

    python -m vm.compare_table FIGURES.json     # figures.json from the VM's out/ folder

Prints markdown for netem/README.md: one row per case and metric, the model's value where the
model gives one, then what each backend measured (seeds separated by " / ").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BACKENDS = ("tc", "userspace")
HEAD = "| case | metric | model | tc (netem) | linkem |\n|---|---|---|---|---|"


def _f(x: Any, nd: int = 2) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def _row(case: str, metric: str, model: str, cells: list[str]) -> str:
    return f"| {case} | {metric} | {model} | " + " | ".join(cells) + " |"


def rows(compare: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for case, by in compare.get("delay", {}).items():
        for key, name in (("min_ms", "delay min (ms)"), ("p50_ms", "delay median (ms)"),
                          ("p99_ms", "delay p99 (ms)"), ("std_ms", "delay std (ms)")):  # fmt: skip
            out.append(_row(case, name, "", [_f(by.get(b, {}).get(key)) for b in BACKENDS]))
    for case, by in compare.get("loss", {}).items():
        any_b = next(iter(by.values()))

        def seeds(b: str, key: str, by: dict[str, Any] = by) -> str:
            return " / ".join(_f(r[key]) for r in by.get(b, {}).get("seeds", [])) or "—"

        out.append(_row(case, "loss (%), seed 1 / 2", _f(any_b["expected_loss_pct"]),
                        [seeds(b, "loss_pct") for b in BACKENDS]))  # fmt: skip
        out.append(_row(case, "mean burst (packets)", _f(any_b["expected_burst"]),
                        [seeds(b, "burst_mean") for b in BACKENDS]))  # fmt: skip
        out.append(_row(case, "bursts of 1/2/3/4/5+, seed 1", "",
                        ["/".join(map(str, (by.get(b, {}).get("seeds") or [{}])[0]
                                        .get("bursts_1_2_3_4_5plus", [])))
                         for b in BACKENDS]))  # fmt: skip
    for case, by in [c for sec in ("queue", "policer") for c in compare.get(sec, {}).items()]:
        out.append(_row(case, "packets delivered", "",
                        [_f(by.get(b, {}).get("received")) for b in BACKENDS]))  # fmt: skip
        ends = [(by.get(b, {}).get("first_seqs", [])[:3], by.get(b, {}).get("last_seqs", [])[-3:])
                for b in BACKENDS]  # fmt: skip
        out.append(_row(case, "first / last seqs delivered", "",
                        [f"{a} … {z}" for a, z in ends]))  # fmt: skip
        out.append(_row(case, "max delay (ms)", "",
                        [_f(by.get(b, {}).get("max_delay_ms"), 1) for b in BACKENDS]))  # fmt: skip
    for case, by in compare.get("rate", {}).items():
        out.append(_row(case, "received (Mbit/s on the wire)", case.split()[0],
                        [_f(by.get(b, {}).get("measured_mbps")) for b in BACKENDS]))  # fmt: skip
    return out


def table(figures: dict[str, Any]) -> str:
    return "\n".join([HEAD, *rows(figures.get("compare", {}))])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m vm.compare_table FIGURES.json", file=sys.stderr)
        return 2
    print(table(json.loads(Path(args[0]).read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
