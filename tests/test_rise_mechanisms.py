"""rise.mechanisms: the report's sections on key-frame causes, the tick phase, the freeze map."""

from __future__ import annotations

import pandas as pd

from priolab.workloads.rise.mechanisms import (
    FREEZE_MAP,
    freeze_map_section,
    keyframe_section,
    phase_section,
)


def _runs(rows: list[dict[str, object]]) -> pd.DataFrame:
    return pd.DataFrame(rows)


def _row(sc: str, st: str, scheme: str, **metrics: float) -> dict[str, object]:
    return {"scenario": sc, "setting": st, "scheme": scheme, "path": "x", **metrics}


def test_freeze_map_separates_only_where_every_resample_of_w_o_pri_froze() -> None:
    rows = []
    for i in range(10):
        # A: w/o Pri freezes in every run, w/ Pri never; B: one w/o Pri run of ten froze
        rows.append(_row(FREEZE_MAP, "A", "nopri", freeze_rate_pct=1.0 + i / 10, freeze_count=9))
        rows.append(_row(FREEZE_MAP, "A", "pri", freeze_rate_pct=0.0, freeze_count=0))
        rows.append(_row(FREEZE_MAP, "B", "nopri", freeze_rate_pct=2.0 if i == 0 else 0.0))
        rows.append(_row(FREEZE_MAP, "B", "pri", freeze_rate_pct=0.0))
    text = "\n".join(freeze_map_section(_runs(rows)))
    line_a = next(x for x in text.splitlines() if x.startswith("| A |"))
    line_b = next(x for x in text.splitlines() if x.startswith("| B |"))
    assert line_a.endswith("| yes |") and "∞" in line_a
    # the flattering failure: one freezing run out of ten must not read as a separating point
    assert line_b.endswith("| no |")
    assert "Points where w/o Pri freezes and w/ Pri freezes less: A ∞" in text


def test_freeze_map_without_runs_names_the_command() -> None:
    text = "\n".join(freeze_map_section(_runs([_row("quick", "X", "pri", freeze_rate_pct=0)])))
    assert "scenario=scenarios/maps/rise-freeze-map.yaml" in text


def test_keyframe_section_gives_pri_d_ratio_and_its_direct_reach() -> None:
    rows = []
    for i in range(5):
        rows.append(_row("d", "S", "nopri", keyframes_deadline_host=10.0 + i,
                         keyframes_deadline_queued_host=1.0, keyframes_deadline_dropped_host=0.0,
                         keyframes_deadline_lost_host=4.0, keyframes_deadline_unacked_host=5.0 + i,
                         keyframes_start_host=1.0, keyframe_rate_pct_host=1.3))  # fmt: skip
        rows.append(_row("d", "S", "pri-d", keyframes_deadline_host=6.0,
                         keyframes_deadline_queued_host=0.0, keyframes_deadline_dropped_host=0.0,
                         keyframes_deadline_lost_host=2.0, keyframes_deadline_unacked_host=4.0,
                         keyframes_start_host=1.0, keyframe_rate_pct_host=0.8))  # fmt: skip
    text = "\n".join(keyframe_section(_runs(rows)))
    assert "| d/S | nopri | 5 | 1.3 | 1 | 1 | 0 | 4 | 7 |" in text
    assert "w/o Pri ÷ Pri-D = 2 [" in text
    assert "1 of 12 per run (8.33 %)" in text


def test_keyframe_section_says_when_no_run_has_causes() -> None:
    rows = [_row("d", "S", s, keyframes_deadline_host=float("nan")) for s in ("nopri", "pri")]
    assert "No run with key-frame causes" in "\n".join(keyframe_section(_runs(rows)))


def test_phase_section_ratios_of_mtp_and_mtp_net() -> None:
    rows = []
    for _ in range(3):
        rows.append(_row("q", "S", "nopri", mtp_median_ms=400.0, tick_phase_median_ms=8.0,
                         tick_stale_median_ms=0.0, mtp_net_median_ms=392.0))  # fmt: skip
        rows.append(_row("q", "S", "pri", mtp_median_ms=40.0, tick_phase_median_ms=16.0,
                         tick_stale_median_ms=0.0, mtp_net_median_ms=24.0))  # fmt: skip
    text = "\n".join(phase_section(_runs(rows)))
    assert "| q/S | nopri | 3 | 400 | 8 | 0 | 392 | 10 [10, 10] | 16.3 [16.3, 16.3] |" in text
    assert "w/ Pri's median was ≈ 87 ms and w/o Pri's ≈ 817 ms" in text
