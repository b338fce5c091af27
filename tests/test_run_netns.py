"""The run of one experiment, for real: Mininet hosts, the link emulator, iperf3 and ping."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from priolab.clean import leftovers
from tests.conftest import REPO, needs_root
from tests.netns_runs import valid_but_for_load as _valid_but_for_load

pytestmark = [needs_root, pytest.mark.netns]

LINKEM = REPO / "target" / "release" / "linkem"


@pytest.fixture(autouse=True)
def _linkem_built() -> None:
    if os.environ.get("PRIOLAB_LINKEM") is None and not LINKEM.is_file():
        pytest.skip(f"the link emulator is not built ({LINKEM}); `make build` builds it")


def _priolab(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "priolab.cli", *args],
        capture_output=True, text=True, cwd=REPO, timeout=180, **kw,
    )  # fmt: skip


def _scenario(tmp_path: Path, duration_s: float) -> Path:
    data = yaml.safe_load((REPO / "scenarios" / "standin.yaml").read_text())
    data["duration_s"] = duration_s
    p = tmp_path / "standin.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def _nothing_left() -> None:
    left = leftovers()
    assert left == {"shells": [], "processes": [], "interfaces": [], "state_files": []}


def _ping_rtts_ms(run_dir: Path) -> list[float]:
    text = (run_dir / "logs" / "ping.stdout").read_text()
    return [float(m) for m in re.findall(r"time=([\d.]+) ms", text)]


def _check_run(run_dir: Path) -> dict:
    meta = json.loads((run_dir / "metadata.json").read_text())
    _valid_but_for_load(meta)
    for key in ("run", "git", "versions", "backend", "link_applied", "cpu", "processes"):
        assert key in meta
    assert meta["run"]["link"]["uplink"]["rate_mbps"] == 20
    assert {p["name"] for p in meta["processes"]} == {"iperf3-server", "iperf3-client", "ping"}
    assert all(p["exit_code"] == 0 for p in meta["processes"])
    # the emulated one-way delays are 10.5 ms each: every ping RTT is at least 21 ms
    rtts = _ping_rtts_ms(run_dir)
    assert len(rtts) >= 10
    assert min(rtts) >= 20.9, rtts
    assert sorted(rtts)[len(rtts) // 2] < 30, rtts
    # iperf3 at 10 Mbit/s through a 20 Mbit/s uplink arrives whole
    iperf = json.loads((run_dir / "logs" / "iperf3-client.stdout").read_text())
    recv = iperf["end"]["sum_received"]["bits_per_second"] / 1e6
    assert 9.0 < recv < 10.6, recv
    assert not Path(str(run_dir) + ".partial").exists()
    return meta


def test_two_runs_back_to_back(tmp_path: Path) -> None:
    sc = _scenario(tmp_path, 4)
    first = tmp_path / "r1"
    second = tmp_path / "r2"
    r = _priolab("run-one", str(sc), "--setting", "20M-up", "--out", str(first))
    assert r.returncode == 0, r.stderr
    _nothing_left()
    snapshot = (first / "metadata.json").read_text()
    r = _priolab("run-one", str(sc), "--setting", "20M-up", "--out", str(second))
    assert r.returncode == 0, r.stderr
    _nothing_left()
    m1, m2 = _check_run(first), _check_run(second)
    assert m2["start_time"] > m1["stop_time"]
    assert (first / "metadata.json").read_text() == snapshot  # the second run left it alone


def _start_and_wait_live(sc: Path, out: Path) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-m", "priolab.cli", "run-one", str(sc), "--setting", "20M-up",
         "--out", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    ping_log = Path(str(out) + ".partial") / "logs" / "ping.stdout"
    deadline = time.time() + 60
    while time.time() < deadline:
        if ping_log.exists() and "time=" in ping_log.read_text():
            return p
        assert p.poll() is None, p.communicate()
        time.sleep(0.2)
    p.kill()
    raise AssertionError("the run never got its processes going")


def test_sigkill_then_clean_leaves_nothing(tmp_path: Path) -> None:
    sc = _scenario(tmp_path, 30)
    p = _start_and_wait_live(sc, tmp_path / "killed")
    p.send_signal(signal.SIGKILL)
    p.wait()
    time.sleep(0.5)
    left = leftovers()
    # the Mininet shells die with their parent's pty, but what ran inside the nodes lives on
    # and keeps their namespaces (and veths) alive
    assert any("linkem" in x for x in left["processes"]), left
    assert any("ping" in x or "iperf3" in x for x in left["processes"]), left
    r = _priolab("clean")
    assert r.returncode == 0, r.stderr
    assert "removed" in r.stdout
    _nothing_left()
    # nothing was promoted to a finished run directory
    assert not (tmp_path / "killed").exists()
    # and the next run succeeds
    sc2 = _scenario(tmp_path, 3)
    r = _priolab("run-one", str(sc2), "--setting", "20M-up", "--out", str(tmp_path / "after"))
    assert r.returncode == 0, r.stderr
    _valid_but_for_load(json.loads((tmp_path / "after" / "metadata.json").read_text()))


def test_sigint_tears_down_and_records_why(tmp_path: Path) -> None:
    sc = _scenario(tmp_path, 30)
    out = tmp_path / "interrupted"
    p = _start_and_wait_live(sc, out)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    _nothing_left()
    meta = json.loads((out / "metadata.json").read_text())
    assert not meta["valid"]
    assert meta["invalid_reasons"][0] == "aborted by SIGINT"
    assert all(pr["exit_code"] is not None for pr in meta["processes"])


def test_dumbbell_pairs_share_one_bottleneck(tmp_path: Path) -> None:
    sc = {
        "name": "dumbbell",
        "topology": {"kind": "dumbbell", "pairs": 2},
        "duration_s": 3,
        "link": {
            "uplink": {"rate_mbps": 20, "delay_ms": 5, "queue": {"bdp_factor": 1.0}},
            "downlink": {"rate_mbps": 100, "delay_ms": 5, "queue": {"bdp_factor": 1.0}},
        },
        "workload": {"kind": "iperf-ping", "params": {"udp_rate_mbps": 4}},
        "settings": {"a": {}},
    }
    path = tmp_path / "dumbbell.yaml"
    path.write_text(yaml.safe_dump(sc))
    out = tmp_path / "run"
    r = _priolab("run-one", str(path), "--setting", "a", "--out", str(out))
    assert r.returncode == 0, r.stderr
    _nothing_left()
    meta = json.loads((out / "metadata.json").read_text())
    _valid_but_for_load(meta)
    for i in (1, 2):
        text = (out / "logs" / f"ping-{i}.stdout").read_text()
        rtts = [float(m) for m in re.findall(r"time=([\d.]+) ms", text)]
        assert len(rtts) >= 5 and min(rtts) >= 9.9, (i, rtts)
    # both pairs' iperf3 traffic (2 × 4 Mbit/s) crossed the one emulated uplink
    up = meta["link_final"]["uplink"]
    assert up["bytes_out"] * 8 / 3 / 1e6 > 2 * 4 * 0.8


def test_capture_writes_pcaps_of_the_emulated_link(tmp_path: Path) -> None:
    if shutil.which("tcpdump") is None:
        pytest.skip("tcpdump is not installed (the Makefile's apt list has it)")
    sc = _scenario(tmp_path, 3)
    data = yaml.safe_load(sc.read_text())
    data["capture"] = {"snaplen_bytes": 96}
    sc.write_text(yaml.safe_dump(data))
    out = tmp_path / "cap"
    r = _priolab("run-one", str(sc), "--setting", "20M-up", "--out", str(out))
    assert r.returncode == 0, r.stderr
    _nothing_left()
    meta = json.loads((out / "metadata.json").read_text())
    _valid_but_for_load(meta)
    names = {p["name"] for p in meta["link_processes"]}
    assert names == {"linkem", "tcpdump-guest", "tcpdump-host"}, names
    for node in ("guest", "host"):
        pcap = (out / f"capture-{node}.pcap").read_bytes()
        # pcap magic, then the snap length the scenario asked for
        assert pcap[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4"), node
        assert int.from_bytes(pcap[16:20], "little") == 96
        # 3 s of iperf3 at 10 Mbit/s (~2,700 datagrams) crossed from guest to host
        assert len(pcap) > 100_000, (node, len(pcap))
