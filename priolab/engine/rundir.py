"""Moved to ground/rundir.py, below every package that reads run folders (netem, priolab,
analysis); this name keeps working and is the same module object."""

import sys

from ground import rundir

sys.modules[__name__] = rundir
