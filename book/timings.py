"""The timings page: how long the two commands take, step by step, and where the in-VM job's
time goes, from the records in evidence/timings/ (never typed by hand).

- `test.json`, `reproduce.json`: `.ci/timed-make TARGET` (each step of `make TARGET` with its
  wall and CPU seconds; on a fresh machine and clone, the set-up from bare);
- `vm-job.json`: tests/test_vm.py's record of its VM job (vm/timings.py), written where
  `PRIOLAB_TIMINGS_DIR` points;
- `apt-bare.json`: `.ci/time-apt-bare` (the Debian packages of each command installed into a
  bare Debian made with debootstrap: what `make apt` and `make apt-test` take on a fresh
  machine, which a machine that has the packages cannot show).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vm.timings import markdown as vm_markdown

PAGE = "timings.md"
TARGETS = {
    "reproduce": "`make reproduce`: set-up and the quick reproduction",
    "test": "`make test`: set-up and every test (CI's command)",
}


def _read(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.is_file() else None


def _minutes(s: float) -> str:
    return f"{s / 60:.1f} min"


def _steps(rec: dict[str, Any], vm: dict[str, Any] | None) -> list[str]:
    host = rec.get("host", {})
    ok = "passed" if rec.get("rc") == 0 else f"failed (exit {rec.get('rc')})"
    lines = [
        f"{_minutes(rec['wall_s'])} in all ({ok}), on {host.get('cpus', '?')} cores of "
        f"{host.get('cpu_model') or 'an unnamed CPU'}, at commit `{str(rec.get('commit'))[:12]}`.",
        "",
        "| step | wall | CPU | share of the wall |",
        "|---|---|---|---|",
    ]
    for st in rec["steps"]:
        share = 100 * st["wall_s"] / rec["wall_s"] if rec["wall_s"] else 0
        lines.append(
            f"| `make {st['step']}` | {st['wall_s']:.0f} s | {st['cpu_s']:.0f} s | {share:.0f} % |"
        )
    if vm is not None and rec["target"] == "test" and vm.get("wall_s"):
        lines += [
            "",
            f"The in-VM job (inside `make test-python`) took {vm['wall_s']:.0f} s, "
            f"{100 * vm['wall_s'] / rec['wall_s']:.0f} % of the whole "
            "(its record may come from another run than this table's: see its commit below).",
        ]
    return lines


APT_SETS = {"run": "`make apt` (`make reproduce`'s)", "test": "`make apt` and `make apt-test`"}


def _apt(rec: dict[str, Any]) -> list[str]:
    host = rec.get("host", {})
    lines = [
        f"Into a bare Debian 12 (debootstrap minbase, {rec['debootstrap_s']:.0f} s), from "
        f"{rec['mirror']}, on {host.get('cpus', '?')} cores of "
        f"{host.get('cpu_model') or 'an unnamed CPU'}, at commit `{str(rec.get('commit'))[:12]}`. "
        "The steps above ran where the packages were already installed, so their apt steps "
        "show only the check; on a fresh machine add these:",
        "",
        "| packages | install from bare | packages then installed | size of the system |",
        "|---|---|---|---|",
    ]
    for st in rec["sets"]:
        lines.append(
            f"| {APT_SETS.get(st['set'], st['set'])} | {st['wall_s']:.0f} s | "
            f"{st['packages_installed']} | {st['root_mb']} MB |"
        )
    return lines


def page(timings: Path) -> str:
    out = [
        "# How long it takes",
        "",
        "Generated from the records in `evidence/timings/` (book/timings.py): `.ci/timed-make "
        "TARGET` times each step of a make target, and tests/test_vm.py records its VM job "
        "when `PRIOLAB_TIMINGS_DIR` is set. A machine's speed drifts, so read them as what one "
        "run on the named machine took.",
        "",
    ]
    vm = _read(timings / "vm-job.json")
    for target, title in TARGETS.items():
        out += [f"## {title}", ""]
        rec = _read(timings / f"{target}.json")
        if rec is None:
            out += [
                f"Not measured yet: `.ci/timed-make {target}` on a fresh clone measures it.",
                "",
            ]
            continue
        out += [*_steps(rec, vm), ""]
    out += ["## The Debian packages from bare", ""]
    apt = _read(timings / "apt-bare.json")
    if apt is None:
        out += ["Not measured yet: `.ci/time-apt-bare` measures it.", ""]
    else:
        out += [*_apt(apt), ""]
    out += ["## Where the in-VM job's time goes", ""]
    if vm is None:
        out += [
            "Not measured yet: `PRIOLAB_TIMINGS_DIR=evidence/timings PRIOLAB_VM_REQUIRED=1 "
            "pytest tests/test_vm.py` records it.",
            "",
        ]
    else:
        host = vm.get("host", {})
        out += [
            f"On {host.get('cpus', '?')} cores of {host.get('cpu_model') or 'an unnamed CPU'}, at "
            f"commit `{str(vm.get('commit'))[:12]}`.",
            "",
            *vm_markdown(vm),
            "",
        ]
    return "\n".join(out)


def write(timings: Path, out_dir: Path) -> Path:
    p = out_dir / PAGE
    p.write_text(page(timings))
    return p
