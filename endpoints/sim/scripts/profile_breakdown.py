"""Where a sim run's CPU time goes: perf samples grouped into crypto, quinn, tokio, link, ...

    perf record -F 1000 --call-graph dwarf,16384 -o perf.data \
        target/release/priolab-sim run RUN/sim-spec.json
    python3 endpoints/sim/scripts/profile_breakdown.py perf.data

(RUN is a run folder from `bench_workloads.py --keep DIR`; delete its cert.der files
before running its spec again, or the client starts on the old certificate.)

Each sample goes to the group of the innermost frame that belongs to a known crate, walking
out of the leaf: std, core, alloc and libc frames (memcpy, malloc, mutexes) are charged to
the code that called them. The groups: `crypto` (ring, rustls: packet protection and the
handshake), `quinn` (quinn-proto's state machine and quinn's endpoint/connection drivers),
`tokio clock` (tokio's paused-clock `now()`), `tokio` (scheduler, timers, wakers),
`link` (simnet and linkem: the in-memory network and the link model), `app` (the protocol
crates: rise, dtp, qpr, moq, quicsetup), `logs` (the kernel's write path and formatting),
`kernel` (other system calls), `other`.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("tokio clock", ("tokio::time::clock", "tokio::runtime::time::source")),
    (
        "crypto",
        (
            "ring::",
            "ring_core",
            "rustls::",
            "aes_",
            "gcm_",
            "chacha",
            "_aesni",
            "aws_lc",
            "x25519",
            "ed25519",
        ),
    ),
    ("quinn", ("quinn_proto::", "quinn::", "quinn_udp::")),
    ("tokio", ("tokio::",)),
    ("link", ("simnet::", "linkem::")),
    (
        "logs",
        (
            "core::fmt",
            "<std::io::buffered",
            "std::io::Write",
            "ksys_write",
            "vfs_write",
            "ext4_",
            "__libc_write",
        ),
    ),
    (
        "app",
        (
            "rise::",
            "rise_core::",
            "dtp::",
            "qpr::",
            "moq::",
            "quicsetup::",
            "priolab_sim::",
            "priochan::",
        ),
    ),
]


KERNEL = " [k]"


def group_of(frames: list[str]) -> str:
    for sym in frames:
        for name, prefixes in GROUPS:
            if any(p in sym for p in prefixes):
                return name
    return "kernel" if frames and frames[0].endswith(KERNEL) else "other"


def samples(perf_data: str) -> list[list[str]]:
    text = subprocess.run(
        ["perf", "script", "-i", perf_data, "-F", "ip,sym", "--no-inline"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    out: list[list[str]] = []
    cur: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            if cur:
                out.append(cur)
            cur = []
            continue
        parts = line.split(None, 1)
        sym = parts[1] if len(parts) > 1 else "[unknown]"
        cur.append(sym + KERNEL if parts[0].startswith("ffffffff") else sym)
    if cur:
        out.append(cur)
    return out


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    all_samples = samples(sys.argv[1])
    counts = Counter(group_of(s) for s in all_samples)
    total = sum(counts.values()) or 1
    for name, n in counts.most_common():
        print(f"{name:<12} {100 * n / total:5.1f} %")
    print(f"{'samples':<12} {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
