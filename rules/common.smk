# Shared by every rule file: the configuration, the scenarios and their runs, path patterns.
import socket
import sys
from pathlib import Path

from snakemake.utils import validate

from ground import rundir
from priolab.engine.sim_spec import sim_check
from ground.errors import UserError
from priolab.scenario import expand, input_files, load, read_yaml

PY = sys.executable  # the venv's python runs every tool, activated or not
TARGET = config["target"]
SITE = config.get("site") or "mininet"  # sim: priolab-sim in virtual time (rules/run.smk)
# sim runs go to their own tree by default: a Mininet run folder must never count as a done
# sim run (or the reverse) because both have the same matrix coordinates
RESULTS = config["results"] or ("results-sim" if SITE == "sim" else "results")
# the two sites' trees side by side (the agreement table reads both): this run's, the other's default
SIM_RESULTS = RESULTS if SITE == "sim" else "results-sim"
MININET_RESULTS = "results" if SITE == "sim" else RESULTS
if SITE == "sim" and TARGET != "mininet":
    sys.exit(f"config: site=sim runs on this machine; it needs target=mininet, not {TARGET!r}")
BACKEND = config.get("backend") or ""
REPS = int(config.get("reps") or 0)  # 0: the files' repetitions; N: repetitions 1..N of each
CALIBRATE = str(config["calibrate"]).lower() in ("1", "true", "yes")
SCENARIO_SCHEMA = str(Path(workflow.basedir) / "scenarios" / "scenario.schema.json")

# Experiments share the machine's CPU and its network namespaces (Mininet node names are
# fixed), so runs go one at a time unless --resources netns=N says otherwise.
if "netns" not in workflow.global_resources:
    workflow.register_resource("netns", 1)


def load_scenarios():
    """name -> (file, runs, input files). The input files are the scenario's resolved file
    list (`priolab.scenario.input_files`): a run depends on them, and with scenario=all a
    scenario whose files are not all present (a dataset neither fetched nor in PRIOLAB_DATA:
    data/README.md), or on the sim site
    one that asks for what a sim run cannot do, is left out, and said so."""
    choice = str(config["scenario"])
    explicit = choice != "all"
    if choice == "agreement":  # the sim-vs-Mininet points (rule agreement)
        files = sorted(Path("scenarios", "agreement").glob("*.yaml"))
    elif explicit:  # files, or folders of them (scenarios/maps: the regime map's grids)
        files = [g for f in choice.split(",")
                 for g in (sorted(Path(f).glob("*.yaml")) if Path(f).is_dir() else [Path(f)])]
    else:
        files = sorted(p for p in Path("scenarios").glob("*.yaml") if p.name != "standin.yaml")
    out = {}
    for f in files:
        try:
            inputs = input_files(f)  # validates the model first: errors name file and key
            absent = [str(i) for i in inputs if not i.is_file()]
            if absent and not explicit:
                print(f"workflow: {f} left out, it reads absent files: {absent}", file=sys.stderr)
                continue
            sc = load(f)  # the full check: ranges, references, links resolved, traces read
            validate(read_yaml(f), SCENARIO_SCHEMA, set_default=False)  # the exported schema agrees
            if REPS:  # the agreement points' Mininet side (5 of 10), figures on sim (n = 10)
                sc = sc.model_copy(update={"repetitions": REPS})
            runs = expand(sc, f)
            if SITE == "sim":  # what a sim run cannot do, before any job starts
                try:
                    sim_check(runs, f, BACKEND or None)
                except UserError as e:
                    if explicit:
                        raise
                    print(f"workflow: {f} left out on the sim site: {': '.join(e.problems[0])}",
                          file=sys.stderr)
                    continue
            out[sc.name] = (f, runs, inputs)
        except UserError as e:  # the message priolab check prints: file, key, what is allowed
            print(f"{e.title}:\n{e}", file=sys.stderr)
            sys.exit(2)
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
