"""priolab/workloads/base.py QuicPair (the pair loop every QUIC pair workload shares) and
priolab/workloads/what_ran.py (the "What ran" block read through the parameter models)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ground import rundir
from priolab.workloads import WORKLOADS
from priolab.workloads.base import CERT_FILE, Pair, QuicPair, RunContext
from priolab.workloads.dtp.workload import DtpParams
from priolab.workloads.what_ran import params_of, what_ran

PAIRS = (Pair("g1", "h1", "10.0.0.1", "10.0.0.2"), Pair("g2", "h2", "10.0.1.1", "10.0.1.2"))


def ctx(pairs: tuple[Pair, ...], keylog: bool = False) -> RunContext:
    return RunContext(Path("/run"), 5.0, 7, Path("/sc"), pairs, tls_keylog=keylog)


@pytest.mark.parametrize("kind", ["dtp", "moq", "qpr", "rise"])
def test_every_pair_gets_a_listener_in_the_host_and_a_connector_in_the_guest(kind: str) -> None:
    w = WORKLOADS[kind]
    assert isinstance(w, QuicPair)
    params = w.params_model.model_validate({"tracking_speed_deg_s": 10.0} if kind == "rise" else {})
    specs = w.plan(params, ctx(PAIRS, keylog=True))
    names = [s.name for s in specs]
    assert names == [f"{kind}-{w.listener}-1", f"{kind}-{w.connector}-1",
                     f"{kind}-{w.listener}-2", f"{kind}-{w.connector}-2"]  # fmt: skip
    listen, connect = specs[2], specs[3]
    port = str(getattr(params, "port"))  # noqa: B009
    assert (listen.node, connect.node) == ("h2", "g2")
    assert listen.argv[:4] == [w.binary(), "--role", w.listener, "--bind"]
    assert listen.argv[listen.argv.index("--bind") + 1] == f"0.0.0.0:{port}"
    cert = Path("/run/host-2") / CERT_FILE
    assert listen.argv[listen.argv.index("--cert-out") + 1] == str(cert)
    assert connect.argv[connect.argv.index("--connect") + 1] == f"10.0.1.2:{port}"
    assert connect.argv[connect.argv.index("--log-dir") + 1] == "/run/guest-2"
    assert connect.wait_for_file == cert and connect.waits_itself  # quicsetup::connect waits
    assert connect.argv[-2:] == ["--keylog", f"/run/{rundir.TLS_KEYLOG}-2"]
    assert "--keylog" not in w.plan(params, ctx(PAIRS[:1]))[1].argv  # not captured
    assert w.plan(params, ctx(PAIRS[:1]))[0].name == f"{kind}-{w.listener}"  # one pair: no tag
    assert w.binaries() == {kind: w.binary()} and w.tools() == [[w.binary(), "--version"]]


def test_the_program_path_follows_its_environment_variable(monkeypatch) -> None:
    monkeypatch.setenv("PRIOLAB_DTP", "/opt/x/dtp")
    assert WORKLOADS["dtp"].binaries() == {"dtp": "/opt/x/dtp"}


@dataclass
class FakeRun:
    scheme: str
    recorded: dict[str, Any] = field(default_factory=dict)

    @property
    def workload(self) -> dict[str, Any]:
        return self.recorded


def test_what_ran_reads_each_run_through_the_model() -> None:
    """A key the run does not record is the model's default, a recorded one wins, keys the
    model lacks (kind, old names) are ignored; one line per scheme, descriptions once."""
    p = params_of(DtpParams, {"kind": "dtp", "alpha": 1.0, "gone": 3})
    assert (p.alpha, p.scheme, p.cc) == (1.0, DtpParams().scheme, DtpParams().cc)
    runs = [FakeRun("dtp", {"kind": "dtp"}), FakeRun("dtp", {}),
            FakeRun("quic", {"scheme": "quic", "cc": "bbr"})]  # fmt: skip
    lines = what_ran(runs, DtpParams, lambda p: f"{p.scheme} α {p.alpha:g}, {p.cc}")
    assert lines == ["- dtp: ads α 0.5, cubic", "- quic: quic α 0.5, bbr"]
