"""The `priolab` command line."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ground import machine_lock
from ground.errors import UserError

if TYPE_CHECKING:
    from priolab.scenario import RunSpec


def scenario_warnings(runs: list[RunSpec]) -> list[tuple[str, str]]:
    """Warnings of a valid scenario, (key path, message), once per matrix point: a workload
    may define `warnings(params, base_dir)` for settings that are allowed but suspicious."""
    from priolab.workloads import WORKLOADS

    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str, str]] = set()
    for r in runs:
        if (r.setting, r.scheme, r.speed) in seen:
            continue
        seen.add((r.setting, r.scheme, r.speed))
        warn = getattr(WORKLOADS[r.workload_kind], "warnings", None)
        where = f"settings.{r.setting} + schemes.{r.scheme} + speeds.{r.speed} → workload"
        out += [(f"{where}.{k}", m) for k, m in (warn(r.params, r.base_dir) if warn else [])]
    return out


def _check(args: argparse.Namespace) -> int:
    from priolab.scenario import expand, input_files, link_warnings, load

    if args.inputs:  # the files the runs read; listed even where they are missing
        for f in input_files(args.scenario):
            print(f)
        return 0
    sc = load(args.scenario)
    runs = expand(sc, Path(args.scenario))
    for key, msg in link_warnings(sc, Path(args.scenario)) + scenario_warnings(runs):
        print(f"warning: {args.scenario}: {key}: {msg}", file=sys.stderr)
    if args.json:
        print(json.dumps([r.to_json() | {"dir": str(r.rel_dir)} for r in runs], indent=2))
        return 0
    print(f"{args.scenario}: valid; {len(runs)} runs of {sc.duration_s:g} s")
    print(f"{'setting':<20} {'scheme':<10} {'speed':<12} {'rep':>4} {'seed':>11}  directory")
    for r in runs:
        print(f"{r.setting:<20} {r.scheme:<10} {r.speed:<12} {r.rep:>4} {r.seed:>11}  {r.rel_dir}")
    return 0


def _run_one(args: argparse.Namespace) -> int:
    from priolab.run import run_one
    from priolab.scenario import expand, find_run, load

    sc = load(args.scenario)
    if args.reps:  # the workflow's `reps=N`: repetitions 1..N whatever the file says
        sc = sc.model_copy(update={"repetitions": args.reps})
    runs = expand(sc, Path(args.scenario))
    spec = find_run(runs, args.setting, args.scheme, args.speed, args.rep, args.scenario)
    out = Path(args.out) if args.out else Path(args.results) / spec.rel_dir
    if args.site == "sim":  # one process, no namespaces: no machine lock
        from priolab.engine.sim_spec import SimPlanError, SimSiteError
        from priolab.engine.sites.sim import run_one as run_one_sim

        try:
            meta = run_one_sim(spec, out, args.backend)
        except SimPlanError as e:  # before anything ran: the keys a sim run cannot honour
            raise SimSiteError(args.scenario, e.problems) from e
        print(f"{out}: {_verdict(meta)}; {_sim_figures(meta)}")
        return 0
    machine_lock.hold_until_exit("priolab run-one")  # input is valid: now wait for the machine
    if args.site == "vm":
        from priolab.engine.sites.vm import run_one_in_vm

        meta = run_one_in_vm(spec, Path(args.scenario), out, args.backend)
    else:
        meta = run_one(spec, out, args.backend, promote=not args.keep_partial)
    print(f"{out}: {_verdict(meta)}")
    return 0


def _verdict(meta: dict[str, Any]) -> str:
    return "valid" if meta["valid"] else "INVALID: " + "; ".join(meta["invalid_reasons"])


def _sim_figures(meta: dict[str, Any]) -> str:
    s = meta["site"]
    return (f"virtual {s.get('virtual_s')} s in {s.get('wall_s')} s wall, "
            f"{s.get('cpu_s')} s CPU (speed-up {s.get('speedup')}x)")  # fmt: skip


def _clean(args: argparse.Namespace) -> int:
    from priolab.clean import clean, leftovers

    if args.dry_run:
        print(json.dumps(leftovers(), indent=2))
    else:
        machine_lock.hold_until_exit("priolab clean")  # never under a live run's feet
        clean(verbose=True)
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from priolab.doctor import diagnose, report

    d = diagnose()
    print(json.dumps(d, indent=2, default=str) if args.json else report(d))
    return 0


def _schema(args: argparse.Namespace) -> int:
    from priolab.scenario import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


class _Version(argparse.Action):
    """`--version`: the version and the commit (priolab.provenance.version_text), computed only
    when asked for (it runs git)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from priolab.provenance import version_text

        print(version_text())
        parser.exit()


# Subcommands that their own folder registers (`register(subparsers)`), imported when the
# parser is built. One whose import fails stays listed, and says why when called.
REGISTERED = (
    ("calibrate", "priolab.workloads.probe.calibrate"),
    ("trace", "traces.cli"),
    ("testbed", "priolab.testbed"),
    ("vm", "vm.cli"),
    ("data", "priolab.datasets"),
    ("export", "analysis.export"),
    ("evidence", "priolab.evidence.cli"),
    ("completion", "priolab.completion"),
)


def _unavailable(sub: argparse._SubParsersAction, name: str, module: str, err: Exception) -> None:
    why = f"importing {module} failed: {type(err).__name__}: {err}"
    u = sub.add_parser(name, help=f"unavailable ({why})", description=f"unavailable: {why}")
    u.add_argument("rest", nargs=argparse.REMAINDER, help="ignored: the command is unavailable")

    def say(args: argparse.Namespace) -> int:
        print(f"error: priolab {name} is unavailable: {why}", file=sys.stderr)
        return 1

    u.set_defaults(func=say)


SCENARIO_HELP = "a scenario file (scenarios/*.yaml)"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="priolab", description=__doc__)
    p.add_argument(
        "--version", action=_Version, help="print the version and the commit it runs from"
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("check", help="validate a scenario file and print its expanded matrix")
    c.add_argument("scenario", help=SCENARIO_HELP)
    c.add_argument("--json", action="store_true", help="print the runs as JSON")
    c.add_argument(
        "--inputs", action="store_true", help="only list the files the runs read (absolute)"
    )
    c.set_defaults(func=_check)

    r = sub.add_parser("run-one", help="run one matrix point of a scenario")
    r.add_argument("scenario", help=SCENARIO_HELP)
    r.add_argument(
        "--setting", required=True, help="the matrix point's setting (a key of `settings:`)"
    )
    r.add_argument(
        "--scheme",
        default="default",
        help="its scheme (a key of `schemes:`; default: `default`, a file without schemes)",
    )
    r.add_argument(
        "--speed",
        default="default",
        help="its speed (a key of `speeds:`; default: `default`, a file without speeds)",
    )
    r.add_argument(
        "--rep", type=int, default=1, help="its repetition, 1 to the scenario's repetitions"
    )
    r.add_argument(
        "--reps",
        type=int,
        default=0,
        help="the scenario's repetitions, overriding the file's (Snakemake's `reps=N`); "
        "0: as the file says",
    )
    r.add_argument("--out", help="run directory (default: RESULTS/<scenario>/<setting>/...)")
    r.add_argument(
        "--results",
        default="results",
        help="the results folder the run directory goes under unless --out names it "
        "(default: results)",
    )
    r.add_argument(
        "--backend",
        choices=["auto", "tc", "userspace"],
        help="the link backend, overriding the scenario's `link.backend` (auto: tc where the "
        "kernel has netem, else linkem; netem/README.md)",
    )
    r.add_argument(
        "--site",
        choices=["mininet", "vm", "sim"],
        default="mininet",
        help="mininet: on this machine; vm: inside the stock-kernel VM (vm/README.md), "
        "backend tc unless --backend says otherwise; run it under the netns lock; sim: one "
        "priolab-sim process in virtual time (no root, no machine lock; priolab/README.md)",
    )
    r.add_argument(
        "--keep-partial",
        action="store_true",
        help="judge the run but leave it in <out>.partial (the VM site judges it once more "
        "with the host's CPU, then renames it)",
    )
    r.set_defaults(func=_run_one)

    k = sub.add_parser("clean", help="remove nodes, interfaces and processes a killed run left")
    k.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    k.set_defaults(func=_clean)

    d = sub.add_parser("doctor", help="what this machine supports; which backend 'auto' picks")
    d.add_argument("--json", action="store_true", help="print the findings as JSON")
    d.set_defaults(func=_doctor)

    s = sub.add_parser("schema", help="print the JSON schema of scenario files")
    s.add_argument("--out", help="write it to this file instead of standard output")
    s.set_defaults(func=_schema)

    for name, mod in REGISTERED:
        try:
            module = importlib.import_module(mod)
        except Exception as e:  # anything its import raises: listed, and says why when called
            _unavailable(sub, name, mod, e)
            continue
        module.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as e:  # every bad input: file, key, what is allowed
        print(f"error: {e.title}\n{e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except KeyboardInterrupt:
        print("interrupted; cleaned up", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
