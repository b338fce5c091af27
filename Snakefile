# priolab workflow: build → calibrate → run (one job per matrix point) → metrics → aggregate
# → figures → report.
#
#   snakemake --cores 2                                        every scenario in scenarios/
#   snakemake --cores 2 --config scenario=scenarios/quick.yaml one scenario
#   snakemake -n                                               the plan, nothing run
#   snakemake --report report.html                             one page: figures + tables
#
# Configuration: config/config.yaml (defaults), validated against config/config.schema.yaml
# with everything --config and profiles add. Rules live in rules/*.smk, their scripts in
# rules/scripts/; run-folder paths come from ground/rundir.py.
from snakemake.utils import validate


configfile: "config/config.yaml"


validate(config, "config/config.schema.yaml")


include: "rules/common.smk"
include: "rules/build.smk"


if TARGET == "testbed":

    include: "rules/testbed.smk"

else:

    include: "rules/run.smk"


include: "rules/analysis.smk"


# With a cluster executor (profiles/slurm) these run on the controller, not as jobs: the build
# (its binaries on the shared filesystem) and the steps that read a whole scenario's runs.
localrules:
    all,
    build,
    aggregate,
    figures,
    regime_map,
    rise_map,
    reproduction,
    book,


rule all:
    input:
        [f"{RESULTS}/{n}/summary.csv" for n in SCENARIOS],
        [f"{RESULTS}/{n}/figures" for n in SCENARIOS],
        # every scenario: the regime map with its real runs and the reproduction report too
        [f"{RESULTS}/REPRODUCTION.md"] if str(config["scenario"]) == "all" else [],
