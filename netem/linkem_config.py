"""A resolved link → the linkem JSON config of the contract (netem/README.md).

`a_to_b` is the uplink: linkem's `--iface-a` is the interface facing the guest.
"""

from __future__ import annotations

from typing import Any

from netem.resolve import (
    MTU_BYTES,
    ConstantRate,
    OpportunitiesRate,
    PolicerRate,
    Rate,
    ResolvedDirection,
    ResolvedLink,
    ScheduleRate,
    UnlimitedRate,
)


def rate_json(rate: Rate) -> dict[str, Any]:
    if isinstance(rate, ConstantRate):
        return {"kind": "constant", "rate_bps": rate.rate_bps}
    if isinstance(rate, UnlimitedRate):
        return {"kind": "unlimited"}
    if isinstance(rate, ScheduleRate):
        return {
            "kind": "schedule",
            "points": [[t, r] for t, r in rate.points],
            "period_ms": rate.period_ms,
            "loop": rate.loop,
        }
    if isinstance(rate, OpportunitiesRate):
        return {
            "kind": "opportunities",
            "times_ms": list(rate.times_ms),
            "period_ms": rate.period_ms,
            "bytes_per_opportunity": rate.bytes_per_opportunity,
            "loop": rate.loop,
        }
    if isinstance(rate, PolicerRate):
        return {"kind": "policer", "rate_bps": rate.rate_bps, "burst_bytes": rate.burst_bytes}
    raise TypeError(f"unknown rate {rate!r}")  # pragma: no cover


def direction_json(d: ResolvedDirection) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rate": rate_json(d.rate),
        "delay_us": d.delay_us,
        "jitter_us": d.jitter_us,
        "jitter_reorder": d.jitter_reorder,
        "loss": {"kind": d.loss.kind, **d.loss.params},
    }
    if d.queue is not None:  # a policer has none
        out["queue"] = {
            "limit_bytes": d.queue.limit_bytes,
            "limit_packets": d.queue.limit_packets,
            "drop": d.queue.drop,
        }
    return out


def linkem_config(link: ResolvedLink, seed: int, mtu_bytes: int = MTU_BYTES) -> dict[str, Any]:
    """The config file linkem reads (uplink = a_to_b)."""
    return {
        "seed": seed,
        "mtu_bytes": mtu_bytes,
        "a_to_b": direction_json(link.uplink),
        "b_to_a": direction_json(link.downlink),
    }
