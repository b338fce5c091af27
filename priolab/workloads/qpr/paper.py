"""[QPR] (Ravuri et al., "Adaptive Partially Reliable Delivery of Immersive Media over
QUIC-HTTP/3"): its claims (§IV-D, §IV-E), the condition each is measured under and the page's
notes (analysis/claims.py says what a claim is).

Primary conditions follow the paper's text: the unreliable objects on a connection whose
window is fixed at the BDP of the trace's lowest rate (§III-C, §IV-B: scenarios/qpr-5g.yaml's
`qpr`, `q75`, `q100`), HTTP/2 over TCP from scenarios/qpr-h2.yaml, FEC from qpr-fec.yaml, on
Mininet (`SITES`). The other readings of the unreliable path are further rows: `-shared`
(quinn unmodified, one connection) a sensitivity, `-lossblind` exploratory: it was added as
"the reading under which the paper's driving-trace gains are possible", after the shared and
fixed-window readings had shown none (docs/investigations/2026-11-26-qpr-measurements.md).
"""

from __future__ import annotations

from analysis.claims import (
    GAIN,
    LOSS,
    NOT_MORE,
    Band,
    Cell,
    Claim,
    Condition,
    Paper,
    Point,
    Role,
    SessionMetric,
    Unmeasured,
    above,
    around,
    around_ratio,
    claim,
    over_settings,
)
from priolab.workloads.qpr.claims import what_the_player_got

SIM, MININET = "sim", "mininet"
TEXT, READINGS, H2, FEC = "qpr-5g", "qpr-readings", "qpr-h2", "qpr-fec"
READING_SETTINGS = ("walking-loss5", "driving-loss2", "driving-loss5")  # qpr-readings.yaml
THROUGHPUT = "throughput_mean_mbps"

WHY_TEXT = ("[QPR §IV-C/D]: the trace and Gilbert-Elliott loss of the setting, 10 ms "
            "one way, 120 s sessions; the unreliable objects on a connection whose window is "
            "fixed at the BDP of the trace's lowest rate (§III-C 'the rate defined by the "
            "congestion window (which is fixed)', §IV-B): scenarios/qpr-5g.yaml")  # fmt: skip
WHY_H2 = ("[QPR §IV-D], Figs. 12-14: HTTP/2 over TCP on the same trace and loss "
          "(scenarios/qpr-h2.yaml, Mininet: the sim site has no TCP)")  # fmt: skip
WHY_FEC = ("[QPR §IV-E], Fig. 17: QPR(F) and Q100(F), repair datagrams on the unreliable "
           "objects (22 %, the paper's Q100(F) overhead), on the paper-text path "
           "(scenarios/qpr-fec.yaml)")  # fmt: skip
WHY_SIM = ("the sim site: its runs of the same cells (not primary: no agreement point covers "
           "the paper-text path's second connection)")  # fmt: skip
WHY_SHARED = ("another reading of §III-C: the datagrams on the one connection under quinn's "
              "Cubic, what quinn does unmodified (scenarios/qpr-readings.yaml), on the sim site "
              "where its matrix ran")  # fmt: skip
WHY_LOSSBLIND = ("exploratory: a second connection under Cubic without its loss response, "
                 "added as the reading under which the paper's driving-trace gains are "
                 "possible, after the other readings had shown none "
                 "(docs/investigations/2026-11-26-qpr-measurements.md); sim site")  # fmt: skip


def _text(settings: tuple[str, ...], num: str, den: str = "", readings: bool = True
          ) -> tuple[Condition, ...]:  # fmt: skip
    """The paper-text reading on Mininet (primary), its sim rows, and where qpr-readings.yaml
    runs the setting, the shared (sensitivity) and loss-blind (exploratory) readings."""
    primary = Condition("primary", MININET, over_settings(TEXT, settings, num, den), WHY_TEXT)
    out = [primary, primary.but("sensitivity", WHY_SIM, site=SIM)]
    unreliable = num != "q0"
    if readings and unreliable and all(s in READING_SETTINGS for s in settings):
        variants: tuple[tuple[str, Role, str], ...] = (
            ("-shared", "sensitivity", WHY_SHARED), ("-lossblind", "exploratory", WHY_LOSSBLIND)
        )  # fmt: skip
        for suffix, role, why in variants:
            n, d = f"{num}{suffix}", f"{den}{suffix}" if den not in ("", "q0") else den
            out.append(Condition(role, SIM, over_settings(READINGS, settings, n, d), why))
    return tuple(out)


def _h2(settings: tuple[str, ...], num: str, den: str = "") -> tuple[Condition, ...]:
    return (Condition("primary", MININET, over_settings(H2, settings, num, den), WHY_H2),)


def _across(num: str, at: str, base: str, scenario: str = TEXT, why: str = WHY_TEXT
            ) -> tuple[Condition, ...]:  # fmt: skip
    """`num` at setting `at` ÷ the same scheme at `base` (a claim across loss levels)."""
    point = Point(Cell(scenario, at, num), Cell(scenario, base, num))
    primary = Condition("primary", MININET, (point,), why)
    if scenario == H2:  # HTTP/2 runs on Mininet only
        return (primary,)
    return primary, primary.but("sensitivity", WHY_SIM, site=SIM)


def _fec(num: str, den: str = "") -> tuple[Condition, ...]:
    """QPR(F)'s cells on the paper-text path (primary) and the loss-blind one."""

    def name(s: str, suffix: str) -> str:
        return s if s in ("", "q0") else f"{s}{suffix}-fec"

    primary = Condition("primary", MININET, over_settings(FEC, ("driving-loss5",),
                        name(num, ""), name(den, "")), WHY_FEC)  # fmt: skip
    blind = over_settings(FEC, ("driving-loss5",), name(num, "-lossblind"), name(den, "-lossblind"))
    return (primary, primary.but("sensitivity", WHY_SIM, site=SIM),
            Condition("exploratory", SIM, blind, WHY_LOSSBLIND))  # fmt: skip


MOST = Band(0.8, 1.0, "'have broken down': read as at least 8 of 10 sessions dying (the paper "
            "reports the variants as broken, from its ten iterations)")  # fmt: skip
FEW = Band(0.0, 0.2, "'recovered ... and completed the streaming session': read as at most 2 "
           "of 10 sessions dying")  # fmt: skip

CLAIMS: tuple[Claim, ...] = (
    claim(
        "fig13-driving-2-qpr",
        "§IV-D, Fig. 13 (trace 2)",
        "driving trace, 2 % loss: QPR throughput 50 % above Q0",
        "1.5×",
        THROUGHPUT,
        "ratio",
        around_ratio(1.5),
        _text(("driving-loss2",), "qpr", "q0"),
        "gain",
    ),
    claim(
        "fig14-driving-5-qpr",
        "§IV-D, Fig. 14b",
        "driving trace, 5 % loss: QPR throughput 46 % above Q0",
        "1.46×",
        THROUGHPUT,
        "ratio",
        around_ratio(1.46),
        _text(("driving-loss5",), "qpr", "q0"),
        "gain",
    ),
    claim(
        "fig14-walking-5-qpr",
        "§IV-D, Fig. 14a",
        "walking trace, 5 % loss: QPR throughput above Q0",
        "> 1×",
        THROUGHPUT,
        "ratio",
        GAIN,
        _text(("walking-loss5",), "qpr", "q0"),
        "gain",
    ),
    claim(
        "fig15-driving-5-q100",
        "§IV-D, Fig. 15",
        "driving trace, 5 % loss: Q100 throughput 125 % above Q0",
        "2.25×",
        THROUGHPUT,
        "ratio",
        around_ratio(2.25),
        _text(("driving-loss5",), "q100", "q0"),
        "gain",
    ),
    claim(
        "table3-qpr-freezes",
        "Table 3",
        "driving trace, 5 % loss: QPR (Q50) freezes ÷ Q0's (9 ÷ 12)",
        "0.75×",
        "freezes",
        "ratio",
        around_ratio(0.75),
        _text(("driving-loss5",), "qpr", "q0"),
        "loss",
    ),
    claim(
        "table3-q100-freezes",
        "Table 3, §IV-D",
        "driving trace, 5 % loss: Q100 has 33 % fewer freezes than Q0 (8 ÷ 12)",
        "0.67×",
        "freezes",
        "ratio",
        around_ratio(2 / 3),
        _text(("driving-loss5",), "q100", "q0"),
        "loss",
    ),
    claim(
        "table3-q100-tfd",
        "Table 3, §IV-D",
        "driving trace, 5 % loss: Q100's total freeze duration ÷ Q0's (1.8 ÷ 3.3 s, '50 % less')",
        "0.55×",
        "freeze_total_s",
        "ratio",
        around_ratio(1.8 / 3.3),
        _text(("driving-loss5",), "q100", "q0"),
        "loss",
    ),
    claim(
        "fig13-driving-0-qpr",
        "§IV-D, Fig. 13",
        "driving trace, 0 % loss: QPR performs better than reliable QUIC",
        "> 1×",
        THROUGHPUT,
        "ratio",
        GAIN,
        _text(("driving-loss0",), "qpr", "q0"),
        "gain",
    ),
    claim(
        "fig13-walking-2-qpr",
        "§IV-D, Fig. 13 (trace 1)",
        "walking trace, 2 % loss: QPR "
        "throughput above Q0 ('in the presence of loss, QPR outperforms reliable QUIC in all "
        "cases')",
        "> 1×",
        THROUGHPUT,
        "ratio",
        GAIN,
        _text(("walking-loss2",), "qpr", "q0"),
        "gain",
    ),
    claim(
        "fig13-walking-0-qpr",
        "§IV-D, Fig. 13 (trace 1)",
        "walking trace, 0 % loss: QPR throughput above Q0",
        "> 1×",
        THROUGHPUT,
        "ratio",
        GAIN,
        _text(("walking-loss0",), "qpr", "q0"),
        "gain",
    ),
    claim(
        "fig15-driving-0-q100",
        "§IV-D, Fig. 15",
        "driving trace, 0 % loss: throughput improves with unreliability (Q100 ÷ Q0)",
        "> 1×",
        THROUGHPUT,
        "ratio",
        GAIN,
        _text(("driving-loss0",), "q100", "q0"),
        "gain",
    ),
    claim(
        "fig15-driving-5-q75",
        "§IV-D, Fig. 15",
        "driving trace, 5 % loss: throughput improves with unreliability (Q75 ÷ QPR)",
        "> 1×",
        THROUGHPUT,
        "ratio",
        GAIN,
        _text(("driving-loss5",), "q75", "qpr", readings=False),
        "gain",
    ),
    claim(
        "fig15-driving-5-q100-q75",
        "§IV-D, Fig. 15",
        "driving trace, 5 % loss: throughput improves with unreliability (Q100 ÷ Q75)",
        "> 1×",
        THROUGHPUT,
        "ratio",
        GAIN,
        _text(("driving-loss5",), "q100", "q75", readings=False),
        "gain",
    ),
    claim(
        "fig13-driving-2-rank1",
        "§IV-D, Fig. 13d",
        "driving trace, 2 % loss: QPR delivers "
        "the highest-priority object at a higher quality than Q0 (four more segments)",
        "> 1×",
        "quality_rank1_mean",
        "ratio",
        GAIN,
        _text(("driving-loss2",), "qpr", "q0"),
        "gain",
    ),
    *(
        claim(
            f"fig14-driving-5-rank{r}",
            "§IV-D, Fig. 14",
            "driving trace, 5 % loss: the two "
            f"objects in the viewport at a higher quality than Q0 (10 % more segments; no trace "
            f"named: trace 2, Fig. 16's; object of rank {r})",
            "> 1×",
            f"quality_rank{r}_mean",
            "ratio",
            GAIN,
            _text(("driving-loss5",), "qpr", "q0"),
            "gain",
        )
        for r in (1, 2)
    ),
    claim(
        "table3-q100-no-more-freezes",
        "Table 3, §IV-D",
        "driving trace: Q100 has no "
        "additional freezes when the loss rises from 0 to 5 % (freezes at 5 % ÷ at 0 %)",
        "≤ 1×",
        "freezes",
        "ratio",
        NOT_MORE,
        _across("q100", "driving-loss5", "driving-loss0"),
    ),
    claim(
        "q100-10pct-no-deterioration",
        "§IV-D",
        "driving trace, 10 % loss: no deterioration for Q100 (freezes at 10 % ÷ at 0 %)",
        "≤ 1×",
        "freezes",
        "ratio",
        NOT_MORE,
        _across("q100", "driving-loss10", "driving-loss0"),
    ),
    claim(
        "q75-10pct-freezes",
        "§IV-D",
        "driving trace, 10 % loss: Q75 completes the session with 13 freezes",
        "13",
        "freezes",
        "mean",
        around(13.0),
        _text(("driving-loss10",), "q75"),
    ),
    claim(
        "q75-10pct-tfd",
        "§IV-D",
        "driving trace, 10 % loss: Q75's total freeze duration 9 s",
        "9 s",
        "freeze_total_s",
        "mean",
        around(9.0),
        _text(("driving-loss10",), "q75"),
    ),
    claim(
        "q75-10pct-completes",
        "§IV-D",
        "driving trace, 10 % loss: Q75 recovers after the "
        "first congestion point and completes the session (share of sessions that died)",
        "0",
        "session_failed",
        "mean",
        FEW,
        _text(("driving-loss10",), "q75"),
    ),
    claim(
        "q0-q50-10pct-break-down",
        "§IV-D",
        "driving trace, 10 % loss: the variants from 0 % "
        "to 50 % unreliability break down at the first congestion point (share of sessions "
        "that died, Q0, Q25, Q50)",
        "1",
        "session_failed",
        "mean",
        MOST,
        (
            Condition(
                "primary",
                MININET,
                tuple(
                    Point(Cell(TEXT, "driving-loss10", s), label=s) for s in ("q0", "q25", "qpr")
                ),
                WHY_TEXT,
            ),
        ),
        over="each",
    ),
    claim(
        "fig12-h2-0p05",
        "§IV-D, Fig. 12",
        "HTTP/2's throughput deteriorates by an average "
        "of 40 % at 0.05 % loss (÷ its throughput at 0 %), on both traces",
        "0.6×",
        THROUGHPUT,
        "ratio",
        around_ratio(0.6),
        (
            Condition(
                "primary",
                MININET,
                tuple(
                    Point(Cell(H2, f"{t}-loss0p05", "h2"), Cell(H2, f"{t}-loss0", "h2"), label=t)
                    for t in ("walking", "driving")
                ),
                WHY_H2,
            ),
        ),
        "loss",
        "each",
    ),
    claim(
        "fig12-h2-0p5-10mbps",
        "§IV-D, Fig. 12",
        "HTTP/2 breaks at 0.5 % loss: an average of "
        "10 Mbit/s on both traces (full scale: the runs' ×0.1 rescaled rate ÷ 0.1)",
        "10 Mbit/s",
        "throughput_mean_full_scale_mbps",
        "mean",
        around(10.0),
        _h2(("walking-loss0p5", "driving-loss0p5"), "h2"),
        over="each",
    ),
    claim(
        "fig13-h2-above-q0-at-0",
        "§IV-D, Fig. 13",
        "0 % loss: HTTP/2 performs better than reliable QUIC in throughput, on both traces",
        "> 1×",
        THROUGHPUT,
        "ratio",
        GAIN,
        _h2(("walking-loss0", "driving-loss0"), "h2", "q0"),
        "gain",
        "each",
    ),
    claim(
        "fig13-h2-50x",
        "§IV-D, Fig. 13",
        "driving trace: HTTP/2's average throughput falls "
        "by a factor of 50 from 0 % to 2 % loss (at 0 % ÷ at 2 %)",
        "50×",
        THROUGHPUT,
        "ratio",
        around_ratio(50.0),
        _across("h2", "driving-loss0", "driving-loss2", H2, WHY_H2),
        "gain",
    ),
    claim(
        "fig13-h2-below-q0-at-2",
        "§IV-D, Fig. 13",
        "2 % loss: HTTP/2 falls below reliable "
        "QUIC ('reliable QUIC proved to be more loss tolerant than HTTP/2'), on both traces",
        "< 1×",
        THROUGHPUT,
        "ratio",
        LOSS,
        _h2(("walking-loss2", "driving-loss2"), "h2", "q0"),
        "loss",
        "each",
    ),
    claim(
        "fig14-qpr-2x-h2-at-5",
        "§IV-D, Fig. 14",
        "5 % loss: QPR has double the throughput of "
        "HTTP/2, on both traces (QPR from qpr-5g.yaml ÷ HTTP/2 from qpr-h2.yaml)",
        "2×",
        THROUGHPUT,
        "ratio",
        around_ratio(2.0),
        (
            Condition(
                "primary",
                MININET,
                tuple(
                    Point(Cell(TEXT, f"{t}-loss5", "qpr"), Cell(H2, f"{t}-loss5", "h2"), label=t)
                    for t in ("walking", "driving")
                ),
                f"{WHY_TEXT}; {WHY_H2}",
            ),
        ),
        "gain",
        "each",
    ),
    claim(
        "fig17-qprf-above-q0",
        "§I, §IV-E, Fig. 17",
        "driving trace, 5 % loss: QPR(F), with "
        "its FEC overhead, more than 20 % above reliable QUIC",
        "> 1.2×",
        THROUGHPUT,
        "ratio",
        above(1.2, "'more than 20 % higher throughput': the whole CI above 1.2"),
        _fec("qpr", "q0"),
        "gain",
    ),
    claim(
        "fig17-q100f-above-qprf",
        "§IV-E, Fig. 17",
        "driving trace, 5 % loss: Q100(F) almost 20 % above QPR(F)",
        "1.2×",
        THROUGHPUT,
        "ratio",
        around_ratio(1.2),
        _fec("q100", "qpr"),
        "gain",
    ),
    claim(
        "fec-decodes-999",
        "§IV-E",
        "driving trace, 5 % loss: with FEC the client decodes the "
        "unreliable content at a probability above 99.9 % (objects incomplete, % of all)",
        "< 0.1 %",
        "objects_incomplete_pct",
        "mean",
        Band(0.0, 0.1, "'a probability higher than 99.9 %': below 0.1 % of objects"),
        _fec("qpr"),
    ),
)


METRICS = {
    THROUGHPUT: SessionMetric("higher", 0.0, unit="Mbit/s"),
    "throughput_mean_full_scale_mbps": SessionMetric("higher", 0.0, unit="Mbit/s"),
    "freezes": SessionMetric("lower", None),
    "freeze_total_s": SessionMetric("lower", None, unit="s"),
    "quality_rank1_mean": SessionMetric("higher", None),
    "quality_rank2_mean": SessionMetric("higher", None),
    "objects_incomplete_pct": SessionMetric("lower", 100.0, unit="%"),
    "session_failed": SessionMetric("lower", 1.0),
}
"""A session the protocol lost (the player's idle timeout behind a lost packet) counts: at 0
throughput, and at the most freezes, the longest freeze time and the lowest quality any
session of its cell had (those have no bound). `session_failed` is the death itself."""

SITES = (
    "Every primary condition on **Mininet**. QPR's agreement points "
    "(scenarios/agreement/qpr.yaml: the driving trace at 0, 5 and 10 % loss, Q0 and Q100 on "
    "the shared path) agree at 0 and 5 % and differ a little at 10 % under Q0 (sim's reliable "
    "streams recover faster: priolab/README.md, 'How far sim and the real stack agree'). The "
    "primary conditions are elsewhere: the paper-text path's second connection with a fixed "
    "two-packet window on the driving trace, paced by ACK timing, which no agreement point "
    "covers; the walking trace, which none runs; 10 % loss; and HTTP/2, which the sim site "
    "cannot run (no TCP). The sim site's runs of the same cells, and the other readings "
    "(run on sim), are further rows."
)

NOTES = (
    "## The readings of the unreliable path, and why they differ",
    "",
    'The paper sends its unreliable objects "at the rate defined by the congestion window '
    "(which is fixed)\" (§III-C), the window being the BDP at the trace's lowest rate (§IV-B). "
    "`qpr`, `q75` and `q100` (scenarios/qpr-5g.yaml) follow that text, the primary "
    "conditions: the datagrams travel on a second connection whose window stays at that BDP, "
    "so they can never carry more than one window per round trip. On the driving trace "
    "(trace 2) the lowest non-zero rate is 4 Mbit/s (0.4 after the ×0.1 rescaling): a "
    "1000-byte BDP, raised to quinn's two-packet minimum (2904 bytes after MTU discovery), so "
    "at most ≈ 1.2 Mbit/s for the datagrams; on the walking trace (63 Mbit/s lowest, 6.3 "
    "rescaled) the window is 15,750 bytes, ≈ 6.3 Mbit/s. A throughput gain above the window's "
    "rate cannot come from this reading.",
    "",
    "The other readings are rows of their own (scenarios/qpr-readings.yaml, on the sim site): "
    "`-shared` puts the datagrams on the one connection under quinn's Cubic (what quinn does "
    "unmodified: every lost packet, datagram or stream, cuts the one window), a sensitivity; "
    "`-lossblind` runs Cubic on a second connection without its loss response (the window "
    "grows on ACKs and is never cut), exploratory: it was added as the reading under which "
    "the paper's driving-trace gains are possible, at the price of a sender that does not back "
    "off (priolab/workloads/qpr/README.md lists its deviations). Throughput is bytes that "
    "arrive: an unreliable object that lost a datagram cannot be decoded "
    "(`decodable_quality_rank*` in the summaries below).",
    "",
    "QPR(F) and Q100(F) (scenarios/qpr-fec.yaml): the paper subtracted an FEC overhead "
    "estimated from rQUIC from its measured throughput; here the repair datagrams (22 % of "
    "the unreliable data, Reed-Solomon blocks of 32) are sent and decoded, so the overhead "
    "(`fec_overhead_pct`) and the objects that stay undecodable after FEC "
    "(`objects_incomplete_pct`) are measured.",
    "",
    "Sessions that die count. Under bursty loss a reliable stream can wait out QUIC's idle "
    "timeout (10 s, the paper's default) behind a lost packet; the player and the server "
    "then exit with 'peer lost'. Such a run is valid, and its session failed "
    "(priolab/engine/judge.py): every claim counts it at its worst value (0 throughput; the "
    "most freezes, the longest freeze time, the lowest quality of its cell), and a claim's "
    "section gives the death rate beside its value. Cells are no longer rerun until ten "
    "sessions live.",
    "",
    "HTTP/2 over TCP (scenarios/qpr-h2.yaml, Mininet only: sim has no TCP) is compared with Q0 "
    "from the same file. Under the same bursty loss Linux's TCP enters recovery less often per "
    "packet than quinn starts a congestion event (each recovery episode absorbs more lost "
    "packets), so its window is cut less often; the counters of both stacks are in "
    "[an investigation](../investigations/2026-11-27-qpr-h2-above-q0.md) (TCP's from one run: "
    "the harness does not record them per run).",
)

UNMEASURED = (
    Unmeasured("§IV-D, Figs. 13c-d, 16", "the observed qualities per segment of each object "
               "(the figures' counts of segments per quality level)", "priolab measures each "
               "rank's mean quality per session (the claims above on ranks 1 and 2); the "
               "figures' per-segment counts at every level are not stated in numbers to "
               "compare."),
    Unmeasured("§IV-D", "HTTP/2's throughput 'almost consistent for any higher loss ratio' "
               "beyond 0.5 %", "the paper gives no value or range, so there is no band to "
               "test."),
    Unmeasured("§IV-E", "beyond 6.5 % loss the FEC overhead exceeds 50 %; at 10 % it is "
               "almost 83 %", "the paper's overheads are rQUIC's estimates on paper; "
               "priolab's FEC sends a fixed 22 % repair share (scenarios/qpr-fec.yaml), so "
               "its overhead does not follow the loss."),
)  # fmt: skip

PAPER = Paper(
    key="qpr",
    short="QPR",
    kind="qpr",
    scenarios=(TEXT, READINGS, FEC, H2, "qpr-quick", "qpr-paths"),
    claims=CLAIMS,
    metrics=METRICS,
    sites=SITES,
    notes=NOTES,
    unmeasured=UNMEASURED,
    why=what_the_player_got,
)
