# The run of one matrix point on physical testbed nodes, through Ansible (ansible/run.yml)
# instead of Mininet. The Snakefile includes this file instead of rules/run.smk when
#
#   snakemake --cores 1 --config target=testbed inventory=ansible/inventory.yml [scenario=...]
#
# Config keys (config/config.schema.yaml): target=testbed (selects this file), inventory (the
# Ansible inventory, required), ansible_args (optional extra arguments for ansible-playbook,
# space-separated, e.g. "-e priolab_link_backend=userspace"). The nodes are prepared once
# with site.yml; each run then lands in the run folder engine/rundir.py names, as a Mininet
# run does, so the metrics/aggregate/figures rules read it unchanged. Runs go one at a time:
# the testbed is one set of machines (resource `testbed`, 1 unless --resources says otherwise).
import os
import shlex

TESTBED_INVENTORY = config.get("inventory")
if not TESTBED_INVENTORY:
    raise ValueError("config key 'inventory' is required with target=testbed: "
                     "--config target=testbed inventory=ansible/inventory.yml")
TESTBED_ARGS = shlex.split(str(config.get("ansible_args") or ""))
ANSIBLE_PLAYBOOK = str(Path(workflow.basedir) / ".venv" / "bin" / "ansible-playbook")
if not Path(ANSIBLE_PLAYBOOK).exists():
    ANSIBLE_PLAYBOOK = "ansible-playbook"
ANSIBLE_CONFIG = str(Path(workflow.basedir) / "ansible" / "ansible.cfg")

if "testbed" not in workflow.global_resources:
    workflow.register_resource("testbed", 1)


rule testbed_site:
    """Prepare the nodes (packages, sysctls, offloads, chrony, binaries); site.yml is
    idempotent, so this is cheap to repeat after the Rust sources change."""
    input:
        sorted({stamp_of(runs[0].workload_kind) for _, runs, _ in SCENARIOS.values()}),
    output:
        touch(f"{RESULTS}/.testbed-site.done"),
    resources:
        testbed=1,
    log:
        f"{RESULTS}/logs/testbed-site.log",
    params:
        argv=[ANSIBLE_PLAYBOOK, "-i", TESTBED_INVENTORY, "ansible/site.yml",
              "-e", "priolab_build=false", *TESTBED_ARGS],
        ansible_config=ANSIBLE_CONFIG,
    script:
        "scripts/ansible.py"


rule run:
    """One matrix point on the testbed: ansible/run.yml with the point's coordinates."""
    input:
        rules.testbed_site.output,
        scenario_inputs,
    output:
        RUN_METADATA,
    wildcard_constraints:
        rep=r"\d+",
    resources:
        testbed=1,
    log:
        rundir.pattern(f"{RESULTS}/logs/testbed") + ".log",
    params:
        argv=lambda wc: [
            ANSIBLE_PLAYBOOK, "-i", TESTBED_INVENTORY, "ansible/run.yml",
            "-e", f"scenario={scenario_file(wc)}", "-e", f"results={Path(RESULTS).resolve()}",
            "-e", f"setting={wc.setting}", "-e", f"scheme={wc.scheme}",
            "-e", f"speed={wc.speed}", "-e", f"rep={wc.rep}", *TESTBED_ARGS,
        ],
        ansible_config=ANSIBLE_CONFIG,
    script:
        "scripts/ansible.py"
