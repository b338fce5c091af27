# Per run: logs → tables → metrics; per scenario: aggregates and figures.


rule metrics:
    """Logs → parquet tables → metrics.json, per run (an invalid run too: it is marked)."""
    input:
        RUN_METADATA,
    output:
        metrics=RUN_METRICS,
        tables=directory(RUN_TABLES),
    params:
        run_dir=lambda wc, input: str(Path(input[0]).parent),
    shell:
        "{PY:q} -m analysis.tables {params.run_dir:q} && {PY:q} -m analysis.metrics {params.run_dir:q}"


rule aggregate:
    """Per scenario: means with bootstrap CIs across repetitions; invalid runs excluded."""
    input:
        lambda wc: [f"{d}/{rundir.METRICS}" for d in run_dirs(wc.scenario)],
    output:
        csv=report(
            f"{RESULTS}/{{scenario}}/summary.csv",
            caption="../report/summary.rst",
            category="{scenario}",
        ),
        md=f"{RESULTS}/{{scenario}}/summary.md",
        ratios=f"{RESULTS}/{{scenario}}/ratios.csv",
        runs=f"{RESULTS}/{{scenario}}/runs.csv",
        exclusions=f"{RESULTS}/{{scenario}}/exclusions.csv",
    params:
        scenario_dir=lambda wc: f"{RESULTS}/{wc.scenario}",
    shell:
        "{PY:q} -m analysis.aggregate {params.scenario_dir:q}"


rule figures:
    """One figure per paper figure the scenario reproduces, PNG and PDF."""
    input:
        f"{RESULTS}/{{scenario}}/summary.csv",
    output:
        report(
            directory(f"{RESULTS}/{{scenario}}/figures"),
            patterns=["{name}.png"],
            caption="../report/figure.rst",
            category="{scenario}",
        ),
    params:
        scenario_dir=lambda wc: f"{RESULTS}/{wc.scenario}",
    shell:
        # the folder exists even when no run was valid (then it holds no figure)
        "mkdir -p {output:q} && {PY:q} -m analysis.figures {params.scenario_dir:q}"


rule predictor_map:
    """The predictor's regime map (endpoints/rise-sim, virtual time, ~2 min CPU): uplink
    loss × queue depth, w/ Pri vs both baselines. Not part of `all`; ask for it by name:
    `snakemake --cores 2 predictor_map`."""
    input:
        f"{RESULTS}/.build.done",
    output:
        grid=f"{RESULTS}/predictor/grid.jsonl",
        fig=f"{RESULTS}/predictor/predictor_map.png",
        pdf=f"{RESULTS}/predictor/predictor_map.pdf",
        caption=f"{RESULTS}/predictor/predictor_map.txt",
        cells=f"{RESULTS}/predictor/predictor_map.csv",
    params:
        out=f"{RESULTS}/predictor",
    shell:
        "target/release/rise-sim --grid --reps 2 > {output.grid:q}"
        " && {PY:q} -m priolab.workloads.rise.predictor_map {output.grid:q} {params.out:q}"
