"""Benchmark: the `roq` sender (x264 through GStreamer) and receiver (avdec_h264) over QUIC on
loopback at a fixed bitrate, with no link emulation: CPU of each process (user + system time
over the run, % of one core), and SSIM/PSNR of the decoded video against the source (the
encoder's quality ceiling at that bitrate). Prints one line; `--json FILE` writes it too.

    .venv/bin/python endpoints/roq/scripts/bench_loopback.py --kbps 1000 --duration-s 20
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from priolab.workloads.roq import RoqParams  # noqa: E402
from priolab.workloads.roq.analysis import frames_table  # noqa: E402
from priolab.workloads.roq.source import ensure_source  # noqa: E402
from priolab.workloads.roq.workload import roq_binary  # noqa: E402


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kbps", type=int, default=1000)
    ap.add_argument("--duration-s", type=float, default=20.0)
    ap.add_argument("--preset", default="veryfast")
    ap.add_argument("--port", type=int, default=47111)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    p = RoqParams(x264_preset=a.preset)
    src = ensure_source(p)
    d = Path(tempfile.mkdtemp(prefix="roq-bench-"))
    com = ["--duration-s", f"{a.duration_s:g}", "--width", str(p.width), "--height",
           str(p.height), "--fps", str(p.fps)]  # fmt: skip
    load0 = loadavg()
    s = subprocess.Popen(
        [roq_binary(), "--role", "sender", "--bind", f"127.0.0.1:{a.port}", "--cert-out",
         str(d / "cert.der"), "--log-dir", str(d / "host"), "--source", str(src), "--rate",
         "fixed", "--start-kbps", str(a.kbps), "--max-kbps", str(max(a.kbps, 2000)),
         "--x264-preset", a.preset, *com],
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(0.3)
    r = subprocess.Popen(
        [roq_binary(), "--role", "receiver", "--connect", f"127.0.0.1:{a.port}", "--cert",
         str(d / "cert.der"), "--log-dir", str(d / "guest"), *com],
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    cpu = {}
    for name, proc in (("sender", s), ("receiver", r)):
        _, status, ru = os.wait4(proc.pid, 0)
        if status != 0:
            print(f"{name} exited with status {status}", file=sys.stderr)
            return 1
        cpu[name] = 100 * (ru.ru_utime + ru.ru_stime) / a.duration_s
    f = frames_table(d, {"width": p.width, "height": p.height}, src)
    out = {
        "kbps": a.kbps, "preset": a.preset, "duration_s": a.duration_s,
        "resolution": f"{p.width}x{p.height}@{p.fps}", "source": p.source,
        "sender_cpu_pct_of_core": round(cpu["sender"], 1),
        "receiver_cpu_pct_of_core": round(cpu["receiver"], 1),
        "ssim_mean": round(float(f["ssim"].mean()), 4),
        "psnr_mean_db": round(float(f["psnr_db"].mean()), 2),
        "decoded_pct": round(100 * float(f["decoded"].mean()), 1),
        "load_before": load0, "load_after": loadavg(),
    }  # fmt: skip
    shutil.rmtree(d, ignore_errors=True)
    print(json.dumps(out))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
