# The run of one matrix point on this machine: `priolab run-one` (the engine's Mininet site).


def calibration_input(wildcards):
    return [CALIBRATION] if CALIBRATE else []


rule run:
    """One matrix point: `priolab run-one` into its parameter-encoded directory."""
    input:
        rules.build.output,
        calibration_input,
        scenario_inputs,
    output:
        RUN_METADATA,
    wildcard_constraints:
        rep=r"\d+",
    resources:
        netns=1,
    params:
        file=scenario_file,
        backend=BACKEND,
        python=PY,
    script:
        "scripts/run_one.py"
