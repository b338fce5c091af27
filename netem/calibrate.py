"""`priolab calibrate`: measure how faithfully a backend emulates the link model.

Builds its own Mininet topology  neg (guest) — nee (emu) — neh (host), no switch, no
controller; nee forwards between nee-eth0 (guest side) and nee-eth1 (host side) through the
chosen backend. Offloads are off on every interface, IPv6 is off and ARP entries are static,
so the only packets crossing the link are the measurement's own.

Rates are counted on the wire as the emulator counts them: UDP payload + 8 (UDP) + 20 (IP) +
14 (Ethernet) bytes. iperf3 offers AT the configured rate (its -b is payload bit/s, scaled by
payload/frame so the frames arrive at exactly the configured rate): an offer above the rate
would measure the queue's drops, not the rate's accuracy.

    python -m netem.calibrate [--quick] [--backend auto|tc|userspace] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from netem.backend import LinkBackend
from netem.model import Link
from netem.probe import REPO_ROOT, choose_backend, get_backend, probe_kernel
from netem.rateprobe import blast, limited_by
from netem.resolve import expected_burst_len, expected_loss_rate, resolve_loss

PAYLOAD_BYTES = 1400
FRAME_OVERHEAD_BYTES = 8 + 20 + 14
FRAME_BYTES = PAYLOAD_BYTES + FRAME_OVERHEAD_BYTES
GUEST_IP, HOST_IP = "10.78.0.1", "10.78.0.2"
IPERF_PORT = 5271
PROBE_PORT = 5272

RATES_MBPS = [1, 10, 70, 200, 500, 1000]
MAX_RATE_LADDER_MBPS = [100, 200, 350, 500, 700, 1000, 1500, 2000, 3000]
QUICK_LADDER_MBPS = [100, 200, 350, 500, 700, 1000, 1500, 2000]
DELAY_MS = 10.5
DELAY_LINK_MBPS = 100.0
GE_LOSS_PCT, GE_BURST_PKTS = 2.0, 3.0
LOSS_PACKETS = 200_000
LOSS_PPS = 10_000
TRACE_STEPS_MBPS = [10, 30, 20, 40, 5, 25, 35, 15, 40, 20]
QUEUE_RATE_MBPS, QUEUE_LIMIT_BYTES, QUEUE_DELAY_MS = 10.0, 62_500, 5.0

TARGETS = {
    "rate_error_pct_max_1_to_500": 2.0,
    "rate_1000_fraction_min": 0.95,
    "delay_median_error_ms_max": 0.2,
    "delay_p99_error_ms_max": 1.0,
    "loss_rel_error_pct_max": 5.0,
    "burst_rel_error_pct_max": 10.0,
    "trace_correlation_min": 0.98,
}


# --------------------------------------------------------------------------- the topology


class MininetExec:
    """NodeExec on a Mininet host (argv lists through mnexec, never a shell)."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self.name = host.name

    def run(self, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        p = self.host.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = p.communicate(timeout=120)
        res = subprocess.CompletedProcess(argv, p.returncode, out, err)
        if check and p.returncode != 0:
            raise subprocess.CalledProcessError(p.returncode, argv, out, err)
        return res

    def popen(self, argv: list[str], *, stdout: Any, stderr: Any) -> subprocess.Popen[bytes]:
        return self.host.popen(argv, stdout=stdout, stderr=stderr, cwd=str(REPO_ROOT))


class Topo:
    """neg — nee — neh with Mininet, no switch, controller=None."""

    NODES = ("neg", "nee", "neh")

    def __init__(self) -> None:
        from mininet.net import Mininet

        from priolab import clean as cleaning

        # `priolab clean` removes what a killed calibration leaves from this record alone
        self._state = f"calibrate-{os.getpid()}"
        cleaning.write_state(self._state, {"nodes": list(self.NODES), "netns": []})
        self.net = Mininet(topo=None, controller=None, build=False, autoSetMacs=True)
        g = self.net.addHost("neg", ip=f"{GUEST_IP}/24")
        e = self.net.addHost("nee", ip=None)
        h = self.net.addHost("neh", ip=f"{HOST_IP}/24")
        self.net.addLink(g, e)  # neg-eth0 — nee-eth0
        self.net.addLink(e, h)  # nee-eth1 — neh-eth0
        self.net.build()
        cleaning.write_state(self._state, {
            "nodes": list(self.NODES),
            "netns": [os.readlink(f"/proc/{n.pid}/ns/net") for n in (g, e, h)],
            "interfaces": ["neg-eth0", "nee-eth0", "nee-eth1", "neh-eth0"],
        })  # fmt: skip
        self.guest, self.emu, self.host = MininetExec(g), MininetExec(e), MininetExec(h)
        for node, devs in (
            (self.guest, ["neg-eth0"]),
            (self.emu, ["nee-eth0", "nee-eth1"]),
            (self.host, ["neh-eth0"]),
        ):
            node.run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"], check=False)
            node.run(["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"], check=False)
            for dev in devs:
                node.run(
                    ["ethtool", "-K", dev, "tx", "off", "rx", "off", "gso", "off", "tso", "off",
                     "gro", "off"], check=False,
                )  # fmt: skip
                node.run(["ip", "link", "set", dev, "up"])
        for dev in ("nee-eth0", "nee-eth1"):
            self.emu.run(["ip", "addr", "flush", "dev", dev])
        gmac, hmac = g.intf("neg-eth0").MAC(), h.intf("neh-eth0").MAC()
        self.guest.run(["ip", "neigh", "replace", HOST_IP, "lladdr", hmac, "dev", "neg-eth0"])
        self.host.run(["ip", "neigh", "replace", GUEST_IP, "lladdr", gmac, "dev", "neh-eth0"])

    def stop(self) -> None:
        from priolab import clean as cleaning

        self.net.stop()
        (cleaning.STATE_DIR / f"{self._state}.json").unlink(missing_ok=True)


@contextlib.contextmanager
def bridged(emu: MininetExec) -> Iterator[None]:
    """The direct path: a plain Linux bridge in nee, no emulation."""
    emu.run(["ip", "link", "add", "name", "nebrd", "type", "bridge"])
    try:
        for dev in ("nee-eth0", "nee-eth1"):
            emu.run(["ip", "link", "set", dev, "master", "nebrd"])
        emu.run(["ip", "link", "set", "nebrd", "up"])
        yield
    finally:
        emu.run(["ip", "link", "del", "nebrd"], check=False)


# --------------------------------------------------------------------------- helpers


def payload_bps(wire_bps: float, payload: int = PAYLOAD_BYTES) -> float:
    return wire_bps * payload / (payload + FRAME_OVERHEAD_BYTES)


class Bench:
    def __init__(
        self, backend_name: str, quick: bool, workdir: Path, log: Callable[[str], None]
    ) -> None:
        self.backend_name, self.quick, self.workdir, self.log = backend_name, quick, workdir, log
        self.topo = Topo()
        self.procs: list[subprocess.Popen[bytes]] = []

    @contextlib.contextmanager
    def link(self, tag: str, cfg: dict[str, Any], seed: int = 1) -> Iterator[dict[str, Any]]:
        backend: LinkBackend = get_backend(self.backend_name)
        link = Link.model_validate(cfg)
        applied = backend.apply(
            self.topo.emu, "nee-eth0", "nee-eth1", link,
            base_dir=self.workdir, run_dir=self.workdir / tag, seed=seed,
        )  # fmt: skip
        applied["t_applied_ns"] = time.time_ns()
        try:
            yield applied
        finally:
            applied["stop"] = backend.stop()

    def iperf_udp(self, wire_mbps: float, seconds: float) -> dict[str, Any]:
        """iperf3 UDP guest → host at wire_mbps on the wire; the receiver's figures."""
        server = self.topo.host.popen(
            ["iperf3", "-s", "-1", "-J", "-p", str(IPERF_PORT)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.procs.append(server)
        time.sleep(0.3)
        bps = payload_bps(wire_mbps * 1e6)
        client = self.topo.guest.run(
            ["iperf3", "-c", HOST_IP, "-p", str(IPERF_PORT), "-u", "-b", f"{bps:.0f}",
             "-l", str(PAYLOAD_BYTES), "-t", str(seconds), "-J"], check=False,
        )  # fmt: skip
        try:
            out, _ = server.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            out, _ = server.communicate()
        self.procs.remove(server)
        try:
            srv_json = json.loads(out)
            srv_end = srv_json["end"]
            steady = [
                iv["sum"] for iv in srv_json.get("intervals", [])[1:] if iv["sum"]["seconds"] >= 0.5
            ]
            srv, srv_rx = srv_end["sum"], srv_end["sum_received"]
            cli = json.loads(client.stdout)["end"]["sum"]
        except (json.JSONDecodeError, KeyError) as e:
            raise RuntimeError(f"iperf3 failed: {e}: {client.stderr[-500:]}") from e
        wire = FRAME_BYTES / PAYLOAD_BYTES
        return {
            "offered_mbps": cli["bits_per_second"] * wire / 1e6,
            # steady state: receiver intervals after the first second (no start/end effects)
            "achieved_mbps": (
                sum(iv["bytes"] for iv in steady) * 8 / sum(iv["seconds"] for iv in steady)
                if steady
                else srv_rx["bits_per_second"]
            )
            * wire
            / 1e6,
            "achieved_whole_test_mbps": srv_rx["bits_per_second"] * wire / 1e6,
            "loss_pct": float(srv.get("lost_percent", 0.0)),
            "packets": int(srv.get("packets", 0)),
        }

    def blast(self, wire_mbps: float, seconds: float) -> dict[str, Any]:
        """lkprobe guest → host at wire_mbps (the max-rate ladders: iperf3 cannot fill them)."""
        return blast(self.topo.guest, self.topo.host, HOST_IP, IPERF_PORT, wire_mbps, seconds)

    def probe(
        self, pps: float, count: int, size: int, tag: str, extra_s: float = 2.0
    ) -> dict[str, np.ndarray]:
        out = self.workdir / f"{tag}.npz"
        py = [sys.executable, "-m", "netem.udpprobe"]
        recv = self.topo.host.popen(
            py + ["recv", "--port", str(PROBE_PORT), "--out", str(out),
                  "--duration", str(count / pps + extra_s + 5), "--idle", str(extra_s)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.procs.append(recv)
        time.sleep(0.5)
        self.topo.guest.run(
            py + ["send", "--dst", HOST_IP, "--port", str(PROBE_PORT), "--pps", str(pps),
                  "--count", str(count), "--size", str(size)],
        )  # fmt: skip
        _, err = recv.communicate(timeout=count / pps + extra_s + 30)
        self.procs.remove(recv)
        if recv.returncode != 0:
            raise RuntimeError(f"udpprobe recv failed: {err.decode(errors='replace')[-500:]}")
        with np.load(out) as z:
            return {k: z[k] for k in z.files}

    def kill_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=3)
                if p.poll() is None:
                    p.kill()
        self.procs = []

    # ----------------------------------------------------------------- measurements

    def measure_rate(self) -> list[dict[str, Any]]:
        seconds = 4 if self.quick else 10
        rows = []
        for mbps in RATES_MBPS:
            limit = max(64_000, int(mbps * 1e6 / 8 * 0.1))  # 100 ms of the rate
            cfg = {d: {"rate_mbps": mbps, "queue": {"limit_bytes": limit}}
                   for d in ("uplink", "downlink")}  # fmt: skip
            with self.link(f"rate-{mbps}", cfg) as applied:
                r = self.iperf_udp(mbps, seconds)
            r["configured_mbps"] = mbps
            r["oversized_frames"] = applied["stop"].get("oversized_frames")
            r["emulator_uplink"] = applied["stop"].get("uplink")  # where the drops happened
            self.log(f"rate {mbps:>5} Mbit/s: achieved {r['achieved_mbps']:.2f}, "
                     f"offered {r['offered_mbps']:.2f}, loss {r['loss_pct']:.3f} %")  # fmt: skip
            rows.append(r)
        return rows

    def ladder(self, run: Callable[[float], dict[str, Any]]) -> tuple[float, list[Any]]:
        """Step the offered load up; the best receiver rate with < 0.1 % loss. Steps go on
        while loss < 10 % so the record shows where it breaks."""
        seconds_ladder = QUICK_LADDER_MBPS if self.quick else MAX_RATE_LADDER_MBPS
        best, steps = 0.0, []
        for mbps in seconds_ladder:
            r = run(mbps)
            r["offered_target_mbps"] = mbps
            steps.append(r)
            self.log(f"  offered {mbps:>5}: achieved {r['achieved_mbps']:.1f}, "
                     f"loss {r['loss_pct']:.3f} %")  # fmt: skip
            if r["loss_pct"] < 0.1:
                best = max(best, r["achieved_mbps"])
            if r["loss_pct"] >= 10.0:
                break
        return best, steps

    def measure_max_rate(self) -> tuple[float, list[Any]]:
        seconds = 3 if self.quick else 5
        cfg = {d: {"unlimited": True, "queue": {"limit_packets": 10_000}}
               for d in ("uplink", "downlink")}  # fmt: skip

        def run(mbps: float) -> dict[str, Any]:
            with self.link(f"max-{mbps}", cfg):
                return self.blast(mbps, seconds)

        self.log("max rate through the emulator (unlimited):")
        return self.ladder(run)

    def measure_direct(self) -> tuple[float, list[Any], dict[str, Any]]:
        """Max rate over a plain bridge, and the one-way delay of that path (the noise floor
        of the delay measurement: same probe, no emulator)."""
        seconds = 3 if self.quick else 5
        self.log("direct path (Linux bridge, no emulator):")
        with bridged(self.topo.emu):
            best, steps = self.ladder(lambda mbps: self.blast(mbps, seconds))
            time.sleep(0.5)
            z = self.probe(200, 1000 if self.quick else 4000, 64, "direct-delay", extra_s=1.0)
        owd_ms = (z["recv_ns"] - z["send_ns"]) / 1e6
        floor = {
            "median_ms": float(np.median(owd_ms)),
            "p99_ms": float(np.percentile(owd_ms, 99)),
            "samples": int(len(owd_ms)),
        }
        self.log(f"direct path one-way delay: median {floor['median_ms']:.3f} ms, "
                 f"p99 {floor['p99_ms']:.3f} ms")  # fmt: skip
        return best, steps, floor

    def measure_delay(self) -> list[dict[str, Any]]:
        count = 1000 if self.quick else 4000
        cfg = {d: {"rate_mbps": DELAY_LINK_MBPS, "delay_ms": DELAY_MS}
               for d in ("uplink", "downlink")}  # fmt: skip
        rows = []
        for load_pct in (0, 50):
            with self.link(f"delay-{load_pct}", cfg):
                bg = None
                if load_pct:
                    bps = payload_bps(DELAY_LINK_MBPS * 1e6 * load_pct / 100)
                    srv = self.topo.host.popen(
                        ["iperf3", "-s", "-1", "-p", str(IPERF_PORT)],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    )  # fmt: skip
                    self.procs.append(srv)
                    time.sleep(0.3)
                    bg = self.topo.guest.popen(
                        ["iperf3", "-c", HOST_IP, "-p", str(IPERF_PORT), "-u", "-b",
                         f"{bps:.0f}", "-l", str(PAYLOAD_BYTES), "-t", str(count / 200 + 3)],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    )  # fmt: skip
                    self.procs.append(bg)
                    time.sleep(1.0)
                z = self.probe(200, count, 64, f"delay-{load_pct}", extra_s=1.0)
                if bg is not None:  # let iperf3 end by itself: no TCP retransmits later
                    for p in (bg, srv):
                        with contextlib.suppress(subprocess.TimeoutExpired):
                            p.wait(timeout=10)
                    self.kill_all()
                    time.sleep(0.5)
            err_ms = (z["recv_ns"] - z["send_ns"]) / 1e6 - DELAY_MS
            row: dict[str, Any] = {
                "configured_ms": DELAY_MS,
                "load_pct": load_pct,
                "median_error_ms": float(np.median(err_ms)) if len(err_ms) else None,
                "p99_error_ms": float(np.percentile(err_ms, 99)) if len(err_ms) else None,
                "min_error_ms": float(err_ms.min()) if len(err_ms) else None,
                "samples": int(len(err_ms)),
                "sent": count,
            }
            self.log(
                f"delay {DELAY_MS} ms at {load_pct} % load: median error "
                f"{row['median_error_ms']:.3f} ms, p99 {row['p99_error_ms']:.3f} ms"
            )
            rows.append(row)
        return rows

    def measure_loss(self) -> dict[str, Any]:
        loss_cfg = {"model": "gilbert_elliott_mean", "loss_pct": GE_LOSS_PCT,
                    "burst_pkts": GE_BURST_PKTS}  # fmt: skip
        cfg = {
            "uplink": {"unlimited": True, "loss": loss_cfg, "queue": {"limit_packets": 10_000}},
            "downlink": {"unlimited": True, "queue": {"limit_packets": 10_000}},
        }
        second = 50_000 if self.quick else LOSS_PACKETS
        patterns, arrivals = [], []
        for i, count in enumerate((LOSS_PACKETS, second)):
            with self.link(f"loss-{i}", cfg, seed=1234) as applied:
                z = self.probe(LOSS_PPS, count, 64, f"loss-{i}")
            got = np.zeros(count, dtype=bool)
            got[z["seq"][z["seq"] < count]] = True
            patterns.append(got)
            arrivals.append((applied["stop"].get("uplink") or {}).get("arrivals"))
            self.log(f"loss run {i}: {count} sent, {int(got.sum())} received; "
                     f"emulator: {applied['stop'].get('uplink')}")  # fmt: skip
        lost = ~patterns[0]
        starts = int(np.count_nonzero(lost[1:] & ~lost[:-1]) + int(lost[0]))
        rl = resolve_loss(Link.model_validate(cfg).uplink.loss)
        n = len(patterns[1])
        return {
            "model": loss_cfg,
            "expected_loss_pct": expected_loss_rate(rl) * 100,
            "measured_loss_pct": float(lost.mean() * 100),
            "expected_burst_pkts": expected_burst_len(rl),
            "measured_burst_pkts": float(lost.sum() / starts) if starts else 0.0,
            "packets": int(len(lost)),
            "same_seed_same_pattern": bool(np.array_equal(patterns[0][:n], patterns[1])),
            "same_seed_compared_packets": n,
            "emulator_arrivals": arrivals,
            "sent": [LOSS_PACKETS, second],
        }

    def measure_trace(self) -> dict[str, Any]:
        steps = TRACE_STEPS_MBPS
        trace_file = self.workdir / "calib-trace.txt"
        trace_file.write_text("".join(f"{i} {r}\n" for i, r in enumerate(steps)))
        cfg = {
            "uplink": {"trace": {"file": str(trace_file), "format": "schedule"},
                       "queue": {"limit_bytes": 100_000}},
            "downlink": {"unlimited": True, "queue": {"limit_packets": 1000}},
        }  # fmt: skip
        send_mbps = 1.25 * max(steps)
        pps = send_mbps * 1e6 / (FRAME_BYTES * 8)
        n_s = len(steps) if self.quick else 2 * len(steps)
        with self.link("trace", cfg) as applied:
            z = self.probe(pps, int(pps * (n_s + 1.5)), PAYLOAD_BYTES, "trace", extra_s=1.0)
        t0 = applied["t_applied_ns"]
        t_s = (z["recv_ns"] - t0) / 1e9
        wire_bits = (z["size"] + FRAME_OVERHEAD_BYTES) * 8
        best: dict[str, Any] | None = None
        for lag_ms in range(-300, 301, 10):
            edges = np.arange(1, n_s + 1) + lag_ms / 1000.0  # skip the first second
            meas = np.histogram(t_s, bins=edges, weights=wire_bits)[0] / 1e6
            exp = np.array([steps[int(k) % len(steps)] for k in np.arange(1, n_s)], dtype=float)
            if meas.std() == 0:
                continue
            corr = float(np.corrcoef(meas, exp)[0, 1])
            if best is None or corr > best["correlation"]:
                best = {
                    "correlation": corr,
                    "mean_error_pct": float(np.mean(np.abs(meas - exp) / exp) * 100),
                    "lag_ms": lag_ms,
                    "measured_mbps": meas.round(3).tolist(),
                    "expected_mbps": exp.tolist(),
                }
        if best is None:
            raise RuntimeError("trace: nothing received")
        self.log(f"trace: correlation {best['correlation']:.4f}, mean error "
                 f"{best['mean_error_pct']:.2f} % (lag {best['lag_ms']} ms)")  # fmt: skip
        return best

    def measure_queue(self) -> dict[str, Any]:
        cfg = {
            "uplink": {"rate_mbps": QUEUE_RATE_MBPS, "delay_ms": QUEUE_DELAY_MS,
                       "queue": {"limit_bytes": QUEUE_LIMIT_BYTES}},
            "downlink": {"rate_mbps": QUEUE_RATE_MBPS, "delay_ms": QUEUE_DELAY_MS},
        }  # fmt: skip
        pps = 2 * QUEUE_RATE_MBPS * 1e6 / (FRAME_BYTES * 8)
        with self.link("queue", cfg):
            z = self.probe(pps, int(pps * 3), PAYLOAD_BYTES, "queue", extra_s=1.0)
        owd_ms = (z["recv_ns"] - z["send_ns"]) / 1e6
        r = {
            "expected_max_ms": QUEUE_LIMIT_BYTES * 8 / (QUEUE_RATE_MBPS * 1e6) * 1000,
            "measured_max_ms": float(owd_ms.max() - QUEUE_DELAY_MS),
            "measured_p99_ms": float(np.percentile(owd_ms, 99) - QUEUE_DELAY_MS),
            "measured_p50_ms_second_half": float(
                np.median(owd_ms[len(owd_ms) // 2 :]) - QUEUE_DELAY_MS
            ),
            "offered_mbps": 2 * QUEUE_RATE_MBPS,
        }
        self.log(f"queue: expected max {r['expected_max_ms']:.2f} ms, "
                 f"measured {r['measured_max_ms']:.2f} ms")  # fmt: skip
        return r


# --------------------------------------------------------------------------- verdicts


def verdicts(res: dict[str, Any]) -> list[dict[str, Any]]:
    out = []

    def add(name: str, target: str, value: float | None, ok: bool | None) -> None:
        out.append({"name": name, "target": target, "value": value, "pass": ok})

    for r in res.get("rate", []):
        err = (r["achieved_mbps"] - r["configured_mbps"]) / r["configured_mbps"] * 100
        if r["configured_mbps"] <= 500:
            add(f"rate {r['configured_mbps']} Mbit/s error %", "within ±2 %", round(err, 3),
                abs(err) <= TARGETS["rate_error_pct_max_1_to_500"])  # fmt: skip
        else:
            frac = r["achieved_mbps"] / r["configured_mbps"]
            add(f"rate {r['configured_mbps']} Mbit/s fraction", ">= 0.95", round(frac, 4),
                frac >= TARGETS["rate_1000_fraction_min"])  # fmt: skip
    for d in res.get("delay", []):
        add(f"delay median error ms (load {d['load_pct']} %)", "<= 0.2",
            d["median_error_ms"], abs(d["median_error_ms"]) <= 0.2)  # fmt: skip
        add(f"delay p99 error ms (load {d['load_pct']} %)", "<= 1.0",
            d["p99_error_ms"], abs(d["p99_error_ms"]) <= 1.0)  # fmt: skip
    if "loss" in res:
        lo = res["loss"]
        rel = abs(lo["measured_loss_pct"] / lo["expected_loss_pct"] - 1) * 100
        add("GE loss rate rel. error %", "<= 5", round(rel, 2), rel <= 5)
        relb = abs(lo["measured_burst_pkts"] / lo["expected_burst_pkts"] - 1) * 100
        add("GE burst length rel. error %", "<= 10", round(relb, 2), relb <= 10)
        add("same seed, same pattern", "true", None, lo["same_seed_same_pattern"])
    if "trace" in res:
        c = res["trace"]["correlation"]
        add("trace correlation", ">= 0.98", round(c, 4), c >= 0.98)
    return out


def git_commit() -> str:
    try:
        sha = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain"],
                               capture_output=True, text=True).stdout.strip()  # fmt: skip
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def calibrate(backend: str, quick: bool, log: Callable[[str], None] = print) -> dict[str, Any]:
    support = probe_kernel()
    name, reason = choose_backend(backend, support)  # type: ignore[arg-type]
    log(f"backend: {name} ({reason})")
    res: dict[str, Any] = {
        "backend": name,
        "backend_reason": reason,
        "host": platform.node(),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "git_commit": git_commit(),
        "quick": quick,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "loadavg_start": os.getloadavg(),
    }
    workdir = Path(tempfile.mkdtemp(prefix="ne-calib-"))
    res["workdir"] = str(workdir)
    bench = Bench(name, quick, workdir, log)
    t_start = time.monotonic()
    try:
        res["rate"] = bench.measure_rate()
        res["max_rate_mbps"], res["max_rate_steps"] = bench.measure_max_rate()
        res["direct_path_mbps"], res["direct_path_steps"], res["direct_path_delay"] = (
            bench.measure_direct()
        )
        res["max_rate_limited_by"] = limited_by(
            res["max_rate_mbps"], res["direct_path_mbps"], res["max_rate_steps"],
            res["direct_path_steps"],
        )  # fmt: skip
        res["delay"] = bench.measure_delay()
        res["loss"] = bench.measure_loss()
        res["trace"] = bench.measure_trace()
        res["queue"] = bench.measure_queue()
    finally:
        bench.kill_all()
        bench.topo.stop()
        res["duration_s"] = round(time.monotonic() - t_start, 1)
        res["loadavg_end"] = os.getloadavg()
    res["verdicts"] = verdicts(res)
    return res


def print_table(res: dict[str, Any], log: Callable[[str], None] = print) -> None:
    log("")
    log(f"{'target':<42} {'wanted':<12} {'value':>10}  verdict")
    for v in res["verdicts"]:
        val = "" if v["value"] is None else f"{v['value']:.4g}"
        log(f"{v['name']:<42} {v['target']:<12} {val:>10}  {'PASS' if v['pass'] else 'FAIL'}")

    def best_any(key: str) -> float:
        return max((s["achieved_mbps"] for s in res.get(key, [])), default=0.0)

    log(f"max rate with < 0.1 % loss: emulator {res.get('max_rate_mbps'):.1f} Mbit/s, "
        f"direct path {res.get('direct_path_mbps'):.1f} Mbit/s (highest at any loss: "
        f"{best_any('max_rate_steps'):.1f} / {best_any('direct_path_steps'):.1f})")  # fmt: skip
    if "max_rate_limited_by" in res:
        log(f"the emulator's loss-free ceiling was limited by: {res['max_rate_limited_by']}")
    if "direct_path_delay" in res:
        dd = res["direct_path_delay"]
        log(f"direct path one-way delay (noise floor): median {dd['median_ms']:.3f} ms, "
            f"p99 {dd['p99_ms']:.3f} ms")  # fmt: skip
    log(f"load average at start/end: {res.get('loadavg_start')} / {res.get('loadavg_end')}")
    if "queue" in res:
        q = res["queue"]
        log(f"queue: expected max {q['expected_max_ms']:.2f} ms, "
            f"measured {q['measured_max_ms']:.2f} ms")  # fmt: skip


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--json", type=Path, help="write the results to this JSON file")
    ap.add_argument("--quick", action="store_true", help="shorter runs (about 2-3 minutes)")
    ap.add_argument("--backend", choices=["auto", "tc", "userspace"], default="auto")


def run_args(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("calibrate needs root (Mininet)", file=sys.stderr)
        return 2
    missing = [t for t in ("iperf3", "ethtool", "tc", "mnexec") if shutil.which(t) is None]
    if missing:
        print(f"calibrate needs these tools on PATH: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        res = calibrate(args.backend, args.quick)
    except RuntimeError as e:
        print(f"calibrate: {e}", file=sys.stderr)
        return 1
    print_table(res)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=1))
        print(f"wrote {args.json}")
    return 0


def register(subparsers: Any) -> None:
    """Add the `calibrate` sub-command to priolab's CLI (dispatch: args.func(args) -> int)."""
    ap = subparsers.add_parser("calibrate", help="measure the link emulator's accuracy")
    add_arguments(ap)
    ap.set_defaults(func=run_args)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m netem.calibrate", description=__doc__)
    add_arguments(ap)
    return run_args(ap.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
