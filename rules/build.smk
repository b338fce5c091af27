# Build the Rust workspace; calibrate the link emulator once per machine.
from priolab.evidence.digest import build_stamp


# the sim site needs one binary, priolab-sim, which links every sim endpoint and linkem's core
CARGO_PACKAGES = "-p priolab-sim" if SITE == "sim" else "--workspace"


def stamp_of(kind):
    """A workload's content-hashed build stamp on this site: its name carries the digest of
    the Rust sources its runs depend on (priolab/evidence/digest.py, `rust_digest`), so a
    change to one endpoint changes its workload's stamp only, and reruns only its runs."""
    return str(build_stamp(Path(RESULTS), kind, SITE, Path(workflow.basedir)))


def scenario_stamp(wildcards):
    """The build stamp of the scenario's workload (a run's input)."""
    return stamp_of(SCENARIOS[wildcards.scenario][1][0].workload_kind)


rule build:
    """Build the Rust workspace (endpoints and linkem; on the sim site only priolab-sim) for
    the workload whose stamp is asked for; cargo rebuilds only what changed."""
    output:
        touch(f"{RESULTS}/.build/{{stamp}}.done"),
    log:
        f"{RESULTS}/logs/build-{{stamp}}.log",
    shell:
        "cargo build --release {CARGO_PACKAGES} --locked > {log} 2>&1"


rule calibrate:
    """Fidelity of the link emulator on this machine, once, kept beside the results."""
    input:
        stamp_of("probe"),
    output:
        CALIBRATION,
    resources:
        netns=1,
    log:
        f"{RESULTS}/logs/calibrate.log",
    shell:
        "{PY:q} -m priolab.cli calibrate --quick --json {output:q} > {log:q} 2>&1"
