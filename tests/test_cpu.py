"""The CPU-saturation rule that makes a run invalid, and the one sampler it judges."""

from __future__ import annotations

import time

from priolab.cpu import during, summarise
from priolab.engine.agent import CpuSampler


def test_idle_machine_is_not_saturated() -> None:
    s = summarise([0.2, 0.3, 0.25, 0.4], 0.5)
    assert not s["saturated"]
    assert s["utilisation_mean_pct"] == 28.75
    assert s["utilisation_max_pct"] == 40.0


def test_high_mean_is_saturated() -> None:
    assert summarise([0.92] * 10, 0.5)["saturated"]


def test_bursts_at_full_load_are_saturated_even_with_a_low_mean() -> None:
    samples = [0.99] * 3 + [0.1] * 7  # 30 % of samples at ≥ 98 %, mean 0.37
    s = summarise(samples, 0.5)
    assert s["utilisation_mean_pct"] < 90
    assert s["saturated"]
    assert not summarise([0.99] * 2 + [0.1] * 8, 0.5)["saturated"]  # 20 % is the limit


def test_no_samples_is_reported_as_such() -> None:
    assert summarise([], 0.5) == {"samples": 0, "interval_s": 0.5, "saturated": False}


def test_sampler_reads_proc_stat_and_times_each_sample() -> None:
    t0 = time.time()
    with CpuSampler(interval_s=0.05) as sampler:
        time.sleep(0.3)
    t1 = time.time()
    assert len(sampler.samples) >= 3 and len(sampler.times) == len(sampler.samples)
    assert all(0.0 <= u <= 1.0 for u in sampler.samples)
    assert t0 < sampler.times[0] and sampler.times == sorted(sampler.times)
    assert sampler.times[-1] <= t1
    s = during(sampler, t0, t1)
    assert s["samples"] == len(sampler.samples)
    assert 0.0 <= s["utilisation_mean_pct"] <= 100.0
    assert during(sampler, t1 + 1.0, t1 + 2.0)["samples"] == 0  # none after the run
