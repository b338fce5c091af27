"""rise: MTP with the Host's frame-tick phase taken out (issue 25 item 5, mtp_phase.tick_phase)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from priolab.workloads.rise.mtp_phase import tick_phase

T0 = 1_700_000_000_000_000
PERIOD_US = 1e6 / 60  # tracking
FRAME_US = 1e6 / 30


def _logs(
    up_us: int, host_after_us: int = 11_000, deliver_us: int = 12_000, lost: range = range(0)
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """10 s: Guest samples at 60 Hz from T0, each received by the Host `up_us` later (the ids
    in `lost` never arrive); Host frame ticks at 30 fps from T0 + host_after_us, each frame
    rendered from the latest sample received by its tick and displayed deliver_us later."""
    gen = np.array([T0 + round(i * PERIOD_US) for i in range(600)])
    ok = np.array([i not in lost for i in range(600)])
    recv = pd.DataFrame({"sample_id": np.arange(600)[ok], "recv_time_us": gen[ok] + up_us,
                         "gen_time_us": gen[ok]})  # fmt: skip
    enc = np.array([T0 + host_after_us + round(k * FRAME_US) for k in range(300)])
    idx = np.searchsorted(recv["recv_time_us"].to_numpy(), enc, side="right") - 1
    sample = np.where(idx >= 0, recv["sample_id"].to_numpy()[np.maximum(idx, 0)], -1)
    sent = pd.DataFrame({"frame_id": np.arange(300), "encode_time_us": enc,
                         "tracking_sample_id": sample})  # fmt: skip
    has = sample >= 0
    disp = enc[has] + deliver_us
    shown = pd.DataFrame({"frame_id": np.arange(300)[has], "display_time_us": disp,
                          "tracking_sample_id": sample[has],
                          "mtp_ms": (disp - gen[sample[has]]) / 1e3})  # fmt: skip
    return shown, sent, recv


def test_the_16_ms_step_is_phase_and_mtp_net_of_it_does_not_step() -> None:
    """The Host ticks 11 ms after the Guest's samples: at 10.7 ms uplink delay each sample
    makes its tick (phase 0.3 ms); at 11.7 ms it misses by 0.7 ms and the frame carries the
    sample before (16.7 ms older). MTP steps by a tracking period; MTP net of the phase moves
    by the 1 ms of extra delay only."""
    on = tick_phase(*_logs(up_us=10_700))
    late = tick_phase(*_logs(up_us=11_700))
    assert on["tick_phase_median_ms"] == pytest.approx(0.3, abs=0.01)
    assert late["tick_phase_median_ms"] == pytest.approx(11.0 + PERIOD_US / 1e3 - 11.7, abs=0.02)
    assert on["mtp_net_median_ms"] == pytest.approx(10.7 + 12.0, abs=0.01)
    assert late["mtp_net_median_ms"] == pytest.approx(11.7 + 12.0, abs=0.02)
    assert on["tick_stale_median_ms"] == late["tick_stale_median_ms"] == 0


def test_lost_tracking_stays_in_mtp_net_of_the_phase() -> None:
    """The flattering failure: taking the frame's whole wait at the Host out would hide the
    ticks that found no newer sample (tracking lost), the scheme's own cost. Every sample
    from id 100 (1.67 s) on is lost: later frames carry sample 99; the staleness stays in
    MTP net."""
    clean = tick_phase(*_logs(up_us=10_700))
    shown, sent, recv = _logs(up_us=10_700, lost=range(100, 600))
    lossy = tick_phase(shown, sent, recv)
    assert lossy["tick_stale_median_ms"] > 1000  # the median frame (5 s) is ~3.3 s stale
    assert lossy["mtp_net_median_ms"] > clean["mtp_net_median_ms"] + 1000
    assert lossy["tick_phase_median_ms"] < FRAME_US / 1e3


def test_a_frame_whose_sample_the_host_never_logged_makes_every_value_nan() -> None:
    shown, sent, recv = _logs(up_us=10_700)
    used = int(shown["tracking_sample_id"].iloc[-1])
    m = tick_phase(shown, sent, recv[recv["sample_id"] != used])
    assert all(math.isnan(v) for v in m.values())


def test_no_frame_with_a_sample_gives_nan() -> None:
    shown, sent, recv = _logs(up_us=10_700)
    m = tick_phase(shown.iloc[0:0], sent, recv)
    assert all(math.isnan(v) for v in m.values())
