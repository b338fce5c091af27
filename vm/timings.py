"""Where the in-VM job's time goes: a record of one job (boot, probe start-up, budget, wall,
and each in-VM test's seconds from its junit report), and the markdown that shows it.

    python -m vm.timings JOB_DIR [--record OUT.json]   # a job folder (tests/test_vm.py keeps it)
    python -m vm.timings --md RECORD.json              # the page's section, from a record

tests/test_vm.py writes the record of every job it boots to `$PRIOLAB_TIMINGS_DIR/vm-job.json`
when that variable is set, and the generated timings page (book/timings.py) shows it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from vm.run import STARTUP_FILE

RECORD_NAME = "vm-job.json"


def junit_cases(junit: Path) -> list[dict[str, Any]]:
    """Each test case of a junit report: its file, name, seconds and outcome."""
    cases = []
    for tc in ET.parse(junit).getroot().iter("testcase"):
        outcome = "passed"
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                outcome = child.tag
        module = tc.get("classname") or ""
        cases.append({
            "file": module.replace(".", "/") + ".py",
            "name": tc.get("name") or "",
            "seconds": round(float(tc.get("time") or 0.0), 3),
            "outcome": outcome,
        })  # fmt: skip
    return cases


def record(job_dir: Path, summary: dict[str, Any]) -> dict[str, Any]:
    """The record of the job in `job_dir`; `summary` is what the runner measured (boot_s,
    wall_s, budget_s, timed_out: vm.run.JobResult)."""
    out = job_dir / "out"
    startups = []
    if (out / STARTUP_FILE).is_file():
        startups = [float(x) for x in json.loads((out / STARTUP_FILE).read_text())["startup_s"]]
    junit = out / "junit.xml"
    cases = junit_cases(junit) if junit.is_file() else []
    per_file: dict[str, float] = {}
    for c in cases:
        per_file[c["file"]] = round(per_file.get(c["file"], 0.0) + c["seconds"], 3)
    return {
        **summary,
        "probe_startup_s": {
            "n": len(startups),
            "median": statistics.median(startups) if startups else None,
            "max": max(startups) if startups else None,
        },
        "tests_s": round(sum(c["seconds"] for c in cases), 3),
        "files_s": per_file,
        "cases": cases,
    }


def markdown(rec: dict[str, Any], top: int = 12) -> list[str]:
    """The page's section: the job's phases, the seconds per in-VM file, the slowest cases."""

    def s(x: float | None) -> str:
        return "–" if x is None else f"{x:.0f} s"

    st = rec["probe_startup_s"]
    wall, boot, tests = rec.get("wall_s"), rec.get("boot_s"), rec["tests_s"]
    lines = [
        f"One boot ran {len(rec['cases'])} in-VM tests in {s(wall)} of wall time "
        f"(budget {s(rec.get('budget_s'))}): boot {s(boot)}, the tests {s(tests)}, "
        f"the rest (pytest's start inside, power-off) {s((wall or 0) - (boot or 0) - tests)}. "
        f"Probe start-up (receiver spawned to socket bound, {st['n']} probes): median "
        + ("–" if st["median"] is None else f"{st['median']:.2f} s")
        + ", max "
        + ("–" if st["max"] is None else f"{st['max']:.2f} s")
        + ".",
        "",
        "| in-VM file | tests | seconds | share of the tests |",
        "|---|---|---|---|",
    ]
    for f, sec in sorted(rec["files_s"].items(), key=lambda kv: -kv[1]):
        n = sum(1 for c in rec["cases"] if c["file"] == f)
        lines.append(f"| `{f}` | {n} | {sec:.0f} | {100 * sec / tests if tests else 0:.0f} % |")
    lines += ["", f"The {top} slowest cases:", "", "| case | seconds | outcome |", "|---|---|---|"]
    for c in sorted(rec["cases"], key=lambda c: -c["seconds"])[:top]:
        lines.append(
            f"| `{Path(c['file']).stem}::{c['name']}` | {c['seconds']:.0f} | {c['outcome']} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vm.timings", description=__doc__)
    ap.add_argument("source", type=Path, help="a VM job folder, or with --md a record")
    ap.add_argument("--record", type=Path, help="write the job's record here (JSON)")
    ap.add_argument("--md", action="store_true", help="print the page's section of a record")
    a = ap.parse_args(argv)
    if a.md:
        print("\n".join(markdown(json.loads(a.source.read_text()))))
        return 0
    res = json.loads((a.source / "results.json").read_text())
    rec = record(a.source, {"boot_s": res.get("boot_s")})
    text = json.dumps(rec, indent=1, sort_keys=True) + "\n"
    if a.record:
        a.record.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
