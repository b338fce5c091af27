"""Where things are: the repository root and the binaries it builds."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def sim_binary() -> Path:
    """`priolab-sim` (endpoints/sim): one sim run in one process (engine/sites/sim.py).
    PRIOLAB_SIM names another (a test's fake of its contract)."""
    return Path(
        os.environ.get("PRIOLAB_SIM", str(REPO_ROOT / "target" / "release" / "priolab-sim"))
    )
