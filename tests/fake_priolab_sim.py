#!/usr/bin/env python3
"""A FAKE of `priolab-sim run SPEC.json`: it follows the binary's contract (notes/sim-contract.md)
on the outside and simulates nothing. The real binary is endpoints/sim (helper B's crate); this
fake exists so that the harness's half of the sim site (priolab/engine/sites/sim.py) is tested
before, and independently of, that binary. Standard library only.

What it writes, as the contract says the real one does: every process's stdout/stderr files,
what the endpoints would leave in their `--log-dir` and `--cert-out`, the link's stats lines in
linkem's format (`linkem-stats.jsonl`: per second and final, both directions), and
sim-report.json (times, exit codes, cancellations, link counters, receive-buffer drops).

FAKE_SIM_MODE picks a behaviour, to test how the harness judges it:
  ok (default)      every process that runs to the end exits 0 at its --duration-s
  exit-code         the first such process exits with 1 (a failure of the program)
  peer-lost         the first such process exits with 3 (the QUIC endpoints' "peer lost":
                    the protocol lost its session)
  no-report         no sim-report.json (the binary exits 0 all the same)
  no-stats          no link stats file
  no-logs           the first process's stderr file is not written
  crash             writes nothing, exits 101 (a Rust panic's code) with a message
  drops             every socket of a node with a recv_buffer_bytes reports 7 drops
  no-packet-log     no packet log, though the SPEC asks for one (link.packet_log)
  no-capture        no pcap files, though the SPEC asks for them (capture)
"""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path
from typing import Any

DRAIN_S = 1.0  # a run-to-end process of the fake ends this long after its --duration-s


def _arg(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


def _stats_lines(virtual_s: float) -> list[dict[str, Any]]:
    lines = []
    for t in range(1, int(virtual_s) + 1):
        for d in ("a_to_b", "b_to_a"):
            lines.append(
                {
                    "t_s": float(t),
                    "dir": d,
                    "arrivals": 100,
                    "departures": 100,
                    "bytes_out": 120000,
                    "drops_queue": 0,
                    "drops_loss": 1,
                    "drops_police": 0,
                    "oversized": 0,
                    "queue_bytes": 0,
                    "queue_delay_ms_mean": 0.5,
                    "queue_delay_ms_max": 1.0,
                    "final": False,
                }
            )
    n = int(virtual_s)
    for d in ("a_to_b", "b_to_a"):
        lines.append(
            {
                "t_s": virtual_s,
                "dir": d,
                "arrivals": 100 * n,
                "departures": 100 * n,
                "bytes_out": 120000 * n,
                "drops_queue": 0,
                "drops_loss": n,
                "drops_police": 0,
                "oversized": 0,
                "queue_bytes": 0,
                "queue_delay_ms_mean": 0.5,
                "queue_delay_ms_max": 1.0,
                "final": True,
            }
        )
    return lines


def run(spec: dict[str, Any], mode: str) -> int:
    if mode == "crash":
        print("thread 'main' panicked: fake crash", file=sys.stderr)
        return 101
    procs = spec["processes"]
    enders = [p for p in procs if p["runs_to_end"]]
    ends = {}
    for p in enders:
        dur = _arg(p["argv"], "--duration-s")
        ends[p["name"]] = min(spec["deadline_s"], p["start_at_s"] + float(dur or 1.0) + DRAIN_S)
    virtual_s = max(ends.values(), default=spec["deadline_s"])
    report_procs = []
    for i, p in enumerate(procs):
        for key in ("stdout", "stderr"):
            if not (mode == "no-logs" and i == 0 and key == "stderr"):
                Path(p[key]).write_text(f"fake {p['name']}\n")
        cwd = Path(p["cwd"])
        log_dir = _arg(p["argv"], "--log-dir")
        if log_dir is not None:
            d = cwd / log_dir  # absolute stays absolute
            d.mkdir(parents=True, exist_ok=True)
            (d / "fake-endpoint.json").write_text(json.dumps({"fake": True, "name": p["name"]}))
        cert = _arg(p["argv"], "--cert-out")
        if cert is not None:
            (cwd / cert).parent.mkdir(parents=True, exist_ok=True)
            (cwd / cert).write_bytes(b"fake certificate")
        ender = p["name"] in ends
        first = p is (enders[0] if enders else None)
        code = {"exit-code": 1, "peer-lost": 3}.get(mode, 0) if first else 0
        report_procs.append(
            {
                "node": p["node"],
                "name": p["name"],
                "exit_code": code if ender else None,
                "started_at_s": p["start_at_s"],
                "ended_at_s": ends.get(p["name"], virtual_s),
                "cancelled": not ender,
            }
        )
    if mode != "no-stats":
        with open(spec["link"]["stats"], "w") as f:
            for line in _stats_lines(virtual_s):
                f.write(json.dumps(line) + "\n")
    log = spec["link"].get("packet_log")  # beyond the contract's example: linkem's packet log
    if log is not None and mode != "no-packet-log":
        with open(log, "w") as f:
            for i in range(10):
                rec = {"dir": "a_to_b", "t_in_us": 1000 * i, "t_out_us": 1000 * i + 500,
                       "bytes": 1200, "fate": "sent"}  # fmt: skip
                f.write(json.dumps(rec) + "\n")
    capture = spec.get("capture")  # beyond the contract's example: a pcap per node
    if capture is not None and mode != "no-capture":
        for pcap in capture["files"].values():  # libpcap's header (ns, Ethernet), no packet
            Path(pcap).write_bytes(struct.pack("=IHHiIII", 0xA1B23C4D, 2, 4, 0, 0,
                                               capture["snaplen_bytes"], 1))  # fmt: skip
    sockets = {}
    for n in spec["nodes"].values():
        drops = 7 if mode == "drops" and n["recv_buffer_bytes"] is not None else 0
        sockets[f"{n['addr']}:4433"] = {"recv_buffer_drops": drops}
    wall_s = virtual_s / 50.0
    report = {
        "virtual_s": virtual_s,
        "wall_s": wall_s,
        "cpu_s": wall_s * 0.98,
        "speedup": round(virtual_s / wall_s, 2),
        "processes": report_procs,
        "link": {"a_to_b": {"departures": 100}, "b_to_a": {"departures": 100}},
        "sockets": sockets,
        "errors": [],
    }
    if mode != "no-report":
        Path(spec["report"]).write_text(json.dumps(report))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "run":
        print("usage: fake_priolab_sim.py run SPEC.json", file=sys.stderr)
        return 2
    spec = json.loads(Path(argv[1]).read_text())
    return run(spec, os.environ.get("FAKE_SIM_MODE", "ok"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
