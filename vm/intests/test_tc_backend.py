"""The tc backend on Debian's stock kernel: every link-model feature, as rendered by
netem/tc.py, read back with `tc -s qdisc/class` and measured with packets.

Bounds are statistical (binomial intervals, delays at least the configured value), never tight
timings: the VM is emulated (TCG) and slow.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from netem.tc import NO_SEED_NOTE, local_netem_seed
from vm.linkbench import (
    ARRIVAL_SLACK_MS,
    IF_MB,
    Bench,
    delay_summary,
    fifo_reorder_bound,
    reorderings,
    wire_mbps,
)

UNLIMITED_Q = {"unlimited": True, "queue": {"limit_packets": 1000}}


def up(**uplink: object) -> dict:
    """A link shaped on the uplink only (the downlink unlimited, not shaped)."""
    return {"uplink": uplink, "downlink": UNLIMITED_Q}


def qdisc_text(bench: Bench, dev: str = IF_MB) -> str:
    return bench.m.run(["tc", "-s", "qdisc", "show", "dev", dev]).stdout


def class_text(bench: Bench, dev: str = IF_MB) -> str:
    return bench.m.run(["tc", "-s", "class", "show", "dev", dev]).stdout


def qdisc_of(bench: Bench, kind: str, dev: str = IF_MB) -> dict:
    """The JSON of the one qdisc of `kind` on dev (tc -s -j qdisc show)."""
    found = [q for q in bench.tc_json("qdisc", "show", "dev", dev) if q["kind"] == kind]
    assert len(found) == 1, f"{kind} on {dev}: {qdisc_text(bench, dev)}"
    return found[0]


def test_stock_kernel() -> None:
    release = subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()
    assert release.endswith("-amd64"), release
    for mod in ("sch_netem", "sch_htb", "openvswitch"):
        res = subprocess.run(["modprobe", mod], capture_output=True, text=True)
        assert res.returncode == 0, f"{mod}: {res.stderr}"


def test_rate_read_back_and_measured(bench: Bench, record: dict) -> None:
    rate_mbps, size = 8.0, 1000
    link = up(rate_mbps=rate_mbps, queue={"limit_bytes": 20_000})
    pps = 1.5 * rate_mbps * 1e6 / ((size + 42) * 8)  # 1.5x the rate: the queue stays full
    with bench.link("tc", link, tag="rate") as applied:
        text = class_text(bench)
        assert re.search(r"class htb 2:1 .*rate 8Mbit ceil 8Mbit", text), text
        assert "bfifo 3:" in qdisc_text(bench) and "limit 20000b" in qdisc_text(bench)
        p = bench.probe(pps, int(pps * 4), size, tag="rate")
        stats = qdisc_of(bench, "bfifo")
    assert applied["stop"]["errors"] == []
    t0, t1 = p.recv_ns.min() + 500_000_000, p.recv_ns.max() - 200_000_000
    got = wire_mbps(p, t0, t1)
    record["tc_rate"] = {"configured_mbps": rate_mbps, "measured_mbps": got}
    assert 0.85 * rate_mbps <= got <= 1.05 * rate_mbps
    assert stats["drops"] > 0, "offered 1.5x the rate: the FIFO must drop"


def test_delay(bench: Bench, record: dict) -> None:
    with bench.link("tc", up(unlimited=True, delay_ms=30.0, queue={"limit_packets": 1000})):
        assert "delay 30ms" in qdisc_text(bench)
        p = bench.probe(100, 300, tag="delay")
    s = delay_summary(p)
    record["tc_delay_30ms"] = s
    assert s["received"] == 300
    assert s["min_ms"] >= 30.0  # never earlier than configured
    assert s["p50_ms"] < 30.0 + 15.0  # TCG adds ms, not tens of ms, at 100 packets/s


@pytest.mark.parametrize("reorder", [False, True], ids=["fifo", "reorder"])
def test_jitter(bench: Bench, record: dict, reorder: bool) -> None:
    delay_ms, jitter_ms = 30.0, 10.0
    link = up(unlimited=True, delay_ms=delay_ms, jitter_ms=jitter_ms, jitter_reorder=reorder,
              queue={"limit_packets": 1000})  # fmt: skip
    with bench.link("tc", link, tag=f"jitter-{reorder}"):
        text = qdisc_text(bench)
        assert re.search(r"delay 30ms\s+10ms", text), text
        # 500 packets/s: 2 ms apart, inside the 20 ms spread, so jitter can reorder
        p = bench.probe(500, 1500, tag=f"jitter-{reorder}")
    s = delay_summary(p)
    record[f"tc_jitter_reorder_{reorder}"] = s | {"reordered": reorderings(p)}
    assert s["received"] == 1500
    assert s["min_ms"] >= delay_ms - jitter_ms
    assert s["std_ms"] > jitter_ms / 4, "the delay must vary"
    # With reordering, a 20 ms spread over packets 2 ms apart reorders most of them; FIFO
    # jitter keeps netem's order up to the probe path's own few (fifo_reorder_bound, 1 %).
    # Reordering must exceed ten times that bound, so a netem that ignored FIFO order, which
    # reorders hundreds, fails the FIFO case and the two cases stay an order apart.
    fifo_bound = fifo_reorder_bound(p)
    if reorder:
        assert reorderings(p) > 10 * fifo_bound
    else:
        assert reorderings(p) <= fifo_bound


GE_MEAN_5 = {"model": "gilbert_elliott_mean", "loss_pct": 5.0, "burst_pkts": 3.0}
"""The seed test's loss; every loss model is measured on tc (and linkem) in
test_linkem_vs_netem.py's test_loss_rate_and_bursts, with netem's options read back."""


def test_seed(bench: Bench, record: dict) -> None:
    """Where tc knows netem's seed, the same seed loses the same packets; where it does not
    (iproute2 6.1), the commands carry no seed and the applied config says so."""
    link = up(unlimited=True, loss=GE_MEAN_5, queue={"limit_packets": 1000})
    patterns, applied = [], []
    for i in range(2):
        with bench.link("tc", link, seed=5, tag=f"seed-{i}") as a:
            patterns.append(bench.probe(1000, 2000, tag=f"seed-{i}").received_mask())
        applied.append(a)
    assert all((~p).sum() > 0 for p in patterns)
    netem_argv = next(c for c in applied[0]["commands"] if "netem" in c)
    same = bool(np.array_equal(patterns[0], patterns[1]))
    record["tc_seed"] = {"netem_argv": netem_argv, "same_pattern": same}
    if local_netem_seed():
        assert "seed" in netem_argv and same
    else:
        assert "seed" not in netem_argv
        assert NO_SEED_NOTE in applied[0]["notes"]


@pytest.mark.parametrize(
    "queue,kind,shown",
    [
        ({"limit_bytes": 15_000}, "bfifo", "limit 15000b"),
        ({"limit_packets": 12}, "pfifo", "limit 12p"),
        ({"limit_packets": 12, "drop": "head"}, "pfifo_head_drop", "limit 12p"),
    ],
    ids=["bytes-tail", "packets-tail", "packets-head"],
)
def test_queue_limit_and_drop_end(
    bench: Bench, record: dict, queue: dict, kind: str, shown: str
) -> None:
    """A burst of 200 back-to-back packets into a 2 Mbit/s link: the queue holds what its
    limit says; tail drop delivers the burst's head, head drop its newest packet."""
    rate_mbps, size, n = 2.0, 1000, 200
    with bench.link("tc", up(rate_mbps=rate_mbps, queue=queue), tag=f"queue-{kind}"):
        assert shown in qdisc_text(bench)
        p = bench.probe(20_000, n, size, tag=f"queue-{kind}")
        q = qdisc_of(bench, kind)
    received = p.received_mask()
    limit_pkts = queue.get("limit_packets") or queue["limit_bytes"] // (size + 42)
    serial_ms = (size + 42) * 8 / (rate_mbps * 1e3)
    s = delay_summary(p)
    record[f"tc_queue_{kind}"] = {"received": int(received.sum()), "drops": q["drops"],
                                  "max_delay_ms": s.get("max_ms"),
                                  "limit_delay_ms": (limit_pkts + 2) * serial_ms}  # fmt: skip
    assert q["drops"] > 0 and q["drops"] == n - received.sum()
    # what got through: at most the queue, plus what the link sent while the burst arrived
    # (TCG's sender needs tens of ms for 200 packets)
    burst_ms = (p.send_ns.max() - p.send_ns.min()) / 1e6
    assert received.sum() <= limit_pkts + 2 + (burst_ms + ARRIVAL_SLACK_MS) / serial_ms
    assert s["max_ms"] <= (limit_pkts + 2) * serial_ms + burst_ms + 20.0
    # Which end drops, said by what each end can never lose: tail drop never evicts a packet
    # it queued, so the burst's first limit_pkts (into an empty queue) all arrive; head drop
    # never drops the newest, nothing arrives after it. Whether tail drop loses the burst's last
    # packet depends on TCG's send gaps (one gap of a serialisation time frees a slot), so it
    # is not asserted.
    if queue.get("drop") == "head":
        assert received[-1], "head drop keeps the newest packet"
    else:
        assert received[:limit_pkts].all(), "tail drop keeps the oldest"


def test_trace_replay_changes_rate(bench: Bench, record: dict, tmp_path: Path) -> None:
    """A schedule of 2-s steps that starts when the probe's first packet arrives (not when the
    link is applied: under TCG on a slow host the probe started over 4 s after that, when the
    schedule was nearly over); every step after the first is judged."""
    steps_mbps = [8.0, 2.0, 8.0, 4.0]
    step_s = 2.0
    trace = tmp_path / "steps.txt"
    trace.write_text("".join(f"{i * step_s:g} {r:g}\n" for i, r in enumerate(steps_mbps)))
    link = up(trace={"file": str(trace), "format": "schedule", "loop": False},
              queue={"limit_bytes": 20_000})  # fmt: skip
    size = 1000
    pps = 10e6 / ((size + 42) * 8)  # 10 Mbit/s offered, above every step
    with bench.link("tc", link, tag="trace", defer_traces=True) as applied:
        p = bench.probe(pps, int(pps * step_s * len(steps_mbps)), size, tag="trace",
                        on_first_packet=applied["start_traces"])  # fmt: skip
    t0 = applied["t_trace_start_ns"]
    windows = [(t0 + int((i * step_s + 0.4) * 1e9), t0 + int(((i + 1) * step_s - 0.1) * 1e9))
               for i in range(len(steps_mbps))]  # fmt: skip
    measured = [wire_mbps(p, a, b) for a, b in windows]
    # the first step also holds the queue's filling; the probe covers every later one
    judged = [i for i, (a, _) in enumerate(windows) if i > 0 and a > p.recv_ns.min()]
    record["tc_trace"] = {"expected_mbps": steps_mbps, "measured_mbps": measured,
                          "judged_steps": judged,
                          "trace_start_after_applied_s": (t0 - applied["t_applied_ns"]) / 1e9,
                          "rate_changes": applied["stop"]["trace_rate_changes"]}  # fmt: skip
    assert applied["stop"]["trace_rate_changes"] == len(steps_mbps) - 1
    assert applied["stop"]["errors"] == []
    assert judged == list(range(1, len(steps_mbps))), record["tc_trace"]
    for i in judged:
        assert 0.7 * steps_mbps[i] <= measured[i] <= 1.1 * steps_mbps[i], record["tc_trace"]
