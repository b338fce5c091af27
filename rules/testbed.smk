# The run of one matrix point on physical testbed nodes, through Ansible (ansible/run.yml)
# instead of Mininet. The Snakefile includes this file instead of its Mininet `run` rule when
#
#   snakemake --cores 1 --config target=testbed inventory=ansible/inventory.yml [scenario=...]
#
# Config keys: target=testbed (selects this file), inventory (the Ansible inventory, required),
# ansible_args (optional extra arguments for ansible-playbook, space-separated, e.g.
# "-e priolab_link_backend=userspace"). The nodes are prepared once with site.yml; each run
# then lands in the same results/<scenario>/<setting>/<scheme>/<speed>/r<rep>/ as a Mininet
# run, so the metrics/aggregate/figures rules read it unchanged. Runs go one at a time: the
# testbed is one set of machines (resource `testbed`, 1 unless --resources says otherwise).
import os
import shlex

TESTBED_INVENTORY = config.get("inventory")
if not TESTBED_INVENTORY:
    raise ValueError("config key 'inventory' is required with target=testbed: "
                     "--config target=testbed inventory=ansible/inventory.yml")
TESTBED_ARGS = shlex.split(str(config.get("ansible_args", "")))
ANSIBLE_PLAYBOOK = str(Path(workflow.basedir) / ".venv" / "bin" / "ansible-playbook")
if not Path(ANSIBLE_PLAYBOOK).exists():
    ANSIBLE_PLAYBOOK = "ansible-playbook"
ANSIBLE_ENV = {**os.environ, "ANSIBLE_CONFIG": str(Path(workflow.basedir) / "ansible" / "ansible.cfg")}

if "testbed" not in workflow.global_resources:
    workflow.register_resource("testbed", 1)


rule testbed_site:
    """Prepare the nodes (packages, sysctls, offloads, chrony, binaries); site.yml is
    idempotent, so this is cheap to repeat after the Rust sources change."""
    input:
        rules.build.output,
    output:
        touch(f"{RESULTS}/.testbed-site.done"),
    resources:
        testbed=1,
    log:
        f"{RESULTS}/logs/testbed-site.log",
    run:
        import subprocess

        with open(log[0], "w") as f:
            subprocess.run(
                [ANSIBLE_PLAYBOOK, "-i", TESTBED_INVENTORY, "ansible/site.yml",
                 "-e", "priolab_build=false", *TESTBED_ARGS],
                check=True, stdout=f, stderr=subprocess.STDOUT, env=ANSIBLE_ENV,
            )


rule run:
    """One matrix point on the testbed: ansible/run.yml with the point's coordinates."""
    input:
        rules.testbed_site.output,
    output:
        RUN_METADATA,
    wildcard_constraints:
        rep=r"\d+",
    resources:
        testbed=1,
    params:
        file=lambda wc: str(Path(SCENARIOS[wc.scenario][0]).resolve()),
    log:
        rundir.pattern(f"{RESULTS}/logs/testbed") + ".log",
    run:
        import subprocess

        with open(log[0], "w") as f:
            subprocess.run(
                [ANSIBLE_PLAYBOOK, "-i", TESTBED_INVENTORY, "ansible/run.yml",
                 "-e", f"scenario={params.file}", "-e", f"results={Path(RESULTS).resolve()}",
                 "-e", f"setting={wildcards.setting}", "-e", f"scheme={wildcards.scheme}",
                 "-e", f"speed={wildcards.speed}", "-e", f"rep={wildcards.rep}", *TESTBED_ARGS],
                check=True, stdout=f, stderr=subprocess.STDOUT, env=ANSIBLE_ENV,
            )
