"""`priolab calibrate`'s delay measurement (10.5 ms at 100 Mbit/s, idle and with 50 % iperf3
load) for several linkem variants back to back on one network, to choose the batching bound.
Each measurement is the calibration's own (priolab/workloads/probe/calibrate.py: probe runs
through the engine).

Run as root, under the netns lock:

    flock /tmp/priolab-netns.lock .venv/bin/python -m priolab.workloads.probe.delay_variants \
        NAME=BINARY[,BATCH_US[,RT_PRIO[,LOAD_PACING_US]]] ... [--reps N] [--json OUT]

e.g. `before=/tmp/old/linkem now=target/release/linkem,250 b500=target/release/linkem,500`.
LOAD_PACING_US is the background iperf3's `--pacing-timer` (default: the probe workload's
LOAD_PACING_TIMER_US), e.g. `tick1ms=target/release/linkem,100,,1000`; an empty field keeps
its default.
With `--reps N` the variants run in turn N times (interleaved, so a change of the machine's
load hits all of them), and a summary line per variant gives each repetition's figures.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import priolab.workloads.probe as probe_workload
from priolab.workloads.probe.calibrate import Calibration, calibrate_session


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("variants", nargs="+",
                    help="NAME=BINARY[,BATCH_US[,RT_PRIO[,LOAD_PACING_US]]]")  # fmt: skip
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    out: dict[str, list] = {}
    default_pacing_us = probe_workload.LOAD_PACING_TIMER_US
    workdir = Path(tempfile.mkdtemp(prefix="lk-dv-"))
    with calibrate_session(workdir) as network:
        for i, spec in enumerate([v for _ in range(a.reps) for v in a.variants]):
            name, _, rest = spec.partition("=")
            parts = rest.split(",")
            env = {"PRIOLAB_LINKEM": parts[0]}
            for key, val in zip(("LINKEM_BATCH_US", "LINKEM_RT_PRIO"), parts[1:3], strict=False):
                if val:
                    env[key] = val
            pacing = parts[3] if len(parts) > 3 and parts[3] else default_pacing_us
            probe_workload.LOAD_PACING_TIMER_US = int(pacing)
            for key in ("LINKEM_BATCH_US", "LINKEM_RT_PRIO"):
                os.environ.pop(key, None)
            os.environ.update(env)
            load = os.getloadavg()[0]
            print("==", name, env, "load pacing", pacing, "us, load", load, flush=True)
            (workdir / f"{name}-{i}").mkdir()
            bench = Calibration(("userspace", "userspace", "delay_variants"), True,
                                workdir / f"{name}-{i}", print, network)  # fmt: skip
            out.setdefault(name, []).append({"load1": load, "rows": bench.measure_delay()})
    for name, runs in out.items():
        figs = [
            " ".join(f"{r['median_error_ms']:.3f}/{r['p99_error_ms']:.3f}" for r in run["rows"])
            + f" (load {run['load1']:.2f})"
            for run in runs
        ]
        print(f"{name}: idle median/p99, 50 % load median/p99 (ms): " + "; ".join(figs))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
