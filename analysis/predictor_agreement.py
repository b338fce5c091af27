"""The predictor's agreement with real runs: a markdown table, two rows (real, predicted) per
point and scheme, each cell the mean over runs with its 95 % bootstrap CI across runs.

    python -m analysis.predictor_agreement VALIDATION_DIR [--rise-sim PATH] [--seeds 5]

VALIDATION_DIR is what endpoints/rise-sim/validate.sh writes: `<point>/<scheme>/r<rep>/`, each
a real run analysed by analysis.tables and analysis.metrics (its metrics.json), and beside it
`r<rep>.loadavg`, the load average when the run started. Only runs the harness judged valid are
used. The predictor (`rise-sim`, the same point and scheme) runs with seeds 1..--seeds. Every
figure is the Guest's view after the warm-up (3 s, quick.yaml's `warmup_s`) unless named.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from analysis.stats import bootstrap_ci

# point name -> rise-sim arguments (the uplink change validate.sh applies to quick.yaml)
POINTS: dict[str, list[str]] = {
    "quick": [],
    "quick-loss005": ["--loss-pct", "0.05"],
    "quick-q01": ["--queue-bdp", "0.1"],
    "quick-pol25k": ["--policer-burst-bytes", "25000"],
}
# real scheme -> predictor scheme (the same buffer: the channels' B, head drop without Pri)
SCHEMES = {"nopri": "nopri", "pri": "pri"}
# metric key -> column title
COLUMNS = {
    "mtp_median_ms": "MTP p50 (ms)",
    "mtp_p99_ms": "MTP p99 (ms)",
    "stall_pct": "stall (% of run)",
    "displayed_fps": "displayed fps",
    "cwnd_guest_kb": "Guest cwnd p50 (kB)",
    "ack_evicted_guest": "Guest ACKs evicted",
    "video_dropped_guest": "Guest video dropped at B",
    "deadline_exp_host": "Host deadline expirations",
    "lost_pkts_host": "Host packets lost",
    "cwnd_host_kb": "Host cwnd p50 (kB)",
}
WARMUP_S = 3.0
DURATION_S = 30.0


def real_run(run_dir: Path) -> dict[str, float] | None:
    """The columns of one real run from its metrics.json; None if missing, unanalysed or
    judged invalid (e.g. CPU saturated)."""
    path = run_dir / "metrics.json"
    if not path.is_file():
        return None
    m = json.loads(path.read_text())
    if not m.get("valid") or "metrics" not in m:
        return None
    met = m["metrics"]
    return {
        "mtp_median_ms": float(met["mtp_median_ms"]),
        "mtp_p99_ms": float(met["mtp_p99_ms"]),
        "stall_pct": float(met["stall_pct"]),
        "displayed_fps": float(met["displayed_fps"]),
        "cwnd_guest_kb": float(met["cwnd_median_bytes_guest"]) / 1000,
        "ack_evicted_guest": float(met["evicted_ack_guest"]),
        "video_dropped_guest": float(met["dropped_ingress_video_guest"]),
        "deadline_exp_host": float(met["deadline_expirations_host"]),
        "lost_pkts_host": float(met["lost_packets_host"]),
        "cwnd_host_kb": float(met["cwnd_median_bytes_host"]) / 1000,
    }


def run_load(run_dir: Path) -> float | None:
    """The 1-minute load average when the run started (validate.sh's `r<rep>.loadavg`)."""
    f = run_dir.with_name(run_dir.name + ".loadavg")
    try:
        return float(f.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def predicted(rise_sim: Path, args: list[str], scheme: str, seed: int) -> dict[str, float]:
    argv = [str(rise_sim), "--scheme", scheme, "--seed", str(seed)]
    argv += ["--warmup-s", str(WARMUP_S), "--duration-s", str(DURATION_S), *args]
    out = subprocess.run(argv, check=True, capture_output=True, text=True)
    m: dict[str, Any] = json.loads(out.stdout)["metrics"]
    g, ge, h = m["guest"], m["guest_endpoint"], m["host"]

    def num(x: float | None) -> float:
        return float("nan") if x is None else float(x)

    return {
        "mtp_median_ms": num(g["mtp_median_ms"]),
        "mtp_p99_ms": num(g["mtp_p99_ms"]),
        "stall_pct": 100 * float(g["stall_s"]) / (DURATION_S - WARMUP_S),
        "displayed_fps": float(g["displayed_fps"]),
        "cwnd_guest_kb": float(ge["cwnd_bytes_p50"]) / 1000,
        "ack_evicted_guest": float(ge["channels"]["ack"]["evicted"]),
        "video_dropped_guest": float(ge["channels"]["video"]["dropped_ingress"]),
        "deadline_exp_host": float(h["deadline_expirations"]),
        "lost_pkts_host": float(h["lost_packets"]),
        "cwnd_host_kb": float(h["cwnd_bytes_p50"]) / 1000,
    }


def _num(x: float) -> str:
    if not np.isfinite(x):
        return "–"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def cell(values: list[float]) -> str:
    """Mean and 95 % bootstrap CI across runs: `m [lo, hi]`, or `m` for one run."""
    mean, lo, hi, n = bootstrap_ci(values)
    if n == 0:
        return "–"
    if n == 1 or lo == hi:
        return _num(mean)
    return f"{_num(mean)} [{_num(lo)}, {_num(hi)}]"


def table(root: Path, rise_sim: Path, seeds: int) -> str:
    head = "| point | scheme | source | runs | " + " | ".join(COLUMNS.values()) + " |"
    lines = [head, "|" + "---|" * (4 + len(COLUMNS))]
    loads: list[float] = []
    for point, args in POINTS.items():
        for real_scheme, sim_scheme in SCHEMES.items():
            runs = sorted((root / point / real_scheme).glob("r[0-9]*/"))
            got = [(d, real_run(d)) for d in runs]
            real = [r for _, r in got if r is not None]
            loads += [x for d, r in got if r is not None and (x := run_load(d)) is not None]
            sim = [predicted(rise_sim, args, sim_scheme, s) for s in range(1, seeds + 1)]
            for source, rows, n in (
                ("real", real, f"{len(real)} valid of {len(runs)}"),
                ("predicted", sim, f"seeds 1–{seeds}"),
            ):
                cells = [cell([r[k] for r in rows]) for k in COLUMNS]
                lines.append(
                    f"| {point} | {real_scheme} | {source} | {n} | " + " | ".join(cells) + " |"
                )
    if loads:
        lines.append(
            f"\nload average at the real runs' start: {min(loads):.2f}–{max(loads):.2f}"
            f" ({len(loads)} valid runs)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.predictor_agreement", description=__doc__)
    ap.add_argument("root", type=Path)
    ap.add_argument("--rise-sim", type=Path, default=Path("target/release/rise-sim"))
    ap.add_argument("--seeds", type=int, default=5, help="predictor runs per point and scheme")
    a = ap.parse_args(argv)
    if not a.root.is_dir():
        print(f"error: {a.root}: not a directory", file=sys.stderr)
        return 2
    if not a.rise_sim.is_file():
        hint = "cargo build --release -p rise-sim"
        print(f"error: {a.rise_sim}: no rise-sim binary ({hint})", file=sys.stderr)
        return 2
    if a.seeds < 1:
        print(f"error: --seeds {a.seeds}: allowed >= 1", file=sys.stderr)
        return 2
    print(table(a.root, a.rise_sim, a.seeds))
    print(
        "\ncells: mean [95 % bootstrap CI across runs]; the Guest's view after the 3 s warm-up"
        " unless named; the predictor runs each point with seeds 1..n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
