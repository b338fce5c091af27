"""The Ansible playbooks for real against SSH hosts in the VM, the tc role with netem.

tests/test_ansible_testbed.py (run in the same boot) covers site/run/clean with its own
tests; on our machines it can only run the tc role rate-only or in check mode. Here the
stand-in scenario's full link (netem delay 10.5 ms each way, HTB, FIFO) runs on tc for real:
the RTT must include both delays, and nothing is left behind."""

from __future__ import annotations

import json

from netem.probe import probe_kernel
from tests.test_ansible_testbed import (  # noqa: F401  (testbed is a fixture)
    check_run_dir,
    nothing_left,
    ping_rtts_ms,
    play,
    scenario,
    testbed,
)
from tests.testbed_netns import NetnsTestbed


def test_netem_is_here() -> None:
    assert probe_kernel().tc_ok


def test_run_standin_on_tc_with_netem(testbed: NetnsTestbed) -> None:  # noqa: F811
    site = play(testbed, "site.yml")
    assert site.returncode == 0, site.stdout[-4000:]
    sc = scenario(testbed, "standin", None, udp_rate_mbps=5)
    results = testbed.tmp / "results-tc"
    r = play(testbed, "run.yml", "-e", f"scenario={sc}", "-e", f"results={results}",
             "-e", "priolab_link_backend=tc", "-e", "setting=20M-up", "-e", "rep=1")  # fmt: skip
    assert r.returncode == 0, r.stdout[-4000:]
    run_dir = results / "standin" / "20M-up" / "default" / "default" / "r1"
    meta = check_run_dir(run_dir, "tc")
    applied = json.loads((run_dir / "tc-applied.json").read_text())
    assert any(c[:3] == ["tc", "qdisc", "add"] and "netem" in c for c in applied["commands"])
    assert meta["link_final"]["errors"] == []
    rtts = ping_rtts_ms(run_dir)
    assert len(rtts) >= 2 and min(rtts) >= 21.0, rtts  # 10.5 ms each way
    nothing_left(testbed)
    r = play(testbed, "clean.yml")
    assert r.returncode == 0, r.stdout[-3000:]
