# Build the Rust workspace; calibrate the link emulator once per machine.


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
        "{PY:q} -m priolab.cli calibrate --quick --json {output:q} > {log:q} 2>&1"
