"""The predictor's agreement with real runs: a markdown table, one row per point and scheme.

    python -m analysis.predictor_agreement VALIDATION_DIR [--rise-sim PATH] [--warmup-s 3]

VALIDATION_DIR is what endpoints/rise-sim/validate.sh writes: `<point>/<scheme>/r<rep>/`, each
a real run analysed by analysis.tables and analysis.metrics. For every point and scheme the
valid real runs are averaged, and the predictor (`rise-sim`, same point, seeds 1..n with n the
number of real runs, at least 2) is averaged the same way. MTP percentiles and the Guest's
cwnd are taken after the warm-up (from the Guest's start_time_us in summary.json).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.logs import read_json
from analysis.metrics import percentiles, read_metrics
from analysis.tables import TABLES_DIR, load_tables

# point name -> rise-sim arguments (the uplink change validate.sh applies to quick.yaml)
POINTS: dict[str, list[str]] = {
    "quick": [],
    "quick-loss005": ["--loss-pct", "0.05"],
    "quick-q01": ["--queue-bdp", "0.1"],
}
# real scheme -> predictor scheme
SCHEMES = {"nopri": "nopri-tail", "pri": "pri"}
COLUMNS = {
    "mtp_median_ms": "MTP p50 (ms)",
    "mtp_p99_ms": "MTP p99 (ms)",
    "frames_displayed": "frames shown",
    "cwnd_p50_kb": "Guest cwnd p50 (kB)",
    "up_queue_drops": "uplink queue drops",
    "ack_evicted_guest": "Guest ACKs evicted",
    "retx_rate_pct_guest": "Guest retx (%)",
}


def real_run(run_dir: Path, warmup_s: float, invalid_too: bool) -> dict[str, float] | None:
    """The columns of one real run, None if it is missing or (unless `invalid_too`) invalid."""
    m = read_metrics(run_dir)
    if not m or "analysis_error" in m or not (m.get("valid") or invalid_too):
        return None
    met = m["metrics"]
    start = (read_json(run_dir / "guest" / "summary.json") or {}).get("start_time_us")
    if not isinstance(start, int | float):
        return None
    cut = start + warmup_s * 1e6
    gf = pd.read_parquet(run_dir / TABLES_DIR / "guest_frames.parquet")
    after = gf[gf["display_time_us"] >= cut]["mtp_ms"].to_numpy(np.float64)
    p50, p99 = percentiles(after, (50, 99))
    ps = load_tables(run_dir)["path_stats"]
    g = ps[(ps["endpoint"] == "guest") & (ps["time_us"] >= cut)]["cwnd_bytes"]
    return {
        "mtp_median_ms": p50,
        "mtp_p99_ms": p99,
        "frames_displayed": float(met["frames_displayed_guest"]),
        "cwnd_p50_kb": float(g.median()) / 1000 if len(g) else float("nan"),
        "up_queue_drops": float(met["linkem_drops_queue_up"]),
        "ack_evicted_guest": float(met["evicted_ack_guest"]),
        "retx_rate_pct_guest": float(met["retx_rate_pct_guest"]),
    }


def predicted(
    rise_sim: Path, args: list[str], scheme: str, seed: int, warmup_s: float
) -> dict[str, float]:
    argv = [str(rise_sim), "--scheme", scheme, "--seed", str(seed), "--warmup-s", str(warmup_s)]
    out = subprocess.run([*argv, *args], check=True, capture_output=True, text=True)
    m: dict[str, Any] = json.loads(out.stdout)["metrics"]
    g, ge = m["guest"], m["guest_endpoint"]
    return {
        "mtp_median_ms": g["mtp_median_ms"] if g["mtp_median_ms"] is not None else np.nan,
        "mtp_p99_ms": g["mtp_p99_ms"] if g["mtp_p99_ms"] is not None else np.nan,
        "frames_displayed": float(g["frames_displayed"]),
        "cwnd_p50_kb": float(ge["cwnd_bytes_p50"]) / 1000,
        "up_queue_drops": float(m["uplink"]["dropped_queue"]),
        "ack_evicted_guest": float(ge["channels"]["ack"]["evicted"]),
        "retx_rate_pct_guest": float(ge["retx_rate_pct"] or 0.0),
    }


def _fmt(x: float) -> str:
    return "–" if not np.isfinite(x) else (f"{x:.0f}" if abs(x) >= 10 else f"{x:.2g}")


def table(root: Path, rise_sim: Path, warmup_s: float, invalid_too: bool) -> str:
    head = "| point | scheme | real runs | " + " | ".join(COLUMNS.values()) + " |"
    lines = [head, "|" + "---|" * (3 + len(COLUMNS))]
    for point, args in POINTS.items():
        for real_scheme, sim_scheme in SCHEMES.items():
            runs = sorted((root / point / real_scheme).glob("r*"))
            got = [real_run(d, warmup_s, invalid_too) for d in runs]
            real = [r for r in got if r is not None]
            n = max(2, len(real))
            sim = [predicted(rise_sim, args, sim_scheme, s, warmup_s) for s in range(1, n + 1)]
            cells = []
            for k in COLUMNS:
                rv = np.nanmean([r[k] for r in real]) if real else np.nan
                sv = np.nanmean([r[k] for r in sim])
                cells.append(f"{_fmt(rv)} / {_fmt(sv)}")
            lines.append(
                f"| {point} | {real_scheme} | {len(real)} of {len(runs)} | "
                + " | ".join(cells)
                + " |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.predictor_agreement", description=__doc__)
    ap.add_argument("root", type=Path)
    ap.add_argument("--rise-sim", type=Path, default=Path("target/release/rise-sim"))
    ap.add_argument("--warmup-s", type=float, default=3.0)
    ap.add_argument(
        "--include-invalid",
        action="store_true",
        help="also average runs the harness marked invalid (e.g. CPU saturated); say so",
    )
    a = ap.parse_args(argv)
    if not a.root.is_dir():
        print(f"error: {a.root}: not a directory", file=sys.stderr)
        return 2
    if not a.rise_sim.is_file():
        hint = "cargo build --release -p rise-sim"
        print(f"error: {a.rise_sim}: no rise-sim binary ({hint})", file=sys.stderr)
        return 2
    print(table(a.root, a.rise_sim, a.warmup_s, a.include_invalid))
    if a.include_invalid:
        print("\nreal runs include runs marked invalid")
    print("\ncells: real mean / predicted mean; MTP and cwnd after the warm-up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
