"""Snakemake script of rules/run.smk: `priolab run-one` for one matrix point (argv list)."""

import subprocess
from pathlib import Path

sm = snakemake  # type: ignore[name-defined]  # noqa: F821 (injected by Snakemake)
wc = sm.wildcards
argv = [
    sm.params.python, "-m", "priolab.cli", "run-one", sm.params.file,
    "--setting", wc.setting, "--scheme", wc.scheme, "--speed", wc.speed, "--rep", wc.rep,
    "--out", str(Path(sm.output[0]).parent), "--site", sm.params.site,
]  # fmt: skip
if sm.params.backend:
    argv += ["--backend", sm.params.backend]
if int(sm.config.get("reps") or 0):  # reps=N ran the matrix with repetitions 1..N
    argv += ["--reps", str(int(sm.config["reps"]))]
subprocess.run(argv, check=True)
