"""[MoQ] (Gurel et al., "A Fresh Look at Live Sports Streaming with Prioritized
Media-over-QUIC Transport"): its claims (Figs. 6-10 and the set-up), the condition each is
measured under and the page's notes (analysis/claims.py says what a claim is).

Primary conditions are the paper's set-up as scenarios/moq-sports.yaml reads it: a 720p25
clip, GoP 50, two B frames between references, about 2.7 Mbit/s with its overheads, over a
link shaped to 2.7, 2.85 or 3 Mbit/s with netem's default queue, two minutes, FEFS against FT,
on the sim site (`SITES`); the Mininet runs of the same cells are sensitivity rows.
"""

from __future__ import annotations

import pandas as pd

from analysis.claims import (
    GAIN,
    SAME_AS,
    Band,
    Cell,
    Claim,
    Condition,
    Paper,
    Point,
    SessionMetric,
    Unmeasured,
    above,
    claim,
)
from priolab.workloads.moq import claims as moq_claims

SIM, MININET = "sim", "mininet"
SPORTS = "moq-sports"
RATES = ("2.7M", "2.85M", "3M")  # [MoQ]'s three constraints
BUDGETS_MS = (500, 700, 1000, 2000, 3000)  # Fig. 10's axis, 0-3000 ms (analysis.py's)
WHY_SPORTS = ("[MoQ] 'Experimental Setup': a 720p25 clip, GoP 50, IBBP, ~2.7 Mbit/s with "
              "its overheads, two minutes, over a link shaped to the setting's rate with netem's "
              "default queue (scenarios/moq-sports.yaml; the clip is synthetic, an assumption "
              "in place of the paper's sports clip)")  # fmt: skip
WHY_MININET = "the other site: the Mininet runs of the same cells"


def _conditions(points: tuple[Point, ...], why: str = WHY_SPORTS) -> tuple[Condition, ...]:
    primary = Condition("primary", SIM, points, why)
    return primary, primary.but("sensitivity", WHY_MININET, site=MININET)


def per_rate(num: str, den: str = "") -> tuple[Point, ...]:
    return tuple(Point(Cell(SPORTS, r, num), Cell(SPORTS, r, den) if den else None,
                       f"{r[:-1]} Mbit/s") for r in RATES)  # fmt: skip


def spread(frame_type: str) -> SessionMetric:
    """Per run, the spread of one frame type's latencies: p95 − median over the frames that
    arrived (an assumption: Figs. 6-8 plot every frame's latency; the spread between the bulk
    and the tail is read as their 'variation')."""

    def compute(runs: pd.DataFrame) -> pd.Series:
        p95, med = f"latency_{frame_type}_p95_ms", f"latency_{frame_type}_median_ms"
        if p95 not in runs or med not in runs:
            return pd.Series(float("nan"), index=runs.index)
        return runs[p95].astype(float) - runs[med].astype(float)

    return SessionMetric("lower", None, compute=compute, unit="ms")


OTDR_GAIN_WHY = "FT displays more frames on time than FEFS at the same budget"
CLAIMS: tuple[Claim, ...] = (
    claim("setup-clip-2-7", "Experimental Setup", "the video's bitrate with "
          "the associated overheads (here: MoQ, QUIC, UDP, IPv4, on an uncongested link) was "
          "approximately 2.7 Mbit/s", "≈ 2.7 Mbit/s", "clip_ip_mbps", "mean",
          Band(2.7 * 0.97, 2.7 * 1.03, "'approximately 2.7 Mbps': ±3 %, half the step between "
               "the paper's two lowest rates (2.7 and 2.85 Mbit/s)"),
          _conditions((Point(Cell("moq-overhead", "x264-2.7-ip", "ft")),),
                      "[MoQ]'s clip on a link far above its rate "
                      "(scenarios/moq-overhead.yaml), so that what arrives is the clip and the "
                      "stack's overheads")),
    claim("fig6-i-on-time-700", "Fig. 6", "with a latency budget of 700 ms or more every I frame "
          "is displayed on time (FT; the smallest budget with every I frame on time, per run)",
          "≤ 700 ms", "i_all_on_time_budget_ms", "mean",
          Band(0.0, 700.0, "the paper's budget, 700 ms: a run in which an I frame never arrived "
               "counts as never on time"), _conditions(per_rate("ft")), over="each"),
    *(claim(f"fig10-ft-above-fefs-{b}ms", "Fig. 10, concluding remarks", "prioritisation by "
            f"frame type displays more frames on time than FEFS under the same constraint "
            f"('always provides higher OTDRs'; OTDR at a {b} ms budget, FT ÷ FEFS)", "FT > FEFS",
            f"otdr_{b}ms", "ratio", GAIN, _conditions(per_rate("ft", "fefs")), "gain", "each")
      for b in BUDGETS_MS),
    *(claim(f"figs6-9-spread-{a.lower()}-{b.lower()}", "Figs. 6-9", "FT: the latency variation "
            f"is smallest for the I frames and largest for the B frames (here: {b} frames' "
            f"spread ÷ {a} frames', p95 − median)", "> 1×", f"latency_spread_{b}_ms", "ratio",
            GAIN, _conditions(tuple(Point(Cell(SPORTS, r, "ft"), Cell(SPORTS, r, "ft"),
                                          f"{r[:-1]} Mbit/s") for r in RATES)),
            "gain", "each", den_metric=f"latency_spread_{a}_ms")
      for a, b in (("I", "P"), ("P", "B"))),
    *(claim(f"fig{fig}-{kind.lower()}-late-700", f"Fig. {fig}", f"FT, at a 700 ms budget {text} "
            "(on-time share)", paper, f"otdr_{kind}_700ms", "mean", band,
            _conditions(per_rate("ft")), over="each")
      for fig, kind, text, paper, band in (
          (7, "P", "some P frames are not displayed on time", "< 1",
           Band(0.0, 0.999, "'some ... not on time': an on-time share below 1, at least one "
                "late P frame in a thousand (a two-minute run has about 960)")),
          (8, "B", "most B frames are not displayed on time", "< 0.5",
           Band(0.0, 0.5, "'most B-frames will not be displayed on time': below half")),
      )),
    *(claim(f"figs6-8-{kind.lower()}-spread-same", f"Figs. {fig}", f"FT: the latency variation "
            f"of the {kind} frames does not change between 2.7 and 3 Mbit/s (spread at 2.7 ÷ "
            "at 3)", "1×", f"latency_spread_{kind}_ms", "ratio", SAME_AS,
            _conditions((Point(Cell(SPORTS, "2.7M", "ft"), Cell(SPORTS, "3M", "ft")),)))
      for fig, kind in (("6", "I"), ("7", "P"))),
    claim("fig8-b-spread-grows", "Fig. 8", "FT: the latency variation of the B frames increases "
          "substantially when the bandwidth is constrained more (spread at 2.7 ÷ at 3 Mbit/s)",
          "> 1×", "latency_spread_B_ms", "ratio",
          above(1.1, "'increases substantially': beyond the same-as margin's 1.1"),
          _conditions((Point(Cell(SPORTS, "2.7M", "ft"), Cell(SPORTS, "3M", "ft")),)), "gain"),
)  # fmt: skip

METRICS = {
    "clip_ip_mbps": SessionMetric("higher", None, unit="Mbit/s"),
    "i_all_on_time_budget_ms": SessionMetric("lower", float("inf"), nan_is_worst=True, unit="ms"),
    **{f"otdr_{b}ms": SessionMetric("higher", 0.0) for b in BUDGETS_MS},
    "otdr_P_700ms": SessionMetric("higher", 0.0),
    "otdr_B_700ms": SessionMetric("higher", 0.0),
    **{f"latency_spread_{t}_ms": spread(t) for t in ("I", "P", "B")},
}
"""A session that died displayed nothing more on time (its OTDR counts as 0) and an I frame
it never got was never on time (an infinite budget); the spreads have no bound and take the
worst value their cell measured."""

SITES = (
    "Every primary condition on the **sim** site: MoQ's agreement points "
    "(scenarios/agreement/moq.yaml: 2.7 and 2.85 Mbit/s with a 30-packet queue, and 2.7 Mbit/s "
    "with moq-sports.yaml's 1000-packet queue, FEFS and FT) put sim and Mininet within a few "
    "per cent of each other (priolab/README.md, 'How far sim and the real stack agree'), and "
    "moq-sports.yaml's cells are that link at the paper's three rates."
)

NOTES = (
    "## How the paper's statements are read",
    "",
    "- A frame's *variation* (Figs. 6-9) is read as the spread of its type's latencies, p95 "
    "minus the median, per run: the figures plot every frame's latency, and the spread "
    "between the bulk and the tail is what they show growing.",
    "- Fig. 10's statement, 'prioritization always provides higher OTDRs', is tested at five "
    "budgets across the figure's axis (500, 700, 1000, 2000 and 3000 ms), at each rate.",
    "- OTDR counts every frame released, whether it arrived or not: a run that stops "
    "delivering cannot look good.",
)

UNMEASURED = (
    Unmeasured("Figs. 2-4, 9", "the illustrations of FEFS without and with congestion and of "
               "FT", "they illustrate the schemes; they state no measured value."),
    Unmeasured("Concluding remarks", "the same OTDR at a lower latency budget with a better "
               "prioritisation scheme", "this restates Fig. 10's curves, which the claims at "
               "five budgets test point by point."),
)  # fmt: skip

PAPER = Paper(
    key="moq",
    short="MoQ",
    kind="moq",
    scenarios=(SPORTS, "moq-overhead"),
    claims=CLAIMS,
    metrics=METRICS,
    sites=SITES,
    notes=NOTES,
    unmeasured=UNMEASURED,
    why=moq_claims.waited("I"),
)
