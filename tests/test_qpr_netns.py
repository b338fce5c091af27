"""Real `qpr` runs in Mininet hosts over the (rescaled) driving 5G trace with 5 % bursty
Gilbert-Elliott loss on the downlink (scenarios/qpr-paths.yaml, 12 s each): Q0 (every object
on reliable streams) and Q100 (every object as datagrams) on the three unreliable paths.

- Every session runs its whole duration through the loss; Q0 delivers every object whole
  (retransmissions), Q100 loses object data (no retransmission) and carries on.
- `loss_blind_connection` (the datagrams on a second connection whose Cubic is not cut on
  loss, [QPR §III-C]): Q100 keeps more throughput than Q0 ([QPR Fig. 15]: +125 % at
  5 %). This is the assertion the shared path fails: there quinn cuts the one window on every
  lost packet and Q100 ≈ Q0 (workload README, "What was measured").
- `fixed_window_connection` (the window stays at the initial window, 2400 bytes here: the
  driving trace's lowest rate 0.4 Mbit/s × 20 ms, raised to quinn's minimum, and at least
  two packets of the current MTU): its datagram connection ends with that window, and the
  segments come no faster than a window per 20 ms round trip (a window that grew would
  break it).
- `shared` Q100 is run and printed beside them, not ordered: the two are within a few percent
  of each other there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, dataset, needs_root
from tests.netns_runs import process_names, require_built, run_point, shortened

pytestmark = [needs_root, pytest.mark.netns]

SCENARIO = REPO / "scenarios" / "qpr-paths.yaml"


def _scenario(tmp_path: Path) -> Path:
    def edit(data: dict) -> None:
        trace = data["settings"]["driving-loss5"]["link"]["downlink"]["trace"]
        assert trace["file"].startswith("data:sigcomm21-5g-variegated/"), trace["file"]
        f = dataset("sigcomm21-5g-variegated") / trace["file"].rsplit("/", 1)[1]
        trace["file"] = str(f)
        data["settings"] = {"driving-loss5": data["settings"]["driving-loss5"]}

    # short: a dozen segments per scheme
    return shortened(tmp_path, SCENARIO.name, edit, duration_s=12)


def _run(sc: Path, scheme: str) -> tuple[Path, dict[str, float]]:
    out, meta = run_point(sc, "driving-loss5", scheme)
    assert process_names(meta) == {"qpr-server", "qpr-player"}
    from priolab.workloads.qpr.analysis import run_analysis

    return out, run_analysis(out, duration_s=12)


def test_q100_keeps_more_throughput_than_q0_through_bursty_loss(tmp_path: Path) -> None:
    require_built("qpr", "linkem")
    sc = _scenario(tmp_path)
    schemes = ("q0", "q100", "q100-lossblind", "q100-fixed")
    runs = {s: _run(sc, s) for s in schemes}
    m = {s: r[1] for s, r in runs.items()}
    for s in schemes:
        print(f"{s}: per-segment throughput mean {m[s]['throughput_mean_mbps']:.2f} Mbit/s, "
              f"segments {m[s]['segments']:.0f}, freezes {m[s]['freezes']:.0f}, "
              f"objects incomplete {m[s]['objects_incomplete_pct']:.0f} %, "
              f"decodable quality rank 1 {m[s]['decodable_quality_rank1_mean']:.2f}, "
              f"lost packets {m[s]['lost_packets']:.0f}")  # fmt: skip
    q0, lossblind, fixed = m["q0"], m["q100-lossblind"], m["q100-fixed"]
    for s in schemes:
        assert m[s]["segments"] >= (2 if s == "q100-fixed" else 5), s  # the session went on
        assert m[s]["lost_packets"] > 0, s  # the loss model acted
    assert q0["objects_incomplete_pct"] == 0  # reliable: every byte arrives
    for s in schemes[1:]:
        assert m[s]["unreliable_bytes_lost_pct"] > 0, s  # datagrams are not retransmitted
    for s in ("q0", "q100", "q100-lossblind"):
        assert m[s]["throughput_mean_mbps"] > 0.5, s  # Mbit/s: far above a stalled session
    # The datagrams' own connection lost packets and its controller kept sending.
    for s in ("q100-lossblind", "q100-fixed"):
        assert m[s]["unreliable_conn_lost_packets"] > 0, s
    # [QPR Fig. 15]: Q100 above Q0 at 5 % loss. The margin, 1.2, is far below the 1.86
    # a patched quinn measured with the same response (workload README) and far above the
    # shared path's 0.94-1.06.
    assert lossblind["throughput_mean_mbps"] > 1.2 * q0["throughput_mean_mbps"]
    # The fixed window: 2400 bytes or two packets of the path's MTU (≤ 1500 bytes), one
    # window per round trip of at least 20 ms.
    host = json.loads((runs["q100-fixed"][0] / "host" / "summary.json").read_text())
    window = host["unreliable_conn_cwnd_bytes_at_end"]
    assert 2400 <= window <= 3000
    assert fixed["throughput_mean_mbps"] < window * 8 / 0.020 / 1e6
