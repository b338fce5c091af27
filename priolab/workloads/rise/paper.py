"""[RISE] (Lin et al., "Leveraging Cross-Directional Dependency in Realtime Interactive
Streaming", MMAsia 2025): its claims (Figs. 5-10, section 4), the condition each is measured
under, and the page's own sections (analysis/claims.py says what a claim is).

Every primary condition is the paper's link as [RISE setup] gives it: the Guest's uplink
shaped to 20 or 70 Mbit/s with one bandwidth-delay product of drop-tail queue, no random loss,
B = 1 MiB, on Mininet (the site rule: `SITES`). The window-limited path (0.05 % iid uplink
loss, the `-wl` scenarios and quick.yaml's FB-4K-Low-L0.05) was chosen after data: it is the
lowest loss at which a since-retired model of quinn put w/o Pri above w/ Pri
(docs/investigations/2026-11-26-rise-sim-retired.md), so its rows are exploratory. The sim
site's rows of the same cells, and quick.yaml's shorter runs of FB-4K-Low, are sensitivity
rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from analysis.claims import (
    GAIN,
    SAME_AS,
    Band,
    Cell,
    Claim,
    Condition,
    Extra,
    Over,
    Paper,
    Point,
    SessionMetric,
    Unmeasured,
    above,
    around,
    around_ratio,
    claim,
    paper_range,
)
from priolab.workloads.rise import picture
from priolab.workloads.rise.reproduction import page_sections

SIM, MININET = "sim", "mininet"
MOD = "moderate"
Place = tuple[str, str, str]  # (scenario, setting, speed)

FIG5 = {s: ("rise-transport", s, MOD) for s in ("5G-FHD-Low", "FB-4K-Low", "FB-4K-High")}
FIG6 = {(net, speed): ("rise-content", net, speed) if speed != MOD else FIG5[net]
        for net in ("5G-FHD-Low", "FB-4K-Low") for speed in ("slow", MOD, "fast")}  # fmt: skip
FIG8 = ("rise-direction", "FB-4K-Low", MOD)
FIG10 = {b: ("rise-bitrate", f"V{b}M", MOD) for b in (15, 20, 25, 30, 35, 40)}
NAMES = {"5G-FHD-Low": "5G/FHD/Low", "FB-4K-Low": "FB/4K/Low", "FB-4K-High": "FB/4K/High"}

WHY_PRIMARY = {
    "rise-transport": "[RISE §4.1-4.2], Fig. 5: the setting's uplink rate, video bitrate "
    "and frame rate ([RISE setup]), RTT 21 ms, one BDP of drop-tail queue, no random loss, "
    "B 1 MiB, moderate movement (40°/s, an assumption: the paper gives no speeds)",
    "rise-content": "[RISE §4.3], Fig. 6: the paper's link ([RISE setup]) at the slow and "
    "fast movement speeds (10 and 90°/s, assumptions: the paper gives no speeds); moderate is "
    "rise-transport.yaml's runs",
    "rise-direction": "[RISE §4.4], Figs. 8-9: FB/4K/Low on the paper's link "
    "([RISE setup]), w/o Pri, Pri-D, Pri-U and Pri",
    "rise-bitrate": "[RISE §4.4], Fig. 10: the FB link (70 Mbit/s uplink) at video "
    "bitrates 15-40 Mbit/s, 30 fps, on the paper's link ([RISE setup])",
}
WHY_SIM = ("the sim site: its runs of the same cells. Not primary: on the paper's link the "
           "agreement point `ideal` (scenarios/agreement/rise.yaml) puts sim's w/o Pri MTP tail "
           "below Mininet's (the frame-tick phase, priolab/README.md)")  # fmt: skip
WHY_WL = ("the window-limited path, 0.05 % iid uplink loss: chosen after data, as the lowest "
          "loss at which a since-retired model of quinn put w/o Pri above w/ Pri "
          "(docs/investigations/2026-11-26-rise-sim-retired.md); the paper reports no random "
          "loss")  # fmt: skip
WHY_QUICK = "quick.yaml (`make reproduce`): the same link and setting, 30 s runs, a reduction"
WL_PLACE = {("rise-direction", "FB-4K-Low"): ("rise-direction-wl", "FB-4K-Low-L0.05")}


def _points(places: Sequence[Place], num: str, den: str = "") -> tuple[Point, ...]:
    return tuple(Point(Cell(sc, st, num, sp), Cell(sc, st, den, sp) if den else None,
                       label=f"{NAMES.get(st, st)}" + (f", {sp}" if sp != MOD else ""))
                 for sc, st, sp in places)  # fmt: skip


def _conditions(places: Sequence[Place], num: str, den: str = "") -> tuple[Condition, ...]:
    """The primary condition (Mininet) on `places`, the sim site's rows of the same cells,
    the window-limited path's (exploratory) and, for FB/4K/Low, quick.yaml's."""
    why = "; ".join(dict.fromkeys(WHY_PRIMARY[sc] for sc, _, _ in places))
    primary = Condition("primary", MININET, _points(places, num, den), why)
    wl = [(*WL_PLACE.get((sc, st), (f"{sc}-wl", st)), sp) for sc, st, sp in places]
    out = [primary, primary.but("sensitivity", WHY_SIM, site=SIM),
           Condition("exploratory", MININET, _points(wl, num, den), WHY_WL)]  # fmt: skip
    if [st for _, st, _ in places] == ["FB-4K-Low"] and {num, den} <= {"nopri", "pri", ""}:
        out.append(
            Condition(
                "sensitivity", MININET, _points([("quick", "FB-4K-Low", MOD)], num, den), WHY_QUICK
            )
        )
    return tuple(out)


def gain(key: str, source: str, text: str, paper: str, metric: str, band: Band,
         places: Sequence[Place], num: str = "nopri", den: str = "pri") -> Claim:  # fmt: skip
    """A reduction by prioritisation: w/o Pri ÷ the scheme (a gain above 1)."""
    over: Over = "one" if len(places) == 1 else "each"
    return claim(key, source, text, paper, metric, "ratio", band,
                 _conditions(places, num, den), "gain", over)  # fmt: skip


def level(key: str, source: str, text: str, paper: str, metric: str, band: Band,
          places: Sequence[Place], scheme: str = "pri") -> Claim:  # fmt: skip
    """A value of one scheme's own (a mean), at each of `places`."""
    over: Over = "one" if len(places) == 1 else "each"
    return claim(key, source, text, paper, metric, "mean", band, _conditions(places, scheme),
                 over=over)  # fmt: skip


ACROSS = "the paper's range across its settings: each setting's value lies in it"
ONE_TRACKING_INTERVAL_MS = 1000 / 60  # [RISE]: tracking at 60 Hz
# 'zero median mismatch' under slow movement: any mismatch a frame can have is at least the
# movement between two tracking samples, 10°/s (the slow speed, rise-content.yaml) × 1/60 s
SLOW_STEP_DEG = 10.0 / 60.0

FIG5_CLAIMS = (
    gain(
        "fig5-5g-median",
        "Fig. 5, §4.2",
        "5G/FHD/Low: median MTP latency 2× lower w/ Pri",
        "2×",
        "mtp_median_ms",
        around_ratio(2.0),
        [FIG5["5G-FHD-Low"]],
    ),
    gain(
        "fig5-fb-low-median",
        "Fig. 5, §4.2",
        "FB/4K/Low: median MTP latency 9.4× lower w/ Pri",
        "9.4×",
        "mtp_median_ms",
        around_ratio(9.4),
        [FIG5["FB-4K-Low"]],
    ),
    claim(
        "fig5-fb-low-730ms",
        "§4.2",
        "FB/4K/Low: the 9.4× improvement is a 730 ms reduction "
        "of the median MTP latency (w/o Pri − w/ Pri)",
        "730 ms",
        "mtp_median_ms",
        "difference",
        around(730.0),
        _conditions([FIG5["FB-4K-Low"]], "nopri", "pri"),
        "gain",
        same=Band(
            -ONE_TRACKING_INTERVAL_MS,
            ONE_TRACKING_INTERVAL_MS,
            "no effect: less than one tracking interval (16.7 ms at 60 Hz), the unit "
            "the paper counts this reduction in ('45 additional position updates')",
        ),
    ),
    gain(
        "fig5-fb-high-median",
        "Fig. 5, §4.2",
        "FB/4K/High: median MTP latency 8.8× lower w/ Pri",
        "8.8×",
        "mtp_median_ms",
        around_ratio(8.8),
        [FIG5["FB-4K-High"]],
    ),
    gain(
        "fig5-p95",
        "Fig. 5, §4.2",
        "p95 MTP latency 2.3-5.7× lower across the three settings",
        "2.3-5.7×",
        "mtp_p95_ms",
        paper_range(2.3, 5.7, ACROSS),
        list(FIG5.values()),
    ),
    gain(
        "fig5-p99",
        "Fig. 5, §4.2",
        "p99 MTP latency 1.3-5.3× lower across the three settings",
        "1.3-5.3×",
        "mtp_p99_ms",
        paper_range(1.3, 5.3, ACROSS),
        list(FIG5.values()),
    ),
    gain(
        "fig5-5g-freeze",
        "Fig. 5, §4.2",
        "5G/FHD/Low: the freeze rate 82× lower w/ Pri",
        "82×",
        "freeze_rate_pct",
        around_ratio(82.0),
        [FIG5["5G-FHD-Low"]],
    ),
    gain(
        "fig5-fb-freeze",
        "Fig. 5, §4.2",
        "FB: the freeze rate more than 8× lower w/ Pri",
        "> 8×",
        "freeze_rate_pct",
        above(8.0, "'exceed 8×': the whole CI above 8"),
        [FIG5["FB-4K-Low"], FIG5["FB-4K-High"]],
    ),
    level(
        "fig5-pri-freeze-below-1",
        "Fig. 5, §4.2",
        "w/ Pri keeps the freeze rate below 1 % in every setting",
        "< 1 %",
        "freeze_rate_pct",
        Band(0.0, 1.0, "the paper's bound, 1 %"),
        list(FIG5.values()),
    ),
)

FIG6_CLAIMS = (
    level("fig6-slow-zero", "Fig. 6, §4.3", "slow movement: w/ Pri's median position mismatch "
          "is zero", "0°", "mismatch_median_deg",
          Band(0.0, SLOW_STEP_DEG, "'zero', read as below the movement between two tracking "
               "samples at the slow speed (10°/s × 1/60 s = 0.17°), the smallest non-zero "
               "mismatch a frame can show"),
          [FIG6[(n, "slow")] for n in ("5G-FHD-Low", "FB-4K-Low")]),
    gain("fig6-slow-p95", "Fig. 6, §4.3", "slow movement: p95 position mismatch 2.5-7.8× lower",
         "2.5-7.8×", "mismatch_p95_deg", paper_range(2.5, 7.8, ACROSS),
         [FIG6[(n, "slow")] for n in ("5G-FHD-Low", "FB-4K-Low")]),
    gain("fig6-slow-p99", "Fig. 6, §4.3", "slow movement: p99 position mismatch 1.8-6.4× lower",
         "1.8-6.4×", "mismatch_p99_deg", paper_range(1.8, 6.4, ACROSS),
         [FIG6[(n, "slow")] for n in ("5G-FHD-Low", "FB-4K-Low")]),
    gain("fig6-5g-median", "Fig. 6, §4.3", "5G, moderate and fast movement: median position "
         "mismatch 2.1-11× lower", "2.1-11×", "mismatch_median_deg",
         paper_range(2.1, 11.0, "the paper's range over moderate and fast movement: each "
                     "speed's value lies in it"),
         [FIG6[("5G-FHD-Low", s)] for s in (MOD, "fast")]),
    gain("fig6-fb-median", "Fig. 6, §4.3", "FB, moderate and fast movement: median position "
         "mismatch 1.5-15× lower", "1.5-15×", "mismatch_median_deg",
         paper_range(1.5, 15.0, "the paper's range over moderate and fast movement: each "
                     "speed's value lies in it"),
         [FIG6[("FB-4K-Low", s)] for s in (MOD, "fast")]),
    *(gain(f"fig6-{speed}-{q}", "Fig. 6, §4.3", f"{speed} movement: {q} position mismatch "
           f"{lo:g}-{hi:g}× lower", f"{lo:g}-{hi:g}×", f"mismatch_{q}_deg",
           paper_range(lo, hi, ACROSS), [FIG6[(n, speed)] for n in ("5G-FHD-Low", "FB-4K-Low")])
      for speed, q, lo, hi in ((MOD, "p95", 3, 7), (MOD, "p99", 2.5, 4), ("fast", "p95", 2.5, 28),
                               ("fast", "p99", 4, 18))),
)  # fmt: skip

FIG7_CLAIMS = tuple(
    claim(f"fig7-{net[:2].lower()}-{m}", "Fig. 7, §4.3", f"{NAMES[net].split('/')[0]}: w/ Pri "
          f"improves {label} by {lo}-{hi} % (slow, moderate and fast movement)",
          f"+{lo}-{hi} %", metric, "ratio",
          paper_range(1 + lo / 100, 1 + hi / 100, "the paper's range over the movement speeds "
                      "(w/ Pri ÷ w/o Pri − 1): each speed's value lies in it"),
          _conditions([FIG6[(net, s)] for s in ("slow", MOD, "fast")], "pri", "nopri"), "gain",
          "each")
    for net, m, label, metric, lo, hi in (
        ("5G-FHD-Low", "ssim", "SSIM", "ssim_mean", 12, 68),
        ("FB-4K-Low", "ssim", "SSIM", "ssim_mean", 12, 80),
        ("5G-FHD-Low", "psnr", "PSNR", "psnr_mean_db", 10, 80),
        ("FB-4K-Low", "psnr", "PSNR", "psnr_mean_db", 37, 93),
    )
)  # fmt: skip

ALMOST_NONE = Band(0.0, 1.0, "'almost no' / 'near-zero', read as below 1 % (an assumption: "
                   "the paper gives no number)")  # fmt: skip
FIG8_CLAIMS = (
    gain(
        "fig8-priu-median",
        "Fig. 8, §4.4",
        "Pri-U: median MTP latency 9× lower than w/o Pri",
        "9×",
        "mtp_median_ms",
        around_ratio(9.0),
        [FIG8],
        den="pri-u",
    ),
    gain(
        "fig8-priu-freeze",
        "Fig. 8, §4.4",
        "Pri-U: the freeze rate 32× lower than w/o Pri",
        "32×",
        "freeze_rate_pct",
        around_ratio(32.0),
        [FIG8],
        den="pri-u",
    ),
    gain(
        "fig8-prid-median",
        "Fig. 8, §4.4",
        "Pri-D: median MTP latency 2× lower than w/o Pri",
        "2×",
        "mtp_median_ms",
        around_ratio(2.0),
        [FIG8],
        den="pri-d",
    ),
    gain(
        "fig8-prid-freeze",
        "Fig. 8, §4.4",
        "Pri-D: the freeze rate 2.4× lower than w/o Pri",
        "2.4×",
        "freeze_rate_pct",
        around_ratio(2.4),
        [FIG8],
        den="pri-d",
    ),
    claim(
        "fig9-prid-host-retx",
        "Fig. 9, §4.4",
        "Pri-D: the Host's retransmission rate remains similar to the baseline's (Pri-D ÷ w/o Pri)",
        "≈ 1×",
        "retx_rate_pct_host",
        "ratio",
        SAME_AS,
        _conditions([FIG8], "pri-d", "nopri"),
    ),
    gain(
        "fig9-prid-host-keyframes",
        "Fig. 9, §4.4",
        "Pri-D: the Host encodes only half as many key frames (w/o Pri ÷ Pri-D)",
        "2×",
        "keyframe_rate_pct_host",
        around_ratio(2.0),
        [FIG8],
        den="pri-d",
    ),
    level(
        "fig9-prid-guest-retx",
        "Fig. 9, §4.4",
        "Pri-D: the Guest experiences almost no retransmissions",
        "≈ 0 %",
        "retx_rate_pct_guest",
        ALMOST_NONE,
        [FIG8],
        "pri-d",
    ),
    claim(
        "fig9-prid-guest-keyframes",
        "Fig. 9, §4.4",
        "Pri-D: the Guest shows elevated key frame rates (Pri-D ÷ w/o Pri)",
        "> 1×",
        "keyframe_rate_pct_guest",
        "ratio",
        GAIN,
        _conditions([FIG8], "pri-d", "nopri"),
        "gain",
    ),
    level(
        "fig9-priu-host-retx",
        "Fig. 9, §4.4",
        "Pri-U: the Host's retransmission rate is near zero",
        "≈ 0 %",
        "retx_rate_pct_host",
        ALMOST_NONE,
        [FIG8],
        "pri-u",
    ),
)

ABOVE_25 = [FIG10[b] for b in (30, 35, 40)]
FIG10_CLAIMS = (
    gain(
        "fig10-median",
        "Fig. 10, §4.4",
        "above 25 Mbit/s: median MTP latency 7-9× lower",
        "7-9×",
        "mtp_median_ms",
        paper_range(7.0, 9.0, ACROSS),
        ABOVE_25,
    ),
    gain(
        "fig10-p95",
        "Fig. 10, §4.4",
        "above 25 Mbit/s: p95 MTP latency 1.3-10× lower",
        "1.3-10×",
        "mtp_p95_ms",
        paper_range(1.3, 10.0, ACROSS),
        ABOVE_25,
    ),
    gain(
        "fig10-freeze",
        "Fig. 10, §4.4",
        "above 25 Mbit/s: the freeze rate 4-12× lower",
        "4-12×",
        "freeze_rate_pct",
        paper_range(4.0, 12.0, ACROSS),
        ABOVE_25,
    ),
    gain(
        "fig10-15m-p95",
        "Fig. 10, §4.4",
        "15 Mbit/s: p95 MTP latency 10× lower",
        "10×",
        "mtp_p95_ms",
        around_ratio(10.0),
        [FIG10[15]],
    ),
    level(
        "fig10-pri-median-below-103",
        "Fig. 10, §4.4",
        "every bitrate: w/ Pri keeps the median MTP latency below 103 ms",
        "< 103 ms",
        "mtp_median_ms",
        Band(0.0, 103.0, "the paper's bound, 103 ms"),
        list(FIG10.values()),
    ),
    level(
        "fig10-pri-freeze-below-2",
        "Fig. 10, §4.4",
        "every bitrate: w/ Pri keeps the freeze rate below 2 %",
        "< 2 %",
        "freeze_rate_pct",
        Band(0.0, 2.0, "the paper's bound, 2 %"),
        list(FIG10.values()),
    ),
)

CLAIMS = FIG5_CLAIMS + FIG6_CLAIMS + FIG7_CLAIMS + FIG8_CLAIMS + FIG10_CLAIMS

LATENCY = SessionMetric("lower", None, unit="ms")
METRICS = {
    "mtp_median_ms": LATENCY,
    "mtp_p95_ms": LATENCY,
    "mtp_p99_ms": LATENCY,
    "freeze_rate_pct": SessionMetric("lower", None, unit="%"),
    "mismatch_median_deg": SessionMetric("lower", None, unit="°"),
    "mismatch_p95_deg": SessionMetric("lower", None, unit="°"),
    "mismatch_p99_deg": SessionMetric("lower", None, unit="°"),
    "ssim_mean": SessionMetric("higher", 0.0),
    "psnr_mean_db": SessionMetric("higher", None, unit="dB"),
    "retx_rate_pct_host": SessionMetric("lower", 100.0, unit="%"),
    "retx_rate_pct_guest": SessionMetric("lower", 100.0, unit="%"),
    "keyframe_rate_pct_host": SessionMetric("lower", 100.0, unit="%"),
    "keyframe_rate_pct_guest": SessionMetric("lower", 100.0, unit="%"),
}
"""A session that died counts at its metric's bound where it has one (SSIM 0, a rate 100 %),
else at the worst value its cell measured (latencies, freezes, mismatch, PSNR)."""

SITES = (
    "Every primary condition on **Mininet**. The agreement point nearest to them, `ideal` "
    "(scenarios/agreement/rise.yaml: FB/4K/Low on the paper's link, no random loss), puts "
    "sim's w/o Pri MTP tail below Mininet's (the frame-tick phase: a sample that just misses "
    "the Host's tick waits a frame, which sim's exact timers hit less often, priolab/README.md, "
    "'How far sim and the real stack agree'), and 5G/FHD/Low's 20 Mbit/s uplink has no "
    "agreement point at all. The sim site's runs of the same cells are sensitivity rows."
)

NOTES = (
    "## How the paper's numbers are read",
    "",
    "- A reduction 'N× lower' is w/o Pri ÷ w/ Pri (of the scheme named), a ratio of means over "
    "runs; its band is the paper's effect (N − 1) ±20 %. A range 'a-b× across the settings' "
    "is a claim on each setting's value, in [a, b]. 'Below x' is a bound on w/ Pri's mean.",
    "- The paper's link is [RISE setup]'s: how the paper's uplink was throttled and what "
    "random loss its Internet path had are not stated, and they decide whether the Guest's "
    "sender is ever held below its offered load, the only condition under which B fills and "
    "priority has anything to reorder. The primary conditions take [RISE setup]'s defaults "
    "(a shaper with a one-BDP queue, no random loss); the mechanisms below say, per setting "
    "that ran, which regime its runs were in.",
)

UNMEASURED = (
    Unmeasured("Fig. 7, §4.3", "the SSIM and PSNR improvements diminish at higher movement "
               "speeds", "a comparison of two gains (a ratio of ratios) has no interval in "
               "priolab's claims; each speed's gain is a claim of its own above."),
    Unmeasured("§4.4", "Pri-U: the Host's key frame rate 'similar' yet 'slightly increases'",
               "the paper states both, so there is no one statement to test."),
)  # fmt: skip

PAPER = Paper(
    key="rise",
    short="RISE",
    kind="rise",
    scenarios=(
        "rise-transport",
        "rise-content",
        "rise-direction",
        "rise-bitrate",
        "quick",
        "rise-transport-wl",
        "rise-content-wl",
        "rise-direction-wl",
        "rise-bitrate-wl",
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
    ),  # fmt: skip
    claims=CLAIMS,
    metrics=METRICS,
    sites=SITES,
    notes=NOTES,
    unmeasured=UNMEASURED,
    sections=(page_sections,),
    extras=(
        Extra(
            "picture/runs.csv",
            ("ssim_mean", "psnr_mean_db"),
            f"python -m priolab.workloads.rise.picture {picture.SOURCE} "
            "results/picture/runs.csv results/rise-transport results/rise-content "
            f"--every {picture.BOOK_EVERY}",
        ),
    ),  # fmt: skip
)
