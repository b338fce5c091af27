"""linkem against netem: one sweep, the same packets, both backends, in the same VM.

For each case both backends must meet the link model (netem/model.py, netem/README.md) within
statistical bounds; the figures of both go to $PRIOLAB_VM_OUT/figures.json under `compare`,
from which a side-by-side table is made (`python -m vm.compare_table`). The cases are where
the two could part: the loss models (every model, netem's options read back) and the delay
distribution with and without jitter. Rate and queue are measured once per backend where
each is cheapest to trust: tc's in test_tc_backend.py here, linkem's on the host
(tests/test_linkem_netns.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from netem.model import Link
from netem.resolve import expected_burst_len, expected_loss_rate, resolve_loss
from vm.linkbench import (
    IF_MB,
    Bench,
    binomial_interval,
    delay_summary,
    fifo_reorder_bound,
    loss_bursts,
    reorderings,
)

BACKENDS = ("tc", "userspace")
UNLIMITED_Q = {"unlimited": True, "queue": {"limit_packets": 1000}}
LOSS_PACKETS = 6000
SEEDS = (1,)
LOSS_CASES = {
    "iid 5%": {"model": "iid", "loss_pct": 5.0},
    "GE mean 5%, burst 3": {"model": "gilbert_elliott_mean", "loss_pct": 5.0, "burst_pkts": 3.0},
    "GE p2 r25 1-h70 1-k0.5": {"model": "gilbert_elliott", "p_pct": 2.0, "r_pct": 25.0,
                               "one_minus_h_pct": 70.0, "one_minus_k_pct": 0.5},
    "4-state p13 1.5 p31 30 p32 10 p23 20 p14 1": {
        "model": "four_state", "p13_pct": 1.5, "p31_pct": 30.0, "p32_pct": 10.0,
        "p23_pct": 20.0, "p14_pct": 1.0},
}  # fmt: skip


def up(**uplink: Any) -> dict[str, Any]:
    return {"uplink": uplink, "downlink": UNLIMITED_Q}


def put(record: dict[str, Any], section: str, case: str, backend: str, row: dict) -> None:
    record.setdefault("compare", {}).setdefault(section, {}).setdefault(case, {})[backend] = row


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("jitter_ms", [0.0, 8.0], ids=["delay", "delay+jitter"])
def test_delay_distribution(bench: Bench, record: dict, backend: str, jitter_ms: float) -> None:
    delay_ms = 25.0
    link = up(unlimited=True, delay_ms=delay_ms, jitter_ms=jitter_ms,
              queue={"limit_packets": 1000})  # fmt: skip
    with bench.link(backend, link, tag=f"cmp-delay-{jitter_ms}"):
        p = bench.probe(200, 600, tag=f"cmp-delay-{backend}")
    s = delay_summary(p) | {"reordered": reorderings(p)}
    put(record, "delay", f"{delay_ms:g} ms ± {jitter_ms:g} ms, FIFO", backend, s)
    assert s["received"] == 600
    assert s["min_ms"] >= delay_ms - jitter_ms
    # jitter_reorder is false: FIFO order kept, up to the probe path's own few
    assert s["reordered"] <= fifo_reorder_bound(p)
    if jitter_ms:
        assert s["std_ms"] > jitter_ms / 4


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(LOSS_CASES))
def test_loss_rate_and_bursts(bench: Bench, record: dict, backend: str, case: str) -> None:
    link = up(unlimited=True, loss=LOSS_CASES[case], queue={"limit_packets": 1000})
    rl = resolve_loss(Link.model_validate(link).uplink.loss)
    rate, burst = expected_loss_rate(rl), expected_burst_len(rl)
    rows = []
    for seed in SEEDS:
        with bench.link(backend, link, seed=seed, tag=f"cmp-loss-{seed}"):
            if backend == "tc":  # what tc rendered is what the kernel holds: netem with loss
                netem = [q for q in bench.tc_json("qdisc", "show", "dev", IF_MB)
                         if q["kind"] == "netem"]  # fmt: skip
                assert len(netem) == 1 and "loss" in str(netem[0].get("options")), netem
            p = bench.probe(1000, LOSS_PACKETS, tag=f"cmp-loss-{backend}-{seed}")
        received = p.received_mask()
        bursts = loss_bursts(received)
        hist = np.bincount(np.minimum(bursts, 5), minlength=6)[1:].tolist()
        rows.append({"seed": seed, "loss_pct": float((~received).mean() * 100),
                     "burst_mean": float(bursts.mean()) if len(bursts) else 0.0,
                     "bursts_1_2_3_4_5plus": hist})  # fmt: skip
    put(record, "loss", case, backend,
        {"expected_loss_pct": rate * 100, "expected_burst": burst, "seeds": rows})  # fmt: skip
    n_eff = int(LOSS_PACKETS * len(SEEDS) / max(1.0, 2.0 * burst))
    lo, hi = binomial_interval(n_eff, rate)
    measured = float(np.mean([r["loss_pct"] for r in rows])) / 100
    assert lo <= measured * n_eff <= hi, rows
    mean_burst = float(np.mean([r["burst_mean"] for r in rows]))
    assert 0.6 * burst <= mean_burst <= 1.6 * burst, rows
