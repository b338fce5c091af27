"""`priolab calibrate`'s delay measurement (10.5 ms at 100 Mbit/s, idle and with 50 % iperf3
load) for several linkem variants back to back on one network, to choose the batching bound.
Each measurement is the calibration's own (priolab/workloads/probe/calibrate.py: probe runs
through the engine).

Run as root, under the netns lock:

    flock /tmp/priolab-netns.lock .venv/bin/python netem/linkem/bench/delay_variants.py \
        NAME=BINARY[,BATCH_US[,RT_PRIO]] ... [--json OUT]

e.g. `before=/tmp/old/linkem now=target/release/linkem,250 b500=target/release/linkem,500`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from priolab.workloads.probe.calibrate import Calibration, calibrate_session  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("variants", nargs="+", help="NAME=BINARY[,BATCH_US[,RT_PRIO]]")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    out: dict[str, object] = {}
    workdir = Path(tempfile.mkdtemp(prefix="lk-dv-"))
    with calibrate_session(workdir) as network:
        for spec in a.variants:
            name, _, rest = spec.partition("=")
            parts = rest.split(",")
            env = {"PRIOLAB_LINKEM": parts[0]}
            for key, val in zip(("LINKEM_BATCH_US", "LINKEM_RT_PRIO"), parts[1:], strict=False):
                env[key] = val
            for key in ("LINKEM_BATCH_US", "LINKEM_RT_PRIO"):
                os.environ.pop(key, None)
            os.environ.update(env)
            print("==", name, env, "load", os.getloadavg(), flush=True)
            (workdir / name).mkdir()
            bench = Calibration(("userspace", "userspace", "delay_variants"), True,
                                workdir / name, print, network)  # fmt: skip
            out[name] = bench.measure_delay()
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
