"""The workflow end to end: Snakemake runs a tiny RISE scenario, resumes, reports."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, needs_root

pytestmark = [needs_root, pytest.mark.netns, pytest.mark.slow]

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
BINARIES = [REPO / "target" / "release" / b for b in ("rise", "linkem")]


@pytest.fixture(scope="module")
def workflow(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    missing = [str(b) for b in BINARIES if not b.is_file()]
    if missing:
        pytest.skip(f"not built: {missing}; `make build` builds them")
    tmp = tmp_path_factory.mktemp("wf")
    data = yaml.safe_load((REPO / "scenarios" / "quick.yaml").read_text())
    data["name"] = "wf"
    data["duration_s"] = 4
    data["repetitions"] = 1
    data["matrix"] = {"setting": ["FB-4K-Low"]}  # the ideal path: one run per scheme
    # the pipeline, not performance, is under test: a light load keeps the CPU unsaturated
    data["workload"]["params"]["video_bitrate_mbps"] = 5
    data["workload"]["params"]["warmup_s"] = 1  # of 4 s
    scenario = tmp / "wf.yaml"
    scenario.write_text(yaml.safe_dump(data))
    results = tmp / "results"
    r = _snakemake(scenario, results)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return scenario, results


def _snakemake(scenario: Path, results: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{SNAKEMAKE.parent}:{os.environ['PATH']}"}
    return subprocess.run(
        [str(SNAKEMAKE), "--cores", "2", "--config", f"scenario={scenario}",
         f"results={results}", "calibrate=false", *extra],
        cwd=REPO, capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip


def test_runs_land_in_parameter_encoded_dirs(workflow: tuple[Path, Path]) -> None:
    _, results = workflow
    for scheme in ("nopri", "pri"):
        run = results / "wf" / "FB-4K-Low" / scheme / "moderate" / "r1"
        meta = json.loads((run / "metadata.json").read_text())
        assert meta["run"]["scheme"] == scheme
        assert meta["run"]["workload"]["prio_guest"] == (scheme == "pri")
        assert (run / "guest" / "frames_displayed.csv").is_file()
        assert (run / "metrics.json").is_file()


def test_summary_and_figures(workflow: tuple[Path, Path]) -> None:
    _, results = workflow
    with open(results / "wf" / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == [
        "setting", "metric", "scheme", "value", "ci_low", "ci_high", "n_runs", "n_excluded",
    ]  # fmt: skip
    metrics = {r["metric"] for r in rows}
    assert {"mtp_median_ms", "freeze_rate_pct", "retx_rate_pct_guest"} <= metrics
    assert {r["scheme"] for r in rows} == {"nopri", "pri"}
    for r in rows:
        assert int(r["n_runs"]) + int(r["n_excluded"]) == 1
    figures = list((results / "wf" / "figures").glob("*.png"))
    assert figures and all(f.stat().st_size > 1000 for f in figures)
    assert (results / "wf" / "summary.md").read_text().strip()


def test_complete_runs_are_kept_and_missing_ones_redone(workflow: tuple[Path, Path]) -> None:
    scenario, results = workflow
    r = _snakemake(scenario, results, "-n")
    assert r.returncode == 0
    assert "Nothing to be done" in r.stdout + r.stderr
    # an interrupted sweep: one run was killed mid-way, so it left only `<dir>.partial`,
    # and nothing after the runs (aggregate, figures) had been made yet
    run = results / "wf" / "FB-4K-Low" / "pri" / "moderate" / "r1"
    shutil.rmtree(run)
    shutil.rmtree(results / "wf" / "figures")
    for name in ("summary.csv", "summary.md"):
        (results / "wf" / name).unlink()
    Path(str(run) + ".partial", "logs").mkdir(parents=True)
    r = _snakemake(scenario, results, "-n", "--quiet", "rules")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    counts = {
        line.split()[0]: int(line.split()[1])
        for line in out.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }
    assert counts.get("run") == 1, out  # only the missing run, not the complete one
    assert counts.get("metrics") == 1, out


def test_report_page(workflow: tuple[Path, Path], tmp_path: Path) -> None:
    scenario, results = workflow
    # restore the run the previous test removed, then build the report
    r = _snakemake(scenario, results)
    assert r.returncode == 0, r.stderr[-3000:]
    report = tmp_path / "report.html"
    r = _snakemake(scenario, results, "--report", str(report))
    assert r.returncode == 0, r.stderr[-3000:]
    assert report.stat().st_size > 10_000
