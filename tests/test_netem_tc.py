"""The tc backend: generated argv lists for every model feature, and real runs where possible."""

from __future__ import annotations

import functools
import os
import subprocess
import time
from pathlib import Path

import pytest

from netem.model import Direction, Link
from netem.replay import Replayer
from netem.resolve import resolve_direction
from netem.tc import (
    NETEM_LIMIT_PACKETS,
    TcBackend,
    TcError,
    class_change_argv,
    direction_commands,
    replay_schedule,
    seed_in_usage,
    trace_steps,
)

HERE = Path(__file__).parent
NL = str(NETEM_LIMIT_PACKETS)


def cmds(seed: int = 5, **direction) -> tuple[list[str], list[str]]:
    r = resolve_direction(Direction.model_validate(direction), HERE)
    argvs, notes = direction_commands("eth9", r, seed)
    return [" ".join(a) for a in argvs], notes


def test_constant_rate_only_no_netem():
    got, notes = cmds(rate_mbps=70, queue={"limit_bytes": 131250})
    assert got == [
        "tc qdisc add dev eth9 root handle 2: htb default 1",
        "tc class add dev eth9 parent 2: classid 2:1 htb rate 70000000bit ceil 70000000bit "
        "burst 8750 cburst 8750 quantum 1514",
        "tc qdisc add dev eth9 parent 2:1 handle 3: bfifo limit 131250",
    ]
    assert notes == []


def test_small_rate_burst_is_one_frame():
    got, _ = cmds(rate_mbps=1, queue={"limit_packets": 10})
    assert "burst 1514 cburst 1514" in got[1]
    assert got[2] == "tc qdisc add dev eth9 parent 2:1 handle 3: pfifo limit 10"


def test_delay_rate_queue_order():
    got, _ = cmds(seed=42, rate_mbps=10, delay_ms=10.5, queue={"limit_bytes": 20000})
    assert got == [
        f"tc qdisc add dev eth9 root handle 1: netem limit {NL} delay 10500us seed 42",
        "tc qdisc add dev eth9 parent 1:1 handle 2: htb default 1",
        "tc class add dev eth9 parent 2: classid 2:1 htb rate 10000000bit ceil 10000000bit "
        "burst 1514 cburst 1514 quantum 1514",
        "tc qdisc add dev eth9 parent 2:1 handle 3: bfifo limit 20000",
    ]


def test_jitter_fifo_and_reorder():
    fifo, _ = cmds(rate_mbps=10, delay_ms=20, jitter_ms=2)
    assert fifo[0].endswith(f"netem limit {NL} delay 20000us 2000us rate 100gbit seed 5")
    reorder, _ = cmds(rate_mbps=10, delay_ms=20, jitter_ms=2, jitter_reorder=True)
    assert reorder[0].endswith(f"netem limit {NL} delay 20000us 2000us seed 5")


def test_iid_loss():
    got, _ = cmds(rate_mbps=10, delay_ms=1, loss={"model": "iid", "loss_pct": 1.5})
    assert got[0].endswith(f"netem limit {NL} delay 1000us loss random 1.5% seed 5")


def test_ge_loss_netem_form():
    got, _ = cmds(
        rate_mbps=10,
        loss={
            "model": "gilbert_elliott",
            "p_pct": 1,
            "r_pct": 30,
            "one_minus_h_pct": 90,
            "one_minus_k_pct": 0.1,
        },
        queue={"limit_bytes": 10000},
    )
    assert got[0] == (
        f"tc qdisc add dev eth9 root handle 1: netem limit {NL} loss gemodel 1% 30% 90% 0.1% seed 5"
    )


def test_ge_mean_form_is_converted():
    got, _ = cmds(
        rate_mbps=10,
        loss={"model": "gilbert_elliott_mean", "loss_pct": 2, "burst_pkts": 4},
        queue={"limit_bytes": 10000},
    )
    p = 0.25 * 0.02 / 0.98 * 100
    assert got[0].endswith(f"loss gemodel {p:.10g}% 25% 100% 0% seed 5")


def test_four_state_loss():
    got, _ = cmds(
        rate_mbps=10,
        loss={
            "model": "four_state",
            "p13_pct": 2,
            "p31_pct": 40,
            "p32_pct": 20,
            "p23_pct": 30,
            "p14_pct": 1,
        },
        queue={"limit_bytes": 10000},
    )
    assert got[0].endswith("loss state 2% 40% 20% 30% 1% seed 5")


def test_unlimited_with_delay():
    got, _ = cmds(unlimited=True, delay_ms=3, queue={"limit_packets": 1000})
    assert got == [
        f"tc qdisc add dev eth9 root handle 1: netem limit {NL} delay 3000us seed 5",
        "tc qdisc add dev eth9 parent 1:1 handle 3: pfifo limit 1000",
    ]


def test_drop_head():
    got, notes = cmds(rate_mbps=10, queue={"limit_packets": 50, "drop": "head"})
    assert got[-1] == "tc qdisc add dev eth9 parent 2:1 handle 3: pfifo_head_drop limit 50"
    assert notes == []
    got, notes = cmds(rate_mbps=10, queue={"limit_bytes": 30000, "drop": "head"})
    assert got[-1] == "tc qdisc add dev eth9 parent 2:1 handle 3: pfifo_head_drop limit 19"
    assert len(notes) == 1 and "no byte-limited head-drop" in notes[0]


def test_directions_go_on_the_right_interfaces(tmp_path):
    link = Link.model_validate(
        {
            "uplink": {"rate_mbps": 5, "delay_ms": 10},
            "downlink": {"rate_mbps": 50, "delay_ms": 10},
        }
    )
    plan = TcBackend().plan("emu-eth0", "emu-eth1", link, base_dir=tmp_path, seed=9,
                            netem_seed=True)  # fmt: skip
    assert plan["uplink"]["dev"] == "emu-eth1"  # uplink leaves towards the host
    assert plan["downlink"]["dev"] == "emu-eth0"
    assert "seed 9" in " ".join(plan["uplink"]["commands"][0])
    assert "seed 10" in " ".join(plan["downlink"]["commands"][0])
    # BDP: 5 Mbit/s x (10 + 10) ms = 12 500 bytes
    assert plan["uplink"]["commands"][-1][-2:] == ["limit", "12500"]


def test_schedule_trace_steps_and_initial_rate(tmp_path):
    (tmp_path / "s.txt").write_text("0 10\n1 0\n2 20\n")
    r = resolve_direction(
        Direction.model_validate({"trace": {"file": "s.txt", "format": "schedule"}, "delay_ms": 5}),
        tmp_path,
    )
    pts, period, loop = trace_steps(r)
    assert pts == [(0, 10_000_000), (1000, 10_000), (2000, 20_000_000)]  # 0 floored
    assert loop
    argvs, _ = direction_commands("eth9", r, 1)
    assert "rate 10000000bit" in " ".join(argvs[2])
    assert class_change_argv("eth9", 20_000_000) == [
        "tc",
        "class",
        "change",
        "dev",
        "eth9",
        "parent",
        "2:",
        "classid",
        "2:1",
        "htb",
        "rate",
        "20000000bit",
        "ceil",
        "20000000bit",
        "burst",
        "2500",
        "cburst",
        "2500",
        "quantum",
        "1514",
    ]


def test_mahimahi_trace_binned_to_100ms(tmp_path):
    lines = ["5"] * 10 + ["150"] * 20 + ["199"]
    (tmp_path / "m.down").write_text("\n".join(lines) + "\n")
    r = resolve_direction(
        Direction.model_validate(
            {"trace": {"file": "m.down", "format": "mahimahi"}, "delay_ms": 5}
        ),
        tmp_path,
    )
    pts, period, _ = trace_steps(r)
    assert period == r.rate.period_ms
    # bin 0: 10 x 1500 B in 100 ms = 1.2 Mbit/s; bin 1: 21 opportunities in the 99 ms
    # left before the period (199 ms) ends
    assert period == 199
    assert pts[0] == (0, 1_200_000)
    assert pts[1] == (100, round(21 * 1500 * 8 * 1000 / 99))


class FakeNode:
    name = "fake"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def run(self, argv, *, check=True):
        self.calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    def popen(self, argv, *, stdout, stderr):  # pragma: no cover
        raise AssertionError("not used")


class FakeClock:
    """Virtual time: waiting on the stop event advances it."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_replayer_changes_rate_on_schedule():
    """The one trace replayer (netem/replay.py) on the backend's node, in virtual time: the
    first point came with the class, each later one at its time, every period again."""
    node = FakeNode()
    clock = FakeClock()
    schedule = replay_schedule("eth9", [(0, 1_000_000), (500, 2_000_000)], 1000, loop=True)
    rep = Replayer(schedule, functools.partial(node.run, check=False), clock=clock)
    waits: list[float] = []

    def fake_wait(timeout=None):
        waits.append(timeout)
        clock.t += timeout
        return len(waits) > 3  # stop after 3 changes

    rep._stop.wait = fake_wait  # type: ignore[method-assign]
    rep.replay(0.0)
    rates = [c[c.index("rate") + 1] for c in node.calls]
    assert rates == ["2000000bit", "1000000bit", "2000000bit"]
    assert waits[:3] == pytest.approx([0.5, 0.5, 0.5])
    assert rep.summary() == {"changes": 3, "errors": []}
    assert schedule["steps"][1]["argv"] == class_change_argv("eth9", 2_000_000)


def test_apply_and_stop_with_fake_node(tmp_path):
    link = Link.model_validate(
        {"uplink": {"rate_mbps": 5, "delay_ms": 1}, "downlink": {"rate_mbps": 5, "delay_ms": 1}}
    )
    node = FakeNode()
    be = TcBackend()
    applied = be.apply(node, "a0", "a1", link, base_dir=tmp_path, run_dir=tmp_path, seed=1)
    assert applied["commands"][0][:4] == ["ip", "link", "add", "name"]
    assert ["tc", "qdisc", "del", "dev", "a1", "root"] in node.calls
    out = be.stop()
    assert out["oversized_frames"] is None
    assert node.calls[-1] == ["ip", "link", "del", "nebr0"]
    assert (tmp_path / "tc-applied.json").exists()


def test_deferred_trace_starts_only_when_asked(tmp_path):
    """defer_traces: apply() sets the first rate but changes none until start_traces()."""
    trace = tmp_path / "steps.txt"
    trace.write_text("0 8\n0.05 2\n")
    link = Link.model_validate(
        {"uplink": {"trace": {"file": str(trace), "format": "schedule", "loop": False},
                    "queue": {"limit_bytes": 20_000}},
         "downlink": {"rate_mbps": 5, "queue": {"limit_bytes": 20_000}}}
    )  # fmt: skip
    node = FakeNode()
    be = TcBackend(defer_traces=True)
    be.apply(node, "a0", "a1", link, base_dir=tmp_path, run_dir=tmp_path, seed=1)
    time.sleep(0.2)  # four times the schedule's step: a started replayer would have changed it
    assert be.stop()["trace_rate_changes"] == 0

    be = TcBackend(defer_traces=True)
    be.apply(node, "a0", "a1", link, base_dir=tmp_path, run_dir=tmp_path, seed=1)
    assert be.start_traces() is not None
    deadline = time.monotonic() + 5.0
    while be._replayers[0].changes == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert be.stop()["trace_rate_changes"] == 1
    assert TcBackend().start_traces() is None  # no trace: nothing to start


# ----------------------------------------------------------------------------- real runs


def _probe():
    if os.geteuid() != 0:
        return None
    from netem.probe import probe_kernel

    return probe_kernel()


SUPPORT = _probe()


def _trio(tag: str):
    from netem.nsexec import add_netns, del_netns

    names = [f"ne-t{tag}{r}-{os.getpid()}" for r in "geh"]
    for n in names:
        del_netns(n)
    g, e, h = (add_netns(n) for n in names)
    subprocess.run(
        [
            "ip",
            "link",
            "add",
            f"ne{tag}g0",
            "netns",
            names[0],
            "type",
            "veth",
            "peer",
            "name",
            f"ne{tag}e0",
            "netns",
            names[1],
        ],
        check=True,
    )
    subprocess.run(
        [
            "ip",
            "link",
            "add",
            f"ne{tag}e1",
            "netns",
            names[1],
            "type",
            "veth",
            "peer",
            "name",
            f"ne{tag}h0",
            "netns",
            names[2],
        ],
        check=True,
    )
    g.run(["ip", "addr", "add", "10.77.0.1/24", "dev", f"ne{tag}g0"])
    h.run(["ip", "addr", "add", "10.77.0.2/24", "dev", f"ne{tag}h0"])
    for node, dev in ((g, f"ne{tag}g0"), (e, f"ne{tag}e0"), (e, f"ne{tag}e1"), (h, f"ne{tag}h0")):
        node.run(["ip", "link", "set", dev, "up"])
    return names, g, e, h


def _cleanup(names):
    from netem.nsexec import del_netns

    for n in names:
        del_netns(n)


@pytest.mark.netns
@pytest.mark.skipif(
    SUPPORT is None or not SUPPORT.qdiscs.get("htb") or not SUPPORT.qdiscs.get("bfifo"),
    reason="needs root, htb and bfifo",
)
def test_rate_only_link_really_applies(tmp_path):
    """A rate-only link needs no netem, so it runs even on this kernel."""
    names, g, e, h = _trio("r")
    try:
        link = Link.model_validate(
            {
                "uplink": {"rate_mbps": 20, "queue": {"limit_bytes": 30000}},
                "downlink": {"rate_mbps": 5, "queue": {"limit_packets": 20}},
            }
        )
        be = TcBackend()
        be.apply(e, "nere0", "nere1", link, base_dir=tmp_path, run_dir=tmp_path, seed=3)
        shown = e.run(["tc", "qdisc", "show", "dev", "nere1"]).stdout
        assert "htb 2:" in shown and "bfifo 3:" in shown and "limit 30000b" in shown
        cls = e.run(["tc", "class", "show", "dev", "nere0"]).stdout
        assert "rate 5Mbit" in cls
        ping = g.run(["ping", "-c", "2", "-i", "0.2", "-W", "2", "10.77.0.2"], check=False)
        assert ping.returncode == 0, ping.stdout + ping.stderr
        out = be.stop()
        assert set(out["qdisc_stats"]) == {"nere0", "nere1"}
        assert "htb" not in e.run(["tc", "qdisc", "show", "dev", "nere1"]).stdout
    finally:
        _cleanup(names)


@pytest.mark.netns
@pytest.mark.skipif(
    SUPPORT is None or not SUPPORT.qdiscs.get("netem"),
    reason="netem.probe found no netem qdisc in this kernel (or not root)",
)
def test_delay_link_really_applies(tmp_path):
    names, g, e, h = _trio("d")
    try:
        link = Link.model_validate(
            {
                "uplink": {"rate_mbps": 20, "delay_ms": 25},
                "downlink": {"rate_mbps": 20, "delay_ms": 25},
            }
        )
        be = TcBackend()
        be.apply(e, "nede0", "nede1", link, base_dir=tmp_path, run_dir=tmp_path, seed=3)
        ping = g.run(["ping", "-c", "3", "-i", "0.2", "10.77.0.2"], check=False)
        assert ping.returncode == 0
        rtts = [
            float(x.split("time=")[1].split()[0]) for x in ping.stdout.splitlines() if "time=" in x
        ]
        assert min(rtts) >= 50.0
        be.stop()
    finally:
        _cleanup(names)


def test_no_bridge_when_topology_already_bridged(tmp_path):
    class Bridged(FakeNode):
        def run(self, argv, *, check=True):
            self.calls.append(argv)
            out = '[{"ifname": "a0", "master": "br0"}]' if argv[:3] == ["ip", "-j", "link"] else ""
            return subprocess.CompletedProcess(argv, 0, out, "")

    link = Link.model_validate(
        {
            "uplink": {"rate_mbps": 5, "queue": {"limit_bytes": 9000}},
            "downlink": {"rate_mbps": 5, "queue": {"limit_bytes": 9000}},
        }
    )
    node = Bridged()
    be = TcBackend()
    applied = be.apply(node, "a0", "a1", link, base_dir=tmp_path, run_dir=tmp_path, seed=1)
    assert all(c[0] == "tc" for c in applied["commands"])
    be.stop()
    assert ["ip", "link", "del", "nebr0"] not in node.calls


def test_no_seed_where_tc_does_not_know_it(tmp_path):
    """iproute2 6.1 (Debian 12) rejects netem's `seed`: the plan leaves it out and says so."""
    link = Link.model_validate(
        {"uplink": {"rate_mbps": 5, "delay_ms": 10}, "downlink": {"rate_mbps": 5}}
    )
    plan = TcBackend().plan("e0", "e1", link, base_dir=tmp_path, seed=9, netem_seed=False)
    netem = plan["uplink"]["commands"][0]
    assert "netem" in netem and "seed" not in netem
    assert any("no netem `seed`" in n for n in plan["notes"])
    assert seed_in_usage("Usage: ... netem [ limit PACKETS ]\n [ seed SEED ]")
    assert not seed_in_usage("Usage: ... netem [ limit PACKETS ]\n [ ecn ]")


# ----------------------------------------------------------------------------- policer

POLICE_FILTER = (
    "tc filter add dev eth9 egress protocol all prio 1 u32 match u32 0 0 action police "
    "rate 20000000bit burst 25000 mtu 1514 conform-exceed drop/ok"
)


def test_policer_is_a_clsact_egress_filter_without_htb_or_fifo():
    got, notes = cmds(policer={"rate_mbps": 20, "burst_bytes": 25000})
    assert got == ["tc qdisc add dev eth9 clsact", POLICE_FILTER]
    assert notes == []


def test_policer_with_delay_and_loss_keeps_netem_at_the_root():
    got, _ = cmds(
        seed=9,
        policer={"rate_mbps": 20, "burst_bytes": 25000},
        delay_ms=10.5,
        loss={"model": "iid", "loss_pct": 0.05},
    )
    assert got == [
        f"tc qdisc add dev eth9 root handle 1: netem limit {NL} delay 10500us loss random "
        "0.05% seed 9",
        "tc qdisc add dev eth9 clsact",
        POLICE_FILTER,
    ]


def test_policer_apply_and_stop_remove_the_clsact_qdisc(tmp_path):
    link = Link.model_validate(
        {
            "uplink": {"policer": {"rate_mbps": 20, "burst_bytes": 25000}},
            "downlink": {"rate_mbps": 5, "queue": {"limit_bytes": 9000}},
        }
    )
    node = FakeNode()
    be = TcBackend()
    applied = be.apply(node, "a0", "a1", link, base_dir=tmp_path, run_dir=tmp_path, seed=1)
    assert ["tc", "qdisc", "add", "dev", "a1", "clsact"] in applied["commands"]
    assert not any("htb" in c for c in applied["commands"] if "a1" in c)
    be.stop()
    assert ["tc", "qdisc", "del", "dev", "a1", "clsact"] in node.calls


def test_a_failing_police_command_names_the_missing_kernel_feature(tmp_path):
    class NoPolice(FakeNode):
        def run(self, argv, *, check=True):
            self.calls.append(argv)
            rc = 2 if "police" in argv else 0
            return subprocess.CompletedProcess(argv, rc, "", "Error: Failed to load TC action")

    link = Link.model_validate(
        {
            "uplink": {"policer": {"rate_mbps": 20, "burst_bytes": 25000}},
            "downlink": {"unlimited": True, "queue": {"limit_packets": 100}},
        }
    )
    be = TcBackend()
    with pytest.raises(TcError, match=r"act_police.*backend: userspace"):
        be.apply(NoPolice(), "a0", "a1", link, base_dir=tmp_path, run_dir=tmp_path, seed=1)
    be.stop()


@pytest.mark.netns
@pytest.mark.skipif(SUPPORT is None, reason="needs root")
def test_policer_command_line_is_accepted_by_tc(tmp_path):
    """tc parses the policer's argv; where the kernel has act_police it also applies and
    polices (a 1 MB burst of pings through a 1-frame bucket loses some); where it lacks it
    the refusal must come from the kernel, not from tc's parser."""
    names, g, e, h = _trio("p")
    try:
        link = Link.model_validate(
            {
                "uplink": {"policer": {"rate_mbps": 1, "burst_bytes": 1514}},
                "downlink": {"unlimited": True, "queue": {"limit_packets": 100}},
            }
        )
        be = TcBackend()
        try:
            be.apply(e, "nepe0", "nepe1", link, base_dir=tmp_path, run_dir=tmp_path, seed=3)
        except TcError as err:
            assert "Failed to load TC action module" in str(err), err
            pytest.skip("this kernel has no act_police (CONFIG_NET_ACT_POLICE): tc parsed the "
                        "policer's command line and the kernel refused the action")  # fmt: skip
        finally:
            be.stop()
        # Applied for real: 20 back-to-back 1400-byte pings against a one-frame bucket at
        # 1 Mbit/s cannot all pass.
        be.apply(e, "nepe0", "nepe1", link, base_dir=tmp_path, run_dir=tmp_path, seed=3)
        ping = g.run(
            ["ping", "-c", "20", "-i", "0.002", "-s", "1400", "-W", "1", "10.77.0.2"],
            check=False,
        )
        assert " 0% packet loss" not in ping.stdout, ping.stdout
        out = be.stop()
        assert "nepe1 egress filters" in out["qdisc_stats"]
    finally:
        _cleanup(names)
