"""The RISE workload's parameters: the baseline's drop policy, the processing delay, the
warm-up, and the key-frame warning of `priolab check`."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import yaml

from priolab.cli import scenario_warnings
from priolab.scenario import expand, load
from priolab.workloads.base import Pair, RunContext
from priolab.workloads.rise import MAX_FRAME_BYTES, Rise, RiseParams
from tests.conftest import REPO


def _quick() -> dict:
    """quick.yaml on its ideal path only, 5 repetitions: the counts below do not follow the file."""
    d = yaml.safe_load((REPO / "scenarios" / "quick.yaml").read_text())
    d["matrix"] = {"setting": ["FB-4K-Low"]}
    d["repetitions"] = 5
    return d


def _check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "priolab.cli", "check", str(path)], capture_output=True, text=True
    )


def test_key_frame_larger_than_b_warns_naming_the_keys(write_scenario) -> None:
    d = _quick()
    d["workload"]["params"]["buffer_bytes"] = 262_144
    path = write_scenario(d)
    r = _check(path)
    assert r.returncode == 0, r.stderr  # a warning, not an error
    warn = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    # one per matrix point (nopri and pri), naming the file, the key and the sizes
    assert len(warn) == 2, r.stderr
    assert f"{path}: settings.FB-4K-Low + schemes.nopri" in warn[0]
    assert "workload.buffer_bytes" in warn[0]
    assert "keyframe_factor" in warn[0] and "video_bitrate_mbps" in warn[0]
    assert "999,999 B" in warn[0] and "262,144 B" in warn[0]
    assert "valid; 10 runs" in r.stdout


def test_shipped_quick_does_not_warn_because_key_frames_are_capped(write_scenario) -> None:
    # 9 × 125 kB = 1.125 MB would exceed B = 1 MiB; the 1 MB cap keeps it at 999,999 B
    path = REPO / "scenarios" / "quick.yaml"
    assert scenario_warnings(expand(load(path), path)) == []
    d = _quick()
    d["workload"]["params"]["buffer_bytes"] = MAX_FRAME_BYTES - 1
    p = write_scenario(d)
    assert len(scenario_warnings(expand(load(p), p))) == 2


def test_frame_traces_are_not_judged() -> None:
    p = RiseParams(tracking_speed_deg_s=40, buffer_bytes=2000, frame_trace=Path("x.csv"))
    assert Rise().warnings(p, Path(".")) == []
    p = RiseParams(tracking_speed_deg_s=40, buffer_bytes=2000)
    assert [k for k, _ in Rise().warnings(p, Path("."))] == ["buffer_bytes"]


def _argv(params: RiseParams, tmp_path: Path) -> list[str]:
    ctx = RunContext(
        run_dir=tmp_path, duration_s=5, seed=1, base_dir=tmp_path,
        pairs=(Pair("guest", "host", "10.0.0.1", "10.0.0.2"),),
    )  # fmt: skip
    specs = Rise().plan(params, ctx)
    return specs[1].argv  # the guest


def test_baseline_is_head_drop_by_default_and_tail_on_request(tmp_path) -> None:
    base = RiseParams(tracking_speed_deg_s=40, prio_guest=False, prio_host=False)
    argv = _argv(base, tmp_path)
    assert argv[argv.index("--fifo-drop") + 1] == "head"
    assert argv[argv.index("--processing-delay-ms") + 1] == "0"
    tail = base.model_copy(update={"fifo_drop": "tail", "processing_delay_ms": 30})
    argv = _argv(tail, tmp_path)
    assert argv[argv.index("--fifo-drop") + 1] == "tail"
    assert argv[argv.index("--processing-delay-ms") + 1] == "30"


def test_new_keys_are_validated(write_scenario) -> None:
    d = _quick()
    bad = copy.deepcopy(d)
    bad["workload"]["params"]["fifo_drop"] = "middle"
    r = _check(write_scenario(bad))
    assert r.returncode == 2 and "workload.fifo_drop" in r.stderr
    bad = copy.deepcopy(d)
    bad["workload"]["params"]["warmup_s"] = -1
    r = _check(write_scenario(bad))
    assert r.returncode == 2 and "workload.warmup_s" in r.stderr
