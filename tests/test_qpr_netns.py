"""Real `qpr` runs in Mininet hosts over the (rescaled) driving 5G trace with 5 % bursty
Gilbert-Elliott loss on the downlink (scenarios/qpr-paths.yaml, 12 s each): Q0 (every object
on reliable streams) and Q100 (every object as datagrams) on the three unreliable paths.

- Every session runs its whole duration through the loss; Q0 delivers every object whole
  (retransmissions), Q100 loses object data (no retransmission) and carries on.
- `loss_blind_connection` (the datagrams on a second connection whose Cubic is not cut on
  loss, seeds/002 §III-C): Q100 keeps more throughput than Q0 (seeds/002 Fig. 15: +125 % at
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
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, needs_root

pytestmark = [needs_root, pytest.mark.netns]

QPR = Path(os.environ.get("PRIOLAB_QPR", REPO / "target" / "release" / "qpr"))
LINKEM = REPO / "target" / "release" / "linkem"
SCENARIO = REPO / "scenarios" / "qpr-paths.yaml"


@pytest.fixture(autouse=True)
def _built() -> None:
    for b in (QPR, LINKEM):
        if not b.is_file():
            pytest.skip(f"{b} is not built; `make build` builds it")


def _scenario(tmp_path: Path) -> Path:
    data = yaml.safe_load(SCENARIO.read_text())
    trace = data["settings"]["driving-loss5"]["link"]["downlink"]["trace"]
    f = (SCENARIO.parent / trace["file"]).resolve()
    if not f.is_file():
        pytest.skip(f"{f}: the shared 5G traces are absent")
    trace["file"] = str(f)
    data["duration_s"] = 12  # short: a dozen segments per scheme
    data["repetitions"] = 1
    data["settings"] = {"driving-loss5": data["settings"]["driving-loss5"]}
    p = tmp_path / "qpr-test.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def _run(sc: Path, scheme: str, out: Path) -> dict[str, float]:
    r = subprocess.run(
        [sys.executable, "-m", "priolab.cli", "run-one", str(sc), "--setting", "driving-loss5",
         "--scheme", scheme, "--out", str(out)],
        capture_output=True, text=True, cwd=REPO, timeout=180,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "metadata.json").read_text())
    reasons = [x for x in meta["invalid_reasons"] if not x.startswith("CPU saturated")]
    assert not reasons, reasons
    assert {p["name"] for p in meta["processes"]} == {"qpr-server", "qpr-player"}
    from priolab.workloads.qpr.analysis import run_analysis

    return run_analysis(out, duration_s=12)


def test_q100_keeps_more_throughput_than_q0_through_bursty_loss(tmp_path: Path) -> None:
    sc = _scenario(tmp_path)
    schemes = ("q0", "q100", "q100-lossblind", "q100-fixed")
    m = {s: _run(sc, s, tmp_path / s) for s in schemes}
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
    # seeds/002 Fig. 15: Q100 above Q0 at 5 % loss. The margin, 1.2, is far below the 1.86
    # a patched quinn measured with the same response (workload README) and far above the
    # shared path's 0.94-1.06.
    assert lossblind["throughput_mean_mbps"] > 1.2 * q0["throughput_mean_mbps"]
    # The fixed window: 2400 bytes or two packets of the path's MTU (≤ 1500 bytes), one
    # window per round trip of at least 20 ms.
    host = json.loads((tmp_path / "q100-fixed" / "host" / "summary.json").read_text())
    window = host["unreliable_conn_cwnd_bytes_at_end"]
    assert 2400 <= window <= 3000
    assert fixed["throughput_mean_mbps"] < window * 8 / 0.020 / 1e6
