"""The run of one experiment on this machine: the engine's Mininet site.

`priolab run-one` and the Snakefile's `run` rule call `run_one`; the engine
(priolab/engine/: plan, agent, judge, rundir) does the work, the same way on every site.
"""

from __future__ import annotations

from priolab.engine.sites.mininet import RunAborted, run_one

__all__ = ["RunAborted", "run_one"]
