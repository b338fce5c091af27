"""priolab.workloads.rise.rise_map and .reproduction on hand-made aggregated results (no runs)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from analysis.stats import bootstrap_ratio_ci
from priolab.workloads.rise import reproduction, rise_map

UPLINK = {"rate_mbps": 70.0, "delay_ms": 10.5, "queue": {"bdp_factor": 1.0, "drop": "tail"}}
WORKLOAD = {
    "video_bitrate_mbps": 30.0,
    "fps": 30.0,
    "buffer_bytes": 1_048_576,
    "keyframe_factor": 9.0,
    "cc": "cubic",
    "fifo_drop": "head",
    "processing_delay_ms": 0.0,
}


def run(
    root: Path, setting: str, scheme: str, rep: int, metrics: dict[str, float], **over: object
) -> dict[str, object]:
    """One run folder with the metadata rise_map reads; returns its runs.csv row."""
    d = root / setting / scheme / "moderate" / f"r{rep}"
    d.mkdir(parents=True)
    up = {**UPLINK, **over.get("uplink", {})}  # type: ignore[dict-item]
    wl = {
        **WORKLOAD,
        **over.get("workload", {}),
        "prio_guest": scheme == "pri",  # type: ignore[dict-item]
        "prio_host": scheme == "pri",
    }
    meta = {
        "run": {
            "link": {"uplink": up, "downlink": {"delay_ms": 10.5}},
            "workload": wl,
            "duration_s": 30.0,
        },
        "cpu": {"utilisation_mean_pct": 40.0},
    }
    (d / "metadata.json").write_text(json.dumps(meta))
    return {
        "setting": setting,
        "scheme": scheme,
        "speed": "moderate",
        "rep": rep,
        "path": str(d),
        **metrics,
    }


def scenario(tmp: Path, name: str, rows: list[dict[str, object]], excluded: int = 0) -> Path:
    d = tmp / name
    pd.DataFrame(rows).to_csv(d / "runs.csv", index=False)
    ex = [
        {
            "path": f"X/pri/moderate/r{9 + i}",
            "setting": "X",
            "scheme": "pri",
            "speed": "moderate",
            "rep": 9 + i,
            "reasons": "CPU saturated",
        }
        for i in range(excluded)
    ]
    pd.DataFrame(ex, columns=["path", "setting", "scheme", "speed", "rep", "reasons"]).to_csv(
        d / "exclusions.csv", index=False
    )
    return d


def test_ratio_ci_resamples_each_scheme() -> None:
    assert bootstrap_ratio_ci([2, 2], [1, 1]) == (2.0, 2.0, 2.0)
    r, lo, hi = bootstrap_ratio_ci([1, 3], [1])
    assert r == 2 and lo == pytest.approx(1) and hi == pytest.approx(3)
    assert all(math.isnan(x) for x in bootstrap_ratio_ci([1], [0, 0]))


@pytest.fixture
def map_dir(tmp_path: Path) -> Path:
    root = tmp_path / "m"
    iid = {"uplink": {"loss": {"model": "iid", "loss_pct": 0.05}}}
    rows = [
        run(root, "WL", "nopri", 1, {"mtp_median_ms": 300.0, "stall_time_s": 1.0}, **iid),
        run(root, "WL", "nopri", 2, {"mtp_median_ms": 340.0, "stall_time_s": 1.0}, **iid),
        run(root, "WL", "pri", 1, {"mtp_median_ms": 40.0, "stall_time_s": 4.0}, **iid),
        run(root, "WL", "pri", 2, {"mtp_median_ms": 40.0, "stall_time_s": 4.0}, **iid),
        run(root, "ideal", "nopri", 1, {"mtp_median_ms": 25.0, "stall_time_s": 0.0}),
        run(root, "ideal", "pri", 1, {"mtp_median_ms": 25.0, "stall_time_s": 0.0}),
        # off the map: a policer instead of the shaper, another bitrate
        run(
            root,
            "pol",
            "nopri",
            1,
            {"mtp_median_ms": 1.0, "stall_time_s": 0.0},
            uplink={"rate_mbps": None, "policer": {"rate_mbps": 70, "burst_bytes": 25000}},
        ),
        run(
            root,
            "pol",
            "pri",
            1,
            {"mtp_median_ms": 1.0, "stall_time_s": 0.0},
            uplink={"rate_mbps": None, "policer": {"rate_mbps": 70, "burst_bytes": 25000}},
        ),
        run(
            root,
            "v40",
            "nopri",
            1,
            {"mtp_median_ms": 1.0, "stall_time_s": 0.0},
            workload={"video_bitrate_mbps": 40.0},
        ),
        run(
            root,
            "v40",
            "pri",
            1,
            {"mtp_median_ms": 1.0, "stall_time_s": 0.0},
            workload={"video_bitrate_mbps": 40.0},
        ),
    ]
    return scenario(tmp_path, "m", rows)


def test_points_are_read_from_metadata_and_off_map_runs_are_left_out(map_dir: Path) -> None:
    pts = rise_map.real_points([map_dir]).set_index("setting")
    assert set(pts.index) == {"WL", "ideal"}
    wl = pts.loc["WL"]
    assert (wl["loss_model"], wl["loss_pct"], wl["queue_bdp"]) == ("iid", 0.05, 1.0)
    assert wl["ratio_mtp_median_ms"] == pytest.approx(8.0)
    assert wl["ratio_low_mtp_median_ms"] == pytest.approx(7.5)
    assert wl["ratio_high_mtp_median_ms"] == pytest.approx(8.5)
    assert wl["ratio_stall_time_s"] == pytest.approx(0.25)  # w/ Pri stalls more: below 1
    ideal = pts.loc["ideal"]
    assert (ideal["loss_model"], ideal["loss_pct"]) == ("none", 0.0)
    assert ideal["ratio_stall_time_s"] == 1.0  # neither stalled


def _regime_cells(tmp_path: Path) -> Path:
    """regime_map.csv's columns as regime_map.cells writes them (w/o Pri = `nopri`)."""
    cells = pd.DataFrame(
        [
            {
                "loss_pct": p,
                "queue_bdp": q,
                "mtp_ratio_nopri": 6.0 if p else 1.0,
                "stall_ratio_nopri": 1.0,
            }
            for p in (0.0, 0.05)
            for q in (0.1, 1.0)
        ]
    )
    cells.to_csv(tmp_path / "regime_map.csv", index=False)
    return tmp_path / "regime_map.csv"


def test_map_figure_and_points_written(map_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["--cells", str(_regime_cells(tmp_path)), str(out), str(map_dir)]
    assert rise_map.main(argv) == 0
    assert (out / "rise_map.png").stat().st_size > 1000
    caption = (out / "rise_map.txt").read_text()
    assert "m/WL (2+2)" in caption and "m/ideal (1+1)" in caption
    assert "its cells, drawn from the real endpoints on the sim site" in caption
    assert len(pd.read_csv(out / "rise_map_points.csv")) == 2


def test_map_without_the_regime_maps_cells_draws_the_points_and_says_how_to_get_them(
    map_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert rise_map.main([str(out), str(map_dir)]) == 0
    assert (out / "rise_map.png").stat().st_size > 1000
    caption = (out / "rise_map.txt").read_text()
    assert "no background" in caption and "snakemake --cores 2 regime_map" in caption
    assert "m/WL (2+2)" in caption
    assert rise_map.main(["--cells", str(tmp_path / "nope.csv"), str(out)]) == 2


def test_cells_without_the_ratio_columns_are_refused_naming_them(tmp_path: Path) -> None:
    old = tmp_path / "old.csv"  # the predictor's scheme names, as drawn before
    old.write_text("loss_pct,queue_bdp,mtp_ratio_nopri-head,stall_ratio_nopri-head\n0,1,1,1\n")
    with pytest.raises(SystemExit, match="old.csv: no column mtp_ratio_nopri, stall_ratio_nopri"):
        rise_map.read_cells(old)
    with pytest.raises(SystemExit, match="regime_map SCENARIO_DIR OUT"):
        reproduction.map_section(None, old)


def test_report_shows_the_regime_maps_cells(tmp_path: Path) -> None:
    section = "\n".join(reproduction.map_section(None, _regime_cells(tmp_path)))
    assert "the real endpoints on the sim site" in section
    assert "| loss \\ queue | 0.1 | 1 |" in section
    assert "| 0.05 | 6 | 6 |" in section and "| 0 | 1 | 1 |" in section


def test_report_gives_each_setting_its_regime_read_from_its_runs(tmp_path: Path) -> None:
    root = tmp_path / "quick"
    wl = {"uplink": {"loss": {"model": "iid", "loss_pct": 0.05}}}
    diag_wl = {
        "transport_limited_pct_guest": 98.0,
        "cwnd_to_video_bdp_guest": 0.7,
        "buffer_queued_p90_bytes_guest": 1.0e6,
        "freeze_rate_pct": 0.3,
        "stall_pct": 10.0,
        "freeze_count": 2.0,
    }
    diag_ideal = {
        "transport_limited_pct_guest": 1.0,
        "cwnd_to_video_bdp_guest": 7.0,
        "buffer_queued_p90_bytes_guest": 0.0,
        "freeze_rate_pct": 0.0,
        "stall_pct": 0.0,
        "freeze_count": 0.0,
    }
    rows = []
    for rep in (1, 2):
        rows += [
            run(root, "FB-4K-Low", "nopri", rep, {"mtp_median_ms": 25.0, **diag_ideal}),
            run(root, "FB-4K-Low", "pri", rep, {"mtp_median_ms": 25.0, **diag_ideal}),
            run(
                root,
                "FB-4K-Low-L0.05",
                "nopri",
                rep,
                {"mtp_median_ms": 300.0 + rep, **diag_wl},
                **wl,
            ),
            run(root, "FB-4K-Low-L0.05", "pri", rep, {"mtp_median_ms": 40.0, **diag_wl}, **wl),
        ]
    d = scenario(tmp_path, "quick", rows, excluded=1)
    text = reproduction.report([d], None, None)
    ideal = next(line for line in text.splitlines() if line.startswith("- **quick/FB-4K-Low**"))
    wl_line = next(line for line in text.splitlines()
                   if line.startswith("- **quick/FB-4K-Low-L0.05**"))  # fmt: skip
    assert "Not window-limited" in ideal and "median MTP 25 vs 25 ms" in ideal
    assert "Window-limited: B holds a standing queue" in wl_line
    assert "(median MTP 302 ms)" in wl_line and "(40 ms)" in wl_line
    table = next(line for line in text.splitlines() if line.startswith("| quick/FB-4K-Low-L0.05 |"))
    assert "| window-limited (transport-limited 98 %" in table
    assert "X/pri/moderate/r9: CPU saturated" in text  # excluded runs are listed
    assert "### Fig. 5" not in text  # the claims are the results page's (analysis/verdicts.py)
    assert "quick/FB-4K-Low-L0.05 | 0.3 → 0.3" in text  # the freeze table, both schemes
    assert "1 setting(s) with no freeze in either scheme" in text
    assert "1 where w/ Pri froze at least as often" in text


@pytest.mark.parametrize(
    ("rcvbuf", "says"),
    [
        (None, "in the Guest's UDP receive buffer"),  # runs before the counters were kept
        (40.0, "RcvbufErrors 40 per run"),
        (0.0, "a loss neither the link nor the socket counted"),
    ],
)
def test_host_losses_are_put_in_the_guest_socket_only_where_it_counted_them(
    rcvbuf: float | None, says: str
) -> None:
    """The report names the Guest's socket as where the Host's packets went only when the
    socket's counter says so (or predates the counter); with RcvbufErrors 0 it says it does
    not know."""
    rows = []
    for scheme in ("nopri", "pri"):
        for rep in (1, 2):
            row = {
                "scenario": "quick",
                "setting": "WL",
                "scheme": scheme,
                "rep": rep,
                "transport_limited_pct_guest": 95.0,
                "mtp_median_ms": 300.0 if scheme == "nopri" else 40.0,
                "lost_packets_host": 60.0,
                "linkem_drops_queue_down": 0.0,
            }
            if rcvbuf is not None:
                row["udp_rcvbuf_errors_guest"] = rcvbuf
            rows.append(row)
    text = "\n".join(reproduction.explanation(pd.DataFrame(rows)))
    assert "The Host's QUIC declared 60 packets lost per run w/ Pri" in text
    assert says in text
    if rcvbuf == 0.0:
        assert "receive buffer while" not in text


def test_regime_table_lists_every_setting_with_its_valid_and_invalid_runs(
    tmp_path: Path,
) -> None:
    """Each setting gets its regime, both schemes' median MTP, stalls and fps, the count of
    valid runs per scheme and the invalid ones by reason; a setting whose runs were all
    invalid still has its row."""
    root = tmp_path / "map"
    base = {"transport_limited_pct_guest": 97.0, "stall_pct": 0.0, "displayed_fps": 30.0}
    rows = [
        run(root, "L0.2-Q1", "nopri", 1, {**base, "mtp_median_ms": 300.0}),
        run(root, "L0.2-Q1", "nopri", 2, {**base, "mtp_median_ms": 500.0}),
        run(root, "L0.2-Q1", "pri", 1, {**base, "mtp_median_ms": 40.0, "stall_pct": 5.0}),
    ]
    d = scenario(tmp_path, "map", rows)
    pd.DataFrame(
        [
            [
                "L0.2-Q1/pri/moderate/r2",
                "L0.2-Q1",
                "pri",
                "moderate",
                2,
                "CPU saturated (mean 99 %)",
                "cpu_saturated",
            ],
            [
                "Q4/nopri/moderate/r1",
                "Q4",
                "nopri",
                "moderate",
                1,
                "CPU saturated (mean 95 %)",
                "cpu_saturated",
            ],
            [
                "Q4/pri/moderate/r1",
                "Q4",
                "pri",
                "moderate",
                1,
                "ran 2.0 s of 30 s; host: the kernel dropped 12 UDP datagrams",
                "short_run; rcvbuf_drops",
            ],
        ],
        columns=["path", "setting", "scheme", "speed", "rep", "reasons", "kinds"],
    ).to_csv(d / "exclusions.csv", index=False)
    runs, excl = reproduction.load([d])
    text = "\n".join(reproduction.regime_table(runs, excl))
    row = next(r for r in text.splitlines() if r.startswith("| map/L0.2-Q1 |"))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert cells[1].startswith("window-limited (transport-limited 97 %")
    assert cells[2].startswith("400 [300, 500] → 40 (n=1, no CI)")  # one pri run: no CI
    assert cells[3].startswith("10 [")  # 400 / 40
    assert cells[4] == "0 [0, 0] → 5 (n=1, no CI)"
    assert cells[6] == "2+1"
    assert cells[7] == "1: cpu_saturated (1)"
    q4 = next(r for r in text.splitlines() if r.startswith("| map/Q4 |"))
    q4_cells = [c.strip() for c in q4.split("|")[1:-1]]
    assert q4_cells[2] == "– → –" and q4_cells[6] == "0+0"
    assert "cpu_saturated (1)" in q4_cells[7] and "short_run (1)" in q4_cells[7]
    assert "rcvbuf_drops (1)" in q4_cells[7]
    assert q4_cells[7].startswith("2: ")  # two runs, three reasons


def test_regime_table_counts_an_old_exclusions_csv_by_whole_reasons(tmp_path: Path) -> None:
    """An exclusions.csv written before the reason codes (no `kinds` column) still reads: each
    run's prose counts as one kind, unparsed."""
    root = tmp_path / "old"
    base = {"transport_limited_pct_guest": 97.0, "stall_pct": 0.0, "displayed_fps": 30.0}
    d = scenario(tmp_path, "old", [run(root, "Q1", "nopri", 1, {**base, "mtp_median_ms": 3.0})])
    pd.DataFrame(
        [["Q1/pri/moderate/r1", "Q1", "pri", "moderate", 1, "ran 2.0 s of 30 s"]],
        columns=["path", "setting", "scheme", "speed", "rep", "reasons"],
    ).to_csv(d / "exclusions.csv", index=False)
    runs, excl = reproduction.load([d])
    text = "\n".join(reproduction.regime_table(runs, excl))
    row = next(r for r in text.splitlines() if r.startswith("| old/Q1 |"))
    assert row.split("|")[8].strip() == "1: ran 2.0 s of 30 s (1)"


def test_the_page_hook_reports_each_results_folder_apart(tmp_path: Path) -> None:
    """The RISE page's own sections (`page_sections`, a section hook): one mechanisms report
    per results folder, headed by its site, from the page's rows (never pooled)."""
    from analysis.claims import PageContext

    rows = []
    for tree, site, mtp in (("results", "mininet", 25.0), ("results-sim", "sim", 31.0)):
        for scheme in ("nopri", "pri"):
            rows.append({"scenario": "quick", "setting": "FB-4K-Low", "scheme": scheme,
                         "speed": "moderate", "rep": 1, "site": site, "valid": True,
                         "tree": tree, "path": str(tmp_path / tree / scheme),
                         "mtp_median_ms": mtp, "transport_limited_pct_guest": 1.0,
                         "stall_pct": 0.0, "displayed_fps": 30.0})  # fmt: skip
    ctx = PageContext(pd.DataFrame(rows), (tmp_path / "results", tmp_path / "results-sim"))
    text = "\n".join(reproduction.page_sections(ctx))
    assert "## Mechanisms on the mininet site" in text
    assert "## Mechanisms on the sim site" in text
    mininet, sim = text.split("## Mechanisms on the sim site")
    assert "25 vs 25 ms" in mininet and "31 vs 31 ms" in sim and "31 vs" not in mininet
    assert reproduction.page_sections(PageContext(pd.DataFrame(rows).iloc[:0], ())) == []
