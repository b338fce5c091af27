# Build the Rust workspace; calibrate the link emulator once per machine.


# the sim site needs one binary, priolab-sim, which links every sim endpoint and linkem's core
CARGO_PACKAGES = "-p priolab-sim" if SITE == "sim" else "--workspace"


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
