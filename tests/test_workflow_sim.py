"""The workflow's sim site: planned (`snakemake -n`), and a tiny scenario run for real on the
sim site up to its summary table (priolab-sim in virtual time: no root, no machine lock)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import REPO, dataset, mark_built

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
pytestmark = pytest.mark.skipif(not SNAKEMAKE.is_file(), reason="snakemake is not installed")


def _run_jobs(stdout: str) -> list[str]:
    """The `run` jobs of a dry run's listing, one text block each."""
    return [b for b in re.split(r"\n(?=rule \w+:)", stdout) if b.startswith("rule run:")]


def _jobs(stdout: str) -> dict[str, str]:
    """A dry run's jobs by rule name (`rule x:` or `localrule x:`), the last block of each."""
    blocks = re.split(r"\n(?=(?:local)?rule \w+:)", stdout)
    return {m[1]: b for b in blocks if (m := re.match(r"(?:local)?rule (\w+):", b))}


def _plan(*config: str, targets: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """A dry run; with `targets`, those rules' jobs and their shell commands (`-p`)."""
    env = {**os.environ, "PATH": f"{SNAKEMAKE.parent}:{os.environ['PATH']}"}
    shown = ("-p", *targets) if targets else ()
    return subprocess.run(
        [str(SNAKEMAKE), "-n", "--cores", "2", *shown, "--config", *config],
        cwd=REPO, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


def test_sim_runs_take_no_netns_resource_and_no_calibration(tmp_path: Path) -> None:
    r = _plan("site=sim", "scenario=scenarios/quick.yaml", f"results={tmp_path}", "calibrate=true")
    assert r.returncode == 0, r.stderr[-2000:]
    runs = _run_jobs(r.stdout)
    assert len(runs) == 16 and all("netns=0" in b for b in runs)
    assert "rule calibrate:" not in r.stdout
    mininet = _plan("scenario=scenarios/quick.yaml", f"results={tmp_path}", "calibrate=false")
    assert _run_jobs(mininet.stdout) and all("netns=1" in b for b in _run_jobs(mininet.stdout))


def test_the_map_and_the_report_draw_on_the_regime_map_of_real_sim_runs(tmp_path: Path) -> None:
    """rise_map and the reproduction report take the regime map's cells from rule regime_map
    (the real endpoints' runs of scenarios/maps/rise-loss-queue.yaml) when the invocation
    loads that file, and go without them when it does not: no model of quinn is run."""
    both = "scenario=scenarios/maps/rise-loss-queue.yaml,scenarios/quick.yaml"
    r = _plan("site=sim", both, f"results={tmp_path}", targets=("reproduction",))
    assert r.returncode == 0, r.stderr[-2000:]
    jobs = _jobs(r.stdout)
    assert "regime_map" in jobs
    for rule in ("rise_map", "reproduction"):
        assert f"--cells {tmp_path}/regime/regime_map.csv" in jobs[rule], jobs[rule]
    assert len(_run_jobs(r.stdout)) == 252 + 16  # the map's 42 cells x 3 schemes x 2, quick's
    alone = _plan("site=sim", "scenario=scenarios/quick.yaml", f"results={tmp_path}",
                  targets=("reproduction",))  # fmt: skip
    assert alone.returncode == 0, alone.stderr[-2000:]
    jobs = _jobs(alone.stdout)
    assert "regime_map" not in jobs and "reproduction" in jobs
    assert "--cells" not in jobs["rise_map"] + jobs["reproduction"]


def test_reps_sets_every_scenarios_repetitions(tmp_path: Path) -> None:
    """reps=N runs repetitions 1..N: fewer than the file asks (the agreement points' Mininet
    side, 5 of 10: issue 22) or more (figures at n = 10 on the sim site: issue 25)."""
    quick = _run_jobs(_plan("scenario=scenarios/quick.yaml", f"results={tmp_path}",
                            "calibrate=false", "reps=1").stdout)  # fmt: skip
    assert len(quick) == 4  # quick.yaml: 4 points x 4 repetitions, the first of each
    assert all("/r1/" in b and not re.search(r"/r[2-9]/", b) for b in quick)
    more = _run_jobs(_plan("site=sim", "scenario=scenarios/quick.yaml", f"results={tmp_path}",
                           "reps=10").stdout)  # fmt: skip
    assert len(more) == 40 and sum("/r10/" in b for b in more) == 4
    bad = _plan("scenario=scenarios/quick.yaml", f"results={tmp_path}", "reps=-1")
    assert bad.returncode != 0 and "reps" in bad.stdout + bad.stderr


def test_reps_runs_fewer_than_the_agreement_points_ask(tmp_path: Path) -> None:
    """The agreement points (their QPR point replays a 5G trace of a public dataset)."""
    dataset("sigcomm21-5g-variegated")
    agree = _plan("scenario=agreement", f"results={tmp_path}", "calibrate=false", "reps=5")
    assert agree.returncode == 0, agree.stderr[-2000:]
    assert {int(m) for m in re.findall(r"/r(\d+)/", agree.stdout)} == {1, 2, 3, 4, 5}


def test_a_scenario_the_sim_cannot_run_is_refused_naming_the_key(tmp_path: Path) -> None:
    dataset("sigcomm21-5g-variegated")  # qpr-quick replays one of its traces
    r = _plan("site=sim", "scenario=scenarios/qpr-quick.yaml", f"results={tmp_path}")
    assert r.returncode == 2, r.stderr[-2000:]
    assert ("scenarios/qpr-quick.yaml: settings.driving-loss0 + schemes.h2 + speeds.default "
            "→ workload.transport: 'h2' is HTTP/2 over the kernel's TCP") in r.stderr  # fmt: skip
    assert "Traceback" not in r.stderr


def test_sim_partial_leaves_out_only_the_points_the_sim_cannot_run(tmp_path: Path) -> None:
    """make book-refresh runs a scenario's sim points and names the others (qpr-quick's h2)."""
    r = _plan("site=sim", "scenario=scenarios/qpr-quick.yaml", f"results={tmp_path}",
              "sim_partial=true")  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    runs = _run_jobs(r.stdout)
    assert runs and not any("/h2/" in b for b in runs)
    assert any("/q50/" in b for b in runs)
    assert "of its points left out on the sim site" in r.stderr and "'h2'" in r.stderr


def _most_runs_at_once(log: str) -> int:
    """The most `run` jobs started and not yet finished at one point of a Snakemake log."""
    running: set[str] = set()
    most = 0
    for block in re.split(r"\n(?=\[)", log):
        if re.search(r"^(local)?rule run:", block, re.M):
            running.add(re.search(r"jobid: (\d+)", block)[1])  # type: ignore[index]
            most = max(most, len(running))
        for jobid in re.findall(r"Finished jobid: (\d+) \(Rule: run\)", block):
            running.discard(jobid)
    return most


def _wait_held(lock: Path) -> None:
    """Until another process holds an exclusive flock on `lock`."""
    import fcntl
    import time

    for _ in range(500):
        if lock.exists():
            with lock.open() as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return
                fcntl.flock(f, fcntl.LOCK_UN)
        time.sleep(0.01)
    raise AssertionError(f"nobody took {lock}")


def test_a_tiny_scenario_runs_on_the_sim_site_to_its_summary_two_at_once(
    tmp_path: Path,
) -> None:
    """The workflow for real on the sim site: two runs of a 4 s quick (w/ and w/o Pri on the
    window-limited path), both at once on 2 cores, without the machine lock, then metrics and
    the summary table as on the Mininet site."""
    from priolab.paths import sim_binary

    if "PRIOLAB_SIM" in os.environ:
        pytest.skip("PRIOLAB_SIM names another binary (a fake?): this test runs the real one")
    binary = sim_binary()
    if not binary.is_file():
        pytest.skip(f"priolab-sim is not built ({binary}): `make build` builds it")
    data = yaml.safe_load((REPO / "scenarios" / "quick.yaml").read_text())
    data.update(name="tiny", duration_s=4, repetitions=1)
    data["workload"]["params"]["warmup_s"] = 1
    data["matrix"] = {"setting": ["FB-4K-Low-L0.05"]}
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(data))
    results = tmp_path / "results-sim"
    results.mkdir()
    mark_built(results)  # built already (make build): the test is the workflow
    # the machine lock (a file of this test's) held by another process all along: a sim job
    # that took it would wait until the timeout
    lock = tmp_path / "machine.lock"
    holder = subprocess.Popen(["flock", str(lock), "sleep", "600"])
    try:
        _wait_held(lock)
        env = {**os.environ, "PATH": f"{SNAKEMAKE.parent}:{os.environ['PATH']}",
               "PRIOLAB_SIM": str(binary), "PRIOLAB_MACHINE_LOCK": str(lock)}  # fmt: skip
        r = subprocess.run(
            [str(SNAKEMAKE), "--cores", "2", "--rerun-triggers", "mtime", "--config", "site=sim",
             f"scenario={scenario}", f"results={results}", "--",
             str(results / "tiny/summary.csv")],
            cwd=REPO, capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert r.returncode == 0, r.stderr[-3000:]
    assert "rule build" not in r.stderr
    assert _most_runs_at_once(r.stderr) == 2, r.stderr[-3000:]
    runs = pd.read_csv(results / "tiny" / "runs.csv")
    assert sorted(runs["scheme"]) == ["nopri", "pri"] and len(runs) == 2
    for p in runs["path"]:
        meta = json.loads((Path(p) / "metadata.json").read_text())
        assert meta["valid"] and meta["site"]["kind"] == "sim", meta["invalid_reasons"]
    summary = (results / "tiny" / "summary.md").read_text()
    assert "2 run(s) found, 2 valid, 0 excluded" in summary
    assert "| mtp_p95_ms |" in summary
