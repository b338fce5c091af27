# Shared by every rule file: the configuration, the scenarios and their runs, path patterns.
import socket
import sys
from pathlib import Path

import yaml
from snakemake.utils import validate

from priolab.engine import rundir
from priolab.errors import ScenarioError
from priolab.scenario import expand, load

PY = sys.executable  # the venv's python runs every tool, activated or not
RESULTS = config["results"]
TARGET = config["target"]
BACKEND = config.get("backend") or ""
CALIBRATE = str(config["calibrate"]).lower() in ("1", "true", "yes")
SCENARIO_SCHEMA = str(Path(workflow.basedir) / "scenarios" / "scenario.schema.json")

# Experiments share the machine's CPU and its network namespaces (Mininet node names are
# fixed), so runs go one at a time unless --resources netns=N says otherwise.
if "netns" not in workflow.global_resources:
    workflow.register_resource("netns", 1)


def input_files(runs):
    """Every file the runs of a scenario read, as the resolved scenario names them: trace
    files of the link, file parameters of the workload."""
    files = set()
    for r in runs:
        for d in (r.link.uplink, r.link.downlink):
            if d.trace is not None:
                f = d.trace.file
                files.add(f if f.is_absolute() else (r.base_dir / f).resolve())
        for value in r.params.model_dump().values():
            if isinstance(value, Path):
                files.add(value if value.is_absolute() else (r.base_dir / value).resolve())
    return sorted(files)


def load_scenarios():
    """name -> (file, runs, input files). With scenario=all, a scenario whose input files are
    not all present (e.g. shared data absent) is left out, and said so."""
    choice = str(config["scenario"])
    explicit = choice != "all"
    if explicit:
        files = [Path(f) for f in choice.split(",")]
    else:
        files = sorted(p for p in Path("scenarios").glob("*.yaml") if p.name != "standin.yaml")
    out = {}
    for f in files:
        data = yaml.safe_load(f.read_text())
        validate(data, SCENARIO_SCHEMA, set_default=False)  # the exported schema
        if not explicit:
            # a scenario of "all" that reads absent files is skipped before the full check
            # (which would reject it for those very files)
            try:
                sc = load(f)
                runs = expand(sc, f)
            except ScenarioError as e:
                if not all(msg.startswith("file not found") for _, msg in e.problems):
                    raise
                absent = "; ".join(msg for _, msg in e.problems)
                print(f"workflow: {f} left out, it reads absent files: {absent}", file=sys.stderr)
                continue
        else:
            sc = load(f)  # the full check: ranges, references, files
            runs = expand(sc, f)
        out[sc.name] = (f, runs, input_files(runs))
    return out


SCENARIOS = load_scenarios()


def run_dirs(name):
    return [f"{RESULTS}/{r.rel_dir}" for r in SCENARIOS[name][1]]


def scenario_file(wildcards):
    return str(Path(SCENARIOS[wildcards.scenario][0]).resolve())


def scenario_inputs(wildcards):
    """The scenario file and every file its runs read: a changed trace reruns its runs."""
    name = wildcards.scenario
    return [str(SCENARIOS[name][0]), *map(str, SCENARIOS[name][2])]


RUN_METADATA = rundir.pattern(RESULTS, rundir.METADATA)  # one run's metadata.json
RUN_METRICS = rundir.pattern(RESULTS, rundir.METRICS)
RUN_TABLES = rundir.pattern(RESULTS, rundir.TABLES)
CALIBRATION = f"{RESULTS}/calibration-{socket.gethostname()}.json"
RUST_SOURCES = sorted(
    str(p) for d in ("endpoints", "netem/linkem") for p in Path(d).rglob("*.rs")
) + ["Cargo.toml", "Cargo.lock"]
