"""RISE's claims table on its results page (priolab/workloads/rise/book_claims.py) and the
speed labels the reproduction report keeps apart (reproduction.load), on hand-made
aggregated results (no runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from book.__main__ import pages
from priolab.paths import REPO_ROOT
from priolab.workloads.rise import book_claims, reproduction

IDEAL_DIAG = {"transport_limited_pct_guest": 2.0, "buffer_queued_p90_bytes_guest": 0.0}
WL_DIAG = {"transport_limited_pct_guest": 97.0, "buffer_queued_p90_bytes_guest": 9.0e5}


def tree(
    root: Path,
    scenario: str,
    site: str,
    cells: dict[tuple[str, str, str], list[dict[str, float]]],
) -> Path:
    """An aggregated scenario folder: (setting, scheme, speed) → one metrics dict per run.
    runs.csv gets `setting_label` as analysis/aggregate.py writes it."""
    d = root / scenario
    speeds = {sp for _, _, sp in cells}
    rows = []
    for (setting, scheme, speed), runs in cells.items():
        for rep, metrics in enumerate(runs, start=1):
            run = d / setting / scheme / speed / f"r{rep}"
            run.mkdir(parents=True)
            meta = {"site": {"kind": site}, "cpu": {"utilisation_mean_pct": 50.0}}
            (run / "metadata.json").write_text(json.dumps(meta))
            label = f"{setting}/{speed}" if len(speeds) > 1 else setting
            rows.append({"setting_label": label, "setting": setting, "scheme": scheme,
                         "speed": speed, "rep": rep, "path": str(run), **metrics})  # fmt: skip
    pd.DataFrame(rows).to_csv(d / "runs.csv", index=False)
    (d / "exclusions.csv").write_text("path,setting,scheme,speed,rep,reasons\n")
    return d


def ten(spread: float = 0.01, **metrics: float) -> list[dict[str, float]]:
    """Ten runs around the given means (± 4.5 × spread)."""
    return [{k: v + spread * (i - 4.5) for k, v in metrics.items()} for i in range(10)]


def fb_transport(root: Path, site: str, nopri_mtp: float, diag: dict[str, float]) -> Path:
    return tree(root, "rise-transport", site, {
        ("FB-4K-Low", "nopri", "moderate"): ten(5.0, mtp_median_ms=nopri_mtp, **diag),
        ("FB-4K-Low", "pri", "moderate"): ten(mtp_median_ms=30.0, **diag),
    })  # fmt: skip


def test_each_site_gets_its_own_rows_with_n_ci_and_verdict(tmp_path: Path) -> None:
    """Mininet and sim runs of the same place are never pooled: one row per site, each with
    its n, CI, site, scenario file and a verdict in the book's words."""
    fb_transport(tmp_path / "results", "mininet", 30.0, IDEAL_DIAG)
    fb_transport(tmp_path / "results-sim", "sim", 282.0, WL_DIAG)
    files = {"rise-transport": Path("scenarios/rise-transport.yaml")}
    lines = book_claims.section([tmp_path / "results", tmp_path / "results-sim"], files)
    rows = [x for x in lines if x.startswith("| Fig. 5 | FB/4K/Low: median MTP 9.4×")]
    assert len(rows) == 2
    mininet, sim = rows
    cells = [c.strip() for c in mininet.split("|")]
    # source, claim, metric, paper, path, value, n, site, file, setting, verdict
    assert cells[5:11] == ["paper's link", cells[6], "10+10", "mininet",
                           "`scenarios/rise-transport.yaml`", "FB-4K-Low"]  # fmt: skip
    assert cells[6].startswith("1 [")  # 30 / 30, spread ± 0.75 ms
    assert cells[11].startswith("not reproduced: priolab lower (CI below the paper), on a path")
    assert "not window-limited (transport-limited 2 %" in cells[11]
    s = [c.strip() for c in sim.split("|")]
    assert s[8] == "sim" and s[7] == "10+10"
    assert s[6].startswith("9.4 [") and s[11].startswith("reproduced:")  # 282 / 30 = 9.4
    # a claim of a setting no tree ran says so
    five_g = next(x for x in lines if x.startswith("| Fig. 5 | 5G/FHD/Low: median MTP 2×"))
    assert "| not run |" in five_g


def test_no_rise_runs_no_section(tmp_path: Path) -> None:
    assert book_claims.section([tmp_path / "results"], {}) == []


def test_verdict_words() -> None:
    ratio = reproduction.CLAIMS[0]  # 5G median MTP 2×: a ratio
    bound = next(c for c in reproduction.CLAIMS if c.upper_bound)
    assert book_claims.verdict(ratio, {"code": "inside"}) == (
        "reproduced: paper's value inside the CI"
    )
    ideal = {"code": "lower", "regime": "not window-limited (transport-limited 2 %)"}
    assert book_claims.verdict(ratio, ideal) == (
        "not reproduced: priolab lower (CI below the paper), on a path where w/o Pri was "
        "not window-limited (transport-limited 2 %)"
    )
    wl = {"code": "lower", "regime": "window-limited (x)"}
    assert book_claims.verdict(ratio, wl) == "not reproduced: priolab lower (CI below the paper)"
    assert book_claims.verdict(bound, {"code": "straddles"}).startswith("inconclusive")
    assert book_claims.verdict(bound, {"code": "fails"}) == (
        "not reproduced: does not hold (CI above the bound)"
    )
    assert book_claims.verdict(ratio, {"code": "undefined"}) == reproduction.VERDICTS["undefined"]
    # every code the report can give has words here
    for code in reproduction.VERDICTS:
        assert book_claims.verdict(ratio, {"code": code})


def test_speeds_are_never_pooled(tmp_path: Path) -> None:
    """rise-content runs each setting at three speeds: Fig. 6's slow claim reads the slow
    runs only (a pool with the fast ones would give 2 ×, not 4 ×), and the report's tables
    name each speed."""
    d = tree(tmp_path, "rise-content", "sim", {
        ("FB-4K-Low", "nopri", "slow"): ten(mismatch_p95_deg=4.0, **IDEAL_DIAG),
        ("FB-4K-Low", "pri", "slow"): ten(mismatch_p95_deg=1.0, **IDEAL_DIAG),
        ("FB-4K-Low", "nopri", "fast"): ten(mismatch_p95_deg=4.0, **IDEAL_DIAG),
        ("FB-4K-Low", "pri", "fast"): ten(mismatch_p95_deg=4.0, **IDEAL_DIAG),
    })  # fmt: skip
    runs, _ = reproduction.load([d])
    assert set(runs["setting"]) == {"FB-4K-Low/slow", "FB-4K-Low/fast"}
    assert set(runs["site"]) == {"sim"}
    slow = next(c for c in reproduction.CLAIMS if c.text.startswith("slow movement: p95"))
    (row,) = reproduction.evaluate(slow, runs)
    assert row["place"] == "rise-content/FB-4K-Low/slow" and row["n"] == "10+10"
    assert 3.9 < row["v"][0] < 4.1  # type: ignore[index]
    fast = next(c for c in reproduction.CLAIMS if c.text.startswith("fast movement: p95"))
    (row,) = reproduction.evaluate(fast, runs)
    assert 0.99 < row["v"][0] < 1.01  # type: ignore[index]


def test_rise_page_opens_with_the_claims_of_the_sim_runs(tmp_path: Path) -> None:
    """With RISE runs on the sim site only, the page shows the claims table (site sim) and
    the sim runs' summaries instead of saying that no runs are present."""
    d = fb_transport(tmp_path / "results-sim", "sim", 282.0, WL_DIAG)
    (d / "summary.md").write_text("# rise-transport\n\nthe summary of the sim runs\n")
    pic = tmp_path / "results-sim" / "picture"
    pic.mkdir()
    pd.DataFrame(
        [{"scenario": "rise-transport", "setting": "FB-4K-Low", "scheme": s, "rep": 1,
          "source": "forest.exr", "mismatch_median_deg": 1.0, "ssim_mean": 0.9,
          "psnr_mean_db": 30.0} for s in ("nopri", "pri")]
    ).to_csv(pic / "runs.csv", index=False)  # fmt: skip
    pages(tmp_path / "docs", REPO_ROOT, [tmp_path / "results-sim"])
    text = (tmp_path / "docs" / "results" / "rise.md").read_text()
    assert "No runs are present" not in text
    assert "the summary of the sim runs" in text
    row = next(x for x in text.splitlines() if x.startswith("| Fig. 5 | FB/4K/Low: median"))
    assert "| sim | `scenarios/rise-transport.yaml` | FB-4K-Low | reproduced" in row
    assert text.index("## The paper's claims beside") < text.index("## The reproduction report")
    assert "### Fig. 7: picture quality (SSIM, PSNR)" in text  # the sim site's scored runs
    assert "| rise-transport/FB-4K-Low | – | 1+1 |" in text  # no speed column: –
    assert "Not scored yet: rise-transport/FB-4K-Low nopri (1 of 10 runs scored)" in text


def test_open_cells_say_what_is_there_and_the_command_that_fills_them(tmp_path: Path) -> None:
    """A cell (claim × setting × path) is filled only by n ≥ 10 per scheme with a CI:
    FB/4K/Low's 9.4× is filled on the paper's link (10 + 10 runs); the window-limited path has
    3 + 3 runs and stays open, naming them and the sim command of the figure's own scenario."""
    tree(tmp_path / "results-sim", "rise-transport", "sim", {
        ("FB-4K-Low", "nopri", "moderate"): ten(mtp_median_ms=282.0, mtp_p95_ms=300.0),
        ("FB-4K-Low", "pri", "moderate"): ten(mtp_median_ms=30.0, mtp_p95_ms=40.0),
    })  # fmt: skip
    tree(tmp_path / "results-sim", "rise-transport-wl", "sim", {
        ("FB-4K-Low", "nopri", "moderate"): ten(mtp_median_ms=282.0, **WL_DIAG)[:3],
        ("FB-4K-Low", "pri", "moderate"): ten(mtp_median_ms=30.0, **WL_DIAG)[:3],
    })  # fmt: skip
    files = {"rise-transport": Path("scenarios/rise-transport.yaml"),
             "rise-transport-wl": Path("scenarios/rise-transport-wl.yaml")}  # fmt: skip
    lines = book_claims.section([tmp_path / "results-sim"], files)
    assert "### Cells still open" in lines
    fb = [x for x in lines if x.startswith("- Fig. 5, FB/4K/Low: median MTP 9.4× lower")]
    assert len(fb) == 1  # the paper's link is filled: only the window-limited path is open
    assert "[FB-4K-Low; window-limited (map)]: rise-transport-wl/FB-4K-Low 3+3 runs" in fb[0]
    assert fb[0].endswith(
        "`snakemake --cores 2 all --config site=sim reps=10 "
        "scenario=scenarios/rise-transport-wl.yaml`"
    )
    # a claim across three settings is a cell per setting: FB/4K/Low is filled on the paper's
    # link, 5G/FHD/Low and FB/4K/High are not run
    p95 = [x for x in lines if x.startswith("- Fig. 5, p95 MTP") and "paper's link]" in x]
    assert [x.split("[")[1].split(";")[0] for x in p95] == ["5G-FHD-Low", "FB-4K-High"]
    assert all(": not run. Fill:" in x for x in p95)
    # Fig. 10's places: rise-bitrate(-wl), never quick.yaml (make reproduce's)
    v30 = [x for x in lines if x.startswith("- Fig. 10, above 25 Mbit/s: median MTP")
           and "[V30M;" in x]  # fmt: skip
    assert len(v30) == 2
    assert v30[0].endswith("scenario=scenarios/rise-bitrate.yaml`")
    assert v30[1].endswith("scenario=scenarios/rise-bitrate-wl.yaml`")


def test_a_ratio_of_two_zeros_shows_both_means_and_counts_as_filled(tmp_path: Path) -> None:
    """No freeze in either scheme: the ratio is 0/0, so the cell shows each scheme's mean with
    its CI, and the open-cells list says the ratio cannot be had rather than asking for runs."""
    tree(tmp_path / "results-sim", "rise-transport", "sim", {
        ("5G-FHD-Low", "nopri", "moderate"): ten(0.0, freeze_rate_pct=0.0, **IDEAL_DIAG),
        ("5G-FHD-Low", "pri", "moderate"): ten(0.0, freeze_rate_pct=0.0, **IDEAL_DIAG),
    })  # fmt: skip
    lines = book_claims.section([tmp_path / "results-sim"], {})
    row = next(x for x in lines if x.startswith("| Fig. 5 | 5G/FHD/Low: freeze rate 82×"))
    assert "| 0/0: nopri 0 [0, 0], pri 0 [0, 0] | 10+10 |" in row
    cell = "Fig. 5, 5G/FHD/Low: freeze rate 82× lower w/ Pri [5G-FHD-Low; paper's link]"
    assert not any(x.startswith(f"- {cell}") for x in lines)
    undefined = next(x for x in lines if x.startswith("Filled, but the ratio is not a number"))
    assert cell in undefined
    # the absolute bound on w/ Pri's freeze rate is a number with a CI: filled, not 0/0
    bound = "keeps the freeze rate below 1 % (%) [5G-FHD-Low; paper's link]"
    assert not any(bound in x for x in lines if x.startswith("- ")) and bound not in undefined
    # with too few runs the same cell is open, not "filled without a ratio"
    few = tree(tmp_path / "few", "rise-transport", "sim", {
        ("5G-FHD-Low", "nopri", "moderate"): ten(0.0, freeze_rate_pct=0.0, **IDEAL_DIAG)[:4],
        ("5G-FHD-Low", "pri", "moderate"): ten(0.0, freeze_rate_pct=0.0, **IDEAL_DIAG)[:4],
    })  # fmt: skip
    lines = book_claims.section([few.parent], {})
    assert any(x.startswith(f"- {cell}: rise-transport/5G-FHD-Low 4+4 runs") for x in lines)
