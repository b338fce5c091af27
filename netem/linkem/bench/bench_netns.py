"""Benchmark linkem on veth: UDP throughput (iperf3 -b 1000M, 1400-byte payloads) through
linkem with an unlimited rate vs a direct veth pair, and delay error (ping RTT − 2 × delay).

Run as root: `.venv/bin/python netem/linkem/bench/bench_netns.py [--linkem PATH] [--json OUT]`.
Prints one JSON object. Creates namespaces `lk-bench-*` and removes them on every exit path.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def run(*argv: str, check: bool = True, timeout: float = 60) -> str:
    return subprocess.run(
        list(argv), capture_output=True, text=True, check=check, timeout=timeout
    ).stdout


def nsx(ns: str, *argv: str, **kw: object) -> str:
    return run("ip", "netns", "exec", ns, *argv, **kw)  # type: ignore[arg-type]


def veth(ns1: str, if1: str, ns2: str, if2: str) -> None:
    run("ip", "link", "add", if1, "netns", ns1, "type", "veth", "peer", "name", if2, "netns", ns2)
    for ns, i in ((ns1, if1), (ns2, if2)):
        nsx(ns, "ethtool", "-K", i, "tx", "off", "gso", "off", "tso", "off", "gro", "off")
        nsx(ns, "ip", "link", "set", i, "up")


def iperf_udp_bps(ns_client: str, ns_server: str, ip: str, seconds: int) -> dict:
    server = subprocess.Popen(
        ["ip", "netns", "exec", ns_server, "iperf3", "-s", "-1", "-J", "-p", "5299"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(0.5)
        nsx(ns_client, "iperf3", "-c", ip, "-p", "5299", "-u", "-b", "1000M", "-l", "1400",
            "-t", str(seconds), "-w", "8M", "-J", timeout=seconds + 30)  # fmt: skip
        out, _ = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    end = json.loads(out)["end"]
    s = end.get("sum_received", end["sum"])
    return {"received_mbps": round(s["bits_per_second"] / 1e6, 1),
            "lost_percent": round(s["lost_percent"], 2)}  # fmt: skip


def ping_rtts_ms(ns: str, ip: str, count: int, interval_s: float) -> list[float]:
    out = nsx(ns, "ping", "-n", "-c", str(count), "-i", str(interval_s), ip, check=False,
              timeout=count * interval_s + 30)  # fmt: skip
    return [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--linkem", default=str(REPO / "target" / "release" / "linkem"))
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    tok = secrets.token_hex(2)
    ns = {k: f"lk-bench-{tok}-{k}" for k in ("a", "m", "b", "c", "d")}
    tmp = Path(tempfile.mkdtemp(prefix="lk-bench-"))
    result: dict = {}
    try:
        for n in ns.values():
            run("ip", "netns", "add", n)
            nsx(n, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        veth(ns["a"], f"lkb{tok}a", ns["m"], f"lkb{tok}ma")
        veth(ns["b"], f"lkb{tok}b", ns["m"], f"lkb{tok}mb")
        veth(ns["c"], f"lkb{tok}c", ns["d"], f"lkb{tok}d")
        nsx(ns["a"], "ip", "addr", "add", "10.213.9.1/24", "dev", f"lkb{tok}a")
        nsx(ns["b"], "ip", "addr", "add", "10.213.9.2/24", "dev", f"lkb{tok}b")
        nsx(ns["c"], "ip", "addr", "add", "10.213.10.1/24", "dev", f"lkb{tok}c")
        nsx(ns["d"], "ip", "addr", "add", "10.213.10.2/24", "dev", f"lkb{tok}d")
        result["direct_veth"] = iperf_udp_bps(ns["c"], ns["d"], "10.213.10.2", a.seconds)

        def start(delay_us: int) -> subprocess.Popen[str]:
            d = {"rate": {"kind": "unlimited"}, "delay_us": delay_us,
                 "queue": {"limit_packets": 10000}}  # fmt: skip
            cfg = tmp / f"cfg{delay_us}.json"
            cfg.write_text(json.dumps({"seed": 1, "a_to_b": d, "b_to_a": d}))
            ready = tmp / f"ready{delay_us}"
            p = subprocess.Popen(["ip", "netns", "exec", ns["m"], a.linkem, "--iface-a",
                                  f"lkb{tok}ma", "--iface-b", f"lkb{tok}mb", "--config", str(cfg),
                                  "--stats", str(tmp / f"stats{delay_us}.jsonl"), "--ready-file",
                                  str(ready)], text=True)  # fmt: skip
            while not ready.exists():
                if p.poll() is not None:
                    raise SystemExit("linkem exited")
                time.sleep(0.02)
            return p

        def cpu_s(p: subprocess.Popen[str]) -> float:
            fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        def stop(p: subprocess.Popen[str]) -> None:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)

        p = start(0)
        try:
            ping_rtts_ms(ns["a"], "10.213.9.2", 3, 0.05)
            cpu0 = cpu_s(p)
            result["through_linkem_unlimited"] = iperf_udp_bps(
                ns["a"], ns["b"], "10.213.9.2", a.seconds
            )
            result["through_linkem_unlimited"]["linkem_cpu_s"] = round(cpu_s(p) - cpu0, 2)
        finally:
            stop(p)
        base = ping_rtts_ms(ns["c"], "10.213.10.2", 200, 0.01)
        # 2 ms each way: ping prints RTTs of 1..10 ms with 10 µs resolution.
        p = start(2_000)
        try:
            ping_rtts_ms(ns["a"], "10.213.9.2", 3, 0.05)
            rtts = ping_rtts_ms(ns["a"], "10.213.9.2", 500, 0.01)
        finally:
            stop(p)
        err = [r - 4.0 for r in rtts]
        result["ping_direct_rtt_ms_median"] = round(statistics.median(base), 3)
        result["delay_2ms_each_way_rtt_error_ms"] = {
            "n": len(err),
            "median": round(statistics.median(err), 3),
            "p99": round(pct(err, 0.99), 3),
            "max": round(max(err), 3),
        }
    finally:
        for n in ns.values():
            run("ip", "netns", "delete", n, check=False)
    print(json.dumps(result, indent=1))
    if a.json:
        a.json.write_text(json.dumps(result))


if __name__ == "__main__":
    main()
