"""The roq metrics step of two checkouts on the same runs: how long each takes and whether
they write the same bytes (issue 36: scoring had to get faster without changing a score).

    .venv/bin/python -m priolab.workloads.roq.bench_scoring --old CHECKOUT RUN_DIR... [--json F]

CHECKOUT is another checkout of priolab (e.g. `git worktree add --detach /tmp/old <commit>`);
`--new` (default: this one) the other. Each RUN_DIR is a scored or unscored roq run that kept
its decoded luma (`keep_decoded: true` in the scenario's workload params, else the first
analysis deletes `guest/decoded.y`). Per run, its files are hard-linked (the decoded luma is
not copied) into two scratch folders without `tables/` or `metrics.json`, and each checkout's
metrics step runs on one of them exactly as the workflow's `metrics` rule runs it
(`python -m analysis.tables RUN && python -m analysis.metrics RUN`), with this interpreter and
the checkout first on PYTHONPATH, one after the other (which goes first alternates run by
run). Prints per run the wall and CPU seconds of each (the CPU time of the two processes) and
old ÷ new, and whether `metrics.json` and every file under `tables/` are the same bytes; then
min / median / max of the ratios. Exit status 1 when any output differs or a step failed.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ground import rundir
from priolab.paths import REPO_ROOT

SKIP = (rundir.TABLES, rundir.METRICS)  # what the metrics step writes: left out of copies
STEP = (("analysis.tables",), ("analysis.metrics",))


@dataclass(frozen=True)
class Timing:
    wall_s: float
    cpu_s: float


@dataclass(frozen=True)
class RunResult:
    run: str
    old: Timing
    new: Timing
    ratio_wall: float
    ratio_cpu: float
    same: bool
    differ: list[str]


def link_copy(run: Path, dest: Path) -> None:
    """`run` under `dest`, every file hard-linked, without what the metrics step writes."""
    for p in sorted(run.rglob("*")):
        rel = p.relative_to(run)
        if rel.parts[0] in SKIP:
            continue
        if p.is_dir():
            (dest / rel).mkdir(parents=True, exist_ok=True)
        else:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            os.link(p, dest / rel)


def metrics_step(checkout: Path, run: Path) -> Timing:
    """The workflow's metrics rule on `run` with `checkout`'s code; raises if a step fails."""
    env = {k: v for k, v in os.environ.items() if k != "PRIOLAB_ROQ_SCORE"}  # its own build
    env["PYTHONPATH"] = str(checkout)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    for (module,) in STEP:
        r = subprocess.run(
            [sys.executable, "-m", module, str(run)],
            cwd=checkout, env=env, capture_output=True, text=True,
        )  # fmt: skip
        if r.returncode != 0:
            raise RuntimeError(f"{checkout}: {module} {run}: exit {r.returncode}: {r.stderr}")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def outputs(run: Path) -> list[Path]:
    """What the metrics step wrote, relative to the run."""
    tables = sorted(p.relative_to(run) for p in (run / rundir.TABLES).rglob("*") if p.is_file())
    return [Path(rundir.METRICS), *tables]


def differing(a: Path, b: Path) -> list[str]:
    """The outputs that are not the same bytes in runs `a` and `b` (or exist in one only)."""
    names = sorted(set(outputs(a)) | set(outputs(b)))
    return [
        str(n)
        for n in names
        if not ((a / n).is_file() and (b / n).is_file() and filecmp.cmp(a / n, b / n, False))
    ]


def compare(old: Path, new: Path, run: Path, scratch: Path, new_first: bool) -> RunResult:
    copies = {"old": scratch / "old" / "run", "new": scratch / "new" / "run"}
    for c in copies.values():
        link_copy(run, c)
    order = ["new", "old"] if new_first else ["old", "new"]
    checkout = {"old": old, "new": new}
    t = {side: metrics_step(checkout[side], copies[side]) for side in order}
    differ = differing(copies["old"], copies["new"])
    for c in copies.values():
        shutil.rmtree(c)
    return RunResult(
        run=str(run),
        old=t["old"],
        new=t["new"],
        ratio_wall=t["old"].wall_s / t["new"].wall_s,
        ratio_cpu=t["old"].cpu_s / t["new"].cpu_s,
        same=not differ,
        differ=differ,
    )


def spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m priolab.workloads.roq.bench_scoring", description=__doc__
    )
    ap.add_argument("runs", type=Path, nargs="+", help="roq run folders with guest/decoded.y")
    ap.add_argument("--old", type=Path, required=True, help="the checkout to compare against")
    ap.add_argument("--new", type=Path, default=REPO_ROOT, help="default: this checkout")
    ap.add_argument(
        "--scratch",
        type=Path,
        help="where the copies go (default: a temporary folder beside the first run: hard "
        "links need the same file system)",
    )
    ap.add_argument("--json", type=Path, help="also write the results here")
    a = ap.parse_args(argv)
    for checkout in (a.old, a.new):
        if not (checkout / "analysis" / "tables.py").is_file():
            ap.error(f"{checkout}: not a priolab checkout (no analysis/tables.py)")
    for run in a.runs:
        if not (run / "guest" / "decoded.y").is_file():
            ap.error(f"{run}: no guest/decoded.y (score runs made with keep_decoded: true)")
    parent = a.scratch or a.runs[0].parent
    results: list[RunResult] = []
    with tempfile.TemporaryDirectory(prefix="bench-scoring-", dir=parent) as d:
        for i, run in enumerate(a.runs):
            r = compare(a.old.resolve(), a.new.resolve(), run.resolve(), Path(d), i % 2 == 1)
            results.append(r)
            print(f"{run}: old {r.old.wall_s:6.2f} s wall {r.old.cpu_s:6.2f} s CPU, "
                  f"new {r.new.wall_s:6.2f} s wall {r.new.cpu_s:6.2f} s CPU, old/new "
                  f"{r.ratio_wall:5.2f} wall {r.ratio_cpu:5.2f} CPU, "
                  f"{'same bytes' if r.same else 'DIFFERENT: ' + ', '.join(r.differ)}",
                  flush=True)  # fmt: skip
    wall, cpu = spread([r.ratio_wall for r in results]), spread([r.ratio_cpu for r in results])
    same = all(r.same for r in results)
    print(f"{len(results)} runs; old/new wall min {wall['min']:.2f} median "
          f"{wall['median']:.2f} max {wall['max']:.2f}; CPU min {cpu['min']:.2f} median "
          f"{cpu['median']:.2f} max {cpu['max']:.2f}; outputs "
          f"{'all the same bytes' if same else 'DIFFER'}")  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps({
            "old": str(a.old), "new": str(a.new),
            "load": Path("/proc/loadavg").read_text().split()[:3],
            "ratio_wall": wall, "ratio_cpu": cpu, "all_same": same,
            "runs": [asdict(r) for r in results],
        }, indent=1) + "\n")  # fmt: skip
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
