"""The five papers priolab reproduces, the scenarios that measure each, and the claims that a
results page sets beside priolab's numbers.

Each paper is cited by its short key (`Paper.short`), whose reference and BibTeX entry are
book/bibliography.py's (docs/bibliography.md). A claim is either a ratio of two schemes'
means of one metric (`num` ÷ `den`) or, with `den` empty, the mean of one scheme. Its value
comes from the scenarios' runs.csv (valid runs only) with a 95 % percentile bootstrap CI, as
every table of analysis/ gives it. RISE's claims live in priolab/workloads/rise/reproduction.py
(CLAIMS, with the regime each ran in); the page for RISE embeds that report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from analysis.judged import Judge, Why, standard
from priolab.workloads.dtp.claims import where_blocks_went
from priolab.workloads.moq import claims as moq_claims
from priolab.workloads.qpr.claims import what_the_player_got
from priolab.workloads.roq.claims import what_the_receiver_got
from priolab.workloads.roq.figures import PAPER_SSIM


@dataclass(frozen=True)
class Claim:
    figure: str
    text: str
    paper: str  # as the page prints it
    lo: float  # the paper's value or range, for the verdict
    hi: float
    metric: str
    num: str  # scheme whose mean is the value (or the numerator)
    den: str = ""  # scheme of the denominator; empty: the value is num's mean
    settings: tuple[str, ...] = ()  # only these settings; empty: every setting
    scenarios: tuple[str, ...] = ()  # only these scenarios; empty: every one of the paper's
    # Optional: the value and the verdict from the claim's own runs (judged.py): "reproduced",
    # "not reproduced, because ..." or "differs, because ...", the reason measured. None: the
    # mean or ratio with its CI against lo..hi (results.verdict).
    judge: Judge | None = None
    # Optional: the denominator's runs come from this setting (of the same scenario and
    # speed), `den` or else `num` its scheme: a claim across two conditions ("no additional
    # freezes from 0 to 5 % loss"). Only claims with a judge (Paper.judge) read it.
    den_setting: str = ""
    # Optional: the reading of the paper's method this claim's row measures (one of
    # Paper.readings); the page's reading table (results.readings_section) sets a claim's
    # readings side by side.
    reading: str = ""


@dataclass(frozen=True)
class Paper:
    key: str  # the page's file name: results/<key>.md
    short: str  # the paper's key in book/bibliography.py: [RISE], [RoQ §5.2]
    kind: str  # workload kind
    scenarios: tuple[str, ...]  # scenario names (results/<name>/), in order of preference
    claims: tuple[Claim, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())  # markdown lines the page prints after the claims
    # The workload's measured mechanism (judged.Why): a claim without a judge of its own is
    # judged by judged.standard over its own range, metric and schemes, with this for its
    # reasons. None: the CI against the paper's range (results.verdict).
    why: Why | None = None
    # The readings of the paper's method that its claims are measured under, in the order a
    # table of them sets them (Claim.reading); empty: the paper has one reading.
    readings: tuple[str, ...] = field(default=())

    def judge(self, c: Claim) -> Judge | None:
        if c.judge is not None or self.why is None:
            return c.judge
        ratio = bool(c.den or c.den_setting)
        return standard(c.lo, c.hi, c.metric, ratio, c.paper, self.why)


RISE = Paper(
    "rise",
    "RISE",
    "rise",
    (
        "quick",
        "rise-transport",
        "rise-transport-wl",
        "rise-direction",
        "rise-direction-wl",
        "rise-bitrate",
        "rise-bitrate-wl",
        "rise-content",
        "rise-content-wl",
        "rise-content-traces",
        "rise-freeze-map",
        "map-loss-queue",
        "map-policer",
        "map-cc-loss",
        "map-buffer-keyframe",
        "ablation-buffer",
        "ablation-queue",
        "ablation-cc",
        "ablation-4g-trace",
    ),
)

# A strict "more" / "less" claim: its range starts just past 1, so a CI at or below 1 reads
# "priolab lower" (a CI that overlaps the range reads "inside": results.verdict).
ABOVE_1 = 1.0 + 1e-9
BELOW_1 = 1.0 - 1e-9
INF = math.inf
# [DTP Fig. 3]'s axis: below the 6 MB/s the blocks need ("bandwidth limited") and above
DTP_LIMITED = ("1MBps", "2MBps", "3MBps", "4MBps", "5MBps", "6MBps")
DTP_ENOUGH = ("8MBps", "10MBps")
DTP_LOSS = ("loss1", "loss5", "loss10", "loss15", "loss20")
DTP_FIG3 = ("dtp-bandwidth", "dtp-quick")

# [DTP §VI-A.1]'s other statements on Figs. 3 and 4, each a row of its own
DTP_BELOW_NEED = ("1MBps", "2MBps", "3MBps", "4MBps", "5MBps")  # below the 6 MB/s needed
DTP_MORE: tuple[Claim, ...] = (
    *(
        Claim(
            "Fig. 3a, §VI-A.1",
            f"bandwidth limited: {label} performs way better than QUIC",
            "> 1×",
            ABOVE_1,
            INF,
            "deadline_ratio",
            scheme,
            "quic",
            DTP_LIMITED,
            DTP_FIG3,
        )
        for scheme, label in (("dtp-d", "DTP-D"), ("dtp-p", "DTP-P"))
    ),
    Claim(
        "Fig. 3a, §VI-A.1",
        "at 6 and 4 MB/s (achieved throughput below the set value) SCTP' performs worse than DTP-P",
        "< 1×",
        0.0,
        BELOW_1,
        "deadline_ratio",
        "sctp",
        "dtp-p",
        ("4MBps", "6MBps"),
        DTP_FIG3,
    ),
    *(
        Claim(
            "§VI-A.1",
            f"bandwidth limited: {label}'s good bytes ratio is about 100 % (read as ≥ 0.95)",
            "≈ 1.0",
            0.95,
            1.0,
            "good_bytes_ratio",
            scheme,
            "",
            DTP_LIMITED,
            DTP_FIG3,
        )
        for scheme, label in (("sctp", "SCTP'"), ("dtp-d", "DTP-D"), ("dtp-p", "DTP-P"))
    ),
    Claim(
        "Fig. 3b",
        "priority 1: SCTP' behaves like DTP-P except at 2 MB/s",
        "1×",
        1.0,
        1.0,
        "deadline_ratio_p1",
        "sctp",
        "dtp-p",
        tuple(x for x in DTP_LIMITED if x != "2MBps"),
        DTP_FIG3,
    ),
    *(
        Claim(
            "Fig. 3b",
            f"priority 1, below the 6 MB/s needed: DTP-D performs worse than {label}",
            "< 1×",
            0.0,
            BELOW_1,
            "deadline_ratio_p1",
            "dtp-d",
            other,
            DTP_BELOW_NEED,
            DTP_FIG3,
        )
        for other, label in (("dtp-p", "DTP-P"), ("dtp", "DTP"), ("sctp", "SCTP'"))
    ),
    *(
        Claim(
            "Fig. 4",
            f"12 → 4 → 12 MB/s: DTP consistently performs best (here: against {label})",
            "≥ 1×",
            1.0,
            INF,
            "deadline_ratio",
            "dtp",
            other,
            ("12-4-12MBps",),
            ("dtp-dynamic", "dtp-quick"),
        )
        for other, label in (("sctp", "SCTP'"), ("dtp-d", "DTP-D"), ("dtp-p", "DTP-P"))
    ),
    Claim(
        "Fig. 4",
        "12 → 4 → 12 MB/s: DTP's worst 1 s window (the 4 MB/s dip) above QUIC's",
        "> 1×",
        ABOVE_1,
        INF,
        "window_ratio_min",
        "dtp",
        "quic",
        ("12-4-12MBps",),
        ("dtp-dynamic", "dtp-quick"),
    ),
)

DTP = Paper(
    "dtp",
    "DTP",
    "dtp",
    (
        "dtp-bandwidth",
        "dtp-dynamic",
        "dtp-loss-small",
        "dtp-loss-tail",
        "dtp-loss",
        "dtp-quick",
        "dtp-quick-loss",
    ),
    (
        Claim(
            "abstract, Fig. 3",
            "when the bandwidth is limited, DTP delivers up to 5× the blocks before the "
            "deadline that QUIC does",
            "up to 5×",
            ABOVE_1,
            5.0,
            "deadline_ratio",
            "dtp",
            "quic",
            DTP_LIMITED,
        ),
        *(
            Claim(
                "Fig. 3a",
                f"bandwidth above the 6 MB/s the blocks need: {label} meets every deadline",
                "1.0",
                1.0,
                1.0,
                "deadline_ratio",
                scheme,
                "",
                DTP_ENOUGH,
                DTP_FIG3,
            )
            for scheme, label in (
                ("quic", "QUIC"),
                ("sctp", "SCTP'"),
                ("dtp-d", "DTP-D"),
                ("dtp-p", "DTP-P"),
                ("dtp", "DTP"),
            )
        ),
        Claim(
            "Fig. 3a, §VI-A.1",
            "at 5 and 3 MB/s SCTP' performs the same as DTP-P",
            "1×",
            1.0,
            1.0,
            "deadline_ratio",
            "sctp",
            "dtp-p",
            ("3MBps", "5MBps"),
            DTP_FIG3,
        ),
        Claim(
            "Fig. 3a, §VI-A.1",
            "bandwidth limited: DTP-D performs worse than DTP-P",
            "< 1×",
            0.0,
            BELOW_1,
            "deadline_ratio",
            "dtp-d",
            "dtp-p",
            ("2MBps", "3MBps", "4MBps", "5MBps"),
            DTP_FIG3,
        ),
        *(
            Claim(
                "Fig. 3a, §VI-A.1",
                f"DTP consistently performs best (here: against {label})",
                "≥ 1×",
                1.0,
                INF,
                "deadline_ratio",
                "dtp",
                other,
                DTP_LIMITED,
                DTP_FIG3,
            )
            for other, label in (("sctp", "SCTP'"), ("dtp-d", "DTP-D"), ("dtp-p", "DTP-P"))
        ),
        *(
            Claim(
                "Fig. 3b",
                f"at 2 MB/s DTP meets more priority-1 deadlines than {label}",
                "> 1×",
                ABOVE_1,
                INF,
                "deadline_ratio_p1",
                "dtp",
                other,
                ("2MBps",),
                DTP_FIG3,
            )
            for other, label in (("sctp", "SCTP'"), ("dtp-p", "DTP-P"))
        ),
        Claim(
            "§VI-A.1",
            "bandwidth limited: most bytes QUIC sends miss their deadline",
            "< 0.5",
            0.0,
            0.5,
            "good_bytes_ratio",
            "quic",
            "",
            DTP_LIMITED,
            DTP_FIG3,
        ),
        Claim(
            "§VI-A.1",
            "bandwidth limited: DTP's good bytes ratio is about 100 % (read as ≥ 0.95)",
            "≈ 1.0",
            0.95,
            1.0,
            "good_bytes_ratio",
            "dtp",
            "",
            DTP_LIMITED,
            DTP_FIG3,
        ),
        Claim(
            "Fig. 4",
            "12 → 4 → 12 MB/s: DTP performs best (here: against QUIC)",
            "> 1×",
            ABOVE_1,
            INF,
            "deadline_ratio",
            "dtp",
            "quic",
            ("12-4-12MBps",),
            ("dtp-dynamic", "dtp-quick"),
        ),
        # Compared at the sweep's top, 20 %: with one-packet blocks QUIC misses about the
        # loss rate's share, so no scheme can reach 1.2× (1 / (1 - p)) below p ≈ 17 %.
        Claim(
            "abstract, Fig. 5",
            "with packet losses DTP delivers 1.2× the blocks before the deadline that QUIC "
            "does (compared at 20 % loss)",
            "1.2×",
            1.2,
            1.2,
            "deadline_ratio",
            "dtp-fec",
            "quic",
            ("loss20",),
        ),
        Claim(
            "Fig. 5, §VI-A.2",
            "DTP constantly outperforms QUIC under all loss rates",
            "> 1×",
            ABOVE_1,
            INF,
            "deadline_ratio",
            "dtp-fec",
            "quic",
            DTP_LOSS,
        ),
        Claim(
            "§VI-A.2",
            "three 100 KB blocks per 100 ms at 10 % loss: about 3 % extra data from redundancy",
            "≈ 3 %",
            3.0,
            3.0,
            "redundancy_overhead_pct",
            "dtp-fec",
            "",
            ("loss10",),
            ("dtp-loss-tail", "dtp-loss"),
        ),
        *DTP_MORE,
    ),
    why=where_blocks_went,
)

# QPR's readings of the unreliable path (priolab/workloads/qpr/README.md, "The unreliable
# path"): the paper's text (a fixed window, scenarios/qpr-5g.yaml) and the named variants
# (scenarios/qpr-readings.yaml). Every ratio claim is set beside each reading.
QPR_READINGS: tuple[tuple[str, str, str], ...] = (
    ("", "paper text: fixed window", "qpr-5g"),
    ("-shared", "variant: one connection, quinn's loss response", "qpr-readings"),
    ("-lossblind", "variant: loss-blind second connection", "qpr-readings"),
)


# QPR(F) ([QPR §IV-E, Fig. 17]; scenarios/qpr-fec.yaml): the FEC schemes per reading
QPR_FEC_READINGS: tuple[tuple[str, str, str], ...] = (
    ("-fec", "paper text: fixed window", "qpr-fec"),
    ("-lossblind-fec", "variant: loss-blind second connection", "qpr-fec"),
)


def _per_reading(
    readings: tuple[tuple[str, str, str], ...],
    where: tuple[str, str, str],
    text: str,
    value: tuple[float, float],
    metric: str,
    num: str,
    den: str = "q0",
) -> tuple[Claim, ...]:
    """One claim per reading: `num` (÷ `den` if given) with the reading's suffix on every
    scheme but Q0, from the reading's scenario. `where`: (figure, the paper's value as printed,
    setting)."""
    figure, paper, setting = where
    return tuple(
        Claim(
            figure,
            f"{text} [{label}]",
            paper,
            value[0],
            value[1],
            metric,
            num + suffix,
            den + suffix if den not in ("", "q0") else den,
            (setting,),
            (scenario,),
            reading=label,
        )  # fmt: skip
        for suffix, label, scenario in readings
    )


QPR_NOTES: tuple[str, ...] = (
    "## The readings of the unreliable path, and why they differ",
    "",
    'The paper sends its unreliable objects "at the rate defined by the congestion window '
    "(which is fixed)\" (§III-C), the window being the BDP at the trace's lowest rate (§IV-B). "
    "`qpr`, `q75` and `q100` (scenarios/qpr-5g.yaml) follow that text: the datagrams travel on "
    "a second connection whose window stays at that BDP, so they can never carry more than one "
    "window per round trip. On the driving trace (trace 2) the lowest non-zero rate is "
    "4 Mbit/s (0.4 after the ×0.1 rescaling): a 1000-byte BDP, raised to quinn's two-packet "
    "minimum (2904 bytes after MTU discovery), so at most ≈ 1.2 Mbit/s for the datagrams, "
    "less than reliable QUIC gets there; on the walking trace (63 Mbit/s lowest, 6.3 "
    "rescaled) the window is 15,750 bytes, ≈ 6.3 Mbit/s. A throughput gain above the window's "
    "rate cannot come from this reading.",
    "",
    "The named variants (scenarios/qpr-readings.yaml) are the other readings: `-shared` "
    "puts the datagrams on the one connection under quinn's Cubic (what quinn does "
    "unmodified: every lost packet, datagram or stream, cuts the one window, so the datagrams "
    "save retransmission waits but not window cuts); `-lossblind` runs Cubic on a second "
    "connection without its loss response (the window grows on ACKs and is never cut), the "
    "reading under which the paper's driving-trace gains are possible, at the price of a "
    "sender that does not back off (priolab/workloads/qpr/README.md lists its deviations). "
    "The table above sets each claim's readings side by side; the claims table's verdict "
    "says, per reading, why, from the same runs (each scheme's throughput, freezes, losses "
    "and the datagram connection's window). Throughput is bytes that arrive: an unreliable "
    "object that lost a "
    "datagram cannot be decoded (`decodable_quality_rank*` in the summaries below).",
    "",
    "QPR(F) and Q100(F) (scenarios/qpr-fec.yaml): the paper subtracted an FEC overhead "
    "estimated from rQUIC from its measured throughput; here the repair datagrams (22 % of "
    "the unreliable data, Reed-Solomon blocks of 32) are sent and decoded, so the overhead "
    "(`fec_overhead_pct`) and the objects that stay undecodable after FEC "
    "(`objects_incomplete_pct`) are measured.",
    "",
    "Sessions that die are not in the means. Under bursty loss a reliable stream can wait "
    "out QUIC's idle timeout (10 s, the paper's default) behind a lost packet; the player and "
    "the server then exit with an error, and the run is judged invalid and listed with its "
    "reason under its scenario below (`exit_code`, `short_run`). The claims' cells where "
    "sessions died were given more repetitions, so that at least ten lived; a claim's n "
    "counts living sessions only, and its mean is theirs, which flatters a scheme whose "
    "worst sessions die (Q0 most often). How many died is in the invalid-run list.",
    "",
    "HTTP/2 over TCP (scenarios/qpr-h2.yaml, Mininet only: sim has no TCP) is compared with Q0 "
    "from the same file. Under the same bursty loss Linux's TCP enters recovery less often per "
    "packet than quinn starts a congestion event (each recovery episode absorbs more lost "
    "packets), so its window is cut less often; the counters of both stacks are in "
    "[an investigation](../investigations/2026-11-27-qpr-h2-above-q0.md) (TCP's from one run: "
    "the harness does not record them per run).",
    "",
)

# [QPR §IV-D]'s other statements, on the paper-text reading (scenarios/qpr-5g.yaml, the
# one scenario with both traces at every loss level)
QPR_TEXT = QPR_READINGS[:1]
QPR_MORE: tuple[Claim, ...] = (
    *_per_reading(
        QPR_TEXT,
        ("§IV-D, Fig. 13 (trace 1)", "> 1×", "walking-loss2"),
        'walking trace, 2 % loss: QPR throughput above Q0 ("in the presence of loss, QPR '
        'outperforms reliable QUIC in all cases"; "similar ... for trace 1")',
        (ABOVE_1, math.inf),
        "throughput_mean_mbps",
        "qpr",
    ),
    *_per_reading(
        QPR_TEXT,
        ("§IV-D, Fig. 13 (trace 1)", "> 1×", "walking-loss0"),
        "walking trace, 0 % loss: QPR throughput above Q0",
        (ABOVE_1, math.inf),
        "throughput_mean_mbps",
        "qpr",
    ),
    *_per_reading(
        QPR_TEXT,
        ("§IV-D, Fig. 15", "> 1×", "driving-loss0"),
        "driving trace, 0 % loss: throughput improves with unreliability (Q100 ÷ Q0)",
        (ABOVE_1, math.inf),
        "throughput_mean_mbps",
        "q100",
    ),
    *_per_reading(
        QPR_TEXT,
        ("§IV-D, Fig. 15", "> 1×", "driving-loss5"),
        "driving trace, 5 % loss: throughput improves with unreliability (Q75 ÷ QPR)",
        (ABOVE_1, math.inf),
        "throughput_mean_mbps",
        "q75",
        "qpr",
    ),
    *_per_reading(
        QPR_TEXT,
        ("§IV-D, Fig. 15", "> 1×", "driving-loss5"),
        "driving trace, 5 % loss: throughput improves with unreliability (Q100 ÷ Q75)",
        (ABOVE_1, math.inf),
        "throughput_mean_mbps",
        "q100",
        "q75",
    ),
    *_per_reading(
        QPR_TEXT,
        ("§IV-D", "13", "driving-loss10"),
        "driving trace, 10 % loss: Q75 completes the session with 13 freezes",
        (13.0, 13.0),
        "freezes",
        "q75",
        "",
    ),
    *_per_reading(
        QPR_TEXT,
        ("§IV-D", "9 s", "driving-loss10"),
        "driving trace, 10 % loss: Q75's total freeze duration 9 s",
        (9.0, 9.0),
        "freeze_total_s",
        "q75",
        "",
    ),
    *(
        Claim(
            figure,
            text,
            "≤ 1×",
            0.0,
            1.0,
            "freezes",
            "q100",
            settings=(setting,),
            scenarios=("qpr-5g",),
            den_setting="driving-loss0",
        )
        for figure, text, setting in (
            (
                "Table 3, §IV-D",
                "driving trace: Q100 has no additional freezes when the loss rises from 0 to 5 %",
                "driving-loss5",
            ),
            (
                "§IV-D",
                "driving trace, 10 % loss: no deterioration for Q100 (freezes against 0 % loss)",
                "driving-loss10",
            ),
        )
    ),
    *(
        Claim(
            figure,
            text,
            "> 1×",
            ABOVE_1,
            math.inf,
            f"quality_rank{rank}_mean",
            "qpr",
            "q0",
            (setting,),
            ("qpr-5g",),
        )
        for figure, text, setting, rank in (
            (
                "§IV-D, Fig. 13",
                "driving trace, 2 % loss: QPR delivers the highest-priority object at a higher "
                "quality than Q0 (four more segments)",
                "driving-loss2",
                1,
            ),
            (
                "§IV-D, Fig. 14",
                "driving trace, 5 % loss: the two objects in the viewport at a higher quality "
                "than Q0 (10 % more segments; no trace named: trace 2, Fig. 16's; the first)",
                "driving-loss5",
                1,
            ),
            (
                "§IV-D, Fig. 14",
                "driving trace, 5 % loss: the two objects in the viewport at a higher quality "
                "than Q0 (10 % more segments; no trace named: trace 2, Fig. 16's; the second)",
                "driving-loss5",
                2,
            ),
        )
    ),
)

QPR = Paper(
    "qpr",
    "QPR",
    "qpr",
    ("qpr-5g", "qpr-readings", "qpr-fec", "qpr-h2", "qpr-quick", "qpr-paths"),
    (
        *_per_reading(
            QPR_READINGS,
            ("§IV-D, Fig. 13 (trace 2)", "1.5×", "driving-loss2"),
            "driving trace, 2 % loss: QPR throughput 50 % above Q0",
            (1.5, 1.5),
            "throughput_mean_mbps",
            "qpr",
        ),
        *_per_reading(
            QPR_READINGS,
            ("§IV-D, Fig. 14b", "1.46×", "driving-loss5"),
            "driving trace, 5 % loss: QPR throughput 46 % above Q0",
            (1.46, 1.46),
            "throughput_mean_mbps",
            "qpr",
        ),
        *_per_reading(
            QPR_READINGS,
            ("§IV-D, Fig. 14a", "> 1×", "walking-loss5"),
            "walking trace, 5 % loss: QPR throughput above Q0",
            (ABOVE_1, math.inf),
            "throughput_mean_mbps",
            "qpr",
        ),
        *_per_reading(
            QPR_READINGS,
            ("§IV-D, Fig. 15", "2.25×", "driving-loss5"),
            "driving trace, 5 % loss: Q100 throughput 125 % above Q0",
            (2.25, 2.25),
            "throughput_mean_mbps",
            "q100",
        ),
        *_per_reading(
            QPR_READINGS,
            ("Table 3", "0.75×", "driving-loss5"),
            "driving trace, 5 % loss: QPR freezes ÷ Q0's (9 ÷ 12)",
            (0.75, 0.75),
            "freezes",
            "qpr",
        ),
        *_per_reading(
            QPR_READINGS,
            ("Table 3, §IV-D", "0.67×", "driving-loss5"),
            "driving trace, 5 % loss: Q100 33 % fewer freezes than Q0 (8 ÷ 12)",
            (2 / 3, 2 / 3),
            "freezes",
            "q100",
        ),
        *_per_reading(
            QPR_READINGS,
            ("Table 3, §IV-D", "0.55×", "driving-loss5"),
            "driving trace, 5 % loss: Q100 total freeze duration ÷ Q0's (1.8 ÷ 3.3 s, "
            '"50 % less")',
            (1.8 / 3.3, 1.8 / 3.3),
            "freeze_total_s",
            "q100",
        ),
        *_per_reading(
            QPR_READINGS[:1],
            ("§IV-D, Fig. 13", "> 1×", "driving-loss0"),
            "driving trace, 0 % loss: QPR throughput above Q0",
            (ABOVE_1, math.inf),
            "throughput_mean_mbps",
            "qpr",
        ),
        *_per_reading(
            (("", "HTTP/2 over TCP", "qpr-h2"),),
            ("§IV-D, Fig. 13", "< 1×", "driving-loss2"),
            "driving trace, 2 % loss: HTTP/2 throughput ÷ Q0's (HTTP/2 falls 50× "
            "from 0 to 2 %, below reliable QUIC)",
            (0.0, BELOW_1),
            "throughput_mean_mbps",
            "h2",
        ),
        *_per_reading(
            QPR_FEC_READINGS,
            ("§I, §IV-E, Fig. 17", "> 1.2×", "driving-loss5"),
            "driving trace, 5 % loss: QPR(F), with its FEC overhead, more than 20 % above Q0",
            (1.2, math.inf),
            "throughput_mean_mbps",
            "qpr",
        ),
        *_per_reading(
            QPR_FEC_READINGS,
            ("§IV-E, Fig. 17", "1.2×", "driving-loss5"),
            "driving trace, 5 % loss: Q100(F) almost 20 % above QPR(F)",
            (1.2, 1.2),
            "throughput_mean_mbps",
            "q100",
            "qpr",
        ),
        *_per_reading(
            QPR_FEC_READINGS,
            ("§IV-E", "< 0.1 %", "driving-loss5"),
            "driving trace, 5 % loss: with FEC the unreliable objects decode with "
            "probability > 99.9 % (objects incomplete, % of all)",
            (0.0, 0.1),
            "objects_incomplete_pct",
            "qpr",
            "",
        ),
        *QPR_MORE,
    ),  # fmt: skip
    QPR_NOTES,
    why=what_the_player_got,
    readings=tuple(label for _, label, _ in QPR_READINGS),
)

# [RoQ]'s comparisons between two of its configurations, each a ratio of two SSIMs the
# paper reports (PAPER_SSIM, at 50 ms): (section, text, numerator, denominator)
ROQ_PAIRS: tuple[tuple[str, str, str, str], ...] = (
    ("§6.3", "SCReAM over QUIC against SCReAM over UDP (the paper: QUIC \"even\" higher)",
     "scream", "udp-scream"),
    ("§6.4", "SCReAM with QUIC's NewReno against SCReAM alone (both controllers back off)",
     "scream-newreno", "scream"),
    ("§6.1", "trivial rate control without congestion control: a competing stream against none",
     "trivial+stream", "trivial"),
    ("§6.2", "trivial rate control with NewReno: a competing stream against none",
     "trivial-newreno+stream", "trivial-newreno"),
)  # fmt: skip

# [RoQ]'s statements about the controllers' target bitrate (Figs. 4-6, clip-independent):
# (section, text, scheme, paper as printed, lo, hi) of target_mean_kbps at 50 ms. The trivial
# controller's levels are 256, 512, 768, 1024 and 1280 kbit/s; "uses the highest level" is
# read as a mean above the midpoint of the top two (1152), "stays at the lowest level most
# of the time" as one below the midpoint of the bottom two (384). SCReAM's "drops to zero" is
# read as a mean below 150: its floor (min_kbps in roq-rfc8867.yaml) is 100, so zero is out
# of its range, and a mean within half the floor of it means the floor most of the run.
ROQ_TARGETS: tuple[tuple[str, str, str, str, float, float], ...] = (
    ("§6.1", "trivial rate control without congestion control sees an almost empty RTP queue "
     "and uses the highest level, 1280 kbit/s (read as a mean target > 1152)",
     "trivial", "1280", 1152.0, 1280.0),
    ("§6.1", "the same with a competing stream: it behaves very similarly (read as a mean "
     "target > 1152)", "trivial+stream", "1280", 1152.0, 1280.0),
    ("§6.2", "trivial rate control with NewReno and a competing stream: the target stays at "
     "the lowest level, 256 kbit/s, most of the time (read as a mean target < 384)",
     "trivial-newreno+stream", "256", 256.0, 384.0),
    ("§6.3", "SCReAM with a competing stream: the stream takes the larger share and SCReAM's "
     "target drops to zero almost immediately (read as a mean target < 150 kbit/s; SCReAM's "
     "floor here is 100, an assumption)", "scream+stream", "≈ 0", 0.0, 150.0),
    ("§6.4", "SCReAM with NewReno and a competing stream: as without NewReno, the target drops "
     "to zero very fast (read as a mean target < 150)", "scream-newreno+stream", "≈ 0", 0.0,
     150.0),
)  # fmt: skip

# [RoQ §6.5, Fig. 7]: SCReAM with feedback inferred from QUIC against SCReAM with RTCP
# feedback, per one-way delay: "The two lower link delays lead to SSIM values equal or even
# higher than in the experiment using RTCP feedback. The two larger delays lead to slightly
# lower SSIM values": (setting, paper as printed, lo, hi) of SSIM scream-quicfb ÷ scream
ROQ_FEEDBACK: tuple[tuple[str, str, float, float], ...] = (
    ("d1", "≥ 1×", 1.0, math.inf),
    ("d50", "≥ 1×", 1.0, math.inf),
    ("d150", "< 1×", 0.0, BELOW_1),
    ("d300", "< 1×", 0.0, BELOW_1),
)

ROQ_NOTES: tuple[str, ...] = (
    "## What an SSIM level depends on",
    "",
    "The paper's clip is unnamed, and a mean SSIM is the clip's quality at the rate the "
    "controller chose, pulled down by the frames the receiver could not decode. priolab's "
    "scenarios use `photo-pans` (natural content: pans over photographs; its SSIM from 100 to "
    "2000 kbit/s is measured by `python -m priolab.workloads.roq.span`, "
    "priolab/workloads/roq/README.md), so a level is comparable with the paper's only as far "
    "as the two clips agree. Each verdict's reason therefore splits priolab's SSIM into the "
    "decoded pictures' quality and what frozen pictures cost, with the controller's target "
    "and sent rate, the RTP losses and the latency: the part of the mechanism the clip does "
    "not decide. The ratio claims compare two configurations on one clip, which cancels most "
    "of the clip's part; the target claims test the controllers without it.",
    "",
    "## The trivial controller on the two sites",
    "",
    "Where a configuration ran on the sim and on the Mininet site, each site has its own row. "
    "The trivial controller decides every 200 ms from the RTP queue's length at that instant, "
    "on its own clock, half a frame interval off the frame clock (an assumption: the paper "
    "names neither interval nor phase; a real sender's timer and frame clock are "
    "independent). Before it had its own clock, every decision on the sim site fell on the "
    "instant a frame entered the queue, which then looked full, and the controller wandered "
    "between levels where on Mininet it sits at the top: the agreement page's `agree-roq` "
    "point caught that (sim ÷ Mininet SSIM 1.72) and checks the fix; "
    "[the investigation](../investigations/2026-11-27-roq-natural-clip-verdicts.md) has both. "
    "Every sim row of a trivial configuration comes from runs made with the fix; the Mininet "
    "rows of `trivial` and `trivial+stream` were made before it, and the agreement point, "
    "run again on Mininet with it, shows it leaves the real stack's controller as it was.",
    "",
    "## Runs that repeat one result",
    "",
    "The RFC 8867 link has no random loss, and over UDP nothing else draws on a run's seed "
    "(over QUIC quinn's does), so on the sim site the ten runs of `udp-scream` are one result "
    'ten times: n says "all alike" and the CI has no width. The real stack\'s spread for '
    "SCReAM over UDP is the agreement page's `agree-roq` point (Mininet, 5 runs).",
)

ROQ = Paper(
    "roq",
    "RoQ",
    "roq",
    ("roq-rfc8867", "roq-rfc8867-d50", "roq-quick", "roq-gcc"),
    (
        *(
            Claim(
                "§6",
                f"{scheme} at {setting}: mean SSIM",
                f"{v:.2f}",
                v,
                v,
                "ssim_mean",
                scheme,
                "",
                (setting,),
            )
            for (scheme, setting), v in PAPER_SSIM.items()
        ),
        *(
            Claim(
                section,
                f"{text}: SSIM {num} ÷ {den} at d50",
                f"{PAPER_SSIM[(num, 'd50')]:.2f} ÷ {PAPER_SSIM[(den, 'd50')]:.2f} = "
                f"{PAPER_SSIM[(num, 'd50')] / PAPER_SSIM[(den, 'd50')]:.3f}",
                PAPER_SSIM[(num, "d50")] / PAPER_SSIM[(den, "d50")],
                PAPER_SSIM[(num, "d50")] / PAPER_SSIM[(den, "d50")],
                "ssim_mean",
                num,
                den,
                ("d50",),
            )
            for section, text, num, den in ROQ_PAIRS
        ),
        *(
            Claim(section, text, paper, lo, hi, "target_mean_kbps", scheme, "", ("d50",))
            for section, text, scheme, paper, lo, hi in ROQ_TARGETS
        ),
        *(
            Claim(
                "§6.5, Fig. 7",
                f"SCReAM with feedback inferred from QUIC against RTCP feedback at {setting}: "
                "SSIM scream-quicfb ÷ scream",
                paper,
                lo,
                hi,
                "ssim_mean",
                "scream-quicfb",
                "scream",
                (setting,),
            )
            for setting, paper, lo, hi in ROQ_FEEDBACK
        ),
        Claim(
            "§6.3, Fig. 5",
            "SCReAM's target over QUIC slightly below its target over UDP (QUIC's larger "
            "header overhead): target scream ÷ udp-scream at d50",
            "< 1×",
            0.0,
            BELOW_1,
            "target_mean_kbps",
            "scream",
            "udp-scream",
            ("d50",),
        ),
    ),
    ROQ_NOTES,
    why=what_the_receiver_got,
)

MOQ_RATES = ("2.7M", "2.85M", "3M")  # [MoQ]'s three constraints (scenarios/moq-sports.yaml)
MOQ_I_BUDGET_MS = 700.0  # [MoQ Fig. 6]: "if the latency budget is 700 ms or more"

MOQ = Paper(
    "moq",
    "MoQ",
    "moq",
    ("moq-sports", "moq-overhead"),
    (
        Claim(
            "Experimental Setup",
            "the video's bitrate with the associated overheads (here: MoQ, QUIC, UDP, IPv4, "
            "on an uncongested link) was approximately 2.7 Mbit/s",
            "≈ 2.7 (± 3 %)",
            2.7 * 0.97,
            2.7 * 1.03,
            "clip_ip_mbps",
            "ft",
            settings=("x264-2.7-ip",),
            judge=moq_claims.within(2.7 * 0.97, 2.7 * 1.03, "clip_ip_mbps", "Mbit/s"),
            scenarios=("moq-overhead",),
        ),
        *(
            Claim(
                "Fig. 6",
                f"at {rate[:-1]} Mbit/s, with a latency budget of 700 ms or more every I frame is "
                "displayed on time (FT)",
                "every I frame ≤ 700 ms",
                0.0,
                MOQ_I_BUDGET_MS,
                "i_all_on_time_budget_ms",
                "ft",
                settings=(rate,),
                judge=moq_claims.all_i_on_time(MOQ_I_BUDGET_MS),
                scenarios=("moq-sports",),
            )
            for rate in MOQ_RATES
        ),
        *(
            Claim(
                "Fig. 10",
                f"at {rate[:-1]} Mbit/s, prioritisation by frame type displays more frames on time "
                "than FEFS under the same constraint (OTDR at a 700 ms budget)",
                "FT > FEFS",
                1.0,
                math.inf,
                "otdr_700ms",
                "ft",
                "fefs",
                settings=(rate,),
                judge=moq_claims.scheme_gain("otdr_700ms"),
                scenarios=("moq-sports",),
            )
            for rate in MOQ_RATES
        ),
        *(
            Claim(
                "Figs. 6-9",
                f"at {rate[:-1]} Mbit/s (FT), the latency variation is smallest for the I frames "
                "and largest for the B frames",
                "I < P < B",
                0.0,
                math.inf,
                "latency_B_p95_ms",
                "ft",
                settings=(rate,),
                judge=moq_claims.spread_order,
                scenarios=("moq-sports",),
            )
            for rate in MOQ_RATES
        ),
        *(
            Claim(
                f"Fig. {fig}",
                f"at {rate[:-1]} Mbit/s (FT), at a 700 ms budget {text} (on-time share)",
                paper,
                0.0,
                hi,
                f"otdr_{kind}_700ms",
                "ft",
                settings=(rate,),
                judge=standard(
                    0.0, hi, f"otdr_{kind}_700ms", False, paper, moq_claims.waited(kind)
                ),
                scenarios=("moq-sports",),
            )
            for fig, kind, text, paper, hi in (
                (7, "P", "some P frames are not displayed on time", "< 1", BELOW_1),
                (8, "B", "most B frames are not displayed on time", "< 0.5", 0.5),
            )
            for rate in MOQ_RATES
        ),
    ),
)

PAPERS: tuple[Paper, ...] = (RISE, DTP, QPR, ROQ, MOQ)
