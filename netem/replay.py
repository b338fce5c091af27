#!/usr/bin/env python3
"""The tc backend's trace replayer: timed argv lists from one schedule. The only one.

A throughput trace on the tc backend is a schedule of `tc class change` commands
(netem/tc.py `replay_schedule` computes every argv; this only keeps time). Standard library
only, because the same file runs in two ways:

- as a process of a run's plan (engine/plan.py plans `python replay.py SCHEDULE.json` on the
  node that shapes; the testbed installs this file beside the node agent as
  priolab_replay.py). It applies the schedule, then waits until SIGTERM and prints a JSON
  summary, `{"changes": N, "errors": [...]}` (its stdout is in the run folder; the judge reads
  it);
- as a thread of `netem.tc.TcBackend`, which drives a link directly (the backend's tests, the
  VM's link bench), with the backend's node running each argv.

Schedule: `{"steps": [{"t_ms": T, "argv": [...]}, ...], "period_ms": P, "loop": bool,
"skip_first": bool}`: step i runs at t0 + cycle × P + T_i; the first step of the first cycle is
skipped when `skip_first` (default: it was applied with the link).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_ERRORS = 10
"""How many failed steps' messages a summary keeps."""

Run = Callable[[list[str]], "subprocess.CompletedProcess[str]"]


def run_here(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run one step on this machine (the replayer as a process)."""
    return subprocess.run(argv, capture_output=True, text=True, check=False)


class Replayer:
    """Runs a schedule's steps on time (`run` executes one argv), until the schedule ends (no
    loop) or `stop()`. `clock` is monotonic seconds; waiting is on the stop event."""

    def __init__(
        self, schedule: dict[str, Any], run: Run, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.steps: list[dict[str, Any]] = list(schedule["steps"])
        self.period_ms = float(schedule.get("period_ms", 0))
        self.loop = bool(schedule.get("loop", False))
        self.skip_first = bool(schedule.get("skip_first", True))
        self.run, self.clock = run, clock
        self.changes = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.t0 = 0.0

    def replay(self, t0: float | None = None) -> None:
        """Keep time on this thread until the schedule ends or `stop()`."""
        self.t0 = self.clock() if t0 is None else t0
        cycle = 0
        while self.steps and not self._stop.is_set():
            for i, step in enumerate(self.steps):
                if cycle == 0 and i == 0 and self.skip_first:
                    continue
                due = self.t0 + (cycle * self.period_ms + float(step["t_ms"])) / 1000.0
                if self._stop.wait(max(0.0, due - self.clock())):
                    return
                res = self.run(list(step["argv"]))
                self.changes += 1
                if res.returncode != 0 and len(self.errors) < MAX_ERRORS:
                    self.errors.append(res.stderr.strip())
            if not self.loop:
                return
            cycle += 1

    def start(self, t0: float | None = None, name: str = "tc-trace") -> None:
        """Keep time on a thread of its own."""
        self._thread = threading.Thread(target=self.replay, args=(t0,), name=name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def summary(self) -> dict[str, Any]:
        return {"changes": self.changes, "errors": self.errors}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: replay.py SCHEDULE.json", file=sys.stderr)
        return 2
    rep = Replayer(json.loads(Path(argv[0]).read_text()), run_here)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, f: rep._stop.set())
    rep.replay()
    rep._stop.wait()  # a process of the plan: it ends when the agent stops it
    print(json.dumps(rep.summary()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
