"""The moq clip at [MoQ]'s rate with overheads (priolab/workloads/moq/clip.py): the
generator's pure parts, the shipped clip's structure, and its rate on the wire of a sim run
(2.7 Mbit/s ± 3 % at the IP layer), measured as wire.py measures it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from ground import rundir
from priolab import cli
from priolab.workloads.moq import clip
from tests.conftest import REPO
from tests.test_sim_site import needs_real_sim, no_lock  # noqa: F401 (a fixture)
from traces.frames import FrameTrace, read_frames


def _trace(scale: float, n: int = 50) -> FrameTrace:
    """One 50-frame GoP whose payload rate grows with `scale` (a stand-in for x264)."""
    sizes = np.where(np.arange(n) == 0, 90_000, 10_000) * scale
    return FrameTrace(np.arange(n) == 0, np.maximum(sizes.astype(int), 1))


def test_payload_target_leaves_the_overhead_per_frame() -> None:
    # 100 B per frame at 25 fps is 20 kbit/s
    assert clip.payload_target_mbps(2.7, 100, 25) == pytest.approx(2.68)
    with pytest.raises(ValueError, match="no payload rate"):
        clip.payload_target_mbps(0.01, 100, 25)


def test_search_scales_the_bitrate_until_the_encode_lands() -> None:
    asked: list[float] = []

    def encoder(b: float) -> FrameTrace:  # overshoots by 5 % and a bit more at higher rates
        asked.append(b)
        return _trace(b * 1.05 * (1 + 0.02 * b) / clip.payload_mbps(_trace(1), 25))

    b, t = clip.search_bitrate(encoder, 2.6, 25)
    assert abs(clip.payload_mbps(t, 25) / 2.6 - 1) <= 0.003
    assert asked[0] == 2.6 and len(asked) <= 4 and b == asked[-1]
    with pytest.raises(ValueError, match="no bitrate gave"):
        clip.search_bitrate(lambda b: _trace(1), 2.6, 25, max_steps=2)


def test_the_encode_is_seeded() -> None:
    argv = clip.encode_command(Path("v.mp4"), 2.6, 7, 20)
    vf = argv[argv.index("-vf") + 1]
    assert vf.endswith(":all_seed=7") and vf.startswith("noise=alls=6:allf=t")
    assert argv[argv.index("-g") + 1] == "50" and argv[argv.index("-bf") + 1] == "2"


def test_the_shipped_clip_keeps_the_papers_gop() -> None:
    f = read_frames(clip.OUT)
    assert f.gop is not None
    types = f.gop.pict_type
    assert len(types) == 500  # 20 s at 25 fps
    assert {t: types.count(t) for t in "IPB"} == {"I": 10, "P": 170, "B": 320}
    assert [i for i, t in enumerate(types) if t == "I"] == list(range(0, 500, 50))
    # decode order IPBB PBB ...: two B frames after every reference but the I
    assert "".join(types[:8]) == "IPBBPBBP"
    # payload below the earlier clip's 2.795 Mbit/s: the overheads fit in 2.7
    assert 2.4 < clip.payload_mbps(f, 25) < 2.7


@needs_real_sim
@pytest.mark.usefixtures("no_lock")
@pytest.mark.parametrize("scheme", ["fefs", "ft"])
def test_the_clip_is_2_7_mbps_with_overheads_on_the_wire(tmp_path: Path, scheme: str) -> None:
    """moq-overhead's new-clip point, 120 s on the sim site: the IP-layer rate of the video
    direction, nothing dropped, every frame arrived."""
    data = yaml.safe_load((REPO / "scenarios" / "moq-overhead.yaml").read_text())
    data["repetitions"] = 1
    for s in data["settings"].values():
        s["workload"]["frame_trace"] = str(
            (REPO / "scenarios" / s["workload"]["frame_trace"]).resolve()
        )
    data["workload"]["params"]["frame_trace"] = str(clip.OUT)
    scenario = tmp_path / "moq-overhead.yaml"
    scenario.write_text(yaml.safe_dump(data))
    results = tmp_path / "results"
    args = ["run-one", str(scenario), "--setting", "x264-2.7-ip", "--scheme", scheme,
            "--speed", "default", "--rep", "1", "--site", "sim",
            "--results", str(results)]  # fmt: skip
    assert cli.main(args) == 0
    run = rundir.run_dir(results, "moq-overhead", "x264-2.7-ip", scheme, "default", 1)
    meta = json.loads((run / rundir.METADATA).read_text())
    assert meta["valid"], meta["invalid_reasons"]
    from analysis.metrics import run_metrics

    m = run_metrics(run)["metrics"]
    assert m["frames_sent"] == 3000 and m["received_pct"] == 100
    assert m["clip_ip_mbps"] == pytest.approx(clip.TARGET_IP_MBPS, rel=clip.TOLERANCE)
    print(
        f"{scheme}: clip {m['clip_ip_mbps']:.4f} Mbit/s with overheads "
        f"({m['payload_mbps']:.4f} payload, {m['overhead_bytes_per_frame']:.1f} B/frame)"
    )
