"""Speed of the sim site per workload: virtual ÷ wall and virtual ÷ CPU seconds.

Not a test: figures to read (issue 22, item 7). Each workload is one matrix point run through
the real harness path, `priolab run-one SCENARIO ... --site sim`, and its figures are those
priolab-sim measured itself (metadata.json's `site`: virtual, wall and CPU seconds of the
run, process start and the harness around it not included; the harness's own wall seconds
are printed beside them).

    PYTHONPATH=$PWD PRIOLAB_SIM=$PWD/target/release/priolab-sim \
        nice -n 19 .venv/bin/python endpoints/sim/scripts/bench_workloads.py \
        [--only NAME,...] [--repeat N] [--json FILE] [--keep DIR] [--compare BIN ...]

The workloads (names for --only): quick RISE, both schemes, at the window-limited point
FB-4K-Low-L0.05 and the ideal FB-4K-Low (30 s); DTP at 6 MB/s ([DTP]'s rate, the
pattern's nominal need, 10 s); QPR on the driving trace at 5 % GE loss, QPR-50 (20 s); MoQ
FT at 3 Mbit/s ([MoQ]'s fastest link, 120 s); RoQ, SCReAM over QUIC at 50 ms (120 s,
360p: x264 and avdec_h264 do their real work, which bounds its speed-up; endpoints/README.md,
"roq and virtual time"). With --repeat N each runs N times and the
median of each figure is printed (wall time on a shared machine is noisy; CPU less so).
Every run must be valid, or the figures say nothing: an invalid one is reported and counted
in the exit code (1).

With --compare BIN [BIN ...] the builds take turns (for each repetition, each build runs the
workload once, in the order given), each row is printed per build, and a last column gives
each build's virtual ÷ CPU as a ratio to the first build's: the figure that compares builds
on a shared machine, measured in one session on the same specs. It also compares each
build's run folders with the first build's, repetition by repetition, file by file (the
logs: all but the harness's records and the certificates, NOT_LOGS), and prints whether
they are byte-identical: a change that only makes the sim faster leaves them so. With
--keep, the runs' folders are DIR/r<rep>/b<build>/WORKLOAD.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ground import rundir

REPO = Path(__file__).resolve().parents[3]

# name -> (scenario, setting, scheme, speed); the goal in virtual ÷ wall (issue 22)
WORKLOADS: dict[str, tuple[str, str, str, str, float]] = {
    "rise-pri-L0.05": ("scenarios/quick.yaml", "FB-4K-Low-L0.05", "pri", "moderate", 30.0),
    "rise-nopri-L0.05": ("scenarios/quick.yaml", "FB-4K-Low-L0.05", "nopri", "moderate", 30.0),
    "rise-pri-ideal": ("scenarios/quick.yaml", "FB-4K-Low", "pri", "moderate", 30.0),
    "rise-nopri-ideal": ("scenarios/quick.yaml", "FB-4K-Low", "nopri", "moderate", 30.0),
    "dtp-6MBps": ("scenarios/dtp-quick.yaml", "6MBps", "dtp", "cubic", 30.0),
    "qpr-driving-loss5-q50": ("scenarios/qpr-quick.yaml", "driving-loss5", "q50", "default", 30.0),
    "moq-3M-ft": ("scenarios/moq-sports.yaml", "3M", "ft", "default", 100.0),
    # roq's goal is its codecs' bound, not issue 22's (endpoints/README.md, "roq and virtual time")
    "roq-d50-scream": ("scenarios/roq-rfc8867-d50.yaml", "d50", "scream", "default", 7.0),
}


def run_once(name: str, results: Path, sim: str) -> dict[str, Any]:
    scenario, setting, scheme, speed, _goal = WORKLOADS[name]
    out = results / name
    argv = [sys.executable, "-c", "from priolab.cli import main; main()", "run-one",
            scenario, "--setting", setting, "--scheme", scheme, "--speed", speed,
            "--rep", "1", "--site", "sim", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PRIOLAB_SIM": sim}
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False, env=env)
    meta_file = out / rundir.METADATA
    if proc.returncode != 0 or not meta_file.is_file():
        return {"valid": False, "error": (proc.stderr or proc.stdout)[-1500:]}
    meta = json.loads(meta_file.read_text())
    site = meta["site"]
    return {
        "valid": bool(meta["valid"]),
        "invalid_reasons": meta.get("invalid_reasons", []),
        "virtual_s": site["virtual_s"],
        "wall_s": site["wall_s"],
        "cpu_s": site["cpu_s"],
        "harness_wall_s": site["harness"]["wall_s"],
    }


def summarize(name: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    goal = WORKLOADS[name][4]
    ok = [r for r in runs if r["valid"]]
    row: dict[str, Any] = {"workload": name, "runs": len(runs), "valid": len(ok), "goal_x": goal}
    if ok:
        med = {k: statistics.median(r[k] for r in ok) for k in
               ("virtual_s", "wall_s", "cpu_s", "harness_wall_s")}  # fmt: skip
        row.update(med)
        row["virtual_per_wall"] = med["virtual_s"] / med["wall_s"]
        row["virtual_per_cpu"] = med["virtual_s"] / med["cpu_s"]
    row["problems"] = [r.get("error") or "; ".join(r["invalid_reasons"]) for r in runs
                       if not r["valid"]]  # fmt: skip
    return row


# The harness's own records in a run folder (they hold wall times), as tests/test_sim_site.py
# leaves them out: everything else is what the endpoints and the link wrote. Certificates
# (cert.der) hold fresh random key bytes.
NOT_LOGS = {rundir.METADATA, rundir.PLAN, rundir.SIM_SPEC, rundir.SIM_REPORT,
            "node-guest.json", "node-host.json", "logs/priolab-sim.stdout",
            "logs/priolab-sim.stderr"}  # fmt: skip


def differing_files(a: Path, b: Path) -> list[str]:
    """The logs (relative paths) of run folder `a` missing from `b` or not byte-identical."""
    diff = []
    for f in sorted(p for p in a.rglob("*") if p.is_file()):
        rel = f.relative_to(a)
        if str(rel) in NOT_LOGS or f.name == "cert.der":
            continue
        g = b / rel
        if not g.is_file() or f.read_bytes() != g.read_bytes():
            diff.append(str(rel))
    return diff


def print_row(label: str, row: dict[str, Any], ratio: float | None) -> None:
    if row["valid"]:
        extra = f" {ratio:>7.3f}" if ratio is not None else ""
        print(f"{label:<24} {row['virtual_s']:>9.2f} {row['wall_s']:>7.3f} "
              f"{row['cpu_s']:>7.3f} {row['virtual_per_wall']:>8.1f}x "
              f"{row['virtual_per_cpu']:>8.1f}x {row['goal_x']:>5.0f}x  "
              f"{row['valid']}/{row['runs']}{extra}", flush=True)  # fmt: skip
    for p in row["problems"]:
        print(f"{label:<24} INVALID: {p}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--only", help="comma-separated workload names: " + ", ".join(WORKLOADS))
    ap.add_argument("--repeat", type=int, default=1, help="runs per workload (median printed)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON to this file")
    ap.add_argument("--keep", type=Path, help="keep the run folders here (default: deleted)")
    ap.add_argument("--compare", nargs="+", metavar="BIN",
                    help="priolab-sim builds to run in turns (ratios to the first)")  # fmt: skip
    args = ap.parse_args()
    names = list(WORKLOADS) if not args.only else args.only.split(",")
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        ap.error(f"--only: unknown workload(s) {unknown}; known: {list(WORKLOADS)}")
    default = os.environ.get("PRIOLAB_SIM", str(REPO / "target" / "release" / "priolab-sim"))
    sims: list[str] = [str(Path(b).resolve()) for b in args.compare] if args.compare else [default]
    missing = [b for b in sims if not Path(b).is_file()]
    if missing:
        ap.error(f"no such priolab-sim build: {missing}")
    for i, sim in enumerate(sims):
        print(f"priolab-sim{f' b{i}' if len(sims) > 1 else ''}: {sim}")
    ratio_head = " vs b0" if len(sims) > 1 else ""
    print(f"{'workload':<24} {'virtual s':>9} {'wall s':>7} {'cpu s':>7} "
          f"{'virt/wall':>9} {'virt/cpu':>9} {'goal':>6}  valid{ratio_head}")  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory(prefix="priolab-bench-") as tmp:
        base = args.keep or Path(tmp)
        for name in names:
            runs: list[list[dict[str, Any]]] = [[] for _ in sims]
            folders = [[base / f"r{i}" / f"b{b}" / name for i in range(args.repeat)]
                       for b in range(len(sims))]  # fmt: skip
            for i in range(args.repeat):
                for b, sim in enumerate(sims):
                    folder = base / f"r{i}" / f"b{b}" if len(sims) > 1 else base / f"r{i}"
                    runs[b].append(run_once(name, folder, sim))
            first: float | None = None
            for b, sim in enumerate(sims):
                row = summarize(name, runs[b])
                row["sim"] = sim
                rows.append(row)
                label = f"{name} b{b}" if len(sims) > 1 else name
                ratio = None
                if len(sims) > 1 and row["valid"]:
                    if b == 0:
                        first = row["virtual_per_cpu"]
                    ratio = row["virtual_per_cpu"] / first if first else float("nan")
                print_row(label, row, ratio)
                if b > 0:
                    diffs = [differing_files(folders[0][i], folders[b][i])
                             for i in range(args.repeat)]  # fmt: skip
                    row["same_logs_as_b0"] = sum(not d for d in diffs)
                    print(f"{label:<24} logs byte-identical to b0's: "
                          f"{row['same_logs_as_b0']}/{args.repeat} runs", flush=True)  # fmt: skip
                    for d in diffs:
                        if d:
                            print(f"{label:<24} differs from b0 in: {', '.join(d[:8])}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"sims": sims, "rows": rows}, indent=1) + "\n")
    return 1 if any(r["problems"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
