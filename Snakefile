# priolab workflow: build → calibrate → run (one job per matrix point) → metrics → aggregate
# → figures → report.
#
#   snakemake --cores 2                                        every scenario in scenarios/
#   snakemake --cores 2 --config scenario=scenarios/quick.yaml one scenario
#   snakemake -n                                               the plan, nothing run
#   snakemake --report report.html                             one page: figures + tables
#
# Config keys (all optional): scenario (a file, a comma-separated list, or "all"),
# results (folder, default results), backend (auto|tc|userspace), calibrate (true|false),
# target (mininet|testbed; testbed runs through Ansible, see ansible/README.md).

import socket
import sys
from pathlib import Path

import yaml
from snakemake.utils import validate

from priolab.engine import rundir
from priolab.scenario import expand, load

PY = sys.executable  # the venv's python runs every tool, activated or not
RESULTS = config.get("results", "results")
TARGET = config.get("target", "mininet")
BACKEND = config.get("backend", "")
CALIBRATE = str(config.get("calibrate", True)).lower() in ("1", "true", "yes")
SCHEMA = "scenarios/scenario.schema.json"
SHARED_DATA = Path(workflow.basedir).parent / "shared" / "data"

# Experiments share the machine's CPU and its network namespaces (Mininet node names are
# fixed), so runs go one at a time unless --resources netns=N says otherwise.
if "netns" not in workflow.global_resources:
    workflow.register_resource("netns", 1)


def scenario_files():
    choice = str(config.get("scenario", "all"))
    if choice == "all":
        files = sorted(p for p in Path("scenarios").glob("*.yaml") if p.name != "standin.yaml")
        # scenarios that replay ../shared/data run only where that folder is present
        return [f for f in files if "shared/data" not in f.read_text() or SHARED_DATA.is_dir()]
    return [Path(f) for f in choice.split(",")]


SCENARIOS = {}  # name -> (file, runs)
for f in scenario_files():
    validate(yaml.safe_load(f.read_text()), SCHEMA, set_default=False)  # exported schema
    sc = load(f)  # the full check: ranges, references, files
    SCENARIOS[sc.name] = (f, expand(sc, f))


def run_dirs(name):
    return [f"{RESULTS}/{r.rel_dir}" for r in SCENARIOS[name][1]]


RUN_METADATA = rundir.pattern(RESULTS, rundir.METADATA)  # one run's metadata.json
RUN_METRICS = rundir.pattern(RESULTS, rundir.METRICS)


CALIBRATION = f"{RESULTS}/calibration-{socket.gethostname()}.json"
RUST_SOURCES = sorted(
    str(p) for d in ("endpoints", "netem/linkem") for p in Path(d).rglob("*.rs")
) + ["Cargo.toml", "Cargo.lock"]


rule all:
    input:
        [f"{RESULTS}/{n}/summary.csv" for n in SCENARIOS],
        [f"{RESULTS}/{n}/figures" for n in SCENARIOS],


rule build:
    """Build the Rust workspace (endpoints and linkem) once; again only if sources change."""
    input:
        RUST_SOURCES,
    output:
        touch(f"{RESULTS}/.build.done"),
    log:
        f"{RESULTS}/logs/build.log",
    shell:
        "cargo build --release --workspace --locked > {log} 2>&1"


rule calibrate:
    """Fidelity of the link emulator on this machine, once, kept beside the results."""
    input:
        rules.build.output,
    output:
        CALIBRATION,
    resources:
        netns=1,
    log:
        f"{RESULTS}/logs/calibrate.log",
    shell:
        "{PY} -m priolab.cli calibrate --quick --json {output} > {log} 2>&1"


def calibration_input(wildcards):
    return [CALIBRATION] if CALIBRATE and TARGET == "mininet" else []


if TARGET == "testbed":

    include: "rules/testbed.smk"

else:

    rule run:
        """One matrix point: `priolab run-one` into its parameter-encoded directory."""
        input:
            rules.build.output,
            calibration_input,
        output:
            RUN_METADATA,
        wildcard_constraints:
            rep=r"\d+",
        resources:
            netns=1,
        params:
            file=lambda wc: str(SCENARIOS[wc.scenario][0]),
            out=lambda wc, output: str(Path(output[0]).parent),
            backend=["--backend", BACKEND] if BACKEND else [],
        run:
            import subprocess

            subprocess.run(
                [PY, "-m", "priolab.cli", "run-one", params.file, "--setting", wildcards.setting,
                 "--scheme", wildcards.scheme, "--speed", wildcards.speed,
                 "--rep", wildcards.rep, "--out", params.out, *params.backend],
                check=True,
            )


rule metrics:
    """Logs → parquet tables → metrics.json, per run (an invalid run too: it is marked)."""
    input:
        RUN_METADATA,
    output:
        RUN_METRICS,
    params:
        run_dir=lambda wc, input: str(Path(input[0]).parent),
    shell:
        "{PY} -m analysis.tables {params.run_dir} && {PY} -m analysis.metrics {params.run_dir}"


rule aggregate:
    """Per scenario: means with bootstrap CIs across repetitions; invalid runs excluded."""
    input:
        lambda wc: [f"{d}/{rundir.METRICS}" for d in run_dirs(wc.scenario)],
    output:
        csv=report(
            f"{RESULTS}/{{scenario}}/summary.csv",
            caption="report/summary.rst",
            category="{scenario}",
        ),
        md=f"{RESULTS}/{{scenario}}/summary.md",
    shell:
        "{PY} -m analysis.aggregate {RESULTS}/{wildcards.scenario}"


rule predictor_map:
    """The predictor's regime map (endpoints/rise-sim, virtual time, ~2 min CPU): uplink
    loss × queue depth, w/ Pri vs both baselines. Not part of `all`; ask for it by name:
    `snakemake --cores 2 predictor_map`."""
    input:
        f"{RESULTS}/.build.done",
    output:
        grid=f"{RESULTS}/predictor/grid.jsonl",
        fig=f"{RESULTS}/predictor/predictor_map.png",
    params:
        out=f"{RESULTS}/predictor",
    shell:
        "target/release/rise-sim --grid --reps 2 > {output.grid}"
        " && {PY} -m analysis.predictor_map {output.grid} {params.out}"


rule figures:
    """One figure per paper figure the scenario reproduces, PNG and PDF."""
    input:
        f"{RESULTS}/{{scenario}}/summary.csv",
    output:
        report(
            directory(f"{RESULTS}/{{scenario}}/figures"),
            patterns=["{name}.png"],
            caption="report/figure.rst",
            category="{scenario}",
        ),
    shell:
        # the folder exists even when no run was valid (then it holds no figure)
        "mkdir -p {output} && {PY} -m analysis.figures {RESULTS}/{wildcards.scenario}"
