"""linkem's CPU and delay error over a grid of rates, traffic patterns and directions.

Run as root, under the netns lock:

    flock /tmp/priolab-netns.lock .venv/bin/python netem/linkem/bench/bench_grid.py \
        [--quick] [--cells RATE:PATTERN:DIRS,...] [--bounds US,...] [--rt-prio P,...]
        [--linkem PATH] [--lkprobe PATH] [--json OUT]

Each cell runs linkem between two namespaces (veth, offloads off) with a constant rate of
twice the offered load per direction (50 % load), 5 ms delay and a 200 ms queue, and
`lkprobe` (netem/linkem/src/bin/lkprobe) sends 1400-byte UDP payloads at the offered rate:
`steady` (evenly paced) or `fps30` / `fps60` (one frame of rate/fps bits at once, video-like),
in one direction or both. Per cell it prints linkem's CPU (user + system seconds from
/proc/PID/stat over the sending window) per second and per forwarded Mbit/s, the machine's
CPU busy share and load average over the same window, and the delay error of every received
packet: one-way delay (send stamp to the receiver's kernel stamp, CLOCK_REALTIME, one clock)
minus what the model gives that packet (FIFO at the link rate from its send time, plus the
delay), so queueing behind a burst is not counted as error. The send stamp is taken just
before each sendmmsg, so the error includes both hosts' stacks (as `priolab calibrate`'s).

`--bounds` runs every cell once per departure batching bound (linkem's `LINKEM_BATCH_US`) and
`--rt-prio` once per SCHED_FIFO priority (`LINKEM_RT_PRIO`, 0: off), so one command gives the
CPU-vs-error curve; without them linkem runs with its defaults. `--cells` picks cells
(e.g. `30:fps30:2` = 30 Mbit/s, fps30, both directions) instead of the grid.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_netns import REPO, nsx, run, veth

RATES_MBPS = [1, 10, 30, 70, 200, 1000]
PATTERNS = {"steady": 0.0, "fps30": 30.0, "fps60": 60.0}
QUICK_RATES_MBPS = [1, 30, 200]
QUICK_PATTERNS = ["steady", "fps30"]
PAYLOAD_BYTES = 1400
WIRE_BYTES = PAYLOAD_BYTES + 42
DELAY_US = 5_000
PORT = 6200
IP = {"a": "10.213.11.1", "b": "10.213.11.2"}


def cpu_ticks(pid: int) -> int:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def machine_busy() -> tuple[int, int]:
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = f[3] + f[4]
    return sum(f) - idle, sum(f)


def model_error_ms(samples: np.ndarray, link_bps: float) -> np.ndarray:
    """recv − model exit per packet of one flow (rows: seq, send_ns, recv_ns), FIFO at
    link_bps from the send time, plus DELAY_US (a Lindley recursion, in seq order)."""
    s = samples[np.argsort(samples[:, 0])]
    ser_ns = WIRE_BYTES * 8 / link_bps * 1e9
    send = s[:, 1].astype(np.float64)
    dep = np.empty_like(send)
    free = -np.inf
    for i, t in enumerate(send):  # noqa: B007 (a loop: each departure depends on the last)
        free = max(t, free) + ser_ns
        dep[i] = free
    return (s[:, 2] - dep - DELAY_US * 1e3) / 1e6


class Net:
    def __init__(self) -> None:
        tok = secrets.token_hex(2)
        self.ns = {k: f"lk-grid-{tok}-{k}" for k in ("a", "m", "b")}
        self.ifs = {"a": f"lkg{tok}a", "ma": f"lkg{tok}ma", "b": f"lkg{tok}b", "mb": f"lkg{tok}mb"}

    def __enter__(self) -> Net:
        for n in self.ns.values():
            run("ip", "netns", "add", n)
            nsx(n, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        veth(self.ns["a"], self.ifs["a"], self.ns["m"], self.ifs["ma"])
        veth(self.ns["b"], self.ifs["b"], self.ns["m"], self.ifs["mb"])
        for k in ("a", "b"):
            nsx(self.ns[k], "ip", "addr", "add", f"{IP[k]}/24", "dev", self.ifs[k])
        return self

    def __exit__(self, *exc: object) -> None:
        for n in self.ns.values():
            run("ip", "netns", "delete", n, check=False)


def run_cell(net: Net, a: argparse.Namespace, tmp: Path, rate: float, pattern: str,
             dirs: int, env: dict[str, str]) -> dict:  # fmt: skip
    link_bps = 2 * rate * 1e6
    d = {"rate": {"kind": "constant", "rate_bps": int(link_bps)}, "delay_us": DELAY_US,
         "queue": {"limit_bytes": max(64_000, int(link_bps / 8 * 0.2))}}  # fmt: skip
    cfg = tmp / "cfg.json"
    cfg.write_text(json.dumps({"seed": 1, "a_to_b": d, "b_to_a": d}))
    ready = tmp / "ready"
    ready.unlink(missing_ok=True)
    lk = subprocess.Popen(
        ["ip", "netns", "exec", net.ns["m"], a.linkem, "--iface-a", net.ifs["ma"],
         "--iface-b", net.ifs["mb"], "--config", str(cfg), "--stats", str(tmp / "stats.jsonl"),
         "--ready-file", str(ready)], text=True, env={**os.environ, **env})  # fmt: skip
    flows = [("a", "b")] + ([("b", "a")] if dirs == 2 else [])
    recvs, sends = [], []
    try:
        while not ready.exists():
            if lk.poll() is not None:
                raise SystemExit(f"linkem exited {lk.returncode}")
            time.sleep(0.02)
        for src, dst in flows:
            recvs.append(subprocess.Popen(
                ["ip", "netns", "exec", net.ns[dst], a.lkprobe, "recv", "--port", str(PORT),
                 "--flows", str(a.flows), "--idle", "1", "--seconds", str(a.seconds + 10),
                 "--samples", str(tmp / f"{src}{dst}.bin")],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))  # fmt: skip
        for r in recvs:
            assert r.stderr is not None
            r.stderr.readline()  # "listening"
        busy0, cpu0, t0 = machine_busy(), cpu_ticks(lk.pid), time.monotonic()
        for src, dst in flows:
            sends.append(subprocess.Popen(
                ["ip", "netns", "exec", net.ns[src], a.lkprobe, "send", "--dst", IP[dst],
                 "--port", str(PORT), "--rate-mbps", str(rate), "--seconds", str(a.seconds),
                 "--flows", str(a.flows), "--fps", str(PATTERNS[pattern])],
                stdout=subprocess.PIPE, text=True))  # fmt: skip
        sent = [json.loads(s.communicate(timeout=a.seconds + 30)[0]) for s in sends]
        wall = time.monotonic() - t0
        cpu_s = (cpu_ticks(lk.pid) - cpu0) / 100
        busy1 = machine_busy()
        load1 = float(Path("/proc/loadavg").read_text().split()[0])
        got = [json.loads(r.communicate(timeout=30)[0]) for r in recvs]
    finally:
        for p in recvs + sends:
            if p.poll() is None:
                p.kill()
                p.wait()
        lk.send_signal(signal.SIGTERM)
        lk.wait(timeout=10)
    errs, rx_bytes, n_sent, n_recv = [], 0, 0, 0
    for (src, dst), s, g in zip(flows, sent, got, strict=True):
        raw = np.fromfile(tmp / f"{src}{dst}.bin", dtype="<i8").reshape(-1, 4)
        for f in range(a.flows):
            rows = raw[raw[:, 0] == f][:, 1:]
            if len(rows):
                errs.append(model_error_ms(rows, link_bps / a.flows))
        rx_bytes += g["received_wire_bytes"]
        n_sent += s["sent_packets"]
        n_recv += g["received_packets"]
    err = np.concatenate(errs) if errs else np.array([np.nan])
    fwd_mbps = rx_bytes * 8 / a.seconds / 1e6
    final = [json.loads(x) for x in (tmp / "stats.jsonl").read_text().splitlines()]
    final = [x for x in final if x.get("final")]
    return {
        "rate_mbps": rate, "pattern": pattern, "directions": dirs,
        "batch_us": env.get("LINKEM_BATCH_US"), "rt_prio": env.get("LINKEM_RT_PRIO"),
        "forwarded_mbps": round(fwd_mbps, 2),
        "loss_pct": round(100 * (1 - n_recv / n_sent), 3) if n_sent else None,
        "linkem_cpu_s_per_s": round(cpu_s / wall, 4),
        "linkem_cpu_ms_per_s_per_mbps": round(1e3 * cpu_s / wall / fwd_mbps, 4)
        if fwd_mbps else None,
        "delay_err_ms_median": round(float(np.median(err)), 3),
        "delay_err_ms_p99": round(float(np.percentile(err, 99)), 3),
        "delay_err_ms_p1": round(float(np.percentile(err, 1)), 3),
        "machine_busy_pct": round(100 * (busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]), 1),
        "loadavg_1m": load1,
        "linkem_rx_drops": sum(x.get("rx_drops", 0) for x in final),
        "linkem_drops_queue": sum(x.get("drops_queue", 0) for x in final),
        "linkem_send_late_ms_max": max((x.get("send_late_ms_max", 0) for x in final), default=0),
    }  # fmt: skip


def parse_cells(text: str) -> list[tuple[float, str, int]]:
    cells = []
    for spec in text.split(","):
        try:
            rate, pattern, dirs = spec.split(":")
            cell = (float(rate), pattern, int(dirs))
        except ValueError:
            raise SystemExit(f"--cells: {spec!r} is not RATE:PATTERN:DIRS") from None
        if pattern not in PATTERNS or cell[2] not in (1, 2):
            raise SystemExit(f"--cells: {spec!r}: pattern one of {list(PATTERNS)}, dirs 1 or 2")
        cells.append(cell)
    return cells


def variants(a: argparse.Namespace) -> list[dict[str, str]]:
    """One linkem environment per (bound, priority) asked for; [{}] = linkem's defaults."""
    bounds = [("LINKEM_BATCH_US", b) for b in a.bounds.split(",")] if a.bounds else [None]
    prios = [("LINKEM_RT_PRIO", p) for p in a.rt_prio.split(",")] if a.rt_prio else [None]
    return [dict(kv for kv in (b, p) if kv) for b in bounds for p in prios]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--linkem", default=str(REPO / "target" / "release" / "linkem"))
    ap.add_argument("--lkprobe", default=str(REPO / "target" / "release" / "lkprobe"))
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--flows", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="rates 1/30/200, steady and fps30")
    ap.add_argument("--cells", help="RATE:PATTERN:DIRS,... instead of the grid")
    ap.add_argument("--bounds", help="LINKEM_BATCH_US values, e.g. 0,25,50,100,150")
    ap.add_argument("--rt-prio", help="LINKEM_RT_PRIO values, e.g. 10,0")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    if a.cells:
        cells = parse_cells(a.cells)
    else:
        rates = QUICK_RATES_MBPS if a.quick else RATES_MBPS
        patterns = QUICK_PATTERNS if a.quick else list(PATTERNS)
        cells = [(r, p, d) for r in rates for p in patterns for d in (1, 2)]
    rows = []
    hdr = (
        f"{'batch':>5} {'rt':>3} {'Mbit/s':>6} {'pattern':>7} {'dirs':>4} {'fwd':>8} "
        f"{'loss%':>6} {'cpu/s':>6} {'ms/s/Mb':>8} {'err med':>7} {'p99':>6} {'p1':>6} "
        f"{'busy%':>5} {'load':>5}"
    )
    print(hdr, flush=True)
    with Net() as net, tempfile.TemporaryDirectory(prefix="lk-grid-") as tmpd:
        for rate, pattern, dirs in cells:
            for env in variants(a):
                r = run_cell(net, a, Path(tmpd), rate, pattern, dirs, env)
                rows.append(r)
                print(f"{r['batch_us'] or '-':>5} {r['rt_prio'] or '-':>3} {rate:>6g} "
                      f"{pattern:>7} {dirs:>4} {r['forwarded_mbps']:>8.1f} "
                      f"{r['loss_pct']:>6.2f} {r['linkem_cpu_s_per_s']:>6.3f} "
                      f"{r['linkem_cpu_ms_per_s_per_mbps'] or 0:>8.3f} "
                      f"{r['delay_err_ms_median']:>7.3f} {r['delay_err_ms_p99']:>6.3f} "
                      f"{r['delay_err_ms_p1']:>6.3f} {r['machine_busy_pct']:>5.1f} "
                      f"{r['loadavg_1m']:>5.2f}", flush=True)  # fmt: skip
    out = {"linkem": a.linkem, "seconds": a.seconds, "flows": a.flows, "delay_us": DELAY_US,
           "load_factor": 0.5, "rows": rows}  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
