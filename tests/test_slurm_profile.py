"""The Slurm profile (profiles/slurm) against a real Slurm: a one-node cluster from Debian's
packages (profiles/slurm/testcluster.py: munged, slurmctld, slurmd in a temp folder) runs a
sim sweep of SWEEP_RUNS runs through `snakemake --executor slurm`. One job is cancelled
(scancel) mid-run; Snakemake retries it, the sweep completes, every run arrives, and the runs
equal those of the same sweep run locally.

Which `priolab-sim` the sweep runs: the real one (priolab/paths.py sim_binary(), built by
`cargo build --release -p sim`) when it exists, then the comparison is the scenario's
summary.csv and every run folder; until then the FAKE tests/fake_priolab_sim.py (it follows
the binary's contract and simulates nothing), then the comparison is every run folder (the
fake's outputs feed no analysis). Either way tests/slurm_standin_sim.py, a STAND-IN, sits in
front of it to hold one run back so that its job can be cancelled while it runs.

No machine lock (a sim run takes none), no network namespace; the cluster listens on free
loopback ports with its own munge key, so a system Slurm or munged is not disturbed. Needs root
(slurmd), Debian's slurmctld/slurmd/slurm-client/munge (`make apt`) and the `cluster` extra
(snakemake-executor-plugin-slurm); skips, saying which is missing, otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ground import rundir
from priolab import provenance
from priolab.paths import REPO_ROOT, sim_binary
from priolab.scenario import expand, load
from tests.conftest import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
PROFILE = REPO / "profiles" / "slurm"
FAKE = REPO / "tests" / "fake_priolab_sim.py"
STANDIN = REPO / "tests" / "slurm_standin_sim.py"
SWEEP_RUNS = 8  # 2 settings x 2 schemes x 2 repetitions: each setting and scheme twice
SWEEP_TIMEOUT_S = 480  # bring-up, 17 jobs and one retry on 2 cores take well under this
CANCEL_WITHIN_S = 240  # the held-back run's job must have started by then
# Files of a run folder that hold when or where it ran, not what it measured.
HOST_DEPENDENT = {rundir.METADATA, "sim-report.json", "node-guest.json", "node-host.json"}
HOST_DEPENDENT_LOGS = ("priolab-sim.stdout", "priolab-sim.stderr")
FRESH_KEY = "cert.der"
"""The host's certificate: a fresh Ed25519 key every run (of fixed size, so no packet size or
time depends on it; the sim site's determinism tests leave it out too)."""


def _load(name: str):  # noqa: ANN202 (a module of profiles/slurm, loaded from its path)
    spec = importlib.util.spec_from_file_location(name, PROFILE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


testcluster = _load("testcluster")
cost = _load("cost")
HAVE_PLUGIN = importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root: slurmd runs each job as its user"
    if testcluster.missing_tools():
        return f"Slurm/munge not installed: {testcluster.missing_tools()} (make apt)"
    if not HAVE_PLUGIN:
        return "snakemake-executor-plugin-slurm is not installed (pip extra `cluster`)"
    return None


# --- pure parts: no cluster needed -------------------------------------------------------------


def test_slurm_info_names_the_node_and_job_inside_slurm_only() -> None:
    env = {"SLURM_JOB_ID": "42", "SLURMD_NODENAME": "n7", "SLURM_CLUSTER_NAME": "c"}
    info = provenance.slurm_info(env)
    assert info == {"node": "n7", "job_id": "42", "cluster": "c", "partition": None,
                    "restart_count": None}  # fmt: skip
    assert provenance.slurm_info({"SLURMD_NODENAME": "n7"}) is None


def test_slurm_conf_is_one_node_of_two_cpus_under_its_folder(tmp_path: Path) -> None:
    conf = testcluster.slurm_conf(tmp_path, "n1", (7001, 7002), 4000)
    lines = dict(line.split("=", 1) for line in conf.splitlines() if "=" in line)
    assert lines["SlurmctldHost"] == "n1(127.0.0.1)"
    assert (lines["SlurmctldPort"], lines["SlurmdPort"]) == ("7001", "7002")
    assert "NodeName=n1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=4000 State=UNKNOWN" in conf
    assert lines["AuthInfo"] == f"socket={tmp_path / 'munge.socket'}"
    assert lines["AccountingStorageType"] == "accounting_storage/none"
    # the plugin reads states with squeue only if finished jobs stay that long (3x its delay)
    assert int(lines["MinJobAge"]) >= 3 * 40
    paths = [v for k, v in lines.items() if k.endswith(("Location", "Dir", "File", "Config"))]
    assert paths and all(v.startswith(str(tmp_path)) for v in paths)


def test_profile_declares_retries_rerun_and_the_slurm_executor() -> None:
    cfg = yaml.safe_load((PROFILE / "config.yaml").read_text())
    assert cfg["executor"] == "slurm"
    assert cfg["retries"] >= 1 and cfg["rerun-incomplete"] is True
    assert "netns=1000" in cfg["resources"]  # Mininet runs: one per whole node, all at once
    assert (REPO / cfg["configfiles"][0]).is_file()


def test_sim_runs_ask_slurm_for_one_cpu_and_mininet_runs_for_a_whole_node(tmp_path: Path) -> None:
    """The resources the profile's executor turns into sbatch options, from a dry run."""

    def slurm_extra_and_threads(*config: str) -> set[tuple[str, str | None]]:
        r = subprocess.run(
            [*SNAKEMAKE, "-n", "--cores", "2", "--config", "scenario=scenarios/quick.yaml",
             f"results={tmp_path}", "calibrate=false", *config],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-2000:]
        blocks = [b for b in re.split(r"\n(?=rule \w+:)", r.stdout) if b.startswith("rule run:")]
        assert len(blocks) == 16
        out = set()
        for b in blocks:
            extra = re.search(r"^\s+resources: .*\bslurm_extra=([^,\n]*)", b, re.M)
            threads = re.search(r"^\s+threads: (\d+)", b, re.M)  # absent: 1
            assert extra is not None, b
            out.add((extra.group(1), threads.group(1) if threads else None))
        return out

    # sbatch --cpus-per-task comes from threads: 1 (not printed) for every run
    assert slurm_extra_and_threads("site=mininet") == {("--exclusive", None)}
    assert slurm_extra_and_threads("site=sim") == {("", None)}


def test_cost_is_runs_times_measured_rate_plus_job_overhead() -> None:
    def meta(kind: str, valid: bool, virtual_s: float, cpu_s: float) -> dict:
        return {"valid": valid, "site": {"kind": kind, "virtual_s": virtual_s,
                                         "harness": {"cpu_s": cpu_s}}}  # fmt: skip

    metas = [meta("sim", True, 30, 1.5), meta("sim", True, 10, 0.5), meta("sim", False, 30, 99),
             meta("mininet", True, 30, 99)]  # fmt: skip
    rate = cost.measured_rate(metas)
    assert (rate.runs, rate.virtual_s, rate.cpu_s) == (2, 40, 2.0)
    assert rate.cpu_per_virtual_s == pytest.approx(0.05)
    # 100 runs of 60 virtual s: 100 x (3 s of sim + the job's overhead)
    expected = 100 * (3.0 + cost.JOB_OVERHEAD_CPU_S) / 3600
    assert cost.matrix_cpu_h(100, 60, rate) == pytest.approx(expected)
    with pytest.raises(ValueError, match="no valid sim run"):
        cost.measured_rate([meta("mininet", True, 30, 1)])


# --- the real cluster ----------------------------------------------------------------------


def _scenario(tmp: Path) -> Path:
    """quick.yaml with 2 repetitions (8 runs) of 5 s: a sweep the fake or the sim runs fast
    (the RISE guest's 3 s warm-up, then 2 s measured)."""
    sc = yaml.safe_load((REPO / "scenarios" / "quick.yaml").read_text())
    sc |= {"name": "slurm-sweep", "repetitions": 2, "duration_s": 5}
    f = tmp / "slurm-sweep.yaml"
    f.write_text(yaml.safe_dump(sc, sort_keys=False))
    assert len(expand(load(f), f)) == SWEEP_RUNS
    return f


def _sim_argv() -> tuple[list[str], bool]:
    """The program the stand-in execs, and whether it is the real priolab-sim."""
    real = sim_binary()
    if real.is_file() and os.access(real, os.X_OK):
        return [str(real)], True
    return [sys.executable, str(FAKE)], False


def _snakemake(
    results: Path, scenario: Path, targets: list[str], env: dict[str, str], *extra: str
) -> subprocess.CompletedProcess[str]:
    rundir_ = Path(results)
    rundir_.mkdir(parents=True, exist_ok=True)
    (rundir_ / ".build.done").touch()  # the Rust build is not this test's business
    argv = [
        *SNAKEMAKE, "--config", "site=sim", f"scenario={scenario}", f"results={results}",
        "--rerun-triggers", "mtime", *extra, "--", *targets,
    ]  # fmt: skip
    return subprocess.run(
        argv, cwd=REPO, capture_output=True, text=True, env=env, timeout=SWEEP_TIMEOUT_S
    )


def _targets(results: Path, scenario: Path, real: bool) -> list[str]:
    if real:
        return [str(results / "slurm-sweep" / "summary.csv")]
    return [str(results / r.rel_dir / rundir.METADATA) for r in expand(load(scenario), scenario)]


def _run_files(results: Path) -> dict[str, bytes]:
    """Every file of every run folder, by path relative to `results`, with the results path
    itself written as RESULTS (run folders record their own absolute paths)."""
    out = {}
    for meta in sorted(results.rglob(rundir.METADATA)):
        run = meta.parent
        for f in sorted(p for p in run.rglob("*") if p.is_file()):
            if f.name in HOST_DEPENDENT or f.name in HOST_DEPENDENT_LOGS or f.name == FRESH_KEY:
                continue
            out[str(f.relative_to(results))] = f.read_bytes().replace(
                str(results).encode(), b"RESULTS"
            )
    return out


def _cancel_when_started(mark: Path, env: dict[str, str], proc: subprocess.Popen[str]) -> str:
    """Wait for the held-back run to start; scancel its Slurm job; return the job id."""
    deadline = time.monotonic() + CANCEL_WITHIN_S
    while not (mark.is_file() and mark.read_text().endswith("\n")):
        assert proc.poll() is None, "the sweep ended before the held-back run started"
        assert time.monotonic() < deadline, "the held-back run did not start in time"
        time.sleep(0.5)
    job = mark.read_text().strip()
    assert job, "the held-back run did not run as a Slurm job"
    subprocess.run(["scancel", job], env=env, check=True, timeout=30)
    return job


@pytest.mark.skipif(
    os.geteuid() != 0 or bool(testcluster.missing_tools()),
    reason="needs root and Debian's slurmctld, slurmd, slurm-client and munge (make apt)",
)
def test_the_cluster_leaves_nothing_behind_when_its_user_fails() -> None:
    """A job still running and an error in the body: the daemons, the job's processes and the
    cluster's folder are all gone afterwards."""
    sleep_argv = ["sleep", f"{300 + secrets.randbelow(10**6) / 10**6:.6f}"]  # ours alone
    with pytest.raises(RuntimeError, match="the body failed"):
        with testcluster.cluster() as c:
            root, pids = c.root, list(c.pids().values())
            assert len(pids) == 3 and c.node_state() == "idle"
            r = subprocess.run(
                ["sbatch", "--parsable", "--output=/dev/null", "--wrap", " ".join(sleep_argv)],
                env={**os.environ, **c.env}, capture_output=True, text=True, timeout=30,
            )  # fmt: skip
            assert r.returncode == 0, r.stderr
            deadline = time.monotonic() + 60
            while not _pids_running(sleep_argv):
                assert time.monotonic() < deadline, "the job did not start"
                time.sleep(0.2)
            assert testcluster.stray_pids(root)  # its step daemon and the job's shell
            raise RuntimeError("the body failed")
    assert not root.exists()
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
    assert not testcluster.stray_pids(root)
    assert not _pids_running(sleep_argv)


def _pids_running(argv: list[str]) -> list[int]:
    """Processes whose command line is exactly `argv`."""
    want = ("\0".join(argv) + "\0").encode()
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and (d / "cmdline").read_bytes() == want:
                out.append(int(d.name))
        except OSError:
            continue
    return out


@pytest.mark.slow
@pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
def test_a_sim_sweep_on_slurm_equals_the_local_one_with_a_cancelled_job_retried(
    tmp_path: Path,
) -> None:
    scenario = _scenario(tmp_path)
    target_argv, real = _sim_argv()
    slow_run = sorted(r.rel_dir for r in expand(load(scenario), scenario))[SWEEP_RUNS // 2]
    base_env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "PRIOLAB_SIM": str(STANDIN),
        "STANDIN_SIM_ARGV": json.dumps(target_argv),
    }
    assert REPO == REPO_ROOT  # the jobs import this checkout's priolab

    local = tmp_path / "local"
    r = _snakemake(local, scenario, _targets(local, scenario, real), base_env, "--cores", "2")
    assert r.returncode == 0, r.stderr[-3000:]
    for meta_file in local.rglob(rundir.METADATA):
        meta = json.loads(meta_file.read_text())
        assert meta["valid"] and meta["slurm"] is None, (meta_file, meta["invalid_reasons"])

    slurm = tmp_path / "slurm"
    mark = tmp_path / "held-back.mark"
    t0 = time.monotonic()
    with testcluster.cluster() as c:
        bring_up_s = time.monotonic() - t0
        env = {
            **base_env, **c.env,
            "STANDIN_SLOW_RUN": f"/{slow_run}{rundir.PARTIAL_SUFFIX}/",
            "STANDIN_MARK": str(mark), "STANDIN_SLOW_S": "200",
        }  # fmt: skip
        slurm.mkdir()
        (slurm / ".build.done").touch()
        argv = [
            *SNAKEMAKE, "--profile", str(PROFILE), "--config", "site=sim",
            f"scenario={scenario}", f"results={slurm}", "--rerun-triggers", "mtime",
            "--jobs", "4", "--slurm-status-command", "squeue", "--slurm-no-account",
            "--slurm-init-seconds-before-status-checks", "2",
            "--slurm-logdir", str(tmp_path / "slurm-logs"), "--slurm-keep-successful-logs",
            "--", *_targets(slurm, scenario, real),
        ]  # fmt: skip
        t1 = time.monotonic()
        with subprocess.Popen(
            argv, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        ) as proc:
            try:
                cancelled = _cancel_when_started(mark, env, proc)
                out, _ = proc.communicate(timeout=SWEEP_TIMEOUT_S)
            finally:
                if proc.poll() is None:
                    proc.terminate()  # its jobs die with the cluster
        sweep_s = time.monotonic() - t1
        states = subprocess.run(
            ["squeue", "--states=all", "--noheader", "--format=%i|%T"],
            env=env, capture_output=True, text=True, timeout=30,
        ).stdout  # fmt: skip
    assert proc.returncode == 0, out[-4000:]
    jobs = dict(line.split("|") for line in states.split())
    assert jobs[cancelled] == "CANCELLED", states
    n_runs = len(list(slurm.rglob(rundir.METADATA)))
    print(f"slurm: bring-up {bring_up_s:.1f} s; sweep of {n_runs} runs (one cancelled, retried) "
          f"in {sweep_s:.1f} s, {len(jobs)} Slurm jobs, {sweep_s / len(jobs):.2f} s per job "
          f"({'priolab-sim' if real else 'fake sim'})")  # fmt: skip

    # every run arrived, each from a Slurm job on this node; the held-back one after a retry
    assert n_runs == SWEEP_RUNS
    for meta_file in slurm.rglob(rundir.METADATA):
        meta = json.loads(meta_file.read_text())
        assert meta["valid"], (meta_file, meta["invalid_reasons"])
        assert meta["slurm"]["node"] == c.node and meta["slurm"]["job_id"] in jobs
        assert meta["slurm"]["job_id"] != cancelled
    assert not list(slurm.rglob("*" + rundir.PARTIAL_SUFFIX))
    assert jobs and all(s in ("COMPLETED", "CANCELLED") for s in jobs.values()), states
    assert list(jobs.values()).count("CANCELLED") == 1
    # one job per run (and per run's metrics with the real sim), and the one retry
    assert len(jobs) == SWEEP_RUNS * (2 if real else 1) + 1, states
    # the same runs as the local sweep, byte for byte (when and where they ran aside)
    local_files, slurm_files = _run_files(local), _run_files(slurm)
    assert len(local_files) >= SWEEP_RUNS and local_files.keys() == slurm_files.keys()
    differ = [k for k in local_files if local_files[k] != slurm_files[k]]
    assert not differ, differ[:10]
    if real:
        summary = Path("slurm-sweep", "summary.csv")
        assert (slurm / summary).read_bytes() == (local / summary).read_bytes()
