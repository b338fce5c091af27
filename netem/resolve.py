"""Resolve a `netem.model.Link` into concrete numbers both backends use.

The model holds values as the user wrote them (percent, Mbit/s, a BDP factor, a trace file);
this module turns them into probabilities, bit/s, byte limits and loaded traces, and offers the
analytic loss statistics of every loss model (used by the calibrator and the tests).

Default RTT for a BDP queue: in `resolve_link` it is uplink.delay_ms + downlink.delay_ms (the
RTT a flow crossing the access link sees); `resolve_direction` alone falls back to twice the
direction's own delay (the model's documented default for a symmetric link).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ground.errors import UserError
from netem.model import MAX_FRAME_BYTES as MAX_FRAME_BYTES  # re-exported
from netem.model import MTU_BYTES as MTU_BYTES  # re-exported
from netem.model import (
    Direction,
    FourStateLoss,
    GilbertElliottLoss,
    GilbertElliottMeanLoss,
    IidLoss,
    Link,
    Loss,
    NoLoss,
)


class ResolveError(UserError):
    """A link config that cannot be turned into numbers. `key`: the key path within the link
    (e.g. `uplink.loss`); the scenario check prefixes it with where the link came from.
    ResolveError("uplink.loss", "problem") or ResolveError("uplink.loss: problem")."""

    title = "invalid link"

    def __init__(self, key: str | list[tuple[str, str]], problem: str | None = None) -> None:
        if isinstance(key, list):  # several problems at once (both directions)
            super().__init__(None, key)
        else:
            if problem is None:
                key, _, problem = key.partition(": ")
            super().__init__(None, [(key, problem)])
        self.key = self.problems[0][0]


# --------------------------------------------------------------------------- resolved types


@dataclass(frozen=True)
class ConstantRate:
    rate_bps: int
    kind: Literal["constant"] = "constant"


@dataclass(frozen=True)
class UnlimitedRate:
    kind: Literal["unlimited"] = "unlimited"


@dataclass(frozen=True)
class ScheduleRate:
    """Piecewise-constant: each (t_ms, rate_bps) holds until the next point; wraps at period."""

    points: tuple[tuple[int, int], ...]
    period_ms: int
    loop: bool
    kind: Literal["schedule"] = "schedule"


@dataclass(frozen=True)
class OpportunitiesRate:
    """Mahimahi delivery opportunities (one `bytes_per_opportunity` packet each, times in ms)."""

    times_ms: tuple[int, ...]
    period_ms: int
    bytes_per_opportunity: int
    loop: bool
    kind: Literal["opportunities"] = "opportunities"


@dataclass(frozen=True)
class PolicerRate:
    """Token bucket, no queue: fills at rate_bps up to burst_bytes (frame bytes), starts full."""

    rate_bps: int
    burst_bytes: int
    kind: Literal["policer"] = "policer"


Rate = ConstantRate | UnlimitedRate | ScheduleRate | OpportunitiesRate | PolicerRate


@dataclass(frozen=True)
class ResolvedLoss:
    """Loss as probabilities (0..1). `params` keys follow the linkem contract:
    none: {}; iid: p; gilbert_elliott: p, r, h, k (h, k = probability of *no* loss in the
    bad/good state); four_state: p13, p31, p32, p23, p14."""

    kind: Literal["none", "iid", "gilbert_elliott", "four_state"]
    params: dict[str, float]


@dataclass(frozen=True)
class ResolvedQueue:
    limit_bytes: int | None
    limit_packets: int | None
    drop: Literal["tail", "head"]
    bdp_rtt_ms: float | None = None
    """The RTT the BDP was computed from (None: limit given directly)."""
    raised_to_one_frame: bool = False
    """The BDP was below one full frame and the limit was raised to MAX_FRAME_BYTES."""


@dataclass(frozen=True)
class ResolvedDirection:
    rate: Rate
    mean_rate_bps: float | None
    """Constant rate, or the trace's time-weighted mean; None when unlimited."""
    delay_us: int
    jitter_us: int
    jitter_reorder: bool
    loss: ResolvedLoss
    queue: ResolvedQueue | None
    """None exactly for a policer (it has no queue)."""

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if isinstance(self.rate, OpportunitiesRate):  # keep metadata small
            d["rate"]["times_ms"] = f"<{len(self.rate.times_ms)} opportunities>"
        if isinstance(self.rate, ScheduleRate) and len(self.rate.points) > 50:
            d["rate"]["points"] = f"<{len(self.rate.points)} points>"
        return d


@dataclass(frozen=True)
class ResolvedLink:
    uplink: ResolvedDirection
    downlink: ResolvedDirection

    def to_json(self) -> dict[str, Any]:
        return {"uplink": self.uplink.to_json(), "downlink": self.downlink.to_json()}


# --------------------------------------------------------------------------- loss


def resolve_loss(loss: Loss, where: str = "loss") -> ResolvedLoss:
    """Percent → probabilities. The convenience GE form converts exactly:
    r = 1/burst, p = r·loss/(1−loss), 1−h = 100 %, 1−k = 0 %."""
    if isinstance(loss, NoLoss):
        return ResolvedLoss("none", {})
    if isinstance(loss, IidLoss):
        return ResolvedLoss("iid", {"p": loss.loss_pct / 100.0})
    if isinstance(loss, GilbertElliottLoss):
        return ResolvedLoss(
            "gilbert_elliott",
            {
                "p": loss.p_pct / 100.0,
                "r": loss.r_effective_pct / 100.0,
                "h": 1.0 - loss.one_minus_h_pct / 100.0,
                "k": 1.0 - loss.one_minus_k_pct / 100.0,
            },
        )
    if isinstance(loss, GilbertElliottMeanLoss):
        mean = loss.loss_pct / 100.0
        r = 1.0 / loss.burst_pkts
        p = r * mean / (1.0 - mean)
        if p > 1.0:
            raise ResolveError(
                f"{where}: loss_pct {loss.loss_pct} with burst_pkts {loss.burst_pkts} needs "
                f"p = {p:.4g} > 1; allowed: loss_pct/(100-loss_pct) <= burst_pkts"
            )
        return ResolvedLoss("gilbert_elliott", {"p": p, "r": r, "h": 0.0, "k": 1.0})
    if isinstance(loss, FourStateLoss):
        ps = {
            "p13": loss.p13_pct / 100.0,
            "p31": loss.p31_pct / 100.0,
            "p32": loss.p32_pct / 100.0,
            "p23": loss.p23_pct / 100.0,
            "p14": loss.p14_pct / 100.0,
        }
        if ps["p13"] + ps["p14"] > 1.0 + 1e-12:
            raise ResolveError(f"{where}: p13_pct + p14_pct must be <= 100")
        if ps["p31"] + ps["p32"] > 1.0 + 1e-12:
            raise ResolveError(f"{where}: p31_pct + p32_pct must be <= 100")
        return ResolvedLoss("four_state", ps)
    raise ResolveError(f"{where}: unknown loss model {loss!r}")  # pragma: no cover


def _chain(loss: ResolvedLoss) -> tuple[np.ndarray, np.ndarray]:
    """Transition matrix T and per-state loss probability l; state 0 is the start state."""
    q = loss.params
    if loss.kind == "gilbert_elliott":
        p, r = q["p"], q["r"]
        t = np.array([[1 - p, p], [r, 1 - r]])
        return t, np.array([1 - q["k"], 1 - q["h"]])
    if loss.kind == "four_state":
        # netem's states: 1 gap/received, 2 burst/received, 3 burst/lost, 4 gap/lost (isolated)
        t = np.array(
            [
                [1 - q["p13"] - q["p14"], 0.0, q["p13"], q["p14"]],
                [0.0, 1 - q["p23"], q["p23"], 0.0],
                [q["p31"], q["p32"], 1 - q["p31"] - q["p32"], 0.0],
                [1.0, 0.0, 0.0, 0.0],
            ]
        )
        return t, np.array([0.0, 0.0, 1.0, 1.0])
    if loss.kind == "iid":
        return np.array([[1.0]]), np.array([loss.params["p"]])
    return np.array([[1.0]]), np.array([0.0])


def _stationary_from_start(t: np.ndarray) -> np.ndarray:
    """Long-run state occupancy starting in state 0 (restricted to the states it reaches; for
    these chains those hold exactly one closed class, so the answer is unique)."""
    n = t.shape[0]
    reach = {0}
    todo = [0]
    while todo:
        s = todo.pop()
        for s2 in range(n):
            if t[s, s2] > 0 and s2 not in reach:
                reach.add(s2)
                todo.append(s2)
    idx = sorted(reach)
    sub = t[np.ix_(idx, idx)]
    m = len(idx)
    a = np.vstack([sub.T - np.eye(m), np.ones((1, m))])
    b = np.zeros(m + 1)
    b[-1] = 1.0
    pi_sub, *_ = np.linalg.lstsq(a, b, rcond=None)
    pi = np.zeros(n)
    pi[idx] = np.clip(pi_sub, 0.0, None)
    return pi / pi.sum()


def expected_loss_rate(loss: ResolvedLoss | Loss) -> float:
    """Long-run fraction of packets lost (0..1)."""
    rl = loss if isinstance(loss, ResolvedLoss) else resolve_loss(loss)
    t, lp = _chain(rl)
    return float(_stationary_from_start(t) @ lp)


def expected_burst_len(loss: ResolvedLoss | Loss) -> float:
    """Mean length (packets) of a run of consecutive losses; 0 without loss, inf if the
    chain ends up losing every packet. Computed as P(lost) / P(not lost, then lost)."""
    rl = loss if isinstance(loss, ResolvedLoss) else resolve_loss(loss)
    t, lp = _chain(rl)
    pi = _stationary_from_start(t)
    lost = float(pi @ lp)
    if lost <= 0.0:
        return 0.0
    starts = float(((pi * (1.0 - lp)) @ t) @ lp)
    if starts <= 0.0:
        return math.inf
    return lost / starts


# --------------------------------------------------------------------------- rate


def _resolve_rate(direction: Direction, base_dir: Path, where: str) -> tuple[Rate, float | None]:
    if direction.unlimited:
        return UnlimitedRate(), None
    if direction.rate_mbps is not None:
        bps = int(round(direction.rate_mbps * 1e6))
        return ConstantRate(bps), float(bps)
    if direction.policer is not None:
        bps = int(round(direction.policer.rate_mbps * 1e6))
        return PolicerRate(bps, direction.policer.burst_bytes), float(bps)
    assert direction.trace is not None
    from traces.errors import TraceWindowError
    from traces.throughput import DeliveryOpportunities, RateSchedule, TraceError, load_trace

    try:  # the window (start_s, end_s) is cut here: both replayers get the cut points
        loaded = load_trace(direction.trace, base_dir)
    except TraceWindowError as e:
        raise ResolveError(f"{where}.trace.{e.key}", f"{e.file}: {e.bare}") from e
    except TraceError as e:
        raise ResolveError(f"{where}.trace.file", str(e)) from e
    loop = direction.trace.loop
    if isinstance(loaded, RateSchedule):
        times_ms = [int(round(t * 1000.0)) for t in loaded.times_s]
        rates_bps = [int(round(r * 1e6)) for r in loaded.rate_mbps]
        period_ms = int(round(loaded.duration_s * 1000.0))
        durations = loaded.step_durations_s
        mean_bps = float(np.sum(loaded.rate_mbps * durations) / np.sum(durations)) * 1e6
        if mean_bps <= 0:
            raise ResolveError(f"{where}.trace: the trace's mean rate is 0")
        return ScheduleRate(tuple(zip(times_ms, rates_bps, strict=True)), period_ms, loop), mean_bps
    if isinstance(loaded, DeliveryOpportunities):
        from traces.throughput import MTU_BYTES as opp_bytes

        times = tuple(int(x) for x in loaded.times_ms)
        mean_bps = len(times) * opp_bytes * 8 / (loaded.period_ms / 1000.0)
        return OpportunitiesRate(times, int(loaded.period_ms), opp_bytes, loop), mean_bps
    raise ResolveError(f"{where}.trace: unexpected trace type {type(loaded).__name__}")


# --------------------------------------------------------------------------- queue


def _resolve_queue(
    direction: Direction, mean_rate_bps: float | None, rtt_default_ms: float, where: str
) -> ResolvedQueue | None:
    q = direction.effective_queue
    if q is None:  # a policer
        return None
    if q.bdp_factor is None:
        return ResolvedQueue(q.limit_bytes, q.limit_packets, q.drop)
    if mean_rate_bps is None:  # the model forbids it already; keep the error explicit
        raise ResolveError(f"{where}.queue.bdp_factor: an unlimited link has no BDP")
    rtt_ms = q.rtt_ms if q.rtt_ms is not None else rtt_default_ms
    if rtt_ms <= 0:
        raise ResolveError(
            f"{where}.queue.bdp_factor: the RTT is 0 (no delay configured); "
            "set queue.rtt_ms or use queue.limit_bytes/limit_packets"
        )
    limit = math.ceil(q.bdp_factor * mean_rate_bps / 8.0 * rtt_ms / 1000.0)
    return ResolvedQueue(
        max(limit, MAX_FRAME_BYTES),
        None,
        q.drop,
        bdp_rtt_ms=rtt_ms,
        raised_to_one_frame=limit < MAX_FRAME_BYTES,
    )


# --------------------------------------------------------------------------- direction / link


def resolve_direction(
    direction: Direction,
    base_dir: Path,
    *,
    rtt_default_ms: float | None = None,
    where: str = "direction",
) -> ResolvedDirection:
    """Resolve one direction. rtt_default_ms: RTT for a BDP queue without queue.rtt_ms
    (None: twice this direction's delay)."""
    rate, mean_bps = _resolve_rate(direction, base_dir, where)
    rtt = 2.0 * direction.delay_ms if rtt_default_ms is None else rtt_default_ms
    return ResolvedDirection(
        rate=rate,
        mean_rate_bps=mean_bps,
        delay_us=int(round(direction.delay_ms * 1000.0)),
        jitter_us=int(round(direction.jitter_ms * 1000.0)),
        jitter_reorder=direction.jitter_reorder,
        loss=resolve_loss(direction.loss, f"{where}.loss"),
        queue=_resolve_queue(direction, mean_bps, rtt, where),
    )


def resolve_link(link: Link, base_dir: Path) -> ResolvedLink:
    """Resolve both directions; the default BDP RTT is uplink.delay_ms + downlink.delay_ms."""
    rtt_ms = link.uplink.delay_ms + link.downlink.delay_ms
    resolved: dict[str, ResolvedDirection] = {}
    problems: list[tuple[str, str]] = []
    for d in ("uplink", "downlink"):
        try:
            resolved[d] = resolve_direction(
                getattr(link, d), base_dir, rtt_default_ms=rtt_ms, where=d
            )
        except ResolveError as e:  # report both directions' problems at once
            problems += e.problems
    if problems:
        raise ResolveError(problems)
    return ResolvedLink(uplink=resolved["uplink"], downlink=resolved["downlink"])
