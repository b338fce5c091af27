"""The run engine: one shape for every place an experiment runs.

`rundir` (ground/rundir.py) owns the run-directory layout; `plan` and `report` are the typed
run contract (the plan, what each node reports); `judge` turns them into the verdict and
metadata.json; `agent` (standard library only) executes one node's share of a plan, on a
Mininet host and on a testbed node alike.
"""
