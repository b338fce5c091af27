"""The userspace backend: run linkem (netem/linkem) in the middlebox node.

apply(): resolve the link, write `linkem.json` into the run dir, start linkem with
`--iface-a iface_up_in --iface-b iface_up_out` (so a_to_b is the uplink), wait for the ready
file. stop(): SIGTERM, wait, read the final stats lines, return totals.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from ground import rundir
from netem.backend import NodeExec
from netem.linkem_config import linkem_config
from netem.linkem_stats import final_counters
from netem.model import Link
from netem.probe import linkem_path
from netem.resolve import resolve_link

READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
PACKET_LOG_NAME = rundir.PACKET_LOG
"""linkem's per-packet log in the run dir (with `link.packet_log: true`)."""


class LinkemError(RuntimeError):
    pass


class LinkemBackend:
    name = "userspace"

    def __init__(self, binary: Path | None = None, *, packet_log: bool = False) -> None:
        self.binary = binary or linkem_path()
        self.packet_log = packet_log
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr_path: Path | None = None
        self._stats_path: Path | None = None
        self._result: dict[str, Any] | None = None

    def apply(
        self,
        node: NodeExec,
        iface_up_in: str,
        iface_up_out: str,
        link: Link,
        *,
        base_dir: Path,
        run_dir: Path,
        seed: int,
    ) -> dict[str, Any]:
        if not self.binary.is_file():
            raise LinkemError(
                f"linkem binary not found at {self.binary} "
                "(build: cargo build --release -p linkem, or set PRIOLAB_LINKEM)"
            )
        resolved = resolve_link(link, base_dir)
        run_dir = run_dir.resolve()
        run_dir.mkdir(parents=True, exist_ok=True)
        config = linkem_config(resolved, seed)
        config_path = run_dir / rundir.LINKEM_CONFIG
        config_path.write_text(json.dumps(config))
        self._stats_path = run_dir / rundir.LINK_STATS
        self._stderr_path = run_dir / rundir.LINKEM_STDERR
        ready = run_dir / rundir.LINKEM_READY
        for p in (self._stats_path, ready):
            p.unlink(missing_ok=True)
        argv = [
            str(self.binary),
            "--iface-a", iface_up_in,
            "--iface-b", iface_up_out,
            "--config", str(config_path),
            "--stats", str(self._stats_path),
            "--ready-file", str(ready),
        ]  # fmt: skip
        if self.packet_log or link.packet_log:
            argv += ["--packet-log", str(run_dir / PACKET_LOG_NAME)]
        self._result = None
        with open(self._stderr_path, "wb") as err:
            self._proc = node.popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not ready.exists():
            code = self._proc.poll()
            if code is not None:
                self._proc = None
                raise LinkemError(
                    f"linkem exited with code {code} before it was ready: {self._stderr()}"
                )
            if time.monotonic() > deadline:
                self._kill()
                raise LinkemError(
                    f"linkem not ready after {READY_TIMEOUT_S} s (no {ready}): {self._stderr()}"
                )
            time.sleep(0.02)
        return {
            "backend": "userspace",
            "argv": argv,
            "config": config,
            "resolved": resolved.to_json(),
            "pid": self._proc.pid,
        }

    def _stderr(self) -> str:
        if self._stderr_path and self._stderr_path.exists():
            text = self._stderr_path.read_text(errors="replace").strip()
            return text[-2000:] or "(stderr empty)"
        return "(no stderr)"

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def stop(self) -> dict[str, Any]:
        if self._result is not None:
            return self._result
        errors: list[str] = []
        code: int | None = None
        if self._proc is not None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                code = self._proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                errors.append(f"linkem did not stop within {STOP_TIMEOUT_S} s of SIGTERM; killed")
                self._kill()
            self._proc = None
            if code not in (0, None):
                errors.append(f"linkem exited with code {code}: {self._stderr()}")
        if self._stats_path is None:
            return {"oversized_frames": 0, "errors": ["never applied"]}
        result = final_counters(self._stats_path)
        result.update(exit_code=code, stats_file=str(self._stats_path),
                      errors=errors + result["errors"])  # fmt: skip
        self._result = result
        return result
