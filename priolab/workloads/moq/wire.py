"""What a `moq` run put on the wire: the video direction's bytes at the IP layer against the
frames' payload, so the clip's rate *with* its overheads (MoQ object header, QUIC, UDP, IP)
and the overhead per frame are measured, not estimated. Pure functions of the frames the
publisher released and the link's final counters of the downlink (metadata.json
`link_final.downlink`: linkem's, or the sim site's, which count the same).

The link counts Ethernet frames: a UDP payload of n bytes is n + 42 bytes there (UDP 8 +
IPv4 20 + Ethernet 14; endpoints/simnet/README.md, "What the link counts"; tc counts the
same skb length). So at the IP layer a run carried `bytes_out - 14 * departures` bytes.

Everything that crossed the link counts: the handshake, ACK-only packets, and
retransmissions. `clip_*` values are therefore given only for a clean run (every frame
arrived and the link dropped nothing), where they measure the clip and the stack, not the
path; `downlink_ip_mbps` is given always (what the path carried).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

ETHERNET_HEADER_BYTES = 14  # IEEE 802.3 MAC header, no FCS, no VLAN (as linkem counts)


def stream_duration_s(capture_ms: np.ndarray) -> float:
    """The span the released frames cover: frames × the frame interval (the median gap
    between sorted capture times), so a 120 s run of 25 fps video is 120 s."""
    c = np.sort(np.asarray(capture_ms, dtype=float))
    if len(c) < 2:
        return math.nan
    return len(c) * float(np.median(np.diff(c))) / 1e3


def wire_metrics(
    frames: pd.DataFrame, downlink: Mapping[str, Any] | None, link_rate_bps: float | None = None
) -> dict[str, float]:
    """frames: analysis.frames_table (size_bytes, capture_ms, arrival_ms per released frame);
    downlink: the link's final counters of the video direction (None: not counted, e.g. tc);
    link_rate_bps: the video direction's mean rate as the run resolved it (None: unknown or
    unlimited).

    - `payload_mbps`: the frames' bytes (no headers) over the stream's duration;
    - `downlink_ip_mbps`, `downlink_eth_mbps`: what the video direction carried, at the IP
      layer and as the link counts it (Ethernet), over the same duration;
    - `link_queue_delay_mean_ms`, `_max_ms`: the waits of the video's packets in the
      link's queue (linkem's counters);
    - `link_rate_mbps` and `link_load` = `downlink_eth_mbps` ÷ it (≥ 1: the video alone
      needs more than the link gives, so a backlog grows for the whole run);
    - `clip_ip_mbps`, `overhead_bytes_per_frame`, `overhead_pct`, `packets_per_frame`,
      `overhead_bytes_per_packet`: only for a clean run (above), else NaN.
    """
    nan = math.nan
    out = dict.fromkeys(
        ("payload_mbps", "downlink_ip_mbps", "downlink_eth_mbps", "clip_ip_mbps",
         "overhead_bytes_per_frame", "overhead_pct", "packets_per_frame",
         "overhead_bytes_per_packet", "link_queue_delay_mean_ms", "link_queue_delay_max_ms",
         "link_rate_mbps", "link_load"),
        nan,
    )  # fmt: skip
    n = len(frames)
    dur = stream_duration_s(frames["capture_ms"].to_numpy(float)) if n else nan
    if not (n and math.isfinite(dur) and dur > 0):
        return out
    payload = float(frames["size_bytes"].sum())
    out["payload_mbps"] = payload * 8 / dur / 1e6
    if not downlink:
        return out
    packets = float(downlink["departures"])
    eth = float(downlink["bytes_out"])
    ip = eth - ETHERNET_HEADER_BYTES * packets
    out["downlink_ip_mbps"] = ip * 8 / dur / 1e6
    out["downlink_eth_mbps"] = eth * 8 / dur / 1e6
    if link_rate_bps:
        out["link_rate_mbps"] = link_rate_bps / 1e6
        out["link_load"] = out["downlink_eth_mbps"] / out["link_rate_mbps"]
    for k, src in (("link_queue_delay_mean_ms", "queue_delay_ms_mean"),
                   ("link_queue_delay_max_ms", "queue_delay_ms_max")):  # fmt: skip
        v = downlink.get(src)
        out[k] = float(v) if v is not None else nan
    dropped = sum(int(downlink.get(k) or 0) for k in ("drops_queue", "drops_loss", "drops_police"))
    all_arrived = bool(frames["arrival_ms"].notna().all())
    if dropped == 0 and all_arrived:
        over = ip - payload
        out["clip_ip_mbps"] = out["downlink_ip_mbps"]
        out["overhead_bytes_per_frame"] = over / n
        out["overhead_pct"] = 100 * over / payload
        out["packets_per_frame"] = packets / n
        out["overhead_bytes_per_packet"] = over / packets if packets else nan
    return out
