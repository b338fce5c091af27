# Build the Rust workspace; calibrate the link emulator once per machine.


# the sim site needs one binary, priolab-sim, which links every sim endpoint and linkem's core;
# a real-time site the programs of its scenarios' workloads and linkem (so the quick RISE
# reproduction builds no roq, and needs no GStreamer); every site what its scenarios' analyses
# load here (roq's scoring kernel, roq-score: priolab/workloads/roq/kernel.py)
from priolab.testbed import analysis_crates, build_packages

_SCENARIO_FILES = [f for f, _, _ in SCENARIOS.values()]
CARGO_PACKAGES = " ".join(
    ["--package=priolab-sim", *(f"--package={c}" for c in analysis_crates(_SCENARIO_FILES))]
    if SITE == "sim" else build_packages(_SCENARIO_FILES)
)


rule build:
    """Build what the scenarios need (their endpoints and linkem, or on the sim site
    priolab-sim; and their analyses' crates) once; again only if sources change."""
    input:
        RUST_SOURCES,
    output:
        touch(f"{RESULTS}/.build.done"),
    log:
        f"{RESULTS}/logs/build.log",
    shell:
        "cargo build --release {CARGO_PACKAGES} --locked > {log} 2>&1"


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
        "{PY:q} -m priolab.cli calibrate --quick --json {output:q} > {log:q} 2>&1"
