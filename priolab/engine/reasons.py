"""Moved to ground/reasons.py, below every package that reads run folders (netem, priolab,
analysis); this name keeps working and is the same module object."""

import sys

from ground import reasons

sys.modules[__name__] = reasons
