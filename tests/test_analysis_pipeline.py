"""Tables, aggregation, bootstrap, figures and show on a small synthetic results tree."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.aggregate import SUMMARY_COLUMNS, aggregate
from analysis.figures import make_figures
from analysis.logs import AnalysisError, read_linkem_stats
from analysis.metrics import read_metrics, run_metrics
from analysis.show import show
from analysis.stats import bootstrap_ci, bootstrap_ci_rows, ci_text
from analysis.tables import write_tables
from priolab.workloads.rise.logs import read_log_csv
from priolab.workloads.rise.synthetic import T0_US, SynthRun, run_path, write_run
from priolab.workloads.rise.tables import build_tables

SCHEMES = ("nopri", "pri")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 schemes × 2 valid reps, plus one invalid run with no logs at all."""
    results = tmp_path_factory.mktemp("results")
    for k, scheme in enumerate(SCHEMES):
        for rep in (1, 2):
            r = SynthRun(
                scenario="t", setting="FB-4K-Low", scheme=scheme, speed="moderate", rep=rep,
                seed=10 * k + rep, duration_s=2.0,
                delay_ms=60.0 if scheme == "nopri" else 25.0,
                stall_after_frame=20 if scheme == "nopri" else None,
                retx_fraction=0.04 if scheme == "nopri" else 0.01,
            )  # fmt: skip
            write_run(run_path(results, r), r)
    bad = results / "t" / "FB-4K-Low" / "pri" / "moderate" / "r3"
    bad.mkdir(parents=True)
    (bad / "metadata.json").write_text(
        json.dumps(
            {
                "run": {"setting": "FB-4K-Low"},
                "valid": False,
                "invalid_reasons": ["rise-guest exited with code 4"],
            }
        )  # fmt: skip
    )
    aggregate(results / "t")
    return results / "t"


# ------------------------------------------------------------------ logs and tables


def test_missing_and_empty_files_are_empty_tables(tmp_path: Path):
    (tmp_path / "guest").mkdir()
    (tmp_path / "guest" / "frames_sent.csv").write_text("")
    (tmp_path / "guest" / "channels.csv").write_text(
        "time_us,channel,enqueued,sent,dropped_ingress,evicted,retransmitted,bytes_sent\n"
    )
    tables, manifest = build_tables(tmp_path)
    assert all(t.empty for t in tables.values())
    assert manifest["host/frames_sent.csv"] == "missing"
    assert manifest["guest/channels.csv"] == 0
    assert "endpoint" in tables["channels"].columns
    out = write_tables(tmp_path)
    assert pd.read_parquet(out / "linkem.parquet").empty


def test_bad_csv_names_file_line_and_column(tmp_path: Path):
    p = tmp_path / "frames_sent.csv"
    p.write_text(
        "frame_id,frame_type,size_bytes,frag_cnt,encode_time_us,tracking_sample_id\n"
        "0,key,1000,1,5,0\n1,delta,abc,1,6,0\n"
    )
    with pytest.raises(AnalysisError, match=r"frames_sent.csv: line 3, column 'size_bytes'"):
        read_log_csv(p)
    p.write_text(
        "frame_id,frame_type,size_bytes,frag_cnt,encode_time_us,tracking_sample_id\n"
        "0,intra,1000,1,5,0\n"
    )
    with pytest.raises(AnalysisError, match=r"'frame_type': 'intra' is not one of"):
        read_log_csv(p)
    p.write_text("frame_id,frame_type\n0,key\n")
    with pytest.raises(AnalysisError, match=r"header lacks column\(s\) \['size_bytes'"):
        read_log_csv(p)
    lk = tmp_path / "linkem-stats.jsonl"
    lk.write_text('{"t_s": 1.0, "dir": "up"}\n')
    with pytest.raises(AnalysisError, match=r"linkem-stats.jsonl: line 1: missing key"):
        read_linkem_stats(lk)


def test_tables_and_metrics_of_one_run(tree: Path):
    run = tree / "FB-4K-Low" / "pri" / "moderate" / "r1"
    out = write_tables(run)
    frames = pd.read_parquet(out / "frames_sent.parquet")
    raw = pd.read_csv(run / "host" / "frames_sent.csv")
    assert (frames["endpoint"] == "host").sum() == len(raw)
    lk = pd.read_parquet(out / "linkem.parquet")
    assert set(lk["direction"]) == {"up", "down"}
    run_metrics(run)
    m = read_metrics(run)["metrics"]
    disp = pd.read_csv(run / "guest" / "frames_displayed.csv")
    # only the window counts: after the warm-up (0.5 s in the synthetic runs), before the end
    t = disp["display_time_us"]
    disp = disp[(t >= T0_US + 500_000) & (t <= T0_US + 2_000_000)]
    expect = np.median((disp["display_time_us"] - disp["tracking_gen_time_us"]) / 1000)
    assert m["mtp_median_ms"] == pytest.approx(expect)
    assert read_metrics(run)["analysis"]["warmup_s"] == 0.5
    key = (raw["frame_type"] == "key").sum()
    assert m["keyframe_rate_pct_host"] == pytest.approx(100 * key / len(raw))


# ------------------------------------------------------------------ bootstrap


def test_bootstrap_ci_contains_mean_and_is_deterministic():
    v = [3.1, 5.7, 4.2, 9.9, 1.3, 6.6, 2.8]  # distinct sums: resampled means rarely tie
    mean, lo, hi, n = bootstrap_ci(v)
    assert mean == pytest.approx(sum(v) / len(v)) and n == len(v)
    assert lo <= mean <= hi and lo < hi
    assert min(v) <= lo and hi <= max(v)
    assert bootstrap_ci(v) == (mean, lo, hi, n)
    assert bootstrap_ci(v, seed=7) != (mean, lo, hi, n)  # the seed is what fixes it
    # one run: the mean, but no interval (NaN bounds), not a zero-width one
    m1, lo1, hi1, n1 = bootstrap_ci([2.5])
    assert (m1, n1) == (2.5, 1) and math.isnan(lo1) and math.isnan(hi1)
    m1, lo1, hi1, n1 = bootstrap_ci([2.0, float("nan")])
    assert (m1, n1) == (2.0, 1) and math.isnan(lo1) and math.isnan(hi1)
    assert bootstrap_ci([3.0, 3.0]) == (3.0, 3.0, 3.0, 2)  # two runs alike: a real zero width
    m, lo, hi, n = bootstrap_ci([])
    assert n == 0 and math.isnan(m) and math.isnan(lo) and math.isnan(hi)


def test_ci_text_prints_no_interval_for_one_run():
    assert ci_text(1.0, 2.0, 2, ".2f") == "[1.00, 2.00]"
    _, lo, hi, n = bootstrap_ci([0.8])
    assert ci_text(lo, hi, n) == "(n=1, no CI)"
    assert ci_text(float("nan"), float("nan"), 0) == "(n=0, no CI)"


def test_bootstrap_ci_rows_per_row():
    v = np.array([[3.1, 5.7, 4.2, 9.9], [2.0, 2.0, 2.0, 2.0], [np.nan, 1.5, np.nan, np.nan],
                  [np.nan] * 4])  # fmt: skip
    mean, lo, hi = bootstrap_ci_rows(v)
    assert mean[0] == pytest.approx(v[0].mean())
    assert min(v[0]) <= lo[0] < mean[0] < hi[0] <= max(v[0])
    assert (mean[1], lo[1], hi[1]) == (2.0, 2.0, 2.0)
    assert (mean[2], lo[2], hi[2]) == (1.5, 1.5, 1.5)  # one value: the interval is the value
    assert np.isnan([mean[3], lo[3], hi[3]]).all()
    again = bootstrap_ci_rows(v)
    np.testing.assert_array_equal(again[1][:3], lo[:3])  # seeded: deterministic


# ------------------------------------------------------------------ aggregate


def test_mismatch_percentiles_are_those_of_the_frames_in_the_window(tree: Path):
    """Median, p95 and p99 of the position mismatch (the paper's Fig. 6 reports all three)
    come from the Guest's displayed frames inside the analysed window, nothing else."""
    run = tree / "FB-4K-Low" / "nopri" / "moderate" / "r1"
    m = read_metrics(run)["metrics"]
    gf = pd.read_parquet(run / "tables" / "guest_frames.parquet")
    inw = gf[gf["in_window"]]["mismatch_deg"].dropna().to_numpy()
    assert len(inw) > 10 and len(inw) < len(gf)  # the warm-up left some frames out
    got = [m["mismatch_median_deg"], m["mismatch_p95_deg"], m["mismatch_p99_deg"]]
    assert got == pytest.approx(np.percentile(inw, [50, 95, 99]).tolist())
    assert got[0] <= got[1] <= got[2]


def test_summary_columns_values_and_exclusions(tree: Path):
    s = pd.read_csv(tree / "summary.csv")
    assert list(s.columns) == SUMMARY_COLUMNS
    assert set(s["setting"]) == {"FB-4K-Low"}  # one speed: the setting name alone
    per_run = {
        sch: [
            read_metrics(tree / "FB-4K-Low" / sch / "moderate" / f"r{r}")["metrics"] for r in (1, 2)
        ]
        for sch in SCHEMES
    }
    for sch in SCHEMES:
        row = s[(s["metric"] == "mtp_p95_ms") & (s["scheme"] == sch)].iloc[0]
        vals = [m["mtp_p95_ms"] for m in per_run[sch]]
        assert row["value"] == pytest.approx(sum(vals) / 2)
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
        assert row["n_runs"] == 2
        assert row["n_excluded"] == (1 if sch == "pri" else 0)
    for metric in ("mtp_median_ms", "freeze_rate_pct", "retx_rate_pct_guest",
                   "keyframe_rate_pct_host", "mismatch_p95_deg", "goodput_down_mbps"):  # fmt: skip
        assert metric in set(s["metric"])
    r = pd.read_csv(tree / "ratios.csv")
    row = r[(r["metric"] == "mtp_median_ms") & (r["scheme"] == "nopri")].iloc[0]
    v = s[s["metric"] == "mtp_median_ms"].set_index("scheme")["value"]
    assert row["ratio"] == pytest.approx(v["nopri"] / v["pri"])
    md = (tree / "summary.md").read_text()
    assert "1 run(s) excluded" in md and "rise-guest exited with code 4" in md
    assert "nopri ÷ pri" in md
    ex = pd.read_csv(tree / "exclusions.csv")
    assert list(ex["path"]) == ["FB-4K-Low/pri/moderate/r3"]


def test_summary_md_says_one_run_has_no_ci(tmp_path: Path):
    """One run per scheme: summary.csv leaves the bounds empty (NaN) and summary.md says
    "n=1, no CI" instead of a zero-width interval."""
    for k, scheme in enumerate(SCHEMES):
        r = SynthRun(scenario="t", setting="FB-4K-Low", scheme=scheme, speed="moderate", rep=1,
                     seed=k + 1, duration_s=2.0)  # fmt: skip
        write_run(run_path(tmp_path, r), r)
    aggregate(tmp_path / "t")
    s = pd.read_csv(tmp_path / "t" / "summary.csv")
    row = s[(s["metric"] == "mtp_p95_ms") & (s["scheme"] == SCHEMES[0])].iloc[0]
    assert row["n_runs"] == 1 and math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    md = (tmp_path / "t" / "summary.md").read_text()
    assert "(n=1, no CI)" in md
    assert "[" not in md.split("## Excluded runs")[0].split("|---")[-1]


def test_two_speeds_encode_setting_slash_speed(tmp_path: Path):
    for speed in ("slow", "fast"):
        r = SynthRun(scenario="s", scheme="pri", speed=speed, duration_s=1.0)
        write_run(run_path(tmp_path, r), r)
    aggregate(tmp_path / "s")
    s = pd.read_csv(tmp_path / "s" / "summary.csv")
    assert set(s["setting"]) == {"FB-4K-Low/slow", "FB-4K-Low/fast"}
    assert list(s.columns) == SUMMARY_COLUMNS


def test_aggregate_without_runs_is_a_clear_error(tmp_path: Path):
    with pytest.raises(AnalysisError, match="no run directories"):
        aggregate(tmp_path)


# ------------------------------------------------------------------ figures and show


def test_figures_are_written_with_captions(tree: Path):
    made, skipped = make_figures(tree)
    names = {p.stem for p in made}
    for name in ("transport_mtp_cdf", "transport_freeze", "mismatch_cdf", "retx_keyframe",
                 "timeseries_nopri", "timeseries_pri"):  # fmt: skip
        assert name in names, (name, skipped)
        for ext in ("png", "pdf", "txt"):
            p = tree / "figures" / f"{name}.{ext}"
            assert p.is_file() and p.stat().st_size > 0
    assert any(s.startswith("ablation") for s in skipped)  # no pri-u/pri-d runs here
    assert any(s.startswith("bitrate_sweep") for s in skipped)  # one bitrate only
    text = show(tree)
    assert "# t: summary" in text and "transport_mtp_cdf.png" in text


# ------------------------------------------------------------------ robustness


DISPLAYED_HEADER = (
    "frame_id,frame_type,display_time_us,tracking_sample_id,tracking_gen_time_us,mtp_ms\n"
)


def test_empty_cells_where_the_endpoint_writes_none(tmp_path: Path):
    p = tmp_path / "frames_displayed.csv"
    p.write_text(DISPLAYED_HEADER + "0,key,5000,-1,,\n1,delta,9000,3,4000,5.000\n")
    df = read_log_csv(p)
    assert df["tracking_gen_time_us"].isna().tolist() == [True, False]
    from priolab.workloads.rise.metrics import mtp_ms

    m = mtp_ms(df)
    assert math.isnan(m[0]) and m[1] == pytest.approx((9000 - 4000) / 1000)
    # an empty cell in a column that always has a value is an error
    p.write_text(DISPLAYED_HEADER + "0,key,,-1,,\n")
    with pytest.raises(AnalysisError, match="line 2, column 'display_time_us'"):
        read_log_csv(p)


def test_incomplete_last_line_is_dropped_and_noted(tmp_path: Path):
    (tmp_path / "guest").mkdir()
    (tmp_path / "guest" / "frames_displayed.csv").write_text(
        DISPLAYED_HEADER + "0,key,5000,1,4000,1.000\n1,delta,90"
    )
    tables, manifest = build_tables(tmp_path)
    assert len(tables["frames_displayed"]) == 1
    assert "incomplete last line" in str(manifest["guest/frames_displayed.csv"])


def test_malformed_valid_run_is_excluded_with_the_reason(tmp_path: Path):
    from analysis import metrics, tables

    for rep in (1, 2):
        r = SynthRun(scenario="m", scheme="pri", rep=rep, duration_s=1.0)
        write_run(run_path(tmp_path, r), r)
    bad = tmp_path / "m" / "FB-4K-Low" / "pri" / "moderate" / "r2"
    (bad / "host" / "frames_sent.csv").write_text(
        "frame_id,frame_type,size_bytes,frag_cnt,encode_time_us,tracking_sample_id\n0,key,x,1,5,0\n"
    )
    assert tables.main([str(bad), "--strict"]) == 1
    assert tables.main([str(bad)]) == 0  # recorded, the workflow goes on
    assert "error" in json.loads((bad / "tables" / "manifest.json").read_text())
    assert metrics.main([str(bad), "--strict"]) == 1
    assert metrics.main([str(bad)]) == 0
    m = json.loads((bad / "metrics.json").read_text())
    assert m["valid"] is False and "size_bytes" in m["invalid_reasons"][-1]
    aggregate(tmp_path / "m")
    s = pd.read_csv(tmp_path / "m" / "summary.csv")
    row = s[s["metric"] == "mtp_median_ms"].iloc[0]
    assert row["n_runs"] == 1 and row["n_excluded"] == 1
    assert "size_bytes" in (tmp_path / "m" / "summary.md").read_text()


def test_ablation_and_bitrate_figures(tmp_path: Path):
    for scheme in ("nopri", "pri-d", "pri-u", "pri"):
        for setting, br in (("br15", 15.0), ("br30", 30.0)):
            r = SynthRun(scenario="a", setting=setting, scheme=scheme, duration_s=1.0,
                         video_bitrate_mbps=br, seed=len(scheme) + int(br))  # fmt: skip
            write_run(run_path(tmp_path, r), r)
    made, skipped = make_figures(tmp_path / "a")
    names = {p.stem for p in made}
    assert {"ablation", "bitrate_sweep"} <= names, skipped
    cap = (tmp_path / "a" / "figures" / "bitrate_sweep.txt").read_text()
    assert "bootstrap CI" in cap


def test_policer_drops_counted_and_absent_in_old_stats(tmp_path: Path):
    """A policed direction's drops reach the metrics; a stats file from a linkem without the
    policer (no `drops_police` key) reads as 0 police drops, not as an error."""
    from analysis.link import DIRECTION, linkem_metrics

    base = {"arrivals": 100, "departures": 90, "bytes_out": 9000, "drops_queue": 2,
            "drops_loss": 1, "oversized": 0, "queue_bytes": 0, "queue_delay_ms_mean": 0.0,
            "queue_delay_ms_max": 0.5}  # fmt: skip
    lines = [
        {"t_s": 1.0, "dir": "a_to_b", **base, "drops_police": 7},
        {"t_s": 2.0, "dir": "a_to_b", **base, "drops_police": 5},
        {"t_s": 2.0, "dir": "a_to_b", **base, "drops_police": 12, "final": True},
        {"t_s": 1.0, "dir": "b_to_a", **base},  # an older linkem: no drops_police key
    ]
    lk = tmp_path / "linkem-stats.jsonl"
    lk.write_text("".join(json.dumps(x) + "\n" for x in lines))
    df = read_linkem_stats(lk)
    df.insert(2, "direction", df["dir"].map(DIRECTION).astype(object))
    m = linkem_metrics(df)
    assert m["linkem_drops_police_up"] == 12  # the final line's total
    assert m["linkem_drops_police_down"] == 0  # absent key: none happened
    assert m["linkem_drops_queue_down"] == 2


def test_a_setting_without_a_valid_run_does_not_stop_the_figures(tmp_path: Path) -> None:
    # every run of setting X was invalid (e.g. CPU saturated): its panel is empty, not a crash
    for scheme in SCHEMES:
        r = SynthRun(scenario="e", setting="FB-4K-Low", scheme=scheme, duration_s=2.0)
        write_run(run_path(tmp_path, r), r)
    bad = tmp_path / "e" / "X" / "pri" / "moderate" / "r1"
    bad.mkdir(parents=True)
    (bad / "metadata.json").write_text(
        json.dumps({"run": {"setting": "X"}, "valid": False, "invalid_reasons": ["CPU saturated"]})
    )
    aggregate(tmp_path / "e")
    paths, _ = make_figures(tmp_path / "e")
    assert any(p.name == "transport_mtp_cdf.png" for p in paths)
