"""Where things are: the repository root and the binaries it builds."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# The two builds of priolab-sim (endpoints/sim): `cargo build --release` (what `make test`
# builds) and `cargo build --profile sim -p priolab-sim` (whole-program LTO: the same code,
# less CPU per run; a full second compile, so opt-in).
SIM_RELEASE = Path("target") / "release" / "priolab-sim"
SIM_FAST = Path("target") / "sim" / "priolab-sim"


def sim_binary() -> Path:
    """`priolab-sim` (endpoints/sim): one sim run in one process (engine/sites/sim.py).
    PRIOLAB_SIM names another (a test's fake of its contract, a build to compare); else the
    newer of the two builds (`newest_sim_build`)."""
    named = os.environ.get("PRIOLAB_SIM")
    return Path(named) if named else newest_sim_build(REPO_ROOT)


def newest_sim_build(root: Path) -> Path:
    """The `sim` profile's build if it exists and is no older than the release build, else the
    release build (which may not exist: the caller reports that). A fast build made before
    the code changed and the release build was remade is older, and is not run."""
    release, fast = root / SIM_RELEASE, root / SIM_FAST
    try:
        fast_mtime = fast.stat().st_mtime
    except OSError:
        return release
    try:
        return fast if fast_mtime >= release.stat().st_mtime else release
    except OSError:
        return fast
