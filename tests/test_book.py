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

from book import lint, results, workloads
from book.__main__ import build, pages
from book.papers import DTP, PAPERS
from priolab.paths import REPO_ROOT
from priolab.workloads.dtp.workload import DtpParams

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
    written = build(tmp_path / "docs", REPO_ROOT, tmp_path / "empty-evidence")
    names = {p.relative_to(tmp_path / "docs").as_posix() for p in written}
    for paper in ("rise", "dtp", "qpr", "roq", "moq", "agreement"):
        assert f"results/{paper}.md" in names
        text = (tmp_path / "docs" / "results" / f"{paper}.md").read_text()
        assert "No runs are present" in text
    dtp = (tmp_path / "docs/results/dtp.md").read_text()
    assert "--config scenario=scenarios/" in dtp and "--config site=sim scenario=scenarios/" in dtp
    assert "The evidence store (`evidence/`) holds no record of this paper's" in dtp
    assert "priolab evidence add results-sim" in dtp
    assert "sim" in (tmp_path / "docs/results/agreement.md").read_text()


def _fake_scenario(results_dir: Path, site: str = "mininet", dtp: float = 0.8) -> None:
    """dtp-quick with 3 valid runs per scheme (deadline ratio `dtp` vs 0.2) and one invalid."""
    d = results_dir / "dtp-quick"
    rows = []
    for scheme, value in (("dtp", dtp), ("quic", 0.2)):
        for rep in (1, 2, 3):
            run = d / "3MBps" / scheme / "none" / f"r{rep}"
            run.mkdir(parents=True)
            meta = {"site": {"kind": site}, "git": {"commit": "a" * 40, "dirty": False}}
            (run / "metadata.json").write_text(json.dumps(meta))
            rows.append({"path": str(run), "setting": "3MBps", "scheme": scheme,
                         "deadline_ratio": value + 0.01 * rep})  # fmt: skip
    pd.DataFrame(rows).to_csv(d / "runs.csv", index=False)
    pd.DataFrame(
        [
            {
                "path": "3MBps/dtp/none/r4",
                "setting": "3MBps",
                "scheme": "dtp",
                "speed": "none",
                "rep": 4,
                "reasons": "CPU saturated",
            }
        ]  # fmt: skip
    ).to_csv(d / "exclusions.csv", index=False)
    (d / "summary.md").write_text("# dtp-quick\n\n| metric | dtp |\n|---|---|\n")
    (d / "figures").mkdir()
    (d / "figures" / "deadline.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (d / "figures" / "deadline.txt").write_text("Deadline ratio per scheme.")


def test_results_page_sets_claim_beside_runs_with_provenance(tmp_path):
    _fake_scenario(tmp_path / "results")
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(DTP, tmp_path / "results", out, REPO_ROOT, "abc")
    assert "No runs are present" not in text
    row = next(line for line in text.splitlines() if line.startswith("| abstract, Fig. 3"))
    assert "| 3+3 | mininet | `scenarios/dtp-quick.yaml` | 3MBps |" in row
    assert row.split(" | ")[4].startswith("3.73 [")  # (0.81+0.82+0.83) / (0.21+0.22+0.23)
    assert "![deadline](figures/results/dtp-quick/deadline.png)" in text
    assert (out / "figures" / "results" / "dtp-quick" / "deadline.png").is_file()
    assert "Deadline ratio per scheme. (Site: mininet.)" in text
    assert "CPU saturated" in text and "aaaaaaaaaaaa" in text


def test_results_page_sets_both_sites_side_by_side_never_pooled(tmp_path):
    """The Mininet tree and the sim tree on one page: one claim row per site, one under the
    other, each with its own runs' ratio and n; one section and one figure folder per tree."""
    _fake_scenario(tmp_path / "results", "mininet", dtp=0.8)
    _fake_scenario(tmp_path / "results-sim", "sim", dtp=0.4)
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    trees = [tmp_path / "results", tmp_path / "results-sim"]
    text = results.page(DTP, trees, out, REPO_ROOT, "abc")
    lines = text.splitlines()
    rows = [i for i, line in enumerate(lines) if line.startswith("| abstract, Fig. 3")]
    assert len(rows) == 2 and rows[1] == rows[0] + 1
    mininet, sim = (lines[i].split(" | ") for i in rows)
    assert mininet[5:7] == ["3+3", "mininet"] and sim[5:7] == ["3+3", "sim"]
    assert mininet[4].startswith("3.73 [") and sim[4].startswith("1.91 [")  # .82/.22, .42/.22
    assert "## Scenario dtp-quick on the mininet site" in lines
    assert "## Scenario dtp-quick on the sim site" in lines
    assert lines.index("## Scenario dtp-quick on the mininet site") < lines.index(
        "## Scenario dtp-quick on the sim site"
    )
    for tree in ("results", "results-sim"):
        assert f"![deadline](figures/{tree}/dtp-quick/deadline.png)" in text
        assert (out / "figures" / tree / "dtp-quick" / "deadline.png").is_file()
    assert "Deadline ratio per scheme. (Site: sim.)" in text
    assert "### dtp-quick on the sim site" in lines


def test_a_run_without_a_recorded_site_says_so(tmp_path):
    _fake_scenario(tmp_path / "results")
    for meta in (tmp_path / "results").rglob("metadata.json"):
        meta.write_text(json.dumps({"git": {"commit": "a" * 40}}))
    out = tmp_path / "docs" / "results"
    out.mkdir(parents=True)
    text = results.page(DTP, tmp_path / "results", out, REPO_ROOT, "abc")
    row = next(line for line in text.splitlines() if line.startswith("| abstract, Fig. 3"))
    assert "| site not recorded |" in row
    assert "## Scenario dtp-quick on the results records (site not recorded)" in text


def test_claims_keep_speeds_apart_and_their_scenarios(tmp_path):
    """A scenario with two speeds (runs.csv's setting_label `<setting>/<speed>`) gives one
    row per speed, never a pool of both; a claim limited to some scenarios skips others."""
    from book.papers import Claim

    rows = []
    for speed, value in (("cubic", 0.1), ("bbr", 0.9)):
        for scheme in ("dtp", "quic"):
            for rep in (1, 2):
                rows.append({"path": f"x/{speed}/{scheme}/{rep}", "setting": "loss10",
                             "setting_label": f"loss10/{speed}", "scheme": scheme,
                             "deadline_ratio": value + 0.01 * rep, "site": "sim",
                             "commit": "c"})  # fmt: skip
    s = results.ScenarioRuns("dtp-loss-tail", tmp_path, None, pd.DataFrame(rows), pd.DataFrame())
    c = Claim("f", "t", "1", 1.0, 1.0, "deadline_ratio", "dtp", "", ("loss10",))
    got = {r[4]: r[0] for r in results.claim_rows(c, [s])}
    assert got == {"loss10/cubic": "0.115 [0.11, 0.12]", "loss10/bbr": "0.915 [0.91, 0.92]"}
    only = Claim("f", "t", "1", 1.0, 1.0, "deadline_ratio", "dtp", "", (), scenarios=("dtp-loss",))
    assert results.claim_rows(only, [s]) == []


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
    assert rep.pages >= 15 and rep.links > 10
    assert (tmp_path / "shots" / "architecture.png").stat().st_size > 1000
    # and it can fail: a broken link and a missing image are reported
    page = tmp_path / "site" / "architecture.html"
    page.write_text(
        page.read_text().replace(
            "</article>", '<a href="nowhere.html">x</a><img src="gone.png"></article>', 1
        )
    )
    rep = browser.check(tmp_path / "site", None)
    assert any("broken link (404)" in p for p in rep.problems)
    assert any("image did not load" in p for p in rep.problems)


def test_rise_page_reports_the_sim_site_apart(tmp_path):
    """Sim runs get their own report on RISE's page (never pooled with Mininet runs)."""
    d = tmp_path / "results-sim" / "rise-freeze-map"
    d.mkdir(parents=True)
    rows = [
        {"path": str(d / f"{s}{i}"), "setting": "5G", "scheme": s, "speed": "moderate",
         "freeze_rate_pct": 0.5 if s == "nopri" else 0.0, "mtp_median_ms": 30.0}
        for s in ("nopri", "pri")
        for i in range(3)
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(d / "runs.csv", index=False)
    (d / "exclusions.csv").write_text("path,setting,scheme,speed,rep,reasons\n")
    pages(tmp_path / "docs", REPO_ROOT, [tmp_path / "results-sim"])
    text = (tmp_path / "docs" / "results" / "rise.md").read_text()
    assert "The reproduction report on the sim site" in text
    assert "on the mininet site" not in text  # no Mininet runs: no Mininet report
    line = next(x for x in text.splitlines() if x.startswith("| 5G | 3+3 |"))
    assert "∞" in line and line.endswith("| yes |")


def test_every_claim_is_well_formed():
    """Each claim's judge is callable and the scenarios it names are its paper's (a claim
    built with positional fields once put scenario names where the judge goes)."""
    for p in PAPERS:
        for c in p.claims:
            assert c.judge is None or callable(c.judge), (p.key, c.figure)
            assert set(c.scenarios) <= set(p.scenarios), (p.key, c.figure, c.scenarios)


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


def test_claim_rows_say_when_runs_repeat_each_other(tmp_path):
    """Sim runs whose seeds changed nothing are one result, not three: n says so, for a mean
    and for the side of a ratio whose runs are all alike; runs that share one metric's value
    but measured something else apart are not alike."""
    from book.papers import Claim

    rows = []
    runs = (("dtp", [0.5] * 3, [7.0] * 3), ("quic", [0.2, 0.25, 0.3], [7.0] * 3),
            ("sctp", [1.0] * 3, [5.0, 6.0, 7.0]))  # fmt: skip
    for scheme, values, wall_s in runs:
        for rep, (value, w) in enumerate(zip(values, wall_s, strict=True), 1):
            rows.append({"path": f"x/{scheme}/{rep}", "setting": "s", "setting_label": "s",
                         "scheme": scheme, "rep": rep, "deadline_ratio": value,
                         "wall_s": w, "site": "sim", "commit": "c"})  # fmt: skip
    s = results.ScenarioRuns("dtp-quick", tmp_path, None, pd.DataFrame(rows), pd.DataFrame())
    mean = Claim("f", "t", "1", 1.0, 1.0, "deadline_ratio", "dtp", "", ("s",))
    ratio = Claim("f", "t", "2", 2.0, 2.0, "deadline_ratio", "dtp", "quic", ("s",))
    ceiling = Claim("f", "t", "1", 1.0, 1.0, "deadline_ratio", "sctp", "", ("s",))
    assert results.claim_rows(mean, [s])[0][1] == "3 (all alike)"
    assert results.claim_rows(ratio, [s])[0][1] == "3+3 (numerator's all alike)"
    assert results.claim_rows(ceiling, [s])[0][1] == "3"
