"""A small UDP probe for the calibrator: timestamped, numbered packets at a paced rate.

    python -m netem.udpprobe send --dst IP --port P --pps N --count N [--size B] [--seed-seq S]
    python -m netem.udpprobe recv --port P --out FILE.npz [--duration S] [--idle S]

Each packet carries (seq, send time in ns, CLOCK_REALTIME) and is padded to --size bytes of UDP
payload. The receiver takes the kernel's receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME):
both ends run on one machine in different network namespaces and share the clock, so
recv - send is the one-way delay. The receiver writes arrays seq, send_ns, recv_ns to an npz.
"""

from __future__ import annotations

import argparse
import socket
import struct
import time

import numpy as np

HEADER = struct.Struct("!QQ")
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
READY_LINE = "udpprobe: bound"
"""What `recv` prints on stdout once its socket is bound."""
FIRST_LINE = "udpprobe: first packet"
"""What `recv` prints on stdout when the first probe packet arrives (a schedule that must
coincide with the probe, e.g. a rate trace, starts on it)."""
SO_RCVBUFFORCE = 33
RCVBUF_BYTES = 32 * 1024 * 1024


def send(dst: str, port: int, pps: float, count: int, size: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * 1024 * 1024)
    pad = bytes(max(0, size - HEADER.size))
    t0 = time.monotonic()
    i = 0
    while i < count:
        due = int((time.monotonic() - t0) * pps) + 1
        if due <= i:
            time.sleep(min(0.0005, (i - due + 1) / pps))
            continue
        for seq in range(i, min(due, count)):
            sock.sendto(HEADER.pack(seq, time.time_ns()) + pad, (dst, port))
        i = min(due, count)


def recv(port: int, out: str, duration_s: float, idle_s: float) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF_BYTES)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF_BYTES)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.bind(("0.0.0.0", port))
    print(READY_LINE, flush=True)  # a caller may start its sender once it reads this
    sock.settimeout(0.2)
    seqs: list[int] = []
    sends: list[int] = []
    recvs: list[int] = []
    sizes: list[int] = []
    start = time.monotonic()
    last = None
    while True:
        now = time.monotonic()
        if now - start > duration_s or (last is not None and now - last > idle_s):
            break
        try:
            data, anc, _flags, _addr = sock.recvmsg(65535, 64)
        except TimeoutError:
            continue
        if last is None:
            print(FIRST_LINE, flush=True)
        last = time.monotonic()
        rx = time.time_ns()
        for level, kind, cdata in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= 16:
                sec, nsec = struct.unpack_from("qq", cdata)
                rx = sec * 1_000_000_000 + nsec
        if len(data) < HEADER.size:
            continue
        seq, sent = HEADER.unpack_from(data)
        seqs.append(seq)
        sends.append(sent)
        recvs.append(rx)
        sizes.append(len(data))
    np.savez(
        out,
        seq=np.array(seqs, dtype=np.int64),
        send_ns=np.array(sends, dtype=np.int64),
        recv_ns=np.array(recvs, dtype=np.int64),
        size=np.array(sizes, dtype=np.int64),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m netem.udpprobe")
    sub = ap.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("send")
    s.add_argument("--dst", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--pps", type=float, required=True)
    s.add_argument("--count", type=int, required=True)
    s.add_argument("--size", type=int, default=64, help="UDP payload bytes (>= 16)")
    r = sub.add_parser("recv")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--duration", type=float, default=60.0, help="stop after this many seconds")
    r.add_argument("--idle", type=float, default=2.0, help="stop this long after the last packet")
    a = ap.parse_args(argv)
    if a.mode == "send":
        send(a.dst, a.port, a.pps, a.count, a.size)
    else:
        recv(a.port, a.out, a.duration, a.idle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
