"""The interface every link-emulation backend implements (tc, userspace linkem).

The run of one experiment (priolab/run.py) only talks to this interface. A backend is
given the middlebox node's executor and the two interfaces it sits between, applies a
`netem.model.Link` (uplink = packets entering on `iface_up_in` and leaving on
`iface_up_out`), and later stops, returning what it measured.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Protocol

from netem.model import Link


class NodeExec(Protocol):
    """Runs argv lists inside one node's network namespace (a Mininet host, a testbed node)."""

    name: str

    def run(self, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run to completion, capture text output; raise CalledProcessError if check fails."""
        ...

    def popen(self, argv: list[str], *, stdout: Any, stderr: Any) -> subprocess.Popen[bytes]:
        """Start a long-running process in the node."""
        ...


class LinkBackend(Protocol):
    name: str

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
        """Apply the link; return the configuration as applied (JSON-serialisable: commands
        run, config written, resolved numbers), recorded in the run's metadata.json.
        `base_dir` resolves relative trace paths; logs go under `run_dir`."""
        ...

    def stop(self) -> dict[str, Any]:
        """Stop emulating (idempotent); return final counters and any errors seen, e.g.
        `{"oversized_frames": 0, ...}` — a run with oversized frames is invalid."""
        ...
