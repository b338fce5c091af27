"""The standard formats on the Mininet site: a short RISE run with `qlog: true` and `capture:`
leaves one qlog trace per endpoint's connection (its times on the endpoint's own real clock)
and a pcap per endpoint that tshark decrypts with the guest's TLS key log."""

from __future__ import annotations

import pytest

from ground import rundir
from tests.conftest import needs_root
from tests.formats_checks import check_pcap, check_qlogs, tshark
from tests.netns_runs import require_built, run_point, shortened

pytestmark = [needs_root, pytest.mark.netns]


def test_a_mininet_run_writes_qlog_traces_and_pcaps_that_tshark_decrypts(tmp_path) -> None:
    require_built("rise", "linkem")
    tshark()
    duration_s = 3
    scenario = shortened(tmp_path, "quick.yaml", lambda data: None, duration_s=duration_s,
                         capture={}, qlog=True)  # fmt: skip
    out, meta = run_point(scenario, "FB-4K-Low", "pri", "moderate")
    # each endpoint's clock starts with its process, at most the run's length before its last
    # event (plus the link's settling time and the end's grace: a generous bound)
    check_qlogs(out, {"guest/qlog/rise-guest-1.sqlog", "host/qlog/rise-host-1.sqlog"},
                until_ms=1000 * (duration_s + 30))  # fmt: skip
    for node in ("guest", "host"):
        check_pcap(out / rundir.capture(node), out / rundir.TLS_KEYLOG, 4433,
                   "10.0.0.1", "10.0.0.2")  # fmt: skip
