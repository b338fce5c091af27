"""analysis/judged.py `standard`: a claim's verdict in the page's three words
("reproduced", "differs, because ...", "not reproduced, because ...") from its own runs, with
the reason read off the same runs by the workload's mechanism (DTP: where the blocks went;
QPR: what the player got)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.judged import ci_text, decide, standard
from book.papers import ABOVE_1, BELOW_1, DTP, QPR, ROQ
from priolab.workloads.dtp.claims import fates, where_blocks_went
from priolab.workloads.qpr.claims import session, what_the_player_got
from priolab.workloads.roq.claims import receiver, what_the_receiver_got

INF = math.inf


def _why(num: pd.DataFrame, den: pd.DataFrame) -> str:
    return f"why({len(num)}, {len(den)})"


def _runs(
    metric: str, values: list[float], scheme: str = "x", repeats: bool = False
) -> pd.DataFrame:
    """Runs of one scheme; each measured something else too (`other`), unless they repeat
    each other (`repeats`: every measured value the same, as sim runs a seed changed
    nothing in)."""
    other = [0.5] * len(values) if repeats else [float(i) for i in range(len(values))]
    return pd.DataFrame({metric: values, "other": other, "scheme": [scheme] * len(values)})


@pytest.mark.parametrize(
    ("ci", "paper", "ratio", "kind"),
    [
        # a gain ("> 1×"): a CI above 1 reproduces it, one that holds 1 differs, one below not
        ((1.2, 1.5), (ABOVE_1, INF), True, "reproduced"),
        ((0.9, 1.3), (ABOVE_1, INF), True, "differs"),
        ((0.5, 0.8), (ABOVE_1, INF), True, "not reproduced"),
        # a point gain (1.2×): held, the same direction another size, the other direction
        ((1.1, 1.3), (1.2, 1.2), True, "reproduced"),
        ((2.9, 3.6), (1.2, 1.2), True, "differs"),
        ((1.01, 1.1), (1.2, 1.2), True, "differs"),
        ((0.4, 0.6), (1.2, 1.2), True, "not reproduced"),
        # a loss ("< 1×") and the same ("1×", "≥ 1×"): away from 1 is not reproduced
        ((0.5, 0.7), (0.0, BELOW_1), True, "reproduced"),
        ((0.95, 1.02), (0.0, BELOW_1), True, "differs"),
        ((0.98, 1.01), (1.0, 1.0), True, "reproduced"),
        ((1.2, 1.4), (1.0, 1.0), True, "not reproduced"),
        ((0.97, 1.02), (1.0, INF), True, "reproduced"),
        ((0.7, 0.9), (1.0, INF), True, "not reproduced"),
        # "up to 5×" (a gain): a larger gain differs
        ((6.0, 8.0), (ABOVE_1, 5.0), True, "differs"),
        # a mean: inside the range or not
        ((0.97, 0.99), (0.95, 1.0), False, "reproduced"),
        ((15.9, 16.2), (3.0, 3.0), False, "not reproduced"),
        ((0.2, 0.3), (0.0, 0.5), False, "reproduced"),
    ],
)
def test_decide(ci: tuple[float, float], paper: tuple[float, float], ratio: bool, kind: str):
    assert decide(*ci, *paper, ratio)[0] == kind


def test_a_ratio_claim_gives_value_n_and_a_reason_from_the_runs() -> None:
    j = standard(1.2, 1.2, "deadline_ratio", True, "1.2×", _why)
    num = _runs("deadline_ratio", [0.60, 0.62, 0.61])
    den = _runs("deadline_ratio", [0.20, 0.21, 0.19, 0.20])
    got = j(num, den)
    assert got.n == "3+4" and got.value.startswith("3.05 [")
    assert got.verdict.startswith("differs (the paper's direction, a larger effect than its 1.2×)")
    assert got.verdict.endswith(", because why(3, 4)")
    assert j(num, num).verdict.startswith("differs (no significant difference: the CI holds 1")
    assert j(den, num).verdict.startswith("not reproduced (CI below the paper's 1.2×)")
    held = j(_runs("deadline_ratio", [0.24, 0.25, 0.23]), den)
    assert held.verdict == "reproduced"


@pytest.mark.parametrize(
    ("ci", "paper", "side"),
    [
        ((2.9, 3.6), (1.2, 1.2), "larger"),  # a gain beyond the paper's
        ((1.01, 1.1), (1.2, 1.2), "smaller"),  # a gain short of it
        ((0.05, 0.2), (0.9, 0.9), "larger"),  # a loss beyond the paper's (further below 1)
        ((0.97, 0.99), (0.9, 0.9), "smaller"),  # a loss short of it (nearer 1)
    ],
)
def test_differs_names_the_effect_larger_away_from_1(
    ci: tuple[float, float], paper: tuple[float, float], side: str
) -> None:
    kind, where = decide(*ci, *paper, True)
    assert kind == "differs" and f"a {side} effect" in where


def test_a_ci_just_off_1_shows_the_digits_that_decide() -> None:
    assert ci_text(1.0004, 1.0002, 1.0006) == "1 [1, 1.001]"
    assert ci_text(1.00004, 1.00002, 1.00004) == "1 [1, 1]"  # 4 digits cannot tell either
    assert ci_text(1.0, 1.0, 1.0) == "1 [1, 1]"  # no spread: nothing to tell
    assert ci_text(2.5, 2.4, 2.6) == "2.5 [2.4, 2.6]"


def test_a_mean_claim_and_the_edges() -> None:
    j = standard(1.0, 1.0, "deadline_ratio", False, "1.0", _why)
    full = j(_runs("deadline_ratio", [1.0, 1.0, 1.0]), pd.DataFrame())
    assert full.verdict == "reproduced" and full.n == "3"  # one value, three distinct runs
    same = j(_runs("deadline_ratio", [1.0, 1.0, 1.0], repeats=True), pd.DataFrame())
    assert same.n == "3 (all alike)"  # runs that repeat each other
    low = j(_runs("deadline_ratio", [0.5, 0.6]), pd.DataFrame())
    assert low.n == "2" and low.verdict == (
        "not reproduced (CI below the paper's 1.0), because why(2, 0)"
    )
    one = j(_runs("deadline_ratio", [0.5]), pd.DataFrame())
    assert one.verdict == "no verdict: fewer than 2 runs" and "(no CI)" in one.value
    assert j(pd.DataFrame(), pd.DataFrame()).verdict == "not run"
    assert j(_runs("other", [1.0, 1.0]), pd.DataFrame()).verdict == "not run"
    # a ratio whose denominator met nothing: an unbounded gain
    r = standard(ABOVE_1, INF, "deadline_ratio", True, "> 1×", _why)
    zero = _runs("deadline_ratio", [0.0, 0.0])
    inf = r(_runs("deadline_ratio", [0.3, 0.4]), zero)
    assert inf.verdict == "reproduced" and inf.value.startswith("∞")
    point = standard(1.2, 1.2, "deadline_ratio", True, "1.2×", _why)
    assert point(_runs("deadline_ratio", [0.3, 0.4]), zero).verdict.startswith("differs")
    both = r(zero, zero)
    assert both.value == "– (both means 0)" and both.n == "2+2"
    repeat = _runs("deadline_ratio", [0.0, 0.0], repeats=True)
    assert r(_runs("deadline_ratio", [0.3, 0.4]), repeat).n == "2+2 (denominator's all alike)"
    assert r(repeat, repeat).n == "2+2 (both all alike)"
    assert both.verdict.startswith("not reproduced (neither scheme has any), because why(2, 2)")


def test_dtp_reason_says_where_each_schemes_blocks_went() -> None:
    quic = pd.DataFrame({"scheme": ["quic"] * 2, "deadline_ratio": [0.2, 0.3],
                         "dropped_pct": [0.0, 0.0], "pending_pct": [40.0, 50.0],
                         "completion_median_ms": [900.0, 1100.0], "deadline_ms": [200, 200],
                         "lost_packets_pct": [0.0, 0.02]})  # fmt: skip
    dtp = quic.assign(scheme="dtp", deadline_ratio=[0.9, 0.9], dropped_pct=[10.0, 10.0],
                      pending_pct=[0.0, 0.0], completion_median_ms=[80.0, 80.0],
                      redundancy_overhead_pct=[3.0, 3.0])  # fmt: skip
    q = fates(quic)
    assert q.startswith("quic: 25.0 % of blocks on time, 0.0 % dropped by the sender, ")
    assert "30.0 % sent but late or never complete, 45.0 % still queued at the end" in q
    assert "completion median 1000 ms (deadline 200 ms)" in q and "parity" not in q
    assert "p95" not in q  # no p95 column: none quoted
    tail = fates(quic.assign(completion_p95_ms=[3000.0, 3100.0]))
    assert "completion median 1000 ms, p95 3050 ms (deadline 200 ms)" in tail
    assert "parity 3.0 % of the block bytes" in fates(dtp)
    both = where_blocks_went(dtp, quic)
    assert both.startswith("dtp: 90.0 % of blocks on time") and "; quic: 25.0 %" in both
    assert both.endswith("; quinn counted 0.01 % of the sender's packets lost")
    assert where_blocks_went(dtp, pd.DataFrame()).startswith("dtp: ")


def test_qpr_reason_says_what_the_player_got() -> None:
    q0 = pd.DataFrame({"scheme": ["q0"] * 2, "throughput_mean_mbps": [4.0, 6.0],
                       "freezes": [12.0, 10.0], "freeze_total_s": [3.0, 4.0],
                       "played_pct": [90.0, 92.0], "objects_incomplete_pct": [0.0, 0.0],
                       "lost_packets": [50.0, 50.0], "sent_packets": [1000.0, 1000.0]})  # fmt: skip
    qpr = q0.assign(scheme="qpr", unreliable_bytes_lost_pct=[5.0, 7.0],
                    unreliable_conn_cwnd_bytes=[2904.0, 2904.0])  # fmt: skip
    s = session(q0)
    assert s == ("q0: 5 Mbit/s per segment (rescaled units), 11.0 freezes (3.5 s), 91 % of "
                 "the session played, 0.0 % of objects incomplete, server lost 5.0 % of "
                 "1000 packets")  # fmt: skip
    t = what_the_player_got(qpr, q0)
    assert "6.0 % of unreliable bytes lost" in t
    assert "datagram connection's window 2904 bytes at the end" in t and "; q0: 5 " in t


def test_roq_reason_splits_ssim_into_decoded_pictures_and_frozen_ones() -> None:
    """A configuration that decodes half its frames: its SSIM is the decoded pictures' less
    what the frozen ones cost, and the reason says both, with the rates and the losses."""
    udp = pd.DataFrame({"scheme": ["udp-scream"] * 2, "ssim_mean": [0.85, 0.87],
                        "ssim_decoded_mean": [0.87, 0.89], "decoded_pct": [99.0, 97.0],
                        "target_mean_kbps": [600.0, 640.0], "send_rate_mean_kbps": [580.0, 600.0],
                        "rtp_loss_pct": [0.0, 0.2], "latency_median_ms": [90.0, 110.0],
                        "competing_mbps": [0.0, 0.0]})  # fmt: skip
    triv = udp.assign(scheme="trivial+stream", ssim_mean=[0.5, 0.6], decoded_pct=[50.0, 50.0],
                      competing_mbps=[0.4, 0.5], key_frames_complete=[1.0, 2.0],
                      key_frames_sent=[170.0, 171.0])  # fmt: skip
    r = receiver(udp)
    assert r == ("udp-scream: SSIM 0.860, 98 % of frames decoded, decoded pictures 0.880, "
                 "frozen ones pull the mean down by 0.020, target 620 kbit/s, sent 590 kbit/s, "
                 "0.1 % of RTP packets lost, latency median 100 ms")  # fmt: skip
    t = what_the_receiver_got(triv, udp)
    assert t.startswith("trivial+stream: SSIM 0.550, 50 % of frames decoded")
    assert "pull the mean down by 0.330" in t and "competing stream 0.45 Mbit/s" in t
    assert "1.5 of 170.5 key frames arrived whole" in t and "key frames" not in r
    assert "; udp-scream: SSIM 0.860" in t
    assert receiver(udp.drop(columns="ssim_mean")) == "udp-scream: no SSIM"


def _fake(metric: str, num: str, den: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    base = {"deadline_ratio": 0.5, "throughput_mean_mbps": 4.0}
    a = pd.DataFrame([{**base, metric: 0.5 + 0.01 * i, "scheme": num} for i in range(3)])
    b = pd.DataFrame([{**base, metric: 0.4 + 0.01 * i, "scheme": den} for i in range(3)])
    return a, b


@pytest.mark.parametrize("paper", [DTP, QPR, ROQ], ids=lambda p: p.key)
def test_every_claim_gets_a_verdict_in_the_pages_words(paper) -> None:
    """Every DTP, QPR and RoQ claim has a judge, and whatever its runs say, its verdict starts with
    one of the page's words and any verdict but "reproduced" gives its reason."""
    for c in paper.claims:
        judge = paper.judge(c)
        assert judge is not None, c.text
        num, den = _fake(c.metric, c.num, c.den or c.num)
        v = judge(num, den if c.den or c.den_setting else pd.DataFrame()).verdict
        assert v == "reproduced" or (
            v.startswith(("differs (", "not reproduced (")) and ", because " in v
        ), (c.text, v)
