"""The results book (book/): the markdown lint, the generated pages with and without
runs, the workload reference pages, and the site's browser check."""

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from analysis.claims import (
    GAIN,
    SAME_AS,
    Band,
    Cell,
    Condition,
    Paper,
    Point,
    SessionMetric,
    around_ratio,
    claim,
)
from analysis.verdicts import VERDICTS
from book import claims_page, front, lint, results, workloads
from book.__main__ import build, pages
from book.papers import PAPERS
from priolab.paths import REPO_ROOT
from priolab.workloads.dtp.workload import DtpParams

DTP = next(p for p in PAPERS if p.key == "dtp")

BAD = """# A page

Measured 2026-11-26 at 03:43:13 UTC on commit 6c302ca, then again at 21:08.
"""
GOOD = """# A page

A ratio of 1:10, 30 fps, port 4433, a 1048576-byte buffer, [DTP], 0.05 %, Q0-Q100,
see [the history](investigations/2026-11-26-roq-measurements.md).
"""


def test_lint_flags_time_commit_and_date():
    kinds = sorted({k for _, k, _ in lint.findings(BAD)})
    assert kinds == ["commit id", "date", "time of day"]
    assert [m for _, k, m in lint.findings(BAD) if k == "time of day"] == ["03:43:13", "21:08"]


def test_lint_passes_plain_text_and_links_to_history():
    assert lint.findings(GOOD) == []


def test_lint_cli_fails_on_a_bad_file(tmp_path):
    f = tmp_path / "bad.md"
    f.write_text(BAD)
    assert lint.main([str(f)]) == 1
    f.write_text(GOOD)
    assert lint.main([str(f)]) == 0


def _tracked_finds(check: Callable[[str], list[tuple[int, str, str]]]) -> list[str]:
    """`file:line: kind 'match'` of every find of `check` in the tracked hand-written pages."""
    return [
        f"{f.relative_to(REPO_ROOT)}:{line}: {kind} {m!r}"
        for f in lint.tracked_markdown()
        for line, kind, m in check(f.read_text())
    ]


def test_hand_written_markdown_has_no_time_commit_or_date():
    found = _tracked_finds(lint.findings)
    assert found == [], "move measurements to docs/investigations/ or a generated page"


FIGURES_BAD = """# A page

Tests: `cargo test -p x` (≈ 5 s in debug). The scheduler takes 13.4 ns/datagram.

- A sim run goes at 37× real time, 0.84 s wall, 2 min of one core (load average 6.7).
- Another item, with [the RISE page](../docs/results/rise.md): its link is not the first's.

| scenario | runs |
|---|---|
| `dtp-quick.yaml` | 42 runs, ~12 min of runs, 10 % of runs invalid |

```
python -m span    # ~2 min of one core; see [a note](investigations/x.md)
```
"""
FIGURES_GOOD = """# A page

70 Mbit/s ([RISE setup]), 4 × 30 s, a 1 s warm-up, 168 runs of 120 s (~5.6 h), `rate 100gbit`
adds 0.12 µs per frame, at most one wake-up per 100 µs, waits for a load average below 2,
quinn's first probe timeout is about 1 s, a 60 s wall-clock limit.

Tests: `cargo test -p x` (a 30 s session in virtual time; asserts 90 % of the frames).
The scheduler takes 13.4 ns/datagram on a loaded machine
([the note](../docs/investigations/2026-11-26-priochan.md)).

- A sim run goes at 37× real time: [the RISE page](../docs/results/rise.md).
- `speedup` is virtual ÷ wall, e.g. `{"wall_s": 0.84, "speedup": 37.0}` or `37× real time`.

| scenario | cost |
|---|---|
| `quick.yaml` | 2 min of one core ([the note](investigations/2026-11-23-vm.md)) |
"""


def test_lint_flags_measured_figures_without_a_link():
    found = lint.unlinked_figures(FIGURES_BAD)
    assert [(line, kind) for line, kind, _ in found] == [
        (3, "time per operation"),
        (3, "test duration"),
        (5, "speed against real time"),
        (5, "wall time"),
        (5, "CPU time"),
        (5, "load average"),
        (10, "share of runs"),
        (10, "run time"),
        (13, "CPU time"),  # a code block cannot link: the figure moves out of it
    ]
    assert [m for _, _, m in found][:2] == ["13.4 ns/datagram", "≈ 5 s"]


def test_lint_passes_parameters_and_linked_figures():
    assert lint.unlinked_figures(FIGURES_GOOD) == []
    assert lint.unlinked_figures(GOOD) == []


def test_lint_cli_fails_on_an_unlinked_figure(tmp_path, capsys):
    f = tmp_path / "README.md"
    f.write_text(FIGURES_BAD)
    assert lint.main([str(f)]) == 1
    assert "README.md:3: measured figure (time per operation) '13.4 ns/datagram'" in (
        capsys.readouterr().out
    )
    f.write_text(FIGURES_GOOD)
    assert lint.main([str(f)]) == 0


def test_hand_written_markdown_links_every_measured_figure():
    found = _tracked_finds(lint.unlinked_figures)
    assert found == [], "link the figure to its results page or dated note, or move it there"


def test_pages_build_without_runs_and_say_so(tmp_path):
    """An empty evidence store: every page says so, every claim reads 'not run' with the
    command that fills its primary condition, and the front page counts them all."""
    written = build(tmp_path / "docs", REPO_ROOT, tmp_path / "empty-evidence")
    names = {p.relative_to(tmp_path / "docs").as_posix() for p in written}
    for paper in ("rise", "dtp", "qpr", "roq", "moq", "agreement"):
        assert f"results/{paper}.md" in names
        text = (tmp_path / "docs" / "results" / f"{paper}.md").read_text()
        assert "No runs are present" in text
    for paper in PAPERS:
        text = (tmp_path / "docs" / "results" / f"{paper.key}.md").read_text()
        rows = [x for x in text.splitlines() if x.startswith("| [") and "](#" in x]
        assert len(rows) == len(paper.claims) and all(x.endswith("| **not run** |") for x in rows)
        assert text.count("To fill the primary condition: `snakemake --cores 2 --config") == (
            len(paper.claims))  # fmt: skip
    dtp = (tmp_path / "docs/results/dtp.md").read_text()
    assert "--config site=sim scenario=scenarios/dtp-bandwidth.yaml reps=10 -- results-sim/" in dtp
    assert "then `priolab evidence add results-sim`" in dtp
    assert "The evidence store (`evidence/`) holds no record of this paper's" in dtp
    assert "sim" in (tmp_path / "docs/results/agreement.md").read_text()
    index = (tmp_path / "docs/results/index.md").read_text()
    total = sum(len(p.claims) for p in PAPERS)
    assert "| verdict | [RISE](rise.md) | [DTP](dtp.md) | [QPR](qpr.md) | [RoQ](roq.md) | " in (
        index)  # fmt: skip
    assert "| reproduced | 0 | 0 | 0 | 0 | 0 |" in index
    assert f"[{len(DTP.claims)}](dtp.md#verdict-not-run)" in index
    assert f"| claims | {' | '.join(str(len(p.claims)) for p in PAPERS)} |" in index
    assert f"All papers: {total} claims, 0 reproduced, " in index


def _runs_csv(
    results_dir: Path,
    scenario: str,
    cells: dict[tuple[str, str, str], list[float]],
    metric: str = "deadline_ratio",
    site: str = "sim",
    excluded: int = 0,
) -> Path:
    """A hand-made aggregated scenario: runs.csv with one row per value of each
    (setting, scheme, speed) cell, its metadata.json (site, commit), and `excluded` invalid
    runs of the first cell in exclusions.csv."""
    d = results_dir / scenario
    rows = []
    for (setting, scheme, speed), values in cells.items():
        for rep, value in enumerate(values, 1):
            run = d / setting / scheme / speed / f"r{rep}"
            run.mkdir(parents=True)
            meta = {"site": {"kind": site}, "git": {"commit": "a" * 40, "dirty": False}}
            (run / "metadata.json").write_text(json.dumps(meta))
            rows.append({"path": str(run), "setting": setting, "setting_label": setting,
                         "scheme": scheme, "speed": speed, "rep": rep, metric: value})  # fmt: skip
    pd.DataFrame(rows).to_csv(d / "runs.csv", index=False)
    (setting, scheme, speed) = next(iter(cells))
    pd.DataFrame(
        [{"path": f"{setting}/{scheme}/{speed}/r{99 - i}", "setting": setting, "scheme": scheme,
          "speed": speed, "rep": 99 - i, "reasons": "CPU saturated", "kinds": "cpu_saturated"}
         for i in range(excluded)],
        columns=["path", "setting", "scheme", "speed", "rep", "reasons", "kinds"],
    ).to_csv(d / "exclusions.csv", index=False)  # fmt: skip
    (d / "summary.md").write_text(f"# {scenario}\n\n| metric | x |\n|---|---|\n")
    return d


def _six(value: float, spread: float = 0.01) -> list[float]:
    return [value + spread * k for k in (-2, -1, 0, 1, 2, 0)]


def test_a_claims_primary_and_other_rows_come_from_their_own_cells_and_sites(tmp_path):
    """DTP's 'DTP-D above SCTP' at 6 MB/s': its primary condition (sim, BBR) reads only its
    cells on the sim site; the Mininet runs are its sensitivity row, never pooled; the page
    gives both with n, the scenario file, the verdict and the runs the harness spoiled."""
    cells = {("6MBps", "dtp-d", "bbr"): _six(0.8), ("6MBps", "sctp", "bbr"): _six(0.5)}
    _runs_csv(tmp_path / "results-sim", "dtp-bandwidth", cells, site="sim", excluded=1)
    _runs_csv(tmp_path / "results", "dtp-bandwidth",
              {k: _six(0.5) for k in cells}, site="mininet")  # fmt: skip
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(DTP, [tmp_path / "results", tmp_path / "results-sim"], out, REPO_ROOT,
                        "abc")  # fmt: skip
    row = next(x for x in text.splitlines() if x.startswith("| [Fig. 3a, §VI-A.1](#fig3-dtpd-ab"))
    assert "1.6 [" in row and ", n 6 + 6 |" in row and row.endswith("| **reproduced** |")
    section = text.split('<a id="fig3-dtpd-above-sctp-6"></a>')[1].split("<a id=")[0]
    primary = next(x for x in section.splitlines() if x.startswith("| **primary** · sim"))
    other = next(x for x in section.splitlines() if x.startswith("| **sensitivity** · mininet"))
    assert "`scenarios/dtp-bandwidth.yaml` 6MBps, dtp-d ÷ sctp (bbr)" in primary
    assert "| 1.6 [" in primary and "| 1 [" in other  # 0.8/0.5 on sim, 0.5/0.5 on Mininet
    assert "| not reproduced |" in other  # no effect on Mininet
    assert "What the runs show (primary): dtp-d:" in section  # the workload's mechanism
    assert "CPU saturated" in text and "aaaaaaaaaaaa" in text  # provenance, invalid runs
    assert "## Scenario dtp-bandwidth on the sim site" in text


def test_a_run_without_a_recorded_site_says_so(tmp_path):
    _runs_csv(tmp_path / "results", "dtp-bandwidth", {("6MBps", "dtp", "bbr"): _six(0.8)})
    for meta in (tmp_path / "results").rglob("metadata.json"):
        meta.write_text(json.dumps({"git": {"commit": "a" * 40}}))
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(DTP, tmp_path / "results", out, REPO_ROOT, "abc")
    assert "## Scenario dtp-bandwidth on the results records (site not recorded)" in text


def _every_kind_paper() -> Paper:
    """One claim per verdict kind, on dtp-bandwidth's cells (a hand-made paper: the runs of
    `_every_kind_runs` decide each)."""
    ratio = {"metric": "deadline_ratio", "kind": "ratio"}

    def at(setting: str, num: str, den: str = "") -> tuple[Condition, ...]:
        cell = Cell("dtp-bandwidth", setting, num, "bbr")
        pt = Point(cell, Cell("dtp-bandwidth", setting, den, "bbr") if den else None)
        return (Condition("primary", "sim", (pt,), "test"),)

    claims = (
        claim("k-reproduced", "F1", "a 1.6× gain", "1.6×", band=around_ratio(1.6),
              conditions=at("1MBps", "dtp", "quic"), direction="gain", **ratio),
        claim("k-inconclusive", "F2", "the same", "1×", band=SAME_AS,
              conditions=at("2MBps", "dtp", "quic"), **ratio),
        claim("k-differs", "F3", "a 5× gain", "5×", band=around_ratio(5.0),
              conditions=at("1MBps", "dtp", "quic"), direction="gain", **ratio),
        claim("k-not-reproduced", "F4", "a gain", "> 1×", band=GAIN,
              conditions=at("3MBps", "dtp", "quic"), direction="gain", **ratio),
        claim("k-outside", "F5", "about 0.2", "0.2", "deadline_ratio", "mean",
              Band(0.15, 0.25, "test"), at("1MBps", "dtp")),
        claim("k-not-run", "F6", "never ran", "1", "deadline_ratio", "mean",
              Band(0.9, 1.0, "test"), at("10MBps", "dtp")),
    )  # fmt: skip
    return Paper("dtp", "DTP", "dtp", ("dtp-bandwidth",), claims,
                 {"deadline_ratio": SessionMetric("higher", 0.0)}, "sites")  # fmt: skip


def _every_kind_runs(results_dir: Path) -> None:
    _runs_csv(results_dir, "dtp-bandwidth", {
        ("1MBps", "dtp", "bbr"): _six(0.8), ("1MBps", "quic", "bbr"): _six(0.5),  # 1.6×
        ("2MBps", "dtp", "bbr"): [0.5, 0.9, 0.6, 1.2, 0.7, 0.8],  # wide: [0.6, 1.4] or so
        ("2MBps", "quic", "bbr"): _six(0.8),
        ("3MBps", "dtp", "bbr"): _six(0.5), ("3MBps", "quic", "bbr"): _six(0.5),  # 1×
    }, site="sim")  # fmt: skip


def test_hand_made_runs_give_every_verdict_kind_on_the_page_and_the_front_page(tmp_path):
    _every_kind_runs(tmp_path / "results-sim")
    paper = _every_kind_paper()
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text, judged = results.render(paper, [tmp_path / "results-sim"], out, REPO_ROOT, "abc")
    got = {j.claim.key: j.primary.verdict.kind for j in judged}
    assert got == {"k-reproduced": "reproduced", "k-inconclusive": "inconclusive",
                   "k-differs": "differs", "k-not-reproduced": "not reproduced",
                   "k-outside": "outside the band", "k-not-run": "not run"}  # fmt: skip
    for k in VERDICTS:
        start = f'| <a id="{claims_page.anchor(k)}"></a>'
        row = next(x for x in text.splitlines() if x.startswith(start))
        assert f"**{k}** (1) | [F" in row, row
    assert "| all | 6 claims |" in text
    index = front.page([(paper, judged)], (), tmp_path / "evidence")
    assert "| verdict | [DTP](dtp.md) |" in index
    assert "| reproduced | [1](dtp.md#verdict-reproduced) |" in index
    assert "| claims | 6 |" in index and "6 claims, 1 reproduced, 1 inconclusive" in index


def test_the_claims_table_is_narrow_and_every_claim_has_its_section(tmp_path):
    """Four columns (claim, paper, priolab with CI and n, verdict); the details a click away
    in a section whose anchor the claim links to."""
    _every_kind_runs(tmp_path / "results-sim")
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(_every_kind_paper(), [tmp_path / "results-sim"], out, REPO_ROOT, "abc")
    table = text.split("## Claims")[1].split("##")[0]
    assert "| claim | paper | priolab [95 % CI], n | verdict |" in table
    assert all(x.count(" | ") == 3 for x in table.splitlines() if x.startswith("| ["))
    for key in ("k-reproduced", "k-not-run"):
        assert f"](#{key})" in table and f'<a id="{key}"></a>' in text


def test_runs_that_repeat_each_other_say_so(tmp_path):
    """Sim runs whose seed changed nothing are one result, not six: n says so."""
    _runs_csv(tmp_path / "results-sim", "dtp-bandwidth", {
        ("1MBps", "dtp", "bbr"): [0.8] * 6, ("1MBps", "quic", "bbr"): _six(0.5)})  # fmt: skip
    rows = results.rows_of([results.load_scenario(tmp_path / "results-sim", "dtp-bandwidth", {})])
    paper = _every_kind_paper()
    (j,) = claims_page.judge_all(
        Paper(paper.key, "D", "dtp", ("dtp-bandwidth",), paper.claims[:1],
              paper.metrics, "s"), rows)  # fmt: skip
    assert claims_page.n_text(j.primary) == "6 (all alike) + 6"


def test_workload_page_follows_the_model():
    text = workloads.page("dtp", REPO_ROOT)
    for name, field in DtpParams.model_fields.items():
        assert f"| `{name}` |" in text
        if field.description:
            assert field.description.replace("|", "\\|") in text
    assert "`deadline_ratio`" in text  # a core metric
    assert "≤ 1.0" in text  # alpha's bound from the schema
    assert json.dumps(DtpParams.model_json_schema(), indent=2) in text


needs_site_tools = pytest.mark.skipif(
    shutil.which("chromium") is None
    or shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None,
    reason="needs Debian's chromium and mkdocs in the venv (make setup installs both)",
)


@pytest.mark.browser
@needs_site_tools
def test_site_builds_and_every_page_renders_in_chromium(tmp_path):
    from book import browser

    docs = tmp_path / "src"
    shutil.copytree(REPO_ROOT / "docs", docs, ignore=shutil.ignore_patterns("results", "workloads"))
    build(docs, REPO_ROOT, tmp_path / "empty-evidence")
    cfg = (REPO_ROOT / "mkdocs.yml").read_text()
    cfg = cfg.replace("docs_dir: docs", f"docs_dir: {docs}").replace(
        "site_dir: build/site", f"site_dir: {tmp_path / 'site'}"
    )
    (tmp_path / "mkdocs.yml").write_text(cfg)
    mkdocs = Path(sys.executable).parent / "mkdocs"
    subprocess.run(
        [str(mkdocs), "build", "--strict", "-q", "-f", str(tmp_path / "mkdocs.yml")], check=True
    )
    rep = browser.check(tmp_path / "site", tmp_path / "shots")
    assert rep.problems == []
    assert rep.pages >= 15 and rep.links > 10 and rep.tables > 10
    assert (tmp_path / "shots" / "architecture.png").stat().st_size > 1000
    # and it can fail: a broken link, a missing image and a table cut off at 1,280 px
    page = tmp_path / "site" / "architecture.html"
    wide = "<table><tr>" + "".join(f"<td>cell_{i:03d}_unbreakable_text</td>" for i in range(40))
    page.write_text(
        page.read_text().replace(
            "</article>",
            f'<a href="nowhere.html">x</a><img src="gone.png">{wide}</tr></table></article>',
            1,
        )
    )
    rep = browser.check(tmp_path / "site", None)
    assert any("broken link (404)" in p for p in rep.problems)
    assert any("image did not load" in p for p in rep.problems)
    assert any(p.startswith("architecture.html: a table is cut off") for p in rep.problems)


def test_rise_page_reports_the_sim_site_apart(tmp_path):
    """Sim runs get their own mechanisms section on RISE's page (never pooled with Mininet
    runs): the paper's section hook."""
    d = tmp_path / "results-sim" / "rise-freeze-map"
    d.mkdir(parents=True)
    rows = [
        {"path": str(d / f"{s}{i}"), "setting": "5G", "scheme": s, "speed": "moderate",
         "freeze_rate_pct": 0.5 if s == "nopri" else 0.0, "mtp_median_ms": 30.0}
        for s in ("nopri", "pri")
        for i in range(3)
    ]  # fmt: skip
    for r in rows:
        Path(r["path"]).mkdir()
        (Path(r["path"]) / "metadata.json").write_text(json.dumps({"site": {"kind": "sim"}}))
    pd.DataFrame(rows).to_csv(d / "runs.csv", index=False)
    (d / "exclusions.csv").write_text("path,setting,scheme,speed,rep,reasons\n")
    pages(tmp_path / "docs", REPO_ROOT, [tmp_path / "results-sim"])
    text = (tmp_path / "docs" / "results" / "rise.md").read_text()
    assert "## Mechanisms on the sim site" in text
    assert "Mechanisms on the mininet site" not in text  # no Mininet runs: no Mininet report
    line = next(x for x in text.splitlines() if x.startswith("| 5G | 3+3 |"))
    assert "∞" in line and line.endswith("| yes |")


def test_run_cost_from_metadata_per_site():
    sim = [{"site": {"kind": "sim", "virtual_s": 60.0, "wall_s": w, "cpu_s": w * 0.9}}
           for w in (2.0, 3.0, 4.0)]  # fmt: skip
    mininet = [{"site": {"kind": "mininet"}, "ran_s": r} for r in (60.1, 60.3)]
    text = results.run_cost([*sim, *mininet, {}])
    assert text.startswith("on the sim site, 3 runs of 60 s in virtual time took 3 s (range 2–4)")
    assert "2.7 s (range 1.8–3.6) of CPU time" in text and "20× (range 15–30) real time" in text
    assert text.endswith("mininet site, 2 runs took 60.2 s (range 60.1–60.3) each in real time")
    assert results.run_cost([{}, {"site": {"kind": "sim"}}]) == ""
    assert results.run_cost([{"ran_s": 30.0}]) == (
        "where the site is not recorded, 1 run took 30 s each in real time"
    )


def test_the_primary_cells_list_says_which_need_runs(tmp_path):
    """`python -m book.cells`: every primary cell once, with the claims that read it and the
    judge's decision on its runs; with six runs a side a cell still needs more (the floor is
    10)."""
    from book import cells

    _runs_csv(tmp_path / "results-sim", "dtp-bandwidth", {
        ("6MBps", "dtp-d", "bbr"): _six(0.8), ("6MBps", "sctp", "bbr"): _six(0.5)})  # fmt: skip
    out = cells.lines([tmp_path / "results", tmp_path / "results-sim"], REPO_ROOT, "dtp")
    rows = out[2:]
    keys = [tuple(r.split(" | ")[1:6]) for r in rows]
    assert len(keys) == len(set(keys)) == len({c for cl in DTP.claims for c in cl.primary.cells()})
    sctp = next(r for r in rows if "| 6MBps | sctp | bbr | sim |" in r)
    assert "fig3-dtpd-above-sctp-6" in sctp and "| 6 | no: " in sctp and "fewer than the 10" in sctp


def test_a_cell_that_needs_more_runs_is_asked_for_twice_as_many(tmp_path):
    """Ten runs a side whose interval is still wider than half the band: the page asks for
    20 (and never more than 40)."""
    wide = [0.5, 0.9, 0.6, 1.2, 0.7, 0.8, 0.55, 1.1, 0.65, 0.95]
    _runs_csv(tmp_path / "results-sim", "dtp-bandwidth", {
        ("2MBps", "dtp", "bbr"): wide, ("2MBps", "quic", "bbr"): wide[::-1]})  # fmt: skip
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(_every_kind_paper(), [tmp_path / "results-sim"], out, REPO_ROOT, "abc")
    section = text.split('<a id="k-inconclusive"></a>')[1].split("<a id=")[0]
    assert "- Runs: more wanted (half-width" in section
    assert "reps=20 -- results-sim/dtp-bandwidth/2MBps/{dtp,quic}/bbr/r{1..20}/" in section
