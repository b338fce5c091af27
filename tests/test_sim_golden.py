"""Sim golden runs: one short run per workload on the sim site, its metrics committed in
tests/golden/sim-metrics.json and compared, on this CPU's default math kernels and on glibc's
generic ones (conftest.GENERIC_LIBM). The sim site is deterministic per seed, and its records
are re-checked on other machines (the evidence store), so a run must come out the same on any
x86-64 CPU: counts exactly, other numbers within analysis.sameness.REL_TOL. A failure names
each metric that moved.

Each point reads only files the repository ships (no shared data): the quick RISE link with
0.05 % loss, DTP at 3 MB/s with 1 % loss, QPR over the shipped Markov cellular trace with
5 % Gilbert-Elliott loss, MoQ's clip at 2.7 Mbit/s with 1 % loss, RoQ's SCReAM over QUIC on
the RFC 8867-style link.

A change that moves a sim result on purpose rewrites the file:
    PRIOLAB_WRITE_GOLDEN=1 .venv/bin/pytest tests/test_sim_golden.py -k default
and the diff of the golden file goes into the same commit, saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from analysis.sameness import moved
from ground import rundir
from priolab.paths import sim_binary
from tests.conftest import GENERIC_LIBM, REPO

GOLDEN = REPO / "tests" / "golden" / "sim-metrics.json"
WRITE_ENV = "PRIOLAB_WRITE_GOLDEN"
CODE_PATHS: dict[str, dict[str, str]] = {"default": {}, "generic-libm": GENERIC_LIBM}
MARKOV = REPO / "traces" / "synthetic" / "cellular-markov-seed1-120s.txt"


def _rise(d: dict[str, Any]) -> None:
    d["duration_s"] = 8  # 3 s of warm-up (the workload's default), 5 s measured


def _lossy(d: dict[str, Any]) -> None:
    d["link"]["downlink"]["loss"] = {"model": "iid", "loss_pct": 1.0}


def _qpr(d: dict[str, Any]) -> None:
    trace = {"file": str(MARKOV), "format": "schedule"}
    d["link"]["downlink"]["trace"] = trace
    d["settings"] = {
        "markov-loss5": {
            "link": {"downlink": {"trace": trace, "loss": {
                "model": "gilbert_elliott_mean", "loss_pct": 5, "burst_pkts": 4}}},
            "workload": {"initial_window": {"lowest_rate_mbps": 1.0, "rtt_ms": 20}},
        }
    }  # fmt: skip


def _moq(d: dict[str, Any]) -> None:
    _lossy(d)
    d["workload"]["params"]["drain_s"] = 1.0


def _as_is(d: dict[str, Any]) -> None:
    """The file's own point, only shortened."""


# kind -> (scenario file, edit, virtual seconds, setting, scheme, speed)
POINTS: dict[str, tuple[str, Callable[[dict[str, Any]], None], float, str, str, str]] = {
    "rise": ("quick.yaml", _rise, 8, "FB-4K-Low-L0.05", "pri", "moderate"),
    "dtp": ("dtp-quick.yaml", _lossy, 3, "3MBps", "dtp", "cubic"),
    "qpr": ("qpr-quick.yaml", _qpr, 4, "markov-loss5", "q50", "default"),
    "moq": ("moq-sports.yaml", _moq, 3, "2.7M", "ft", "default"),
    "roq": ("roq-quick.yaml", _as_is, 5, "d50", "scream", "default"),
}

needs_real_sim = pytest.mark.skipif(
    sim_binary() is None, reason="priolab-sim is not built (make build)"
)


def _absolute(node: Any, key: str = "") -> Any:
    """The scenario with every file it names made absolute (the copy lives in tmp_path)."""
    if isinstance(node, dict):
        return {k: _absolute(v, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_absolute(v) for v in node]
    if key in ("file", "frame_trace") and isinstance(node, str) and not Path(node).is_absolute():
        return str((REPO / "scenarios" / node).resolve())
    return node


def _scenario(tmp_path: Path, kind: str) -> tuple[Path, list[str], str]:
    source, edit, duration_s, setting, scheme, speed = POINTS[kind]
    data = yaml.safe_load((REPO / "scenarios" / source).read_text())
    data.update(repetitions=1, duration_s=duration_s)
    edit(data)
    data["settings"] = {setting: data["settings"][setting]}
    data = _absolute(data)
    scenario = tmp_path / f"golden-{source}"
    scenario.write_text(yaml.safe_dump(data))
    args = ["--setting", setting, "--scheme", scheme, "--speed", speed, "--rep", "1"]
    return scenario, args, data["name"]


def sim_metrics(tmp_path: Path, kind: str, env: dict[str, str]) -> dict[str, float]:
    """The metrics of the kind's golden point, run and scored in processes started with
    `env` (so the dynamic loader of both priolab-sim and Python sees it)."""
    scenario, args, name = _scenario(tmp_path, kind)
    results = tmp_path / "results"
    full_env = {**os.environ, **env}
    run = [sys.executable, "-m", "priolab.cli", "run-one", str(scenario), *args,
           "--site", "sim", "--results", str(results)]  # fmt: skip
    r = subprocess.run(run, env=full_env, capture_output=True, text=True, check=False)
    assert r.returncode == 0, f"{kind}: run-one failed\n{r.stdout}\n{r.stderr}"
    _, setting, _, scheme, _, speed, *_ = args
    out = rundir.run_dir(results, name, setting, scheme, speed, 1)
    meta = json.loads((out / rundir.METADATA).read_text())
    assert meta["valid"], f"{kind}: {meta['invalid_reasons']}"
    score = [sys.executable, "-m", "analysis.metrics", str(out)]
    r = subprocess.run(score, env=full_env, capture_output=True, text=True, check=False)
    assert r.returncode == 0, f"{kind}: analysis.metrics failed\n{r.stdout}\n{r.stderr}"
    return json.loads((out / rundir.METRICS).read_text())["metrics"]


@needs_real_sim
@pytest.mark.parametrize("code_path", list(CODE_PATHS))
@pytest.mark.parametrize("kind", list(POINTS))
def test_sim_metrics_match_the_golden_run(tmp_path: Path, kind: str, code_path: str) -> None:
    got = sim_metrics(tmp_path, kind, CODE_PATHS[code_path])
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.is_file() else {}
    if os.environ.get(WRITE_ENV) == "1" and code_path == "default":
        golden[kind] = got
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    assert kind in golden, f"{GOLDEN.name} has no {kind}: run with {WRITE_ENV}=1 (docstring)"
    diff = moved(golden[kind], got)
    assert not diff, f"{kind} on the {code_path} code path moved:\n" + "\n".join(diff)
