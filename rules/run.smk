# The run of one matrix point on this machine: `priolab run-one` on the engine's Mininet site,
# or with site=sim on the sim site (priolab-sim, virtual time). Mininet runs take the `netns`
# resource (one at a time, common.smk); sim runs take none and go --cores N at once.


def calibration_input(wildcards):
    return [CALIBRATION] if CALIBRATE and SITE == "mininet" else []


rule run:
    """One matrix point: `priolab run-one --site SITE` into its parameter-encoded directory."""
    input:
        scenario_stamp,
        calibration_input,
        scenario_inputs,
    output:
        RUN_METADATA,
    wildcard_constraints:
        rep=r"\d+",
    resources:
        netns=0 if SITE == "sim" else 1,
        # on a cluster (profiles/slurm): a sim run is one single-threaded process, the default
        # 1 CPU; a Mininet run needs a node to itself (its namespaces, the CPU rule) and root
        slurm_extra="" if SITE == "sim" else "--exclusive",
    params:
        file=scenario_file,
        backend=BACKEND,
        python=PY,
        site=SITE,
    script:
        "scripts/run_one.py"
