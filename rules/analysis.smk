# Per run: logs → tables → metrics; per scenario: aggregates and figures.
from priolab.workloads.rise import regime_map as regime_map_module
from priolab.workloads.rise import rise_map as rise_map_module


rule metrics:
    """Logs → parquet tables → metrics.json and figure-data.json, per run (an invalid run too:
    it is marked)."""
    input:
        RUN_METADATA,
    output:
        metrics=RUN_METRICS,
        figure_data=RUN_FIGURE_DATA,
        tables=directory(RUN_TABLES),
    params:
        run_dir=lambda wc, input: str(Path(input[0]).parent),
    shell:
        "{PY:q} -m analysis.tables {params.run_dir:q} && {PY:q} -m analysis.metrics {params.run_dir:q}"


rule evidence_add:
    """Add every run of one scenario (valid or not) to the evidence store: `priolab evidence
    add` (evidence/README.md), the only way runs enter evidence/."""
    input:
        lambda wc: [f"{d}/{rundir.METRICS}" for d in run_dirs(wc.scenario)],
    output:
        touch(f"{RESULTS}/{{scenario}}/.evidence-added"),
    params:
        results=RESULTS,
    shell:
        "{PY:q} -m priolab.cli evidence add {params.results:q} --scenario {wildcards.scenario:q}"


rule evidence:
    """Every loaded scenario's runs into the evidence store. Not part of `all`; by name:
    `snakemake --cores 2 evidence --config site=sim scenario=scenarios/quick.yaml`."""
    input:
        [f"{RESULTS}/{n}/.evidence-added" for n in SCENARIOS],


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


REGIME_MAP_SCENARIO = regime_map_module.REGIME_MAP_SCENARIO  # scenarios/maps/rise-loss-queue.yaml
# The regime map is a sim sweep (252 runs): where this invocation does not draw it, rise_map
# and the reproduction report on either site read the sim tree's cells.
REGIME_MAP_CELLS = f"{SIM_RESULTS}/regime/regime_map.csv"


def regime_map_runs(wildcards):
    if REGIME_MAP_SCENARIO in SCENARIOS:
        return f"{RESULTS}/{REGIME_MAP_SCENARIO}/runs.csv"
    if SITE == "sim" and Path(REGIME_MAP_CELLS).is_file():
        return []  # drawn before, from runs this invocation did not load: kept as it is
    raise ValueError(
        f"regime_map draws scenario {REGIME_MAP_SCENARIO!r} (scenarios/maps/"
        "rise-loss-queue.yaml), which this invocation did not load: add "
        "`--config site=sim scenario=scenarios/maps`"
    )


def regime_map_cells(wildcards):
    """The regime map's cells for rise_map and the report: drawn in this invocation when it
    loaded the map's scenario, else the sim tree's if they are there, else none (the figure
    and the report then name the command that draws them)."""
    if REGIME_MAP_SCENARIO in SCENARIOS:
        return [rules.regime_map.output.cells]
    return [REGIME_MAP_CELLS] if Path(REGIME_MAP_CELLS).is_file() else []


def cells_option(wildcards, input):
    """`--cells FILE` when the regime map's cells are an input, else nothing."""
    cells = [input.cells] if isinstance(input.cells, str) else list(input.cells)
    return ["--cells", *cells] if cells else []


rule regime_map:
    """The regime map (issue 22 item 9): RISE's gain over uplink loss × queue depth, cells and
    figure, from the real endpoints' runs of scenarios/maps/rise-loss-queue.yaml (the file
    that owns the map's axes) on the sim site. Not part of `all`; by name:
    `snakemake --cores 2 regime_map --config site=sim scenario=scenarios/maps`."""
    input:
        regime_map_runs,
    output:
        cells=f"{RESULTS}/regime/regime_map.csv",
        fig=f"{RESULTS}/regime/regime_map.png",
        pdf=f"{RESULTS}/regime/regime_map.pdf",
        caption=f"{RESULTS}/regime/regime_map.txt",
    params:
        scenario_dir=f"{RESULTS}/{REGIME_MAP_SCENARIO}",
        out=f"{RESULTS}/regime",
    shell:
        "{PY:q} -m priolab.workloads.rise.regime_map {params.scenario_dir:q} {params.out:q}"


# The scenarios the regime map and the reproduction report read, where loaded (`scenario=all`
# or a list naming them): priolab/workloads/rise/rise_map.py's REPORT_SCENARIOS.
REPORT_SCENARIOS = [n for n in rise_map_module.REPORT_SCENARIOS if n in SCENARIOS]


rule rise_map:
    """The regime map with the real runs on it: the regime map's ratios over loss × queue
    depth (regime_map_cells), and each loaded report scenario's settings that lie on the
    map's axes, with CIs. By name:
    `snakemake --cores 2 rise_map --config scenario=scenarios/quick.yaml,...`."""
    input:
        cells=regime_map_cells,
        runs=[f"{RESULTS}/{n}/runs.csv" for n in REPORT_SCENARIOS],
    output:
        fig=f"{RESULTS}/map/rise_map.png",
        pdf=f"{RESULTS}/map/rise_map.pdf",
        caption=f"{RESULTS}/map/rise_map.txt",
        points=f"{RESULTS}/map/rise_map_points.csv",
    params:
        out=f"{RESULTS}/map",
        dirs=[f"{RESULTS}/{n}" for n in REPORT_SCENARIOS],
        cells=cells_option,
    shell:
        "{PY:q} -m priolab.workloads.rise.rise_map {params.cells:q} {params.out:q} {params.dirs:q}"


rule reproduction:
    """REPRODUCTION.md: each claim of the paper (Fig. 5, 6, 8, 9, 10), priolab's number with
    its CI on each path, the regime and the explanation, from the loaded report scenarios'
    runs and the map. The RISE results page (`snakemake book`) embeds the same report."""
    input:
        points=rules.rise_map.output.points,
        cells=regime_map_cells,
        runs=[f"{RESULTS}/{n}/runs.csv" for n in REPORT_SCENARIOS],
    output:
        f"{RESULTS}/REPRODUCTION.md",
    params:
        dirs=[f"{RESULTS}/{n}" for n in REPORT_SCENARIOS],
        cells=cells_option,
    shell:
        "{PY:q} -m priolab.workloads.rise.reproduction --out {output:q} --points {input.points:q}"
        " {params.cells:q} {params.dirs:q}"


rule agreement:
    """Sim against Mininet (issue 22 item 8): the key metric per agreement point (scenarios/
    agreement/) and site, n, and the ratio sim ÷ Mininet with its bootstrap CI, from both
    trees (MININET_RESULTS, SIM_RESULTS): book/agreement.py, the generator of the
    results book's agreement page. Runs this site's side first; the other site's runs are read
    as they are. Not part of `all`:
        snakemake --cores 2 agreement --config site=sim scenario=agreement   (sim side)
        snakemake --cores 2 agreement --config scenario=agreement reps=5 (Mininet side:
            5 of the files' 10 repetitions, as issue 22 asks)"""
    input:
        [f"{RESULTS}/{n}/runs.csv" for n, (f, _, _) in SCENARIOS.items()
         if Path(f).parent.name == "agreement"],
        # the other site's runs, when aggregated: a new one rebuilds the table
        [p for n, (f, _, _) in SCENARIOS.items() if Path(f).parent.name == "agreement"
         for p in [f"{SIM_RESULTS if SITE != 'sim' else MININET_RESULTS}/{n}/runs.csv"]
         if Path(p).is_file()],
    output:
        md=f"{RESULTS}/agreement.md",
        csv=f"{RESULTS}/agreement.csv",
    params:
        mininet=MININET_RESULTS,
        sim=SIM_RESULTS,
    shell:
        "{PY:q} -m book.agreement --mininet {params.mininet:q} --sim {params.sim:q}"
        " --md {output.md:q} --csv {output.csv:q}"


rule book:
    """The generated pages of the documentation site (book/): one results page per
    paper, the sim-vs-Mininet agreement page, the results' front page and one reference page
    per workload, into docs/results/ and docs/workloads/. Reads the evidence store's records
    alone (evidence/: runs enter it by `priolab evidence add`, rule evidence), never a results
    tree, and starts no run; with no records, each page says so and names the commands that
    make them. By name, always rebuilt: `snakemake --cores 1 --force book` (`make docs`)."""
    output:
        directory("docs/results"),
        directory("docs/workloads"),
    shell:
        "{PY:q} -m book --out docs"
