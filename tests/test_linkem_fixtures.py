"""The linkem configs the Rust tests read (netem/linkem/tests/fixtures/) are what the Python
side writes today: one fixture per shape of the contract the harness emits (every rate kind,
every loss kind, both queue limits and drops, jitter, a trace led by the link's settle time),
each made as a run makes its `linkem.json`: resolve the link, `linkem_config`, `json.dumps`.

If the Python side changes what it writes, this test fails; rewrite the fixtures with
`PRIOLAB_WRITE_LINKEM_FIXTURES=1 pytest tests/test_linkem_fixtures.py` and run
`cargo test -p linkem --test core_config`, which parses each and checks every value back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from netem.linkem_config import linkem_config
from netem.model import Link
from netem.resolve import resolve_link
from netem.trace_lead import lead_link

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "netem" / "linkem" / "tests" / "fixtures"
SCENARIOS = REPO / "scenarios"  # trace paths below resolve against it, as in a scenario file

BDP = {"bdp_factor": 1.0}
STEPS = "../traces/synthetic/steps-dtp-12-4-12MBps-3s-10s.txt"
MAHIMAHI = "../traces/synthetic/constant-2mbps-10s.mm"

# name -> (the scenario's `link:` block, the lead in ms a real site gives a trace, seed)
SHAPES: dict[str, tuple[dict[str, Any], int, int]] = {
    # quick.yaml's window-limited point: constant rates, BDP queues, iid loss
    "constant-bdp-iid": (
        {
            "uplink": {
                "rate_mbps": 70,
                "delay_ms": 10.5,
                "queue": BDP,
                "loss": {"model": "iid", "loss_pct": 0.05},
            },
            "downlink": {"rate_mbps": 1000, "delay_ms": 10.5, "queue": BDP},
        },
        0,
        1,
    ),
    # dtp-quick.yaml's dynamic point: a schedule trace, led by 1 s as on Mininet; ACKs unlimited
    "schedule-led-unlimited": (
        {
            "uplink": {"unlimited": True, "delay_ms": 2.5, "queue": {"limit_packets": 1000}},
            "downlink": {
                "trace": {"file": STEPS, "format": "schedule"},
                "delay_ms": 2.5,
                "loss": {"model": "iid", "loss_pct": 0.01},
                "queue": {"limit_packets": 1000},
            },
        },
        1000,
        1,
    ),
    # a mahimahi trace (delivery opportunities), byte limit with head drop, Gilbert-Elliott
    # in both of the model's forms
    "opportunities-head-ge": (
        {
            "uplink": {
                "rate_mbps": 5,
                "delay_ms": 20,
                "queue": {"limit_bytes": 30000, "drop": "head"},
                "loss": {
                    "model": "gilbert_elliott",
                    "p_pct": 1,
                    "r_pct": 30,
                    "one_minus_h_pct": 50,
                },
            },
            "downlink": {
                "trace": {"file": MAHIMAHI, "format": "mahimahi"},
                "delay_ms": 20,
                "queue": {"limit_packets": 200},
                "loss": {"model": "gilbert_elliott_mean", "loss_pct": 5, "burst_pkts": 4},
            },
        },
        0,
        2,
    ),
    # a policer (no queue), the 4-state loss model, jitter with reordering
    "policer-fourstate-jitter": (
        {
            "uplink": {"policer": {"rate_mbps": 20, "burst_bytes": 25000}, "delay_ms": 5},
            "downlink": {
                "rate_mbps": 50,
                "delay_ms": 5,
                "jitter_ms": 2,
                "jitter_reorder": True,
                "queue": {"limit_bytes": 62500},
                "loss": {"model": "four_state", "p13_pct": 1, "p31_pct": 30, "p14_pct": 0.5},
            },
        },
        0,
        3,
    ),
}


def fixture_text(name: str) -> str:
    """The fixture as a run writes its linkem.json (netem/userspace.py, engine/sites/sim.py)."""
    link_block, lead_ms, seed = SHAPES[name]
    resolved = resolve_link(Link.model_validate(link_block), SCENARIOS)
    return json.dumps(linkem_config(lead_link(resolved, lead_ms), seed))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_rust_fixture_is_what_python_writes(name: str) -> None:
    path = FIXTURES / f"{name}.json"
    if os.environ.get("PRIOLAB_WRITE_LINKEM_FIXTURES") == "1":
        path.write_text(fixture_text(name))
    assert path.read_text() == fixture_text(name), (
        f"{path} is not what the Python side writes now: rewrite it (module docstring)"
    )


def test_the_fixtures_cover_every_kind_of_the_contract() -> None:
    kinds: dict[str, set[str]] = {"rate": set(), "loss": set(), "limit": set(), "drop": set()}
    for path in FIXTURES.glob("*.json"):
        for d in (json.loads(path.read_text())[k] for k in ("a_to_b", "b_to_a")):
            kinds["rate"].add(d["rate"]["kind"])
            kinds["loss"].add(d["loss"]["kind"])
            q = d.get("queue")
            if q is not None:
                kinds["limit"].add("bytes" if q["limit_bytes"] is not None else "packets")
                kinds["drop"].add(q["drop"])
    assert kinds == {
        "rate": {"constant", "unlimited", "schedule", "opportunities", "policer"},
        "loss": {"none", "iid", "gilbert_elliott", "four_state"},
        "limit": {"bytes", "packets"},
        "drop": {"tail", "head"},
    }
    assert sorted(p.stem for p in FIXTURES.glob("*.json")) == sorted(SHAPES)
