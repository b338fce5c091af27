"""The userspace backend: driver logic against a stand-in binary, and linkem for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from netem.model import Link
from netem.nsexec import NetnsExec, add_netns, del_netns, offloads_off
from netem.probe import linkem_path
from netem.userspace import LinkemBackend, LinkemError

LINK = Link.model_validate(
    {
        "uplink": {"rate_mbps": 10, "delay_ms": 2, "loss": {"model": "iid", "loss_pct": 1}},
        "downlink": {"rate_mbps": 20, "delay_ms": 2},
    }
)

FAKE = r"""#!{python}
import json, signal, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
mode = {mode!r}
if mode == "fail":
    print("bad config: a_to_b.rate.kind", file=sys.stderr)
    sys.exit(2)
json.load(open(args["--config"]))
ZERO = {{"arrivals": 0, "departures": 0, "bytes_out": 0, "drops_queue": 0, "drops_loss": 0,
        "drops_police": 0, "oversized": 0, "queue_bytes": 0, "queue_delay_ms_mean": 0.0,
        "queue_delay_ms_max": 0.0}}
def stop(*_):
    with open(args["--stats"], "a") as f:
        for d, n in (("a_to_b", 10), ("b_to_a", 20)):
            f.write(json.dumps({{**ZERO, "t_s": 1.0, "dir": d, "arrivals": n, "departures": n,
                "bytes_out": 100 * n, "drops_loss": 1, "oversized": 2, "final": True}}) + "\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
if mode == "ok":
    with open(args["--stats"], "w") as f:
        f.write(json.dumps({{**ZERO, "t_s": 0.0, "dir": "a_to_b", "arrivals": 1,
                            "final": False}}) + "\n")
    open(args["--ready-file"], "w").close()
print("never ready", file=sys.stderr, flush=True)
while True:
    time.sleep(0.05)
"""


def fake_binary(tmp_path: Path, mode: str) -> Path:
    p = tmp_path / f"fake-linkem-{mode}"
    p.write_text(FAKE.format(python=sys.executable, mode=mode))
    p.chmod(0o755)
    return p


def test_driver_with_stand_in(tmp_path):
    be = LinkemBackend(fake_binary(tmp_path, "ok"))
    applied = be.apply(
        NetnsExec(None), "ga", "hb", LINK, base_dir=tmp_path, run_dir=tmp_path / "run", seed=11
    )
    argv = applied["argv"]
    assert argv[argv.index("--iface-a") + 1] == "ga"
    assert argv[argv.index("--iface-b") + 1] == "hb"
    cfg = json.loads((tmp_path / "run" / "linkem.json").read_text())
    assert cfg["seed"] == 11 and cfg["a_to_b"]["rate"]["rate_bps"] == 10_000_000
    assert cfg["a_to_b"]["loss"] == {"kind": "iid", "p": 0.01}
    out = be.stop()
    assert out["exit_code"] == 0 and out["errors"] == []
    assert out["uplink"]["arrivals"] == 10 and out["downlink"]["bytes_out"] == 2000
    assert out["oversized_frames"] == 4
    assert be.stop() is out  # idempotent


def test_scenario_key_packet_log_turns_on_linkems_packet_log(tmp_path):
    for on in (False, True):
        link = Link.model_validate({**LINK.model_dump(exclude_unset=True), "packet_log": on})
        be = LinkemBackend(fake_binary(tmp_path, "ok"))
        run = tmp_path / f"run-{on}"
        argv = be.apply(NetnsExec(None), "ga", "hb", link, base_dir=tmp_path, run_dir=run,
                        seed=1)["argv"]  # fmt: skip
        be.stop()
        want = ["--packet-log", str(run.resolve() / "linkem-packets.log")]
        assert (argv[-2:] == want) is on, argv


def test_exit_before_ready_reports_stderr(tmp_path):
    be = LinkemBackend(fake_binary(tmp_path, "fail"))
    with pytest.raises(LinkemError, match=r"code 2.*a_to_b\.rate\.kind"):
        be.apply(NetnsExec(None), "a", "b", LINK, base_dir=tmp_path, run_dir=tmp_path, seed=1)


def test_ready_timeout_reports_stderr(tmp_path, monkeypatch):
    monkeypatch.setattr("netem.userspace.READY_TIMEOUT_S", 0.5)
    be = LinkemBackend(fake_binary(tmp_path, "hang"))
    with pytest.raises(LinkemError, match="not ready.*never ready"):
        be.apply(NetnsExec(None), "a", "b", LINK, base_dir=tmp_path, run_dir=tmp_path, seed=1)


def test_missing_binary(tmp_path):
    be = LinkemBackend(tmp_path / "nope")
    with pytest.raises(LinkemError, match="not found"):
        be.apply(NetnsExec(None), "a", "b", LINK, base_dir=tmp_path, run_dir=tmp_path, seed=1)


# ----------------------------------------------------------------------------- real linkem

LINKEM = linkem_path()


@pytest.mark.netns
@pytest.mark.skipif(
    not LINKEM.is_file(), reason=f"no linkem binary at {LINKEM} (cargo build --release -p linkem)"
)
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces")
def test_real_linkem_forwards_and_counts(tmp_path):
    pid = os.getpid()
    names = [f"ne-u{r}-{pid}" for r in "geh"]
    for n in names:
        del_netns(n)
    try:
        g, e, h = (add_netns(n) for n in names)
        subprocess.run(
            [
                "ip",
                "link",
                "add",
                "neug0",
                "netns",
                names[0],
                "type",
                "veth",
                "peer",
                "name",
                "neue0",
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
                "neue1",
                "netns",
                names[1],
                "type",
                "veth",
                "peer",
                "name",
                "neuh0",
                "netns",
                names[2],
            ],
            check=True,
        )
        for node, dev in ((g, "neug0"), (e, "neue0"), (e, "neue1"), (h, "neuh0")):
            offloads_off(node, dev)
            node.run(["ip", "link", "set", dev, "up"])
        g.run(["ip", "addr", "add", "10.79.0.1/24", "dev", "neug0"])
        h.run(["ip", "addr", "add", "10.79.0.2/24", "dev", "neuh0"])
        link = Link.model_validate(
            {
                "uplink": {"rate_mbps": 10, "delay_ms": 20},
                "downlink": {"rate_mbps": 10, "delay_ms": 20},
            }
        )
        be = LinkemBackend()
        be.apply(e, "neue0", "neue1", link, base_dir=tmp_path, run_dir=tmp_path, seed=5)
        assert (tmp_path / "linkem.ready").exists()
        ping = g.run(["ping", "-c", "5", "-i", "0.2", "-W", "2", "10.79.0.2"], check=False)
        out = be.stop()
        assert ping.returncode == 0, ping.stdout + ping.stderr
        rtts = [
            float(x.split("time=")[1].split()[0]) for x in ping.stdout.splitlines() if "time=" in x
        ]
        assert min(rtts) >= 40.0  # 20 ms each way
        assert out["exit_code"] == 0, out
        assert out["errors"] == []
        assert out["uplink"]["departures"] >= 5  # the echo requests (plus ARP)
        assert out["downlink"]["departures"] >= 5
        assert out["oversized_frames"] == 0
    finally:
        for n in names:
            del_netns(n)
