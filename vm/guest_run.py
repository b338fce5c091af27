"""Runs inside the VM (Debian's /usr/bin/python3, standard library only): executes the
command list of JOB_DIR/job.json one command after another and writes JOB_DIR/results.json
after each, so a job cut short by the host's timeout still reports what finished.

job.json: {"commands": [{"argv": [...], "timeout_s": 60, "cwd": "/path" | null,
                         "env": {"K": "V"}}, ...],
           "mounts": [{"tag": "x0", "path": "/host/path"}, ...]}
`mounts` are more 9p shares (vm/run.py), mounted read-write at their host paths first.
Each command sees PRIOLAB_IN_VM=1 and PRIOLAB_VM_OUT=JOB_DIR/out (files there reach the host).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

OUTPUT_LIMIT_CHARS = 200_000
NINEP_OPTS = "trans=virtio,version=9p2000.L,msize=262144"
"""As vm/guest/priolab-job mounts the fixed shares."""


def _tail(text: str) -> str:
    return text if len(text) <= OUTPUT_LIMIT_CHARS else text[-OUTPUT_LIMIT_CHARS:]


def uptime_s() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


def mount_shares(mounts: list[dict]) -> list[str]:
    """Mount each extra 9p share at its path; returns the errors (reported, not fatal)."""
    errors = []
    for m in mounts:
        Path(m["path"]).mkdir(parents=True, exist_ok=True)
        res = subprocess.run(
            ["mount", "-t", "9p", "-o", f"{NINEP_OPTS},cache=none", m["tag"], m["path"]],
            capture_output=True, text=True,
        )  # fmt: skip
        if res.returncode != 0:
            errors.append(f"mount {m['tag']} at {m['path']}: {res.stderr.strip()}")
    return errors


def run_job(job_dir: Path) -> int:
    job = json.loads((job_dir / "job.json").read_text())
    out_dir = job_dir / "out"
    out_dir.mkdir(exist_ok=True)
    env = dict(os.environ, PRIOLAB_IN_VM="1", PRIOLAB_VM_OUT=str(out_dir))
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    report: dict = {"boot_s": uptime_s(), "kernel": os.uname().release, "results": []}
    report["mount_errors"] = mount_shares(job.get("mounts", []))
    results_path = job_dir / "results.json"
    _write(results_path, report)  # the host learns the boot time now (its budget scales by it)
    for cmd in job["commands"]:
        t0 = time.monotonic()
        entry: dict = {"argv": cmd["argv"]}
        try:
            res = subprocess.run(
                cmd["argv"],
                cwd=cmd.get("cwd"),
                env=env | cmd.get("env", {}),
                capture_output=True,
                text=True,
                errors="replace",
                timeout=cmd.get("timeout_s"),
            )
            entry |= {
                "rc": res.returncode,
                "stdout": _tail(res.stdout),
                "stderr": _tail(res.stderr),
            }
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
            entry |= {"rc": None, "timeout": True, "stdout": _tail(out or ""), "stderr": ""}
        except OSError as e:
            entry |= {"rc": None, "stdout": "", "stderr": f"cannot start: {e}"}
        entry["duration_s"] = round(time.monotonic() - t0, 3)
        report["results"].append(entry)
        report["uptime_s"] = uptime_s()
        _write(results_path, report)
    return 0


def _write(path: Path, report: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=1))
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(run_job(Path(sys.argv[1])))
