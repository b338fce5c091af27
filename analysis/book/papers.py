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

from analysis.book.judged import Judge
from priolab.workloads.moq import claims as moq_claims
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
    # Optional: the value and the verdict from the claim's own runs (judged.py): "reproduced",
    # "not reproduced, because ..." or "differs, because ...", the reason measured. None: the
    # mean or ratio with its CI against lo..hi (results.verdict).
    judge: Judge | None = None
    scenarios: tuple[str, ...] = ()  # only these scenarios; empty: every one of the paper's


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

DTP = Paper(
    "dtp",
    "DTP",
    'Zhang et al., "To Punctuality and Beyond: Meeting Application Deadlines with DTP"',
    "001_c4c401b2cadd180f.txt",
    "dtp",
    ("dtp-bandwidth", "dtp-dynamic", "dtp-loss", "dtp-loss-small", "dtp-quick", "dtp-quick-loss"),
    (
        Claim(
            "abstract, Fig. 3",
            "DTP improves QoE (here: the deadline ratio) up to 5× over QUIC",
            "up to 5×",
            0.0,
            5.0,
            "deadline_ratio",
            "dtp",
            "quic",
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

MOQ_RATES = ("2.7M", "2.85M", "3M")  # seeds/004's three constraints (scenarios/moq-sports.yaml)
MOQ_I_BUDGET_MS = 700.0  # seeds/004 Fig. 6: "if the latency budget is 700 ms or more"

MOQ = Paper(
    "moq",
    "MoQ",
    'Gurel et al., "A Fresh Look at Live Sports Streaming with Prioritized Media-over-QUIC '
    'Transport"',
    "004_5b2a9a216f36b10d.txt",
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
    ),
)

PAPERS: tuple[Paper, ...] = (RISE, DTP, QPR, ROQ, MOQ)
