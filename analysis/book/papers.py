"""The five papers priolab reproduces, the scenarios that measure each, and the claims that a
results page sets beside priolab's numbers.

Which paper is which: ../shared/seeds/README.md. A claim is either a ratio of two schemes'
means of one metric (`num` ÷ `den`) or, with `den` empty, the mean of one scheme. Its value
comes from the scenarios' runs.csv (valid runs only) with a 95 % percentile bootstrap CI, as
every table of analysis/ gives it. RISE's claims live in priolab/workloads/rise/reproduction.py
(CLAIMS, with the regime each ran in); the page for RISE embeds that report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

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
    scenarios: tuple[str, ...] = ()  # only these scenarios; empty: every one of the paper


@dataclass(frozen=True)
class Paper:
    key: str  # the page's file name: results/<key>.md
    short: str
    title: str
    seed: str  # ../shared/seeds/<seed>
    kind: str  # workload kind
    scenarios: tuple[str, ...]  # scenario names (results/<name>/), in order of preference
    claims: tuple[Claim, ...] = field(default=())


RISE = Paper(
    "rise",
    "RISE",
    'Lin et al., "Leveraging Cross-Directional Dependency in Realtime Interactive Streaming", '
    "MMAsia 2025",
    "000_63c06fa1bc28e1db.txt",
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
        "rise-content-traces",
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
# seeds/001 Fig. 3's axis: below the 6 MB/s the blocks need ("bandwidth limited") and above
DTP_LIMITED = ("1MBps", "2MBps", "3MBps", "4MBps", "5MBps", "6MBps")
DTP_ENOUGH = ("8MBps", "10MBps")
DTP_LOSS = ("loss1", "loss5", "loss10", "loss15", "loss20")
DTP_FIG3 = ("dtp-bandwidth", "dtp-quick")

DTP = Paper(
    "dtp",
    "DTP",
    'Zhang et al., "To Punctuality and Beyond: Meeting Application Deadlines with DTP"',
    "001_c4c401b2cadd180f.txt",
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
            1.0,
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
    ),
)

QPR = Paper(
    "qpr",
    "QPR",
    'Ravuri et al., "Adaptive Partially Reliable Delivery of Immersive Media over QUIC-HTTP/3"',
    "002_d051cd817c919f31.txt",
    "qpr",
    ("qpr-5g", "qpr-quick", "qpr-paths"),
    (
        Claim(
            "§IV-D, trace 2",
            "driving trace, 5 % loss: QPR (Q50) throughput 46 % above Q0",
            "1.46×",
            1.46,
            1.46,
            "throughput_mean_mbps",
            "q50",
            "q0",
            ("driving-loss5",),
        ),
        Claim(
            "§IV-D",
            "driving trace, 5 % loss: Q100 throughput 125 % above Q0",
            "2.25×",
            2.25,
            2.25,
            "throughput_mean_mbps",
            "q100",
            "q0",
            ("driving-loss5",),
        ),
    ),
)

ROQ = Paper(
    "roq",
    "RoQ",
    '"RTP over QUIC" congestion-control study (SCReAM vs NewReno, RTCP vs QUIC feedback)',
    "003_567c33f2477ca67d.txt",
    "roq",
    ("roq-rfc8867", "roq-rfc8867-d50", "roq-quick", "roq-gcc"),
    tuple(
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
)

MOQ = Paper(
    "moq",
    "MoQ",
    'Gurel et al., "A Fresh Look at Live Sports Streaming with Prioritized Media-over-QUIC '
    'Transport"',
    "004_5b2a9a216f36b10d.txt",
    "moq",
    ("moq-sports",),
    (
        Claim(
            "Fig. 6",
            "with a latency budget of 700 ms or more, every I frame is displayed on time (FT)",
            "1.0",
            1.0,
            1.0,
            "otdr_I_700ms",
            "ft",
        ),
    ),
)

PAPERS: tuple[Paper, ...] = (RISE, DTP, QPR, ROQ, MOQ)
