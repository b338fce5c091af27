"""What a run's standard-format outputs must hold, checked the way a reader would open them:
each qlog trace with analysis.qlog (no maintained qlog reader is on PyPI: the JSON-SEQ records
are parsed as RFC 7464 and the qlog drafts lay them out), each pcap with tshark, decrypting
QUIC with the run's TLS key log. Used by the sim site's tests and the Mininet site's.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from analysis import qlog
from ground import rundir

SENT, RECEIVED = "transport:packet_sent", "transport:packet_received"


def check_qlogs(run: Path, expected: set[str], until_ms: float) -> dict[str, qlog.Trace]:
    """The run's qlog traces are exactly `expected` (paths relative to the run folder); each
    is a JSON-SEQ qlog of one connection with packets sent and received, its times
    non-decreasing and within [0, until_ms]. Returns them by relative path.

    One connection: quinn names the connection (group_id) by the client's first destination
    ID until the server's first reply, and by the server's ID from then on, so a client's
    trace holds two names, one after the other, and a server's one."""
    found = {str(p.relative_to(run)): p for p in rundir.qlog_files(run)}
    assert set(found) == expected, sorted(found)
    out = {}
    for rel, path in found.items():
        t = qlog.read(path)
        assert t.header["qlog_format"] == "JSON-SEQ", rel
        assert "connection 1" in t.header["title"] or "connection 2" in t.header["title"], rel
        assert len(t.named(SENT)) > 10 and len(t.named(RECEIVED)) > 10, rel
        times = [float(e["time"]) for e in t.events]
        assert times == sorted(times), f"{rel}: times go back"
        assert 0.0 <= times[0] and times[-1] <= until_ms, (rel, times[0], times[-1])
        groups = [e.get("group_id") for e in t.events]
        changes = sum(1 for a, b in zip(groups, groups[1:], strict=False) if a != b)
        assert changes <= 1 and None not in groups, f"{rel}: one connection"
        out[rel] = t
    return out


def tshark() -> str:
    """tshark's path; the test skips, saying why, when it is absent."""
    path = shutil.which("tshark")
    if path is None:
        pytest.skip("tshark is not installed (Debian package `tshark`, in the Makefile's "
                    "APT_PKGS): the pcap checks need it")  # fmt: skip
    return path


def quic_fields(pcap: Path, port: int, keylog: Path | None) -> list[list[str]]:
    """Per UDP datagram tshark decodes as QUIC in `pcap` (UDP `port` read as QUIC; the TLS key
    log `keylog`, if given): ip.src, ip.dst, the header forms of its QUIC packets (long 1,
    short 0; comma-separated, a datagram may coalesce packets) and the frame types tshark
    could decrypt (comma-separated, empty when none)."""
    argv = [tshark(), "-n", "-r", str(pcap), "-d", f"udp.port=={port},quic", "-Y", "quic",
            "-T", "fields", "-E", "separator=/t", "-e", "ip.src", "-e", "ip.dst",
            "-e", "quic.header_form", "-e", "quic.frame_type"]  # fmt: skip
    if keylog is not None:
        argv[4:4] = ["-o", f"tls.keylog_file:{keylog}"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    return [(line.split("\t") + ["", ""])[:4] for line in r.stdout.splitlines()]


APP_FRAMES = {f"0x{t:02x}" for t in (*range(0x08, 0x10), 0x30, 0x31)}
"""QUIC frames that only 1-RTT (or 0-RTT) packets carry: STREAM (RFC 9000 §19.8) and
DATAGRAM (RFC 9221); tshark can read them only when it can decrypt those packets."""


def _hex(value: str) -> str:
    return f"0x{int(value, 0):02x}"


def _app_frames(rows: list[list[str]]) -> int:
    """How many datagrams hold a decrypted STREAM or DATAGRAM frame."""
    return sum(1 for r in rows if {_hex(f) for f in r[3].split(",") if f} & APP_FRAMES)


def _has_short(rows: list[list[str]]) -> bool:
    return any(f in ("0", "False") for r in rows for f in r[2].split(","))


def bad_checksums(pcap: Path) -> int:
    """How many frames of `pcap` tshark finds an IPv4 or UDP checksum wrong in, or could not
    check (validation on; a frame without IPv4 and UDP counts too)."""
    argv = [tshark(), "-n", "-r", str(pcap), "-o", "ip.check_checksum:TRUE",
            "-o", "udp.check_checksum:TRUE", "-Y",
            "!(ip.checksum.status == 1 && udp.checksum.status == 1)"]  # fmt: skip
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    return len(r.stdout.splitlines())


def check_pcap(pcap: Path, keylog: Path, port: int, a: str, b: str) -> None:
    """tshark decodes QUIC between the addresses `a` and `b` (both ways, nothing else) in
    `pcap`, 1-RTT packets (short header) among them; with the TLS key log it decrypts them
    down to the application's STREAM or DATAGRAM frames, without it to none."""
    with_keys = quic_fields(pcap, port, keylog)
    pairs = {(r[0], r[1]) for r in with_keys}
    assert pairs == {(a, b), (b, a)}, pairs
    assert _has_short(with_keys)
    assert _app_frames(with_keys) > 0, with_keys[:20]
    without = quic_fields(pcap, port, None)
    assert len(without) == len(with_keys) and _has_short(without)
    assert _app_frames(without) == 0
