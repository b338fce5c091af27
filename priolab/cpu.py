"""The CPU-saturation rule, applied to whole-machine CPU utilisation samples.

The samples come from the one sampler, the node agent's (`engine/agent.py` `CpuSampler`,
/proc/stat): each node's agent samples its machine during a run, and the VM site samples the
machine the VM runs on (`during`)."""

from __future__ import annotations

from typing import Any

from priolab.engine.agent import CpuSampler

# A run is invalid if the machine's CPU was saturated: the mean utilisation over the run
# reached MEAN_LIMIT, or more than BUSY_SHARE_LIMIT of the samples were at BUSY_SAMPLE
# or above. (Assumption: with 2 cores, sustained ≥ 90 % leaves the emulator and the
# endpoints competing for CPU, which delays packets and timers.)
MEAN_LIMIT = 0.90
BUSY_SAMPLE = 0.98
BUSY_SHARE_LIMIT = 0.20


def during(sampler: CpuSampler, start: float | None, stop: float | None) -> dict[str, Any]:
    """The summary (and verdict) of a sampler's samples taken between `start` and `stop`
    (time.time(); a sample ends its interval, so one interval past `stop` still counts)."""
    if start is None or stop is None:
        return summarise([], sampler.interval_s)
    picked = [u for t, u in zip(sampler.times, sampler.samples, strict=False)
              if start <= t <= stop + sampler.interval_s]  # fmt: skip
    return summarise(picked, sampler.interval_s)


def summarise(samples: list[float], interval_s: float) -> dict[str, Any]:
    if not samples:
        return {"samples": 0, "interval_s": interval_s, "saturated": False}
    s = sorted(samples)
    mean = sum(s) / len(s)
    busy_share = sum(1 for x in s if x >= BUSY_SAMPLE) / len(s)
    return {
        "samples": len(s),
        "interval_s": interval_s,
        "utilisation_mean_pct": round(100 * mean, 2),
        "utilisation_p95_pct": round(100 * s[min(len(s) - 1, int(0.95 * len(s)))], 2),
        "utilisation_max_pct": round(100 * s[-1], 2),
        "busy_share_pct": round(100 * busy_share, 2),
        "saturated": mean >= MEAN_LIMIT or busy_share > BUSY_SHARE_LIMIT,
        "rule": f"mean ≥ {MEAN_LIMIT:.0%} or > {BUSY_SHARE_LIMIT:.0%} of samples "
        f"≥ {BUSY_SAMPLE:.0%}",
    }
