"""What a moq run put on the wire (priolab/workloads/moq/wire.py): the IP-layer bytes of the
video direction against the frames' payload, from hand-made frames and link counters."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from priolab.workloads.moq.wire import stream_duration_s, wire_metrics


def _frames(n: int = 250, size: int = 10_000, arrived: bool = True) -> pd.DataFrame:
    capture = np.arange(n) * 40.0  # 25 fps: n frames are n / 25 s of video
    return pd.DataFrame(
        {
            "size_bytes": np.full(n, size),
            "capture_ms": capture,
            "arrival_ms": capture + 20 if arrived else np.where(np.arange(n) == 7, np.nan, 1.0),
        }
    )


def _link(packets: int, ip_bytes: int, **drops: int) -> dict:
    return {"departures": packets, "bytes_out": ip_bytes + 14 * packets,
            "drops_queue": drops.get("queue", 0), "drops_loss": drops.get("loss", 0),
            "drops_police": 0, "queue_delay_ms_mean": 1.5, "queue_delay_ms_max": 9.0}  # fmt: skip


def test_duration_is_frames_times_the_interval() -> None:
    assert stream_duration_s(np.arange(3000) * 40.0) == pytest.approx(120.0)
    assert math.isnan(stream_duration_s(np.array([0.0])))


def test_overhead_per_frame_and_rates_from_the_link_counters() -> None:
    # 250 frames (10 s) of 10,000 B; 9 packets of 1,130 IP bytes per frame: 170 B overhead
    m = wire_metrics(_frames(), _link(packets=2250, ip_bytes=250 * 9 * 1130))
    assert m["payload_mbps"] == pytest.approx(250 * 10_000 * 8 / 10 / 1e6)
    assert m["overhead_bytes_per_frame"] == pytest.approx(9 * 1130 - 10_000)
    assert m["packets_per_frame"] == pytest.approx(9)
    assert m["overhead_bytes_per_packet"] == pytest.approx((9 * 1130 - 10_000) / 9)
    assert m["clip_ip_mbps"] == m["downlink_ip_mbps"] == pytest.approx(2.034)
    # the link counts Ethernet frames: 14 B more per packet
    assert m["downlink_eth_mbps"] - m["downlink_ip_mbps"] == pytest.approx(2250 * 14 * 8 / 10 / 1e6)
    assert m["overhead_pct"] == pytest.approx(1.7)
    assert (m["link_queue_delay_mean_ms"], m["link_queue_delay_max_ms"]) == (1.5, 9.0)


def test_a_run_that_dropped_or_lost_frames_gives_no_clip_rate() -> None:
    dropped = wire_metrics(_frames(), _link(2250, 2_542_500, queue=3))
    lost = wire_metrics(_frames(arrived=False), _link(2250, 2_542_500))
    for m in (dropped, lost):
        assert math.isnan(m["clip_ip_mbps"]) and math.isnan(m["overhead_bytes_per_frame"])
        assert m["downlink_ip_mbps"] == pytest.approx(2.034)  # what the path carried: always


def test_no_link_counters_leave_only_the_payload_rate() -> None:
    m = wire_metrics(_frames(), None)
    assert m["payload_mbps"] == pytest.approx(2.0)
    assert all(math.isnan(v) for k, v in m.items() if k != "payload_mbps")


def test_link_load_is_the_ethernet_rate_over_the_links() -> None:
    m = wire_metrics(_frames(), _link(2250, 250 * 9 * 1130), link_rate_bps=2_000_000)
    assert m["link_rate_mbps"] == 2.0
    assert m["link_load"] == pytest.approx(m["downlink_eth_mbps"] / 2.0)
    assert m["link_load"] > 1  # 2.059 Mbit/s of Ethernet frames on a 2 Mbit/s link
    assert math.isnan(wire_metrics(_frames(), _link(2250, 2_542_500))["link_load"])
