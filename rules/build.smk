# Build the Rust workspace; calibrate the link emulator once per machine.


# the sim site needs one binary, priolab-sim, which links every sim endpoint and linkem's core;
# a real-time site the programs of its scenarios' workloads and linkem (so the quick RISE
# reproduction builds no roq, and needs no GStreamer)
from priolab.testbed import cargo_packages, needs

CARGO_PACKAGES = ("-p priolab-sim" if SITE == "sim" else
                  " ".join(cargo_packages(needs([f for f, _, _ in SCENARIOS.values()]))))


rule build:
    """Build the Rust workspace (endpoints and linkem; on the sim site only priolab-sim) once;
    again only if sources change."""
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
