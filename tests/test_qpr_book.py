"""QPR's results page (book/papers.py QPR): every ratio claim once per reading of the
unreliable path, each from its own scenario, and the page says which reading is which."""

import json
from pathlib import Path

import pandas as pd
import pytest

from book import results
from book.papers import QPR, QPR_FEC_READINGS, QPR_READINGS
from ground.data import skip_reason
from priolab.paths import REPO_ROOT
from tests.conftest import has_dataset


def _runs(d: Path, runs: list[tuple[str, str, dict[str, float]]]) -> None:
    """The scenario folder `d` with one valid sim run per (setting, scheme, its metrics),
    numbered r1, r2, ... per setting and scheme, and its runs.csv."""
    meta = json.dumps({"site": {"kind": "sim"}, "git": {"commit": "b" * 40, "dirty": False}})
    rows: list[dict[str, object]] = []
    for setting, scheme, metrics in runs:
        rep = 1 + sum(r["setting"] == setting and r["scheme"] == scheme for r in rows)
        run = d / setting / scheme / "default" / f"r{rep}"
        run.mkdir(parents=True)
        (run / "metadata.json").write_text(meta)
        rows.append({"path": str(run), "setting": setting, "scheme": scheme, **metrics})
    pd.DataFrame(rows).to_csv(d / "runs.csv", index=False)


def _throughputs(results_dir: Path, name: str, values: dict[str, list[float]]) -> None:
    """`name` with one valid sim run at driving-loss5 per value: throughput `values[scheme]`."""
    _runs(
        results_dir / name,
        [("driving-loss5", k, {"throughput_mean_mbps": x}) for k, xs in values.items() for x in xs],
    )


def _scenario(results_dir: Path, name: str, values: dict[str, float]) -> None:
    """`name` with 3 valid sim runs per scheme at driving-loss5, throughput `values[scheme]`."""
    _throughputs(
        results_dir, name, {k: [v + 0.01 * i for i in (1, 2, 3)] for k, v in values.items()}
    )


def _rows(text: str, start: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(start)]


def test_each_reading_is_its_own_row_from_its_own_scenario(tmp_path: Path) -> None:
    res = tmp_path / "results"
    _scenario(res, "qpr-5g", {"q0": 4.0, "qpr": 1.0, "q100": 0.6})
    _scenario(res, "qpr-readings", {"q0": 4.0, "q100-lossblind": 8.0, "q100-shared": 4.2})
    # qpr-quick's q100 is the shared path: it must not count as the paper-text reading
    _scenario(res, "qpr-quick", {"q0": 4.0, "q100": 9.0})
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(QPR, res, out, REPO_ROOT, "abc")

    claims = text.split("## Which reading reproduces which claim", 1)[0]  # the claims table
    q100 = [r for r in _rows(claims, "| §IV-D, Fig. 15 |") if "Q100 throughput 125 %" in r]
    assert len(q100) == len(QPR_READINGS) == 3
    by_label = {label: next(r for r in q100 if f"[{label}]" in r) for _, label, _ in QPR_READINGS}
    fixed = by_label["paper text: fixed window"]
    assert "`scenarios/qpr-5g.yaml`" in fixed and "qpr-quick" not in fixed
    assert "| 3+3 | sim |" in fixed
    assert "| not reproduced (CI below the paper's 2.25×), because q100: 0.62 Mbit/s" in fixed
    blind = by_label["variant: loss-blind second connection"]
    assert "`scenarios/qpr-readings.yaml`" in blind
    assert blind.split(" | ")[4].startswith("2 [1.99")  # (8.01+8.02+8.03) / (4.01+4.02+4.03)
    assert "| differs (the paper's direction, a smaller effect than its 2.25×), because" in blind
    shared = by_label["variant: one connection, quinn's loss response"]
    assert "differs (the paper's direction, a smaller effect" in shared  # 4.2 / 4
    # a claim whose schemes did not run says so
    assert any("not run" in r for r in _rows(text, "| §IV-D, Fig. 13 (trace 2) |"))
    assert "## The readings of the unreliable path, and why they differ" in text


@pytest.mark.skipif(  # loading a scenario reads its traces
    not has_dataset("sigcomm21-5g-variegated"), reason=skip_reason("sigcomm21-5g-variegated")
)
def test_claims_name_schemes_that_their_scenarios_define() -> None:
    """Every claim's schemes and settings exist in the scenarios it reads."""
    from priolab.scenario import load

    for c in QPR.claims:
        assert c.scenarios, c.text
        for name in c.scenarios:
            sc = load(REPO_ROOT / "scenarios" / f"{name}.yaml")
            assert c.num in sc.schemes and c.den in ("", *sc.schemes), (name, c.num, c.den)
            assert set(c.settings) <= set(sc.settings), (name, c.settings)


def test_a_claim_across_two_loss_levels_reads_each_from_its_own_setting(tmp_path: Path) -> None:
    """Q100's freezes at 5 % over its freezes at 0 % (Table 3: "no additional freezes"), and
    at 10 %: the denominator's runs come from driving-loss0, the row names both settings."""
    _runs(
        tmp_path / "results" / "qpr-5g",
        [(setting, "q100", {"freezes": freezes + 0.1 * i, "throughput_mean_mbps": 1.0})
         for setting, freezes in (("driving-loss0", 4.0), ("driving-loss5", 4.0),
                                  ("driving-loss10", 9.0))
         for i in (1, 2, 3)],
    )  # fmt: skip
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(QPR, tmp_path / "results", out, REPO_ROOT, "abc")
    same = _rows(text, "| Table 3, §IV-D | driving trace: Q100 has no additional freezes")
    assert len(same) == 1 and "`freezes` q100 ÷ q100 at driving-loss0" in same[0]
    assert (
        "| 3+3 | sim | `scenarios/qpr-5g.yaml` | driving-loss5 ÷ driving-loss0 | reproduced |"
        in (same[0])
    )
    worse = _rows(text, "| §IV-D | driving trace, 10 % loss: no deterioration for Q100")
    assert "driving-loss10 ÷ driving-loss0 | not reproduced (CI above the paper's ≤ 1×)" in worse[0]
    assert "because q100: 1 Mbit/s per segment (rescaled units), 9.2 freezes" in worse[0]


def test_the_reading_table_sets_each_claims_readings_side_by_side(tmp_path: Path) -> None:
    """Which reading reproduces which claim: one row per claim measured under two or more
    readings, one column per reading with the verdict's word, value, n and site; – where the
    reading has no such scheme (QPR(F) has no shared-connection variant); a tally per
    reading that counts only the claims it ran."""
    assert QPR.readings == tuple(label for _, label, _ in QPR_READINGS)
    assert {label for _, label, _ in QPR_FEC_READINGS} <= set(QPR.readings)
    res = tmp_path / "results"
    _throughputs(res, "qpr-5g", {"q0": [4.0] * 3, "q100": [9.0] * 3})  # 2.25×: the paper's
    _throughputs(res, "qpr-readings", {"q0": [4.0] * 3, "q100-shared": [4.0] * 3})  # 1×
    _throughputs(
        res, "qpr-fec", {"q0": [4.0] * 3, "qpr-fec": [6.0] * 3, "qpr-lossblind-fec": [4.4] * 3}
    )
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(QPR, res, out, REPO_ROOT, "abc")
    section = text.split("## Which reading reproduces which claim", 1)[1].split("\n## ", 1)[0]
    header = next(r for r in section.splitlines() if r.startswith("| source |"))
    assert header == "| source | claim | paper | " + " | ".join(QPR.readings) + " |"

    def cells(claim: str) -> list[str]:
        row = next(r for r in section.splitlines() if f"| {claim} |" in r)
        return [c.strip() for c in row.strip("|").split(" | ")][3:]

    fixed, shared, blind = cells("driving trace, 5 % loss: Q100 throughput 125 % above Q0")
    # the fixture's runs per scheme are alike (one value, nothing else measured): n says so
    assert fixed == "**reproduced** 2.25 [2.25, 2.25] (n 3+3 (both all alike), sim)"
    assert shared.startswith("**differs** 1 [1, 1] (n 3+3 (both all alike), sim)")
    assert blind == "not run"
    fixed, shared, blind = cells(
        "driving trace, 5 % loss: QPR(F), with its FEC overhead, more than 20 % above Q0"
    )
    assert fixed.startswith("**reproduced** 1.5 ") and shared == "–"
    assert blind.startswith("**differs** 1.1 ")
    # a claim whose metric no run has (freezes) counts for no reading
    assert "| Table 3 | driving trace, 5 % loss: QPR freezes ÷ Q0's (9 ÷ 12) |" in section
    tally = [r for r in section.splitlines() if r.startswith("- ")]
    assert tally == [
        "- paper text: fixed window: reproduces 2 of the 2 claims it ran.",
        "- variant: one connection, quinn's loss response: reproduces 0 of the 1 claims it ran.",
        "- variant: loss-blind second connection: reproduces 0 of the 1 claims it ran.",
    ]


def test_a_strict_gain_or_loss_is_not_met_by_a_ci_that_holds_1() -> None:
    """Every QPR ratio claim the paper prints as "> 1×" or "< 1×" has a range that leaves 1
    out (ABOVE_1, BELOW_1), so a CI that holds 1 reads "differs", not "reproduced"."""
    strict = [c for c in QPR.claims if c.paper in ("> 1×", "< 1×")]
    assert len(strict) >= 5
    for c in strict:
        assert not (c.lo <= 1.0 <= c.hi), (c.text, c.lo, c.hi)
    walking = next(c for c in strict if c.text.startswith("walking trace, 5 % loss: QPR thr"))
    judge = QPR.judge(walking)
    assert judge is not None
    q0 = pd.DataFrame({"throughput_mean_mbps": [5.0, 5.1, 4.9], "scheme": ["q0"] * 3})
    same = q0.assign(scheme=walking.num)
    assert judge(same, q0).verdict.startswith("differs (no significant difference")
