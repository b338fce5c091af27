"""The Guest socket's kernel drops in a loopback rise run (no link emulation, no namespace).

Usage: rcvbuf_loopback.py RISE_BINARY [DURATION_S]

Runs a rise host and guest on 127.0.0.1 with quick.yaml's workload (FB/4K/Low: 30 Mbit/s,
30 fps, key frames 9×, w/ Pri) and prints the drops the kernel counted on the guest's own
socket (/proc/net/udp[6] `drops` of the socket inodes the guest holds, sampled every 0.2 s),
the Host's video datagrams sent and the Guest's received, and the guest's socket buffer as its
summary.json reports it (absent before quicsetup's udpbuf). Over loopback the pacer's bursts
are not limited by a 1 Gbit/s link, so this is a harsher test of the receive path than the
emulated path; it needs no network namespace (and so no netns lock).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKLOAD = [
    "--video-bitrate-mbps", "30", "--fps", "30", "--keyframe-factor", "9",
    "--frame-size-sigma", "0.2", "--tracking-hz", "60", "--prio", "on",
    "--buffer-bytes", "1048576", "--quinn-datagram-buffer-bytes", "1500", "--cc", "cubic",
    "--deadline-ms", "1000", "--max-retx", "3", "--seed", "1",
]  # fmt: skip
PORT = 47000


def socket_inodes(pid: int) -> set[str]:
    out = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(target[len("socket:[") : -1])
    return out


def socket_drops(inodes: set[str]) -> int:
    total = 0
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[9] in inodes:  # inode column; `drops` is the last one
                total += int(cols[-1])
    return total


def run(binary: str, duration_s: float) -> dict[str, object]:
    d = Path(tempfile.mkdtemp(prefix="rcvbuf-loopback-"))
    common = ["--duration-s", str(duration_s), *WORKLOAD]
    cert = str(d / "cert.der")
    addr = f"127.0.0.1:{PORT}"
    with open(d / "host.err", "w") as he, open(d / "guest.err", "w") as ge:
        host = subprocess.Popen(
            [binary, "--role", "host", "--bind", addr, "--cert-out", cert,
             "--log-dir", str(d / "host"), *common], stderr=he)  # fmt: skip
        guest = subprocess.Popen(
            [binary, "--role", "guest", "--connect", addr, "--cert", cert,
             "--log-dir", str(d / "guest"), *common], stderr=ge)  # fmt: skip
        drops, inodes = 0, set()
        while guest.poll() is None:
            try:
                inodes |= socket_inodes(guest.pid)
                drops = max(drops, socket_drops(inodes))
            except OSError:
                pass
            time.sleep(0.2)
        host.wait()
    g = json.loads((d / "guest" / "summary.json").read_text())
    h = json.loads((d / "host" / "summary.json").read_text())
    return {
        "guest_socket_drops": drops,
        "host_video_datagrams_sent": h.get("video_datagrams_sent"),
        "guest_video_datagrams_received": g.get("video_datagrams_received"),
        "guest_frames_displayed": g.get("frames_displayed"),
        "guest_udp_rcvbuf_bytes": g.get("udp_rcvbuf_bytes"),
        "loadavg_end": Path("/proc/loadavg").read_text().split()[:3],
        "log_dir": str(d),
    }


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    duration_s = float(sys.argv[2]) if len(sys.argv) == 3 else 20.0
    print(json.dumps(run(sys.argv[1], duration_s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
