# Build the Rust programs a workload's runs use; calibrate the link emulator once per machine.
from priolab.evidence.digest import SIM_PROCESS, build_stamp, rust_roots
from priolab.workloads import WORKLOADS


def stamp_of(kind):
    """A workload's content-hashed build stamp on this site: its name carries the digest of
    the Rust sources its runs depend on (priolab/evidence/digest.py, `rust_digest`), so a
    change to one endpoint changes its workload's stamp only, and reruns only its runs."""
    return str(build_stamp(Path(RESULTS), kind, SITE, Path(workflow.basedir)))


def scenario_stamp(wildcards):
    """The build stamp of the scenario's workload (a run's input)."""
    return stamp_of(SCENARIOS[wildcards.scenario][1][0].workload_kind)


def cargo_packages(wildcards):
    """What a stamp's build compiles, the roots its digest is computed from: on the sim site
    the one binary, priolab-sim, which links every sim endpoint and linkem's core; on a
    real-time site the packages of the stamp's workload's programs and linkem (so the quick
    RISE reproduction builds no roq, and needs no GStreamer); on both, the crates the
    workload's analysis loads here (roq's scoring kernel, roq-score:
    priolab/workloads/roq/kernel.py)."""
    name = Path(wildcards.stamp).name + ".done"
    kinds = [k for k in WORKLOADS if Path(stamp_of(k)).name == name]
    if not kinds:
        raise ValueError(f"build stamp {name}: no workload's sources give this digest")
    analysis = list(getattr(WORKLOADS[kinds[0]], "analysis_crates", ()))
    if SITE == "sim":
        return " ".join(f"--package={p}" for p in [SIM_PROCESS, *analysis])
    roots, _ = rust_roots(Path(workflow.basedir), kinds[0], SITE)
    return " ".join(f"--package={p}" for p in roots)


rule build:
    """Build the Rust programs of the workload whose stamp is asked for (on the sim site only
    priolab-sim); cargo rebuilds only what changed."""
    output:
        touch(f"{RESULTS}/.build/{{stamp}}.done"),
    params:
        packages=cargo_packages,
    log:
        f"{RESULTS}/logs/build-{{stamp}}.log",
    shell:
        "cargo build --release {params.packages} --locked > {log} 2>&1"


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
