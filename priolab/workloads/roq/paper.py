"""[RoQ] ("RTP over QUIC" congestion-control study): its claims (§6, Figs. 4-7), the
condition each is measured under and the page's notes (analysis/claims.py says what a claim
is).

Primary conditions: RFC 8867's link as §5.2 gives it (scenarios/roq-rfc8867-testsrc.yaml:
1 → 0.5 → 1 Mbit/s, a 400 ms TBF queue, the one-way delay of the claim), on the clip priolab
chose before any RoQ result (testsrc2-noise; the paper's clip is unnamed). The photo-pans clip
of scenarios/roq-rfc8867.yaml was chosen because its SSIM range covers the paper's values, so
its rows are exploratory.
"""

from __future__ import annotations

from analysis.claims import (
    LOSS,
    Band,
    Cell,
    Claim,
    Condition,
    Paper,
    Point,
    SessionMetric,
    Unmeasured,
    above,
    around_ratio,
    claim,
)
from priolab.workloads.roq.claims import what_the_receiver_got
from priolab.workloads.roq.figures import PAPER_SSIM

SIM, MININET = "sim", "mininet"
PRIMARY, PHOTOS = "roq-rfc8867-testsrc", "roq-rfc8867"
ON_SIM = frozenset({"scream", "udp-scream", "trivial"})
"""The configurations the agreement point covers (scenarios/agreement/roq.yaml): their
primary conditions run on the sim site (`SITES`)."""

WHY_PRIMARY = ("[RoQ §5.2]: RFC 8867 test case 1's link, 1 Mbit/s with 500 kbit/s from "
               "60 to 90 s, a 400 ms (50 KB) TBF queue on both interfaces, the claim's one-way "
               "delay; the clip priolab chose before any RoQ result, testsrc2-noise (the "
               "paper's is unnamed): scenarios/roq-rfc8867-testsrc.yaml")  # fmt: skip
WHY_PHOTOS = ("the photo-pans clip (scenarios/roq-rfc8867.yaml), chosen because its SSIM over "
              "100-2000 kbit/s spans the paper's 0.69-0.87: a condition chosen for the paper's "
              "numbers; on the sim site, where its matrix ran")  # fmt: skip
WHY_OTHER_SITE = "the other site: its runs of the same cells"
SSIM_SAME = Band(0.98, 1.02, "SSIM's no-effect margin: ±2 % of a score near 0.85, less than "
                 "the paper's own 'slightly lower' steps (0.87 → 0.85 → 0.83)")  # fmt: skip


def site_of(*schemes: str) -> str:
    return SIM if set(schemes) <= ON_SIM else MININET


def conditions(points: tuple[Point, ...]) -> tuple[Condition, ...]:
    """The primary condition on the testsrc2-noise clip, its other site, and the photo-pans
    clip's rows (exploratory)."""
    schemes = [c.scheme for p in points for c in (p.num, p.den) if c is not None]
    site = site_of(*schemes)
    primary = Condition("primary", site, points, WHY_PRIMARY)
    return (
        primary,
        primary.but("sensitivity", WHY_OTHER_SITE, site=SIM if site == MININET else MININET),
        primary.but("exploratory", WHY_PHOTOS, site=SIM, scenario=PHOTOS),
    )


def at(setting: str, num: str, den: str = "", label: str = "") -> Point:
    return Point(Cell(PRIMARY, setting, num), Cell(PRIMARY, setting, den) if den else None, label)


def ssim_level(v: float) -> Band:
    return Band(v - 0.05, v + 0.05, f"the paper's {v:.2f}, read as ±0.05: the clip is unnamed "
                "and SSIM depends on it; 0.05 is under half the spread of the paper's own "
                "configurations (0.69-0.87), so the band still tells them apart")  # fmt: skip


# §6's comparisons between two configurations, each a ratio of two SSIMs the paper reports
# (at 50 ms): (section, key, text, numerator, denominator)
PAIRS = (
    ("§6.3", "scream-over-udp", "SCReAM over QUIC against SCReAM over UDP (the paper: QUIC "
     "\"even\" higher)", "scream", "udp-scream"),
    ("§6.4", "scream-newreno", "SCReAM with QUIC's NewReno against SCReAM alone (both "
     "controllers back off)", "scream-newreno", "scream"),
    ("§6.1", "trivial-stream", "trivial rate control without congestion control: a competing "
     "stream against none", "trivial+stream", "trivial"),
    ("§6.2", "trivial-newreno-stream", "trivial rate control with NewReno: a competing stream "
     "against none", "trivial-newreno+stream", "trivial-newreno"),
)  # fmt: skip

# The controllers' target bitrate (Figs. 4-6): (section, key, text, scheme, paper, lo, hi) of
# target_mean_kbps at 50 ms. The trivial controller's levels are 256-1280 kbit/s: "uses the
# highest level" is a mean above the midpoint of the top two (1152), "stays at the lowest most
# of the time" one below the midpoint of the bottom two (384). SCReAM's "drops to zero" is a
# mean below 150: its floor (min_kbps) is 100, so zero is out of its range, and a mean within
# half the floor of it means the floor most of the run.
TARGETS = (
    ("§6.1", "trivial-top", "trivial rate control without congestion control sees an almost "
     "empty RTP queue and uses the highest level, 1280 kbit/s (a mean target > 1152)",
     "trivial", "1280", 1152.0, 1280.0),
    ("§6.1", "trivial-stream-top", "the same with a competing stream: it behaves very "
     "similarly (a mean target > 1152)", "trivial+stream", "1280", 1152.0, 1280.0),
    ("§6.2", "trivial-newreno-stream-bottom", "trivial rate control with NewReno and a "
     "competing stream: the target stays at the lowest level, 256 kbit/s, most of the time "
     "(a mean target < 384)", "trivial-newreno+stream", "256", 256.0, 384.0),
    ("§6.3", "scream-stream-zero", "SCReAM with a competing stream: the stream takes the larger "
     "share and SCReAM's target drops to zero almost immediately (a mean target < 150 kbit/s; "
     "SCReAM's floor here is 100, an assumption)", "scream+stream", "≈ 0", 0.0, 150.0),
    ("§6.4", "scream-newreno-stream-zero", "SCReAM with NewReno and a competing stream: as "
     "without NewReno, the target drops to zero very fast (a mean target < 150)",
     "scream-newreno+stream", "≈ 0", 0.0, 150.0),
)  # fmt: skip
TARGET_WHY = ("the paper's wording read against the controller's range (the constant TARGETS "
              "in priolab/workloads/roq/paper.py says how)")  # fmt: skip

CLAIMS: tuple[Claim, ...] = (
    *(claim(f"ssim-{scheme.replace('+', '-')}-{setting}", "§6",
            f"{scheme} at {setting[1:]} ms one way: mean SSIM", f"{v:.2f}", "ssim_mean",
            "mean", ssim_level(v), conditions((at(setting, scheme),)))
      for (scheme, setting), v in PAPER_SSIM.items()),
    *(claim(f"pair-{key}", section, f"{text}: SSIM {num} ÷ {den} at 50 ms",
            f"{PAPER_SSIM[(num, 'd50')]:.2f} ÷ {PAPER_SSIM[(den, 'd50')]:.2f}", "ssim_mean",
            "ratio", around_ratio(PAPER_SSIM[(num, "d50")] / PAPER_SSIM[(den, "d50")]),
            conditions((at("d50", num, den),)),
            "gain" if PAPER_SSIM[(num, "d50")] > PAPER_SSIM[(den, "d50")] else "loss",
            same=SSIM_SAME)
      for section, key, text, num, den in PAIRS),
    *(claim(f"target-{key}", section, text, paper, "target_mean_kbps", "mean",
            Band(lo, hi, TARGET_WHY), conditions((at("d50", scheme),)))
      for section, key, text, scheme, paper, lo, hi in TARGETS),
    *(claim(f"fig7-quicfb-{setting}", "§6.5, Fig. 7", f"SCReAM with feedback inferred from "
            f"QUIC against RTCP feedback at {setting[1:]} ms: SSIM scream-quicfb ÷ scream "
            f"({'equal or even higher' if low else 'slightly lower'})",
            "≥ 1×" if low else "< 1×", "ssim_mean", "ratio",
            above(0.98, "'equal or even higher': not below the SSIM margin's 0.98") if low else
            Band(0.9, 0.98, "'slightly lower': below the SSIM margin's 0.98, by less than 10 %"),
            conditions((at(setting, "scream-quicfb", "scream"),)), "none" if low else "loss",
            same=SSIM_SAME)
      for setting, low in (("d1", True), ("d50", True), ("d150", False), ("d300", False))),
    claim("target-scream-below-udp", "§6.3, Fig. 5", "SCReAM's target over QUIC slightly below "
          "its target over UDP (QUIC's larger header overhead): target scream ÷ udp-scream at "
          "50 ms", "< 1×", "target_mean_kbps", "ratio", LOSS,
          conditions((at("d50", "scream", "udp-scream"),)), "loss"),
    claim("fig4-alternates", "§6.2, Fig. 4", "trivial rate control with NewReno: the bitrate "
          "alternates between the highest and the lowest level (share of the time at either)",
          "most of the time", "target_top_bottom_pct", "mean",
          Band(50.0, 100.0, "'alternates between the highest and lowest level': read as "
               "more than half the time at one of the two"),
          conditions((at("d50", "trivial-newreno"),))),
    claim("fig4-very-fast", "§6.2, Fig. 4", "trivial rate control with NewReno: the bitrate "
          "alternates very fast (level changes per second)", "very fast", "target_changes_per_s",
          "mean", Band(1.0, 5.0, "'very fast': read as at least one level change per second; "
                       "the controller decides every 200 ms, so at most 5"),
          conditions((at("d50", "trivial-newreno"),))),
    claim("fig5-dip-drops", "§6.3, Fig. 5", "SCReAM alone, over QUIC and over UDP: when the link "
          "capacity reduces, the target first drops to almost zero (its lowest in the dip)",
          "≈ 0", "target_min_dip_kbps", "mean",
          Band(0.0, 150.0, "'almost zero': below 150 kbit/s, as the target claims read it"),
          conditions((at("d50", "scream", label="QUIC"), at("d50", "udp-scream", label="UDP"))),
          over="each"),
    claim("fig5-close-to-capacity", "§6.3, Fig. 5", "SCReAM alone, over QUIC and over UDP: RTP "
          "throughput comes close to the link's 1 Mbit/s after the initial ramp-up (the sent "
          "rate over the second half of the time before the dip)", "≈ 1000 kbit/s",
          "send_rate_pre_dip_kbps", "mean",
          Band(800.0, 1000.0, "'close to the maximum bandwidth of 1 Mbit/s': within 20 % "
               "below it"),
          conditions((at("d50", "scream", label="QUIC"), at("d50", "udp-scream", label="UDP"))),
          over="each"),
    claim("fig6-recovery-late", "§6.4, Fig. 6", "SCReAM with NewReno: after the link capacity "
          "recovers, the ramp up happens much later than after the initial startup, if at all "
          "(time to recover after the dip ÷ the ramp-up time at the start)", "> 1×",
          "recovery_s", "ratio", above(1.0, "'much later': the whole CI above 1 (the paper "
                                       "gives no size)"),
          conditions((at("d50", "scream-newreno", "scream-newreno"),)), "gain",
          den_metric="ramp_up_s"),
    claim("fig7-quicfb-slow-ramp", "§6.5, Fig. 7", "feedback inferred from QUIC: the ramp-up "
          "takes a very long time in some cases (ramp-up time scream-quicfb ÷ scream, the "
          "largest over the four delays)", "> 1×", "ramp_up_s", "ratio",
          above(1.0, "'a very long time ... in some cases': the largest ratio's whole CI above "
                "1"),
          conditions(tuple(at(d, "scream-quicfb", "scream", f"{d[1:]} ms")
                           for d in ("d1", "d50", "d150", "d300"))), "gain", "max"),
)  # fmt: skip

METRICS = {
    "ssim_mean": SessionMetric("higher", 0.0),
    "target_mean_kbps": SessionMetric("higher", None, unit="kbit/s"),
    "target_top_bottom_pct": SessionMetric("higher", None, unit="%"),
    "target_changes_per_s": SessionMetric("higher", None),
    "target_min_dip_kbps": SessionMetric("higher", None, unit="kbit/s"),
    "send_rate_pre_dip_kbps": SessionMetric("higher", 0.0, unit="kbit/s"),
    "ramp_up_s": SessionMetric("lower", None, unit="s"),
    "recovery_s": SessionMetric("lower", None, unit="s"),
}
"""A session that died shows nothing from then on: SSIM and the sent rate count at 0; the
other metrics (targets, times) have no bound and take the worst value their cell measured."""

SITES = (
    "On the **sim** site where the agreement point covers the configuration: "
    "scenarios/agreement/roq.yaml runs SCReAM over QUIC (RTCP feedback, no NewReno), SCReAM "
    "over UDP and the trivial controller without congestion control at 50 ms on RFC 8867's "
    "link, and sim agrees with Mininet within a few per cent for each "
    "([the investigation](../investigations/2026-11-27-roq-natural-clip-verdicts.md); the "
    "point runs photo-pans, the primary conditions testsrc2-noise: the same link and "
    "controllers, another clip). On **Mininet** for every configuration with QUIC's NewReno, "
    "feedback inferred from QUIC or a competing stream, which no agreement point covers."
)

NOTES = (
    "## What an SSIM level depends on",
    "",
    "The paper's clip is unnamed, and a mean SSIM is the clip's quality at the rate the "
    "controller chose, pulled down by the frames the receiver could not decode. The primary "
    "conditions use testsrc2-noise, the clip priolab chose before any RoQ run; its SSIM spans a "
    "narrow range over the controllers' rates (priolab/workloads/roq/source.py), so a level is "
    "comparable with the paper's only as far as the two clips agree. photo-pans (natural "
    "content) was chosen later because its range covers the paper's values: its rows are "
    "exploratory. Each claim's section splits priolab's SSIM into the decoded pictures' "
    "quality and what frozen pictures cost, with the controller's target and sent rate, the "
    "RTP losses and the latency: the part of the mechanism the clip does not decide. The ratio "
    "claims compare two configurations on one clip, which cancels most of the clip's part; "
    "the target claims test the controllers without it.",
    "",
    "## The trivial controller on the two sites",
    "",
    "The trivial controller decides every 200 ms from the RTP queue's length at that instant, "
    "on its own clock, half a frame interval off the frame clock (an assumption: the paper "
    "names neither interval nor phase; a real sender's timer and frame clock are "
    "independent). Before it had its own clock, every decision on the sim site fell on the "
    "instant a frame entered the queue, and the controller wandered between levels where on "
    "Mininet it sits at the top: the agreement page's `agree-roq` point caught that and checks "
    "the fix; [the investigation](../investigations/2026-11-27-roq-natural-clip-verdicts.md) "
    "has both.",
    "",
    "## Runs that repeat one result",
    "",
    "The RFC 8867 link has no random loss, and over UDP nothing else draws on a run's seed "
    "(over QUIC quinn's does), so on the sim site the runs of `udp-scream` repeat one result: "
    'n says "all alike" and the CI has no width. The real stack\'s spread for SCReAM over UDP '
    "is the agreement page's `agree-roq` point (Mininet).",
)

UNMEASURED = (
    Unmeasured("§6.6", "SCReAM and NewReno without RTCP: 'the results are thus very "
               "unreliable', in some cases good utilisation, in others a target near zero",
               "the paper gives no value or share of cases to compare."),
    Unmeasured("§6.5", "SCReAM reaches a better link utilisation with a shorter one-way delay",
               "a comparison across four delays with no value; the per-delay SSIM claims above "
               "carry the paper's numbers."),
)  # fmt: skip

PAPER = Paper(
    key="roq",
    short="RoQ",
    kind="roq",
    scenarios=(PRIMARY, PHOTOS, "roq-rfc8867-d50", "roq-quick", "roq-gcc"),
    claims=CLAIMS,
    metrics=METRICS,
    sites=SITES,
    notes=NOTES,
    unmeasured=UNMEASURED,
    why=what_the_receiver_got,
)
