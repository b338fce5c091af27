"""Provenance for metadata.json: git commit and dirty flag, tool versions, the host."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from priolab.paths import REPO_ROOT


def _out(argv: list[str], cwd: Path | None = None) -> str | None:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=10, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0] if text else None


def _dirty(repo: Path) -> bool | None:
    """Whether tracked files differ from the commit; None where git cannot say."""
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, cwd=repo, check=False, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return bool(status.stdout.strip()) if status.returncode == 0 else None


def git_info() -> dict[str, Any]:
    """Commit and dirty flag; None for each where git is missing or this is no checkout."""
    commit = _out(["git", "rev-parse", "HEAD"], REPO_ROOT)
    return {"commit": commit if commit and len(commit) == 40 else None, "dirty": _dirty(REPO_ROOT)}


def version_text(repo: Path = REPO_ROOT) -> str:
    """What `priolab --version` prints: the version (priolab/__init__.py) and the commit it
    runs from, from git where `repo` is a checkout (a clone or a worktree: it has `.git`),
    "unknown" otherwise (an installed copy, a tarball, no git)."""
    from priolab import __version__

    commit = None
    if (repo / ".git").exists():
        found = _out(["git", "rev-parse", "HEAD"], repo)
        commit = found if found and len(found) == 40 else None
    if commit is None:
        return f"priolab {__version__} (commit unknown)"
    state = {None: ", working tree state unknown", True: ", with uncommitted changes"}
    return f"priolab {__version__} (commit {commit}{state.get(_dirty(repo), '')})"


def versions(extra: list[list[str]] | None = None) -> dict[str, str | None]:
    out: dict[str, str | None] = {
        "python": sys.version.split()[0],
        "kernel": platform.release(),
    }
    try:
        import mininet.net

        out["mininet"] = getattr(mininet.net, "VERSION", None)
    except ImportError:
        out["mininet"] = None
    for argv in [["ip", "-V"], ["tc", "-V"], ["ethtool", "--version"], *(extra or [])]:
        out[Path(argv[0]).name] = _out(argv)
    return out


def cpu_model() -> str | None:
    """The CPU's model name as /proc/cpuinfo gives it (None where it gives none)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "model name":
            return value.strip()
    return None


def host_info() -> dict[str, Any]:
    import os

    return {"hostname": platform.node(), "cpus": os.cpu_count(), "cpu_model": cpu_model()}


# What a Slurm job knows of itself (sbatch/srun set these in the job's environment).
SLURM_VARS = {
    "node": "SLURMD_NODENAME",
    "job_id": "SLURM_JOB_ID",
    "cluster": "SLURM_CLUSTER_NAME",
    "partition": "SLURM_JOB_PARTITION",
    "restart_count": "SLURM_RESTART_COUNT",
}


def slurm_info(env: dict[str, str] | None = None) -> dict[str, str | None] | None:
    """The Slurm node and job a run ran in (profiles/slurm), or None outside Slurm."""
    import os

    env = dict(os.environ) if env is None else env
    if "SLURM_JOB_ID" not in env:
        return None
    return {key: env.get(var) for key, var in SLURM_VARS.items()}
