"""Whole-machine CPU utilisation sampled from /proc/stat while a run is live."""

from __future__ import annotations

import threading
from typing import Any

# A run is invalid if the machine's CPU was saturated: the mean utilisation over the run
# reached MEAN_LIMIT, or more than BUSY_SHARE_LIMIT of the samples were at BUSY_SAMPLE
# or above. (Assumption: with 2 cores, sustained ≥ 90 % leaves the emulator and the
# endpoints competing for CPU, which delays packets and timers.)
MEAN_LIMIT = 0.90
BUSY_SAMPLE = 0.98
BUSY_SHARE_LIMIT = 0.20


def _read() -> tuple[int, int]:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields), idle


class CpuSampler:
    def __init__(self, interval_s: float = 0.5) -> None:
        self.interval_s = interval_s
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> CpuSampler:
        self._thread.start()
        return self

    def _loop(self) -> None:
        total0, idle0 = _read()
        while not self._stop.wait(self.interval_s):
            total, idle = _read()
            dt = total - total0
            if dt > 0:
                self.samples.append(1.0 - (idle - idle0) / dt)
            total0, idle0 = total, idle

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        return summarise(self.samples, self.interval_s)


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
