"""Probe what the kernel supports, choose a backend, build it.

`probe_kernel()` adds each qdisc kind on a veth inside a temporary namespace
`ne-probe-<pid>` (always deleted) and tries to turn offloads off with ethtool.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from netem.backend import LinkBackend
from netem.model import BackendName
from netem.nsexec import add_netns, del_netns, offloads_off

QDISC_ARGS: dict[str, list[str]] = {
    "netem": ["netem"],
    "tbf": ["tbf", "rate", "1mbit", "burst", "10000", "latency", "50ms"],
    "htb": ["htb"],
    "bfifo": ["bfifo"],
    "pfifo": ["pfifo"],
    "pfifo_head_drop": ["pfifo_head_drop"],
}
REPO_ROOT = Path(__file__).resolve().parent.parent


def linkem_path() -> Path:
    """The linkem binary: $PRIOLAB_LINKEM, else <repo>/target/release/linkem."""
    env = os.environ.get("PRIOLAB_LINKEM")
    return Path(env) if env else REPO_ROOT / "target" / "release" / "linkem"


@dataclass
class KernelSupport:
    qdiscs: dict[str, bool] = field(default_factory=dict)
    qdisc_errors: dict[str, str] = field(default_factory=dict)
    ethtool_offloads_off: bool = False
    ethtool_error: str = ""
    linkem: str | None = None
    error: str = ""

    @property
    def tc_ok(self) -> bool:
        return all(self.qdiscs.get(k, False) for k in ("netem", "htb", "bfifo", "pfifo"))

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["tc_ok"] = self.tc_ok
        return d


def probe_kernel() -> KernelSupport:
    support = KernelSupport()
    binary = linkem_path()
    support.linkem = str(binary) if binary.is_file() and os.access(binary, os.X_OK) else None
    ns = f"ne-probe-{os.getpid()}"
    try:
        node = add_netns(ns)
        node.run(["ip", "link", "add", "nep0", "type", "veth", "peer", "name", "nep1"])
        node.run(["ip", "link", "set", "nep0", "up"])
        for kind, args in QDISC_ARGS.items():
            res = node.run(
                ["tc", "qdisc", "add", "dev", "nep0", "root", "handle", "1:", *args], check=False
            )
            support.qdiscs[kind] = res.returncode == 0
            if res.returncode != 0:
                support.qdisc_errors[kind] = res.stderr.strip()
            node.run(["tc", "qdisc", "del", "dev", "nep0", "root"], check=False)
        res = offloads_off(node, "nep0")
        support.ethtool_offloads_off = res.returncode == 0
        support.ethtool_error = res.stderr.strip()
    except (OSError, subprocess.SubprocessError) as e:
        support.error = str(e)
    finally:
        del_netns(ns)
    return support


def choose_backend(requested: BackendName, support: KernelSupport) -> tuple[str, str]:
    """(backend name, reason). Raises RuntimeError if the requested backend cannot work."""
    missing = [k for k in ("netem", "htb", "bfifo", "pfifo") if not support.qdiscs.get(k)]
    if requested == "tc":
        if missing:
            raise RuntimeError(f"backend 'tc' requested but the kernel lacks qdiscs: {missing}")
        return "tc", "requested"
    if requested == "userspace":
        if support.linkem is None:
            raise RuntimeError(
                f"backend 'userspace' requested but no linkem binary at {linkem_path()} "
                "(build: cargo build --release -p linkem, or set PRIOLAB_LINKEM)"
            )
        return "userspace", "requested"
    if not missing:
        return "tc", "auto: the kernel has netem, htb, bfifo and pfifo"
    if support.linkem is not None:
        return "userspace", f"auto: the kernel lacks {', '.join(missing)}; linkem found"
    raise RuntimeError(
        f"no backend works: the kernel lacks {missing} and there is no linkem binary at "
        f"{linkem_path()}"
    )


def get_backend(name: str) -> LinkBackend:
    if name == "tc":
        from netem.tc import TcBackend

        return TcBackend()
    if name == "userspace":
        from netem.userspace import LinkemBackend

        return LinkemBackend()
    raise ValueError(f"unknown backend {name!r}; allowed: tc, userspace")


if __name__ == "__main__":  # pragma: no cover
    import json

    s = probe_kernel()
    print(json.dumps(s.to_json(), indent=1))
    try:
        print(choose_backend("auto", s))
    except RuntimeError as e:
        print(e)
