"""linkem on real traffic: host A ⇄ [middle namespace running linkem] ⇄ host B over veth.

Checks rate (iperf3 UDP), delay (ping RTT), iid loss (ping), oversized frames, and the stats
file and clean exit on SIGTERM. Loose bounds: the machine is shared; figures are benchmarks'
business.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [
    pytest.mark.netns,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create network namespaces"),
    pytest.mark.skipif(
        shutil.which("ip") is None or shutil.which("ethtool") is None,
        reason="needs iproute2 (ip) and ethtool",
    ),
]

LINKEM = REPO / "target" / "release" / "linkem"
IP_A = "10.213.7.1"
IP_B = "10.213.7.2"


def _run(*argv: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, timeout=timeout)


def _nsx(ns: str, *argv: str, **kw) -> subprocess.CompletedProcess[str]:
    return _run("ip", "netns", "exec", ns, *argv, **kw)


@pytest.fixture(scope="module")
def linkem_bin() -> Path:
    env = os.environ.get("PRIOLAB_LINKEM")
    if env:
        return Path(env)
    if not LINKEM.is_file():
        if shutil.which("cargo") is None:
            pytest.skip("linkem is not built and cargo is not available")
        subprocess.run(
            ["cargo", "build", "--release", "-p", "linkem"], cwd=REPO, check=True, timeout=900
        )
    return LINKEM


@dataclass
class Topo:
    ns_a: str
    ns_m: str
    ns_b: str
    if_ma: str  # middle side facing A (linkem's iface-a)
    if_mb: str  # middle side facing B (linkem's iface-b)
    if_a: str
    if_b: str


@pytest.fixture(scope="module")
def topo() -> Iterator[Topo]:
    tok = secrets.token_hex(3)
    t = Topo(
        ns_a=f"lk-{tok}-a",
        ns_m=f"lk-{tok}-m",
        ns_b=f"lk-{tok}-b",
        if_ma=f"lk{tok}ma",
        if_mb=f"lk{tok}mb",
        if_a=f"lk{tok}a",
        if_b=f"lk{tok}b",
    )
    try:
        for ns in (t.ns_a, t.ns_m, t.ns_b):
            _run("ip", "netns", "add", ns)
            _nsx(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            _nsx(ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
            _nsx(ns, "ip", "link", "set", "lo", "up")
        for host_ns, host_if, mid_if in ((t.ns_a, t.if_a, t.if_ma), (t.ns_b, t.if_b, t.if_mb)):
            _run("ip", "link", "add", host_if, "netns", host_ns, "type", "veth",
                 "peer", "name", mid_if, "netns", t.ns_m)  # fmt: skip
            for ns, ifname in ((host_ns, host_if), (t.ns_m, mid_if)):
                _nsx(ns, "ethtool", "-K", ifname, "tx", "off", "gso", "off", "tso", "off",
                     "gro", "off")  # fmt: skip
                _nsx(ns, "ip", "link", "set", ifname, "up")
        _nsx(t.ns_a, "ip", "addr", "add", f"{IP_A}/24", "dev", t.if_a)
        _nsx(t.ns_b, "ip", "addr", "add", f"{IP_B}/24", "dev", t.if_b)
        yield t
    finally:
        for ns in (t.ns_a, t.ns_m, t.ns_b):
            _run("ip", "netns", "delete", ns, check=False)


def _direction(**over: object) -> dict:
    d: dict = {
        "rate": {"kind": "unlimited"},
        "delay_us": 0,
        "jitter_us": 0,
        "jitter_reorder": False,
        "loss": {"kind": "none"},
        "queue": {"limit_bytes": 200_000, "limit_packets": None, "drop": "tail"},
    }
    d.update(over)
    return d


@dataclass
class Linkem:
    proc: subprocess.Popen[str]
    stats: Path

    def stop(self) -> list[dict]:
        """SIGTERM, expect exit 0, return every stats line."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        assert rc == 0, self.proc.stderr.read() if self.proc.stderr else rc
        return [json.loads(x) for x in self.stats.read_text().splitlines()]


@pytest.fixture
def start_linkem(topo: Topo, linkem_bin: Path, tmp_path: Path) -> Iterator:
    started: list[Linkem] = []

    def start(a_to_b: dict, b_to_a: dict, mtu_bytes: int = 1500, log: Path | None = None) -> Linkem:
        cfg = {"seed": 42, "mtu_bytes": mtu_bytes, "a_to_b": a_to_b, "b_to_a": b_to_a}
        n = len(started)
        cfg_path = tmp_path / f"linkem{n}.json"
        cfg_path.write_text(json.dumps(cfg))
        stats, ready = tmp_path / f"stats{n}.jsonl", tmp_path / f"ready{n}"
        argv = ["ip", "netns", "exec", topo.ns_m, str(linkem_bin), "--iface-a", topo.if_ma,
                "--iface-b", topo.if_mb, "--config", str(cfg_path), "--stats", str(stats),
                "--ready-file", str(ready)]  # fmt: skip
        if log is not None:
            argv += ["--packet-log", str(log)]
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
        lk = Linkem(proc, stats)
        started.append(lk)
        deadline = time.monotonic() + 5
        while not ready.exists():
            assert proc.poll() is None, f"linkem exited: {proc.stderr.read()}"  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "linkem did not become ready"
            time.sleep(0.02)
        return lk

    yield start
    for lk in started:
        if lk.proc.poll() is None:
            lk.proc.kill()
            lk.proc.wait()


def _ping(topo: Topo, count: int, interval_s: float, size: int = 56) -> tuple[int, list[float]]:
    quiet = ["-q"] if count > 200 else []
    argv = ["ping", "-n", *quiet, "-c", str(count), "-i", str(interval_s), "-s", str(size),
            "-W", "1", IP_B]  # fmt: skip
    out = _nsx(topo.ns_a, *argv, check=False, timeout=count * interval_s + 20).stdout
    received = int(re.search(r"(\d+) received", out).group(1))  # type: ignore[union-attr]
    return received, [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]


def _finals(lines: list[dict]) -> dict[str, dict]:
    return {x["dir"]: x for x in lines if x["final"]}


pytestmark.append(pytest.mark.skipif(shutil.which("ping") is None, reason="needs ping"))


def test_delay_rtt_is_twice_the_delay(topo: Topo, start_linkem, tmp_path: Path) -> None:
    log = tmp_path / "packets.jsonl"
    lk = start_linkem(_direction(delay_us=10_000), _direction(delay_us=10_000), log=log)
    _ping(topo, 3, 0.05)  # ARP
    received, rtts = _ping(topo, 40, 0.05)
    lines = lk.stop()
    assert received == 40
    rtts.sort()
    median = rtts[len(rtts) // 2]
    assert 20.0 <= rtts[0] and median < 22.0, rtts
    fin = _finals(lines)
    assert set(fin) == {"a_to_b", "b_to_a"}
    assert fin["a_to_b"]["departures"] >= 43 and fin["b_to_a"]["departures"] >= 43
    # The packet log has one line per packet, with the model's 10 ms in it.
    recs = [json.loads(x) for x in log.read_text().splitlines()]
    sent = [r for r in recs if r["fate"] == "sent"]
    assert len(sent) == fin["a_to_b"]["departures"] + fin["b_to_a"]["departures"]
    assert all(abs(r["t_out_us"] - r["t_in_us"] - 10_000) < 1 for r in sent)


def test_iid_loss_rate(topo: Topo, start_linkem) -> None:
    lk = start_linkem(_direction(loss={"kind": "iid", "p": 0.1}), _direction())
    _ping(topo, 2, 0.05)
    n = 2000
    received, _ = _ping(topo, n, 0.002)
    fin = _finals(lk.stop())["a_to_b"]
    loss = 1 - received / n
    assert abs(loss - 0.10) < 0.03, loss
    assert abs(fin["drops_loss"] / fin["arrivals"] - 0.10) < 0.03, fin


def test_rate_with_iperf3_udp(topo: Topo, start_linkem) -> None:
    if shutil.which("iperf3") is None:
        pytest.skip("needs iperf3")
    rate_bps = 20_000_000
    queue = {"limit_bytes": 60_000, "limit_packets": None, "drop": "tail"}
    constant = {"kind": "constant", "rate_bps": rate_bps}
    lk = start_linkem(_direction(rate=constant, queue=queue), _direction(rate=constant))
    server = subprocess.Popen(
        ["ip", "netns", "exec", topo.ns_b, "iperf3", "-s", "-1", "-J", "-p", "5213"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        time.sleep(0.5)
        _nsx(topo.ns_a, "iperf3", "-c", IP_B, "-p", "5213", "-u", "-b", "30M", "-l", "1400",
             "-t", "4", "-J", timeout=40)  # fmt: skip
        out, _ = server.communicate(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    lines = lk.stop()
    end = json.loads(out)["end"]
    got_bps = end.get("sum_received", end["sum"])["bits_per_second"]
    # iperf3 counts UDP payload; the link serialises whole frames (1400 + 42 bytes).
    want_bps = rate_bps * 1400 / 1442
    assert abs(got_bps - want_bps) / want_bps < 0.10, (got_bps, want_bps)
    busy = [x for x in lines if x["dir"] == "a_to_b" and not x["final"] and x["drops_queue"] > 0]
    # Seconds fully inside the 4-s iperf3 run (the first and last are partial).
    full = busy[1:-1]
    assert full, f"the queue overflowed in {len(busy)} seconds only: the link was not saturated"
    for x in full:
        assert abs(x["bytes_out"] * 8 - rate_bps) / rate_bps < 0.10, x
    assert _finals(lines)["a_to_b"]["drops_queue"] > 0


def test_oversized_frames_are_counted(topo: Topo, start_linkem) -> None:
    lk = start_linkem(_direction(), _direction())
    _ping(topo, 2, 0.05)
    for ns, ifname in ((topo.ns_a, topo.if_a), (topo.ns_m, topo.if_ma)):
        _nsx(ns, "ip", "link", "set", ifname, "mtu", "3000")
    try:
        received, _ = _ping(topo, 5, 0.05, size=2000)
    finally:
        for ns, ifname in ((topo.ns_a, topo.if_a), (topo.ns_m, topo.if_ma)):
            _nsx(ns, "ip", "link", "set", ifname, "mtu", "1500")
    fin = _finals(lk.stop())["a_to_b"]
    assert received == 0
    assert fin["oversized"] >= 5, fin


def test_bad_config_exits_2_naming_the_key(linkem_bin: Path, tmp_path: Path) -> None:
    cfg = {"seed": 1, "a_to_b": _direction(loss={"kind": "iid", "p": 2}), "b_to_a": _direction()}
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(cfg))
    r = _run(str(linkem_bin), "--iface-a", "x", "--iface-b", "y", "--config", str(p),
             "--stats", str(tmp_path / "s"), check=False)  # fmt: skip
    assert r.returncode == 2
    assert "a_to_b.loss.p" in r.stderr


# ----------------------------------------------------------------------------- policer

POLICE_RATE_BPS = 10_000_000
POLICE_BURST_BYTES = 10 * 1514  # ten full frames

# Sends N back-to-back UDP datagrams of 1400 bytes (1442-byte frames) to IP:PORT.
_BURST_SENDER = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "for i in range(int(sys.argv[3])):\n"
    "    s.sendto(bytes(1400), (sys.argv[1], int(sys.argv[2])))\n"
)
# Counts datagrams on PORT until 1 s of silence (or 10 s), prints the count.
_COUNTER = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "s.bind(('0.0.0.0', int(sys.argv[1])))\n"
    "s.settimeout(10)\n"
    "n = 0\n"
    "try:\n"
    "    while True:\n"
    "        s.recv(2048)\n"
    "        n += 1\n"
    "        s.settimeout(1)\n"
    "except OSError:\n"
    "    pass\n"
    "print(n)\n"
)


def _policer_dir() -> dict:
    d = _direction(
        rate={"kind": "policer", "rate_bps": POLICE_RATE_BPS, "burst_bytes": POLICE_BURST_BYTES}
    )
    del d["queue"]
    return d


def test_policer_cuts_a_burst_and_holds_the_rate(topo: Topo, start_linkem, tmp_path: Path) -> None:
    import sys

    log = tmp_path / "police.jsonl"
    lk = start_linkem(_policer_dir(), _direction(), log=log)
    _ping(topo, 2, 0.05)  # ARP; then let the bucket refill (15 kB at 10 Mbit/s: 12 ms)
    time.sleep(0.2)
    # 1. A burst of 40 back-to-back 1442-byte frames against a 10-frame bucket.
    counter = subprocess.Popen(
        ["ip", "netns", "exec", topo.ns_b, sys.executable, "-c", _COUNTER, "5214"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(0.3)
    _nsx(topo.ns_a, sys.executable, "-c", _BURST_SENDER, IP_B, "5214", "40")
    received = int(counter.communicate(timeout=20)[0])
    # 2. Twice the rate for 3 s with iperf3 (if present): what passes is the rate.
    iperf = shutil.which("iperf3") is not None
    if iperf:
        server = subprocess.Popen(
            ["ip", "netns", "exec", topo.ns_b, "iperf3", "-s", "-1", "-J", "-p", "5215"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            time.sleep(0.5)
            _nsx(topo.ns_a, "iperf3", "-c", IP_B, "-p", "5215", "-u", "-b", "20M", "-l", "1400",
                 "-t", "3", "-J", timeout=40)  # fmt: skip
            out, _ = server.communicate(timeout=20)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    lines = lk.stop()
    recs = [json.loads(x) for x in log.read_text().splitlines()]
    burst = [r for r in recs if r["dir"] == "a_to_b" and r["bytes"] == 1442]
    burst = burst[:40]  # the burst's frames come first; iperf3's follow
    # The burst took at most ~2 ms to send: at most 10 frames of bucket + ~2 of refill pass.
    passed = sum(r["fate"] == "sent" for r in burst)
    assert len(burst) == 40 and 10 <= passed <= 13, [r["fate"] for r in burst]
    assert all(r["fate"] in ("sent", "drop_police") for r in burst)
    assert received == passed
    # No frame ever waited: the model's exit time is its arrival time (no delay configured).
    assert all(r["t_out_us"] == r["t_in_us"] for r in recs if r["dir"] == "a_to_b")
    if not iperf:
        pytest.skip("the burst part passed; the rate part needs iperf3")
    got_bps = json.loads(out)["end"]["sum_received"]["bits_per_second"]
    want_bps = POLICE_RATE_BPS * 1400 / 1442  # iperf3 counts payload, the bucket frames
    assert abs(got_bps - want_bps) / want_bps < 0.10, (got_bps, want_bps)
    # Seconds fully inside the iperf3 run: 20 Mbit/s of 1442-byte frames is 1734 frames/s.
    per_s = [x for x in lines if x["dir"] == "a_to_b" and not x["final"]]
    full = [x for x in per_s if x["arrivals"] >= 0.95 * 20e6 / 8 / 1442]
    assert full, f"no second fully inside the iperf3 run: {per_s}"
    for x in full:
        assert x["drops_police"] > 0, x
        assert abs(x["bytes_out"] * 8 - POLICE_RATE_BPS) / POLICE_RATE_BPS < 0.05, x
        assert x["queue_delay_ms_max"] == 0.0, x
