"""rise.tail_split: the MTP tail's split into uplink, tick phase, staleness and delivery, and the
Guest's uplink packets, bytes and congestion events."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from priolab.workloads.rise.logs import read_log_csv
from priolab.workloads.rise.tail_split import by_site, main, mtp_parts, split, tail_means, uplink

T0 = 1_700_000_000_000_000


def _run(tmp_path: Path, name: str, site: str, slow_up_frames: set[int]) -> Path:
    """10 s at 30 fps. The Host's frame k ticks at T0 + 5 ms + k/30 s and carries the Guest's
    sample 2k - 1 (made 60 Hz from T0, received 10 ms after it was made: phase 11.67 ms, MTP
    33.67 ms), except the frames in `slow_up_frames`, which carry sample 2k - 24, received
    400 ms after it was made, just before the tick (phase 5 ms, MTP 417 ms); every frame is
    displayed 12 ms after its tick. The Guest's uplink: 2,000 packets and 2 MB per second, one
    congestion event per second, cwnd 60,000 bytes; 1,000 video datagrams (1.4 MB) per second."""
    d = tmp_path / name
    (d / "guest").mkdir(parents=True)
    (d / "host").mkdir()
    gen = T0 + np.round(np.arange(600) * 1e6 / 60).astype(np.int64)
    k = np.arange(1, 300)
    slow = np.isin(k, sorted(slow_up_frames))
    sample = np.where(slow, 2 * k - 24, 2 * k - 1)
    up_us = np.full(600, 10_000)
    up_us[sample[slow]] = 400_000
    pd.DataFrame(
        {"sample_id": np.arange(600), "recv_time_us": gen + up_us, "gen_time_us": gen}
    ).to_csv(d / "host" / "tracking_received.csv", index=False)
    enc = T0 + 5_000 + np.round(k * 1e6 / 30).astype(np.int64)
    pd.DataFrame(
        {"frame_id": k, "frame_type": "delta", "size_bytes": 1000, "frag_cnt": 1,
         "encode_time_us": enc, "tracking_sample_id": sample, "key_cause": "none"}
    ).to_csv(d / "host" / "frames_sent.csv", index=False)  # fmt: skip
    disp = enc + 12_000
    pd.DataFrame(
        {"frame_id": k, "frame_type": "delta", "display_time_us": disp,
         "tracking_sample_id": sample, "tracking_gen_time_us": gen[sample],
         "mtp_ms": (disp - gen[sample]) / 1e3}
    ).to_csv(d / "guest" / "frames_displayed.csv", index=False)  # fmt: skip
    ps = ["time_us,rtt_ms,cwnd_bytes,lost_packets,sent_packets,bytes_sent,bytes_received,"
          "congestion_events"]  # fmt: skip
    for i in range(101):
        t = T0 + i * 100_000
        ps.append(f"{t},21.0,60000,{i // 10},{i * 200},{i * 200_000},0,{i // 10}")
    (d / "guest" / "path_stats.csv").write_text("\n".join(ps) + "\n")
    ch = ["time_us,channel,enqueued,sent,dropped_ingress,evicted,retransmitted,bytes_sent"]
    for s_ in range(1, 11):
        t = T0 + s_ * 1_000_000
        ch.append(f"{t},video,{s_ * 1000},{s_ * 1000},0,0,0,{s_ * 1_400_000}")
        ch.append(f"{t},ack,{s_ * 900},{s_ * 900},0,0,0,{s_ * 13_500}")
    (d / "guest" / "channels.csv").write_text("\n".join(ch) + "\n")
    m = {
        "run": {"scenario": "agree-rise", "setting": "L0.05", "scheme": "nopri", "rep": 1},
        "analysis": {"windows_us": {"guest": [T0, T0 + 3_000_000, T0 + 10_000_000]}},
    }
    (d / "metrics.json").write_text(json.dumps(m))
    meta = {"site": {"kind": site}, "git": {"commit": "abcdef0123456789", "dirty": False}}
    (d / "metadata.json").write_text(json.dumps(meta))
    return d


def test_the_parts_add_up_to_mtp_and_name_the_tick_phase(tmp_path: Path) -> None:
    d = _run(tmp_path, "r1", "sim", set())
    parts = mtp_parts(
        read_log_csv(d / "guest" / "frames_displayed.csv"),
        read_log_csv(d / "host" / "frames_sent.csv"),
        read_log_csv(d / "host" / "tracking_received.csv"),
    )
    total = parts[["up", "phase", "stale", "deliver"]].sum(axis=1)
    assert (total - parts["mtp"]).abs().max() < 0.002
    assert parts["up"].median() == pytest.approx(10.0, abs=0.01)
    assert parts["phase"].median() == pytest.approx(11.67, abs=0.01)
    assert parts["deliver"].median() == pytest.approx(12.0, abs=0.01)
    assert parts["stale"].max() == pytest.approx(0.0)


def test_the_tail_is_the_frames_whose_sample_came_late_and_its_time_is_uplink(
    tmp_path: Path,
) -> None:
    slow = set(range(100, 300, 10))  # 20 of the 210 frames in the window: more than 5 %
    row = split(_run(tmp_path, "r1", "mininet", slow))
    assert row["site"] == "mininet"
    assert row["mtp_p95_ms"] == pytest.approx(417.0, abs=0.01)
    assert row["tail_frames"] == 20
    assert row["tail_up_ms"] == pytest.approx(400.0, abs=0.01)
    assert row["tail_phase_ms"] == pytest.approx(5.0, abs=0.01)
    assert row["tail_deliver_ms"] == pytest.approx(12.0, abs=0.01)
    assert row["tail_up_share"] == pytest.approx(400 / 417, abs=1e-4)
    assert row["all_up_ms"] == pytest.approx(10.0, abs=0.01)


def test_a_sample_the_next_ticks_do_not_replace_shows_as_stale() -> None:
    shown = pd.DataFrame(
        {
            "frame_id": [1],
            "frame_type": ["delta"],
            "display_time_us": [T0 + 112_000],
            "tracking_sample_id": [0],
            "tracking_gen_time_us": [T0],
            "mtp_ms": [112.0],
        }
    )
    host_sent = pd.DataFrame({"frame_id": [1, 2], "encode_time_us": [T0 + 100_000, T0 + 50_000]})
    host_recv = pd.DataFrame({"sample_id": [0], "recv_time_us": [T0 + 10_000]})
    parts = mtp_parts(shown, host_sent, host_recv)
    # received at 10 ms, first tick at 50 ms (phase 40), its own tick at 100 ms (stale 50)
    assert parts.loc[0, ["up", "phase", "stale", "deliver"]].tolist() == [10.0, 40.0, 50.0, 12.0]


def test_a_frame_the_host_never_logged_is_an_error_not_left_out(tmp_path: Path) -> None:
    shown = pd.DataFrame(
        {
            "frame_id": [7],
            "frame_type": ["delta"],
            "display_time_us": [T0],
            "tracking_sample_id": [3],
            "tracking_gen_time_us": [T0],
            "mtp_ms": [1.0],
        }
    )
    with pytest.raises(ValueError, match="frame 7"):
        mtp_parts(
            shown,
            pd.DataFrame({"frame_id": [1], "encode_time_us": [T0]}),
            pd.DataFrame({"sample_id": [3], "recv_time_us": [T0]}),
        )


def test_uplink_rates_per_packet_and_per_byte(tmp_path: Path) -> None:
    d = _run(tmp_path, "r1", "sim", set())
    u = uplink(
        read_log_csv(d / "guest" / "path_stats.csv"),
        read_log_csv(d / "guest" / "channels.csv"),
        T0 + 3_000_000,
        T0 + 10_000_000,
    )
    assert u["up_pkts_per_s"] == pytest.approx(2000.0)
    assert u["up_mbps"] == pytest.approx(16.0)
    assert u["bytes_per_pkt"] == pytest.approx(1000.0)
    assert u["cev_per_10k_pkts"] == pytest.approx(5.0)
    assert u["cev_per_10mb"] == pytest.approx(5.0)
    assert u["cwnd_mean_bytes"] == pytest.approx(60000.0)
    assert u["video_mbps"] == pytest.approx(11.2)
    # 2,000 packets a second carry 1,000 video datagrams: one other packet per video datagram
    assert u["small_per_video"] == pytest.approx(1.0)


def test_tail_means_of_no_frames_is_nan() -> None:
    empty = pd.DataFrame(columns=["mtp", "up", "phase", "stale", "deliver"], dtype=float)
    out = tail_means(empty)
    assert out["frames"] == 0
    assert out["mtp_p95_ms"] != out["mtp_p95_ms"]


def test_cli_groups_runs_by_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [
        _run(tmp_path, "m1", "mininet", {150}),
        _run(tmp_path, "m2", "mininet", set()),
        _run(tmp_path, "s1", "sim", set()),
    ]
    out_csv = tmp_path / "rows.csv"
    assert main([*map(str, runs), "--csv", str(out_csv)]) == 0
    rows = pd.read_csv(out_csv)
    assert len(rows) == 3
    g = by_site(rows)
    assert g.set_index("site")["n"].to_dict() == {"mininet": 2, "sim": 1}
    assert set(g["commit"]) == {"abcdef0"}
    assert "commit" not in by_site(rows, ("site",))
    assert "mininet" in capsys.readouterr().out
    assert main([str(runs[0]), "--by", "site,colour"]) == 2
    assert "allowed columns are site, commit" in capsys.readouterr().err


def test_cli_names_a_folder_without_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2
    assert str(tmp_path) in capsys.readouterr().err
