"""The `roq` workload's plug-in: its parameters, the processes it plans (QUIC: the sender
serves and the receiver waits for its certificate; UDP: the receiver binds first), and the
shipped scenario's 14 configurations at four delays."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from priolab.scenario import expand, load
from priolab.workloads import WORKLOADS
from priolab.workloads.base import Pair, RunContext
from priolab.workloads.roq import Roq, RoqParams
from priolab.workloads.roq.source import ffmpeg_argv, source_path
from tests.conftest import REPO


def _ctx(tmp_path: Path) -> RunContext:
    pair = Pair("guest", "host", "10.0.0.1", "10.0.0.2")
    return RunContext(tmp_path, 20.0, 1, tmp_path, (pair,))


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_registered() -> None:
    assert isinstance(WORKLOADS["roq"], Roq)


def test_quic_plan_sender_serves_receiver_waits_for_the_certificate(tmp_path: Path) -> None:
    p = RoqParams(rate="scream", cc="none", feedback="quic", competing_stream=True)
    s, r = Roq().plan(p, _ctx(tmp_path))
    assert (s.name, s.node, r.name, r.node) == ("roq-sender", "host", "roq-receiver", "guest")
    assert r.wait_for_file == tmp_path / "host" / "cert.der"
    assert _flag(s.argv, "--cert-out") == str(tmp_path / "host" / "cert.der")
    assert _flag(r.argv, "--connect") == "10.0.0.2:4450"
    assert (_flag(s.argv, "--rate"), _flag(s.argv, "--cc")) == ("scream", "none")
    assert _flag(s.argv, "--feedback") == _flag(r.argv, "--feedback") == "quic"
    assert "--competing-stream" in s.argv and "--competing-stream" not in r.argv
    assert _flag(s.argv, "--source") == str(source_path(p))
    assert _flag(s.argv, "--duration-s") == "20"


def test_receiver_sends_pli_by_default_and_next_idr_is_the_named_variant(tmp_path: Path) -> None:
    s, r = Roq().plan(RoqParams(), _ctx(tmp_path))
    assert (_flag(r.argv, "--loss-recovery"), _flag(r.argv, "--pli-repeat-ms")) == ("pli", "1000")
    assert "--loss-recovery" not in s.argv  # the sender answers any PLI it receives
    _, r = Roq().plan(RoqParams(loss_recovery="next-idr", pli_repeat_ms=500), _ctx(tmp_path))
    assert (_flag(r.argv, "--loss-recovery"), _flag(r.argv, "--pli-repeat-ms")) == (
        "next-idr",
        "500",
    )


def test_udp_plan_receiver_binds_first(tmp_path: Path) -> None:
    r, s = Roq().plan(RoqParams(transport="udp", rate="trivial"), _ctx(tmp_path))
    assert (r.name, s.name) == ("roq-receiver", "roq-sender")
    assert s.start_delay_s > 0 and r.wait_for_file is None
    assert _flag(s.argv, "--connect") == "10.0.0.1:4450"
    assert _flag(r.argv, "--bind") == "0.0.0.0:4450"
    assert "--cert" not in r.argv and "--cert-out" not in s.argv


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        ({"transport": "udp", "feedback": "quic"}, "need QUIC"),
        ({"transport": "udp", "competing_stream": True}, "need QUIC"),
        ({"min_kbps": 500, "start_kbps": 300}, "min_kbps <= start_kbps"),
        ({"width": 642}, "multiple of 8"),
        ({"fps": 7}, "90000"),
        ({"rate": "nada"}, "scream"),
        ({"loss_recovery": "fir"}, "next-idr"),
        ({"pli_repeat_ms": 0}, "greater than or equal to 1"),
        ({"source": "bbb"}, "photo-pans"),
    ],
)
def test_bad_params_are_refused_with_the_key(kw: dict, msg: str) -> None:
    with pytest.raises(ValidationError, match=msg):
        RoqParams(**kw)


def test_source_is_made_by_ffmpeg_with_an_argv_list() -> None:
    p = RoqParams(width=320, height=180, source="mandelbrot", source_s=4)
    argv = ffmpeg_argv(p, Path("/tmp/x.yuv"))
    assert argv[0] == "ffmpeg" and "mandelbrot=size=320x180:rate=25" in argv
    assert argv[argv.index("-t") + 1] == "4" and argv[-1] == "/tmp/x.yuv"
    assert source_path(p).name == "mandelbrot-320x180-25fps-4s.yuv"


def test_shipped_scenario_has_14_configurations_at_four_delays() -> None:
    path = REPO / "scenarios" / "roq-rfc8867.yaml"
    sc = load(path)
    runs = expand(sc, path)
    assert len({r.scheme for r in runs}) == 14
    assert {r.setting for r in runs} == {"d1", "d50", "d150", "d300"}
    assert len(runs) == 14 * 4 * sc.repetitions


def test_gcc_scenario_beyond_the_paper() -> None:
    path = REPO / "scenarios" / "roq-gcc.yaml"
    runs = expand(load(path), path)
    assert {r.scheme for r in runs} == {"gcc", "scream", "udp-gcc", "udp-scream"}
    assert {r.params.rate for r in runs} == {"gcc", "scream"}
    assert {r.params.transport for r in runs if r.scheme.startswith("udp")} == {"udp"}


def test_quick_scenario_is_a_stated_reduction_of_the_full_one() -> None:
    """roq-quick.yaml: a subset of roq-rfc8867.yaml's configurations, each with the same
    workload parameters at the same delay; its link keeps the dip to 0.5 Mbit/s for 30 s and
    30 s at 1 Mbit/s after it."""
    full_path, quick_path = (
        REPO / "scenarios" / "roq-rfc8867.yaml",
        REPO / "scenarios" / "roq-quick.yaml",
    )
    full = {(r.scheme, r.setting): r for r in expand(load(full_path), full_path) if r.rep == 1}
    quick = expand(load(quick_path), quick_path)
    assert len(quick) == 6 and {r.setting for r in quick} == {"d50"}
    assert {"scream", "scream-newreno", "udp-scream", "trivial"} <= {r.scheme for r in quick}
    assert any(r.params.competing_stream for r in quick)
    for r in quick:
        f = full[(r.scheme, r.setting)]
        assert r.params == f.params, r.scheme
        assert r.link.downlink.delay_ms == f.link.downlink.delay_ms == 50
        assert r.link.downlink.queue == f.link.downlink.queue
    from traces.throughput import read_schedule

    sched = read_schedule(REPO / "traces" / "synthetic" / "steps-rfc8867-style-90s.txt")
    assert list(sched.times_s) == [0.0, 30.0, 60.0] and list(sched.rate_mbps) == [1.0, 0.5, 1.0]
    assert quick[0].duration_s == sched.duration_s == 90.0


def test_d50_scenario_is_all_fourteen_configurations_of_the_full_one() -> None:
    """roq-rfc8867-d50.yaml: every configuration of roq-rfc8867.yaml at 50 ms, its three
    repetitions, with the full scenario's workload parameters, link, queue and 120 s."""
    full_path, red_path = (
        REPO / "scenarios" / "roq-rfc8867.yaml",
        REPO / "scenarios" / "roq-rfc8867-d50.yaml",
    )
    full = {(r.scheme, r.setting, r.rep): r for r in expand(load(full_path), full_path)}
    red = expand(load(red_path), red_path)
    assert len(red) == 42 and {r.setting for r in red} == {"d50"}
    assert {r.rep for r in red} == {1, 2, 3}
    assert {r.scheme for r in red} == {s for s, st, _ in full if st == "d50"}
    for r in red:
        f = full[(r.scheme, r.setting, r.rep)]
        assert r.params == f.params, r.scheme
        assert r.link == f.link, r.scheme
        assert r.duration_s == f.duration_s == 120


def test_pli_scenario_pairs_each_lossy_configuration_with_the_next_idr_variant() -> None:
    """roq-pli.yaml: four configurations of roq-rfc8867.yaml, each with PLI (its default) and
    with next-idr, on roq-quick.yaml's link and run length; nothing else differs."""
    full_path, pli_path, quick_path = (
        REPO / "scenarios" / "roq-rfc8867.yaml",
        REPO / "scenarios" / "roq-pli.yaml",
        REPO / "scenarios" / "roq-quick.yaml",
    )
    full = {r.scheme: r for r in expand(load(full_path), full_path) if r.setting == "d50"}
    quick = expand(load(quick_path), quick_path)[0]
    runs = {r.scheme: r for r in expand(load(pli_path), pli_path)}
    assert len(runs) == 8
    for name, r in runs.items():
        base = name.removesuffix("-nextidr")
        want = "next-idr" if name.endswith("-nextidr") else "pli"
        assert r.params.loss_recovery == want, name
        assert r.params == full[base].params.model_copy(update={"loss_recovery": want}), name
        assert r.link == quick.link and r.duration_s == quick.duration_s, name
        assert f"{base}-nextidr" in runs
