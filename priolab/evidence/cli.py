"""`priolab evidence add|status|verify`: the evidence store's commands (evidence/README.md).
A refresh of the book's sim records is `make book-refresh` (book/refresh.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from priolab.evidence import store
from priolab.paths import REPO_ROOT


def _add(args: argparse.Namespace) -> int:
    from priolab.evidence.add import add

    only = None
    if args.runs:
        listed = Path(args.runs).read_text().split()
        only = {(Path(args.results_dir) / r).resolve() for r in listed}
    for path, n_added, n_total in add(Path(args.results_dir), args.scenario, Path(args.store),
                                      REPO_ROOT, args.allow_changed, only):  # fmt: skip
        print(f"{path}: {n_added} added, {n_total} records")
    return 0


def _status(args: argparse.Namespace) -> int:
    from priolab.evidence.status import status, table

    for line in table(status(Path(args.store), REPO_ROOT)):
        print(line)
    return 0


def _verify(args: argparse.Namespace) -> int:
    from analysis.sameness import REL_TOL
    from priolab.evidence.verify import current_sim_records, sample, verify

    current, stale = current_sim_records(Path(args.store), REPO_ROOT)
    if args.only:
        names = set(args.only.split(","))
        current = [r for r in current if r.scenario in names]
    if len(current) < args.min_current:
        among = f" of {args.only}" if args.only else ""
        print(f"error: {len(current)} current sim records{among} (at least "
              f"{args.min_current} needed), {stale} stale: the checkout's code no longer makes "
              "them; refresh them (`make book-refresh`)", file=sys.stderr)  # fmt: skip
        return 1
    picked = sample(current, args.sample, args.seed)
    print(
        f"verify: {len(picked)} of {len(current)} current sim records (seed {args.seed}; "
        f"{stale} stale left out); counts exactly, floats within {REL_TOL:g} relative"
    )
    outcomes = verify(picked, REPO_ROOT)
    for o in outcomes:
        print(f"{'ok  ' if o.ok else 'FAIL'} {o.where}" + (f": {o.error}" if o.error else ""))
        for d in o.differences:
            print(f"     {d}")
    bad = [o for o in outcomes if not o.ok]
    print(f"verify: {len(outcomes) - len(bad)} of {len(outcomes)} reproduced")
    return 1 if bad else 0


def register(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("evidence", help="the evidence store of run records (evidence/)")
    e.add_argument("--store", default=str(store.STORE), help="the store (default: evidence/)")
    esub = e.add_subparsers(dest="evidence_command", required=True)

    a = esub.add_parser("add", help="add the runs of a results tree to the store")
    a.add_argument("results_dir", help="a results tree (results/, results-sim/, ...)")
    a.add_argument("--scenario", help="only this scenario's runs")
    a.add_argument(
        "--runs",
        help="a file listing the run folders to add (relative to "
        "RESULTS_DIR, one a line): a refresh's; default every run folder",
    )
    a.add_argument(
        "--allow-changed",
        action="store_true",
        help="take runs made at a commit whose code differs from the checkout's",
    )
    a.set_defaults(func=_add)

    s = esub.add_parser("status", help="per scenario and site: records, valid, stale")
    s.set_defaults(func=_status)

    v = esub.add_parser("verify", help="rerun a sample of current sim records and compare")
    v.add_argument("--sample", type=int, required=True, help="how many records to rerun")
    v.add_argument("--seed", type=int, default=1, help="the sample's seed (default 1)")
    v.add_argument(
        "--only",
        help="sample among these scenarios' records only (comma-separated names): a cheap "
        "sample, as `make test` takes it",
    )
    v.add_argument(
        "--min-current",
        type=int,
        default=1,
        help="fail when fewer current sim records are in the store (default 1)",
    )
    v.set_defaults(func=_verify)
