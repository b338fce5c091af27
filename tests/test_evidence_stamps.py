"""Content-hashed build stamps per workload (rules/build.smk, priolab/evidence/digest.py):
with every run done by the workflow, changing one endpoint's source makes `snakemake -n` rerun
only that workload's runs (their recorded input, the workload's stamp, changed), and changing
the emulator reruns every workload's. On a copy of the workflow and the Rust sources in tmp
(the checkout's files are never touched); the runs are the fake priolab-sim's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, copy_rust_sources

FAKE = REPO / "tests" / "fake_priolab_sim.py"

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
pytestmark = pytest.mark.skipif(not SNAKEMAKE.is_file(), reason="snakemake is not installed")
SCENARIOS = ("quick.yaml", "dtp-quick.yaml")  # a rise and a dtp scenario


def _copy(tmp: Path) -> Path:
    shutil.copy(REPO / "Snakefile", tmp / "Snakefile")
    for d in ("rules", "config"):
        shutil.copytree(REPO / d, tmp / d)
    shutil.copytree(REPO / "traces" / "synthetic", tmp / "traces" / "synthetic")  # dtp-quick's
    (tmp / "scenarios").mkdir()
    for f in (*SCENARIOS, "scenario.schema.json"):
        shutil.copy(REPO / "scenarios" / f, tmp / "scenarios" / f)
    copy_rust_sources(tmp)
    return tmp


def _snakemake(tmp: Path, *args: str, site: str = "sim") -> str:
    wrapper = tmp / "fake-priolab-sim"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{SNAKEMAKE.parent}:{os.environ['PATH']}",
           "PRIOLAB_SIM": str(wrapper)}  # fmt: skip
    files = ",".join(f"scenarios/{f}" for f in SCENARIOS)
    r = subprocess.run([str(SNAKEMAKE), "--cores", "2", *args, "--config", f"site={site}",
                        f"scenario={files}", "results=res", "reps=1", "--", *RUNS],
                       cwd=tmp, capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def _jobs(out: str, rule: str) -> list[str]:
    return [b for b in re.split(r"\n(?=(?:local)?rule \w+:)", out)
            if re.match(rf"(?:local)?rule {rule}:", b)]  # fmt: skip


RUNS = [f"res/{n}/{s}/{p}/{d}/r1/metadata.json"
        for n, pts in (("quick", [("FB-4K-Low", s, "moderate") for s in ("nopri", "pri")]),
                       ("dtp-quick", [("3MBps", s, "cubic") for s in ("dtp", "quic")]))
        for s, p, d in pts]  # fmt: skip
"""Two runs of a rise scenario and two of a dtp scenario, each made by the workflow."""


def test_changing_one_endpoint_reruns_only_its_workloads_runs(tmp_path: Path) -> None:
    tmp = _copy(tmp_path)
    plan = _snakemake(tmp, "-n")
    stamps = sorted({m for b in _jobs(plan, "build")
                     for m in re.findall(r"res/\.build/[\w.-]+\.done", b)})  # fmt: skip
    assert [re.sub(r"-[0-9a-f]{16}\.", ".", s) for s in stamps] == [
        "res/.build/sim-dtp.done", "res/.build/sim-rise.done"]  # fmt: skip
    for stamp in stamps:  # built (cargo is not this test's business), then the runs made
        (tmp / stamp).parent.mkdir(parents=True, exist_ok=True)
        (tmp / stamp).touch()
    _snakemake(tmp)  # the runs, by the workflow (priolab-sim: the fake, tests/fake_priolab_sim.py)
    assert all((tmp / r).is_file() for r in RUNS)
    assert not _jobs(_snakemake(tmp, "-n"), "run")  # nothing to do
    src = tmp / "endpoints" / "dtp" / "src" / "main.rs"
    src.write_text(src.read_text() + "\n// an endpoint changed\n")
    out = _snakemake(tmp, "-n")
    rerun = [m for b in _jobs(out, "run") for m in re.findall(r"res/[\w/.-]+metadata\.json", b)]
    assert sorted(rerun) == sorted(r for r in RUNS if r.startswith("res/dtp-quick/"))
    assert {s for b in _jobs(out, "build") for s in re.findall(r"sim-\w+-", b)} == {"sim-dtp-"}
    lk = tmp / "netem" / "linkem" / "src" / "lib.rs"  # the emulator: every workload's runs
    lk.write_text(lk.read_text() + "\n// the emulator changed\n")
    out = _snakemake(tmp, "-n")
    assert len(_jobs(out, "run")) == len(RUNS)


def test_a_real_time_stamp_builds_only_its_workloads_programs(tmp_path: Path) -> None:
    """On a real-time site a workload's stamp builds the packages of its programs and linkem,
    the roots of its Rust digest, and nothing else: no roq (no GStreamer) for RISE's runs.
    The calibration's stamp builds linkem, whose package holds lkprobe.
    On the sim site every stamp builds the one binary, priolab-sim."""
    tmp = _copy(tmp_path)
    for site, want in (
        ("mininet", {"rise": "--package=rise --package=linkem",
                     "dtp": "--package=dtp --package=linkem",
                     "probe": "--package=linkem"}),  # the calibration's (lkprobe is linkem's)
        ("sim", {"rise": "--package=priolab-sim", "dtp": "--package=priolab-sim"}),
    ):  # fmt: skip
        out = _snakemake(tmp, "-n", "-p", site=site)
        got = {}
        for b in _jobs(out, "build"):
            kind = re.findall(rf"\.build/{site}-(\w+)-[0-9a-f]{{16}}\.done", b)[0]
            got[kind] = re.findall(r"cargo build --release (.*) --locked", b)[0]
        assert got == want, site
