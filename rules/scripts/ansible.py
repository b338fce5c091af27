"""Snakemake script of rules/testbed.smk: one ansible-playbook call (argv list), logged."""

import os
import subprocess

sm = snakemake  # type: ignore[name-defined]  # noqa: F821 (injected by Snakemake)
env = {**os.environ, "ANSIBLE_CONFIG": sm.params.ansible_config}
with open(sm.log[0], "w") as f:
    subprocess.run(sm.params.argv, check=True, stdout=f, stderr=subprocess.STDOUT, env=env)
