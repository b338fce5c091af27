"""`priolab vm`: build the image, show its state, run commands or the in-VM tests inside it.

Every boot uses both cores: run `priolab vm run|test` under the machine-wide netns lock
(`flock /tmp/priolab-netns.lock priolab vm test`), as every real network experiment is."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
IN_VM_TESTS = "vm/intests"
"""The pytest files that run inside the VM (never collected on the host)."""


def in_vm_pytest_argv(paths: list[str]) -> list[str]:
    """The command the VM runs for the in-VM tests: the checkout's venv pytest (the checkout is
    shared at its host path), JUnit XML into the job's out/ folder ($PRIOLAB_VM_OUT)."""
    script = (
        'cd "$1" && shift && exec .venv/bin/python -m pytest -q -rA -p no:cacheprovider '
        '--junitxml="$PRIOLAB_VM_OUT/junit.xml" "$@"'
    )
    return ["/bin/sh", "-c", script, "sh", str(REPO), *paths]


def _status(args: argparse.Namespace) -> int:
    from vm.image import cache_root, cached_image, recipe_hash, why_unavailable

    img = cached_image()
    info: dict[str, Any] = {
        "cache": str(cache_root()),
        "recipe_sha256": recipe_hash(),
        "image": str(img.dir) if img else None,
        "unavailable": why_unavailable(),
    }
    if img:
        info["rootfs_mb"] = round(img.rootfs.stat().st_size / 2**20)
    print(json.dumps(info, indent=2))
    return 0


def _build(args: argparse.Namespace) -> int:
    from vm.image import VmUnavailable, build

    try:
        img = build(force=args.force, mirror=args.mirror)
    except VmUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(img.dir)
    return 0


def _run(args: argparse.Namespace, argvs: list[list[str]]) -> int:
    from ground import machine_lock
    from vm.run import Command, VmUnavailable, run_job

    machine_lock.hold_until_exit("priolab vm")  # the VM takes both cores: one thing at a time
    try:
        res = run_job(
            [Command(a, timeout_s=args.timeout) for a in argvs],
            timeout_s=args.timeout + 180,
            job_dir=Path(args.job_dir) if args.job_dir else None,
        )
    except VmUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for r in res.results:
        sys.stdout.write(r.get("stdout", ""))
        sys.stderr.write(r.get("stderr", ""))
    print(res.summary(), file=sys.stderr)
    print(f"job directory: {res.job_dir}", file=sys.stderr)
    if len(res.results) < len(argvs):
        print(res.guest_log[-3000:] or res.console[-3000:], file=sys.stderr)
    return 0 if res.ok() and len(res.results) == len(argvs) else 1


def _run_cmd(args: argparse.Namespace) -> int:
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        print("error: priolab vm run needs a command after --", file=sys.stderr)
        return 2
    return _run(args, [argv])


def _test(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    rc = _run(args, [in_vm_pytest_argv(args.paths or [IN_VM_TESTS])])
    print(f"priolab vm test: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return rc


def register(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser("vm", help="the stock-kernel VM: build, status, run, test")
    vs = v.add_subparsers(dest="vm_command", required=True)
    s = vs.add_parser("status", help="the cache, the recipe hash, whether an image is built")
    s.set_defaults(func=_status)
    b = vs.add_parser("build", help="build the image if its recipe changed (or --force)")
    b.add_argument("--force", action="store_true", help="build even if the recipe is unchanged")
    b.add_argument("--mirror", help="Debian mirror (default http://deb.debian.org/debian)")
    b.set_defaults(func=_build)
    for name, helptext, func in (
        ("run", "boot, run one command inside (after --), power off", _run_cmd),
        ("test", "boot, run the in-VM pytest files (default vm/intests), power off", _test),
    ):
        r = vs.add_parser(name, help=helptext)
        r.add_argument("--timeout", type=float, default=900.0, help="seconds for the command")
        r.add_argument("--job-dir", help="where job.json, results and console go (default tmp)")
        if name == "run":
            r.add_argument("argv", nargs=argparse.REMAINDER, help="-- and the command to run")
        else:
            r.add_argument("paths", nargs="*", help="pytest files or folders (default: vm/intests)")
        r.set_defaults(func=func)
