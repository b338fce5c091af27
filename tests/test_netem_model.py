"""Link model resolution: GE conversion, BDP queues, analytic loss statistics, bad configs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from netem.linkem_config import linkem_config
from netem.model import Direction, Link
from netem.resolve import (
    MAX_FRAME_BYTES,
    ConstantRate,
    OpportunitiesRate,
    PolicerRate,
    ResolveError,
    ScheduleRate,
    expected_burst_len,
    expected_loss_rate,
    resolve_direction,
    resolve_link,
    resolve_loss,
)

HERE = Path(__file__).parent


def d(**kw) -> Direction:
    return Direction.model_validate(kw)


def test_ge_mean_form_converts_exactly():
    loss = resolve_loss(
        d(
            rate_mbps=10, loss={"model": "gilbert_elliott_mean", "loss_pct": 2.0, "burst_pkts": 4.0}
        ).loss
    )
    assert loss.kind == "gilbert_elliott"
    assert loss.params["r"] == 0.25
    assert loss.params["p"] == pytest.approx(0.25 * 0.02 / 0.98, rel=1e-15)
    assert loss.params["h"] == 0.0 and loss.params["k"] == 1.0
    assert expected_loss_rate(loss) == pytest.approx(0.02, rel=1e-12)
    assert expected_burst_len(loss) == pytest.approx(4.0, rel=1e-12)


def test_ge_mean_impossible_combination_names_keys():
    direction = d(
        rate_mbps=10, loss={"model": "gilbert_elliott_mean", "loss_pct": 60, "burst_pkts": 1}
    )
    with pytest.raises(ResolveError, match=r"uplink\.loss.*burst_pkts"):
        resolve_direction(direction, HERE, where="uplink")


def test_ge_netem_form_and_default_r():
    loss = resolve_loss(d(rate_mbps=1, loss={"model": "gilbert_elliott", "p_pct": 10}).loss)
    assert loss.params == pytest.approx({"p": 0.1, "r": 0.9, "h": 0.0, "k": 1.0})
    loss = resolve_loss(
        d(
            rate_mbps=1,
            loss={
                "model": "gilbert_elliott",
                "p_pct": 1,
                "r_pct": 30,
                "one_minus_h_pct": 50,
                "one_minus_k_pct": 1,
            },
        ).loss
    )
    assert loss.params == pytest.approx({"p": 0.01, "r": 0.3, "h": 0.5, "k": 0.99})
    pi_b = 0.01 / 0.31
    assert expected_loss_rate(loss) == pytest.approx(pi_b * 0.5 + (1 - pi_b) * 0.01)


def simulate(loss, n: int, seed: int = 1) -> tuple[float, float]:
    """Monte-Carlo loss rate and mean burst length of the resolved chain (checks the algebra)."""
    from netem.resolve import _chain

    t, lp = _chain(loss)
    rng = np.random.default_rng(seed)
    s, lost = 0, np.zeros(n, dtype=bool)
    cum = np.cumsum(t, axis=1)
    u = rng.random((n, 2))
    for i in range(n):
        s = int(np.searchsorted(cum[s], u[i, 0], side="right"))
        lost[i] = u[i, 1] < lp[s]
    starts = np.count_nonzero(lost[1:] & ~lost[:-1]) + int(lost[0])
    return lost.mean(), lost.sum() / max(starts, 1)


@pytest.mark.parametrize(
    "loss_cfg",
    [
        {
            "model": "gilbert_elliott",
            "p_pct": 2,
            "r_pct": 25,
            "one_minus_h_pct": 80,
            "one_minus_k_pct": 0.5,
        },
        {
            "model": "four_state",
            "p13_pct": 2,
            "p31_pct": 40,
            "p32_pct": 20,
            "p23_pct": 30,
            "p14_pct": 1,
        },
    ],
)
def test_analytic_stats_match_simulation(loss_cfg):
    loss = resolve_loss(d(rate_mbps=1, loss=loss_cfg).loss)
    rate, burst = simulate(loss, 200_000)
    assert rate == pytest.approx(expected_loss_rate(loss), rel=0.08)
    assert burst == pytest.approx(expected_burst_len(loss), rel=0.08)


def test_iid_and_none_stats():
    iid = resolve_loss(d(rate_mbps=1, loss={"model": "iid", "loss_pct": 20}).loss)
    assert expected_loss_rate(iid) == pytest.approx(0.2)
    assert expected_burst_len(iid) == pytest.approx(1 / 0.8)
    none = resolve_loss(d(rate_mbps=1).loss)
    assert expected_loss_rate(none) == 0.0 and expected_burst_len(none) == 0.0


def test_four_state_defaults_are_bernoulli_like():
    # p13 only, p31 = 100 %: every loss is a burst of exactly one packet
    loss = resolve_loss(d(rate_mbps=1, loss={"model": "four_state", "p13_pct": 5}).loss)
    assert expected_burst_len(loss) == pytest.approx(1.0)
    assert expected_loss_rate(loss) == pytest.approx(0.05 / 1.05)


def test_degenerate_chains():
    never = resolve_loss(
        d(rate_mbps=1, loss={"model": "gilbert_elliott", "p_pct": 0, "r_pct": 0}).loss
    )
    assert expected_loss_rate(never) == 0.0
    stuck = resolve_loss(
        d(rate_mbps=1, loss={"model": "gilbert_elliott", "p_pct": 1, "r_pct": 0}).loss
    )
    assert expected_loss_rate(stuck) == pytest.approx(1.0)
    assert math.isinf(expected_burst_len(stuck))


def test_bdp_uses_sum_of_both_delays():
    link = Link.model_validate(
        {
            "uplink": {"rate_mbps": 10, "delay_ms": 5, "queue": {"bdp_factor": 2}},
            "downlink": {"rate_mbps": 50, "delay_ms": 15},
        }
    )
    r = resolve_link(link, HERE)
    assert r.uplink.queue.limit_bytes == math.ceil(2 * 10e6 / 8 * 0.020)  # 50 000
    assert r.downlink.queue.limit_bytes == math.ceil(50e6 / 8 * 0.020)
    assert r.uplink.queue.bdp_rtt_ms == 20
    assert r.uplink.rate == ConstantRate(10_000_000)
    assert r.uplink.delay_us == 5000


def test_bdp_explicit_rtt_and_direction_default():
    one = d(rate_mbps=8, delay_ms=10, queue={"bdp_factor": 1, "rtt_ms": 100})
    assert resolve_direction(one, HERE).queue.limit_bytes == 100_000
    two = d(rate_mbps=8, delay_ms=10)
    assert resolve_direction(two, HERE).queue.limit_bytes == 20_000  # 2 x own delay


def test_bdp_floor_and_zero_rtt():
    tiny = d(rate_mbps=1, delay_ms=0.5)
    assert resolve_direction(tiny, HERE).queue.limit_bytes == MAX_FRAME_BYTES
    with pytest.raises(ResolveError, match=r"downlink\.queue\.bdp_factor.*rtt_ms"):
        resolve_direction(d(rate_mbps=1), HERE, where="downlink")


@pytest.mark.parametrize(
    "bad, key",
    [
        ({"rate_mbps": 1, "unlimited": True}, "rate_mbps"),
        ({"rate_mbps": -1}, "rate_mbps"),
        ({"rate_mbps": 1, "loss": {"model": "iid", "loss_pct": 120}}, "loss_pct"),
        ({"rate_mbps": 1, "loss": {"model": "gauss"}}, "model"),
        ({"rate_mbps": 1, "queue": {"limit_bytes": 1, "limit_packets": 2}}, "limit_bytes"),
        ({"rate_mbps": 1, "delay": 3}, "delay"),
        ({"unlimited": True}, "limit_bytes"),
    ],
)
def test_bad_configs_name_the_key(bad, key):
    with pytest.raises(ValidationError, match=key):
        Direction.model_validate(bad)


def test_schedule_trace_and_linkem_json(tmp_path):
    (tmp_path / "t.txt").write_text("0 10\n1 30\n2 20\n")
    link = Link.model_validate(
        {
            "uplink": {"trace": {"file": "t.txt", "format": "schedule"}, "delay_ms": 10},
            "downlink": {
                "unlimited": True,
                "queue": {"limit_packets": 100, "drop": "head"},
                "loss": {"model": "iid", "loss_pct": 1},
            },
        }
    )
    r = resolve_link(link, tmp_path)
    assert isinstance(r.uplink.rate, ScheduleRate)
    assert r.uplink.rate.points == ((0, 10_000_000), (1000, 30_000_000), (2000, 20_000_000))
    assert r.uplink.mean_rate_bps == pytest.approx(20e6)
    cfg = linkem_config(r, seed=7)
    assert cfg["seed"] == 7 and cfg["mtu_bytes"] == 1500
    up, down = cfg["a_to_b"], cfg["b_to_a"]
    assert up["rate"] == {
        "kind": "schedule",
        "points": [[0, 10_000_000], [1000, 30_000_000], [2000, 20_000_000]],
        "period_ms": r.uplink.rate.period_ms,
        "loop": True,
    }
    assert up["queue"] == {
        "limit_bytes": math.ceil(20e6 / 8 * 0.010),
        "limit_packets": None,
        "drop": "tail",
    }
    assert up["delay_us"] == 10_000 and up["loss"] == {"kind": "none"}
    assert down["rate"] == {"kind": "unlimited"}
    assert down["loss"] == {"kind": "iid", "p": 0.01}
    assert down["queue"] == {"limit_bytes": None, "limit_packets": 100, "drop": "head"}


def test_mahimahi_trace(tmp_path):
    (tmp_path / "m.up").write_text("0\n0\n1\n3\n")
    r = resolve_direction(
        d(trace={"file": str(tmp_path / "m.up"), "format": "mahimahi"}, delay_ms=2), HERE
    )
    assert isinstance(r.rate, OpportunitiesRate)
    assert r.rate.times_ms == (0, 0, 1, 3) and r.rate.bytes_per_opportunity == 1500
    assert r.mean_rate_bps == pytest.approx(4 * 1500 * 8 / (r.rate.period_ms / 1000))


def test_missing_trace_names_the_key(tmp_path):
    direction = d(trace={"file": "nope.txt", "format": "schedule"}, delay_ms=1)
    with pytest.raises(ResolveError, match=r"uplink\.trace\.file"):
        resolve_direction(direction, tmp_path, where="uplink")


# --------------------------------------------------------------- policer, small queues


def test_policer_resolves_to_a_bucket_without_queue_and_linkem_json():
    link = Link.model_validate(
        {
            "uplink": {"policer": {"rate_mbps": 20, "burst_bytes": 25000}, "delay_ms": 10.5},
            "downlink": {"rate_mbps": 1000, "delay_ms": 10.5},
        }
    )
    r = resolve_link(link, HERE)
    assert r.uplink.rate == PolicerRate(20_000_000, 25000)
    assert r.uplink.queue is None and r.uplink.mean_rate_bps == 20e6
    up = linkem_config(r, seed=1)["a_to_b"]
    assert up["rate"] == {"kind": "policer", "rate_bps": 20_000_000, "burst_bytes": 25000}
    assert "queue" not in up
    assert r.downlink.queue is not None and r.downlink.queue.limit_bytes == 2_625_000


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"policer": {"rate_mbps": 20, "burst_bytes": 25000}, "queue": {"bdp_factor": 1}},
         "a policer has no queue"),
        ({"policer": {"rate_mbps": 20, "burst_bytes": 1000}}, "burst_bytes 1000 must be at least"),
        ({"policer": {"rate_mbps": 20}}, "burst_bytes"),
        ({"policer": {"rate_mbps": 20, "burst_bytes": 9000}, "rate_mbps": 20}, "exactly one of"),
        ({"rate_mbps": 20, "queue": {"limit_bytes": 1000}}, "limit_bytes"),
    ],
)  # fmt: skip
def test_bad_policer_and_tiny_queue_configs_say_why(bad, match):
    with pytest.raises(ValidationError, match=match):
        Direction.model_validate(bad)


def test_queue_down_to_005_bdp_resolves_and_records_a_raise_to_one_frame():
    # FB uplink, 70 Mbit/s and 21 ms: 0.05 BDP = 9188 bytes, six full frames.
    fb = d(rate_mbps=70, delay_ms=10.5, queue={"bdp_factor": 0.05})
    q = resolve_direction(fb, HERE).queue
    assert q is not None and q.limit_bytes == math.ceil(0.05 * 70e6 / 8 * 0.021)
    assert not q.raised_to_one_frame
    # 1 Mbit/s: 0.05 BDP is 132 bytes, below one frame: one frame, and said so.
    slow = resolve_direction(d(rate_mbps=1, delay_ms=10.5, queue={"bdp_factor": 0.05}), HERE)
    assert slow.queue is not None and slow.queue.limit_bytes == MAX_FRAME_BYTES
    assert slow.queue.raised_to_one_frame
