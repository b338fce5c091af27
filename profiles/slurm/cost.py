#!/usr/bin/env python3
"""What a scenario's matrix costs on a cluster, in CPU-hours, from sim runs already done.

    python profiles/slurm/cost.py RESULTS SCENARIO.yaml [SCENARIO.yaml ...]

RESULTS is a folder of finished sim runs (e.g. results-sim, or a sweep of scenarios/quick.yaml):
their metadata.json give the measured CPU seconds per virtual second (priolab-sim's own CPU,
`site.harness.cpu_s`, over `site.virtual_s`). Each SCENARIO's matrix is then priced as
runs x duration_s x that rate, plus runs x JOB_OVERHEAD_CPU_S (what one Slurm job costs beside
the run). Prints one line per scenario and the total.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from ground import rundir

JOB_OVERHEAD_CPU_S = 4.2
"""CPU seconds a Slurm job spends around its run, measured in parts on a 2-core machine
(docs/investigations/2026-11-26-slurm-cost.md): one job run by a local Snakemake (its
start-up, the workflow parsed, `priolab run-one` around a run of no cost) 2.4 s, plus the job
step's own Snakemake start-up (a dry run of the workflow) 1.8 s."""


@dataclass(frozen=True)
class Rate:
    runs: int
    virtual_s: float
    cpu_s: float

    @property
    def cpu_per_virtual_s(self) -> float:
        return self.cpu_s / self.virtual_s


def measured_rate(metas: list[dict]) -> Rate:
    """CPU per virtual second over the valid sim runs among `metas` (pure)."""
    sims = [m for m in metas if m.get("site", {}).get("kind") == "sim" and m.get("valid")]
    virtual = sum(float(m["site"]["virtual_s"]) for m in sims)
    cpu = sum(float(m["site"]["harness"]["cpu_s"]) for m in sims)
    if not sims or virtual <= 0:
        raise ValueError("no valid sim run with a virtual duration: nothing to measure")
    return Rate(len(sims), virtual, cpu)


def matrix_cpu_h(runs: int, duration_s: float, rate: Rate) -> float:
    """CPU-hours of `runs` runs of `duration_s` virtual seconds as Slurm jobs (pure)."""
    return runs * (duration_s * rate.cpu_per_virtual_s + JOB_OVERHEAD_CPU_S) / 3600.0


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    from priolab.scenario import expand, load  # the harness, only when run as a tool

    results = Path(argv[0])
    metas = [json.loads(f.read_text()) for f in sorted(results.rglob(rundir.METADATA))]
    try:
        rate = measured_rate(metas)
    except ValueError as e:
        print(f"{results}: {e}", file=sys.stderr)
        return 1
    print(f"measured: {rate.runs} sim runs, {rate.virtual_s:.0f} virtual s, "
          f"{rate.cpu_s:.1f} CPU s = {rate.cpu_per_virtual_s:.4f} CPU s per virtual s; "
          f"{JOB_OVERHEAD_CPU_S} CPU s per Slurm job")  # fmt: skip
    total = 0.0
    for arg in argv[1:]:
        f = Path(arg)
        runs = expand(load(f), f)
        cost = sum(matrix_cpu_h(1, r.duration_s, rate) for r in runs)
        total += cost
        print(f"{f}: {len(runs)} runs, {sum(r.duration_s for r in runs) / 3600:.2f} virtual h, "
              f"{cost:.2f} CPU-h")  # fmt: skip
    print(f"total: {total:.2f} CPU-h")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
