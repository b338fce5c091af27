"""The run of one experiment: one matrix point, from clean state to metadata.json.

Build the topology → apply the link → start the workload's processes (argv lists) → wait
for the duration → stop them (SIGTERM, then SIGKILL) → stop the link → write logs and
metadata.json → tear down. Teardown runs on every exit path (SIGINT, SIGTERM, exceptions).

The run writes into `<out>.partial/` and renames it to `<out>` only when complete, so a
directory named `<out>` always holds a finished run (valid or invalid, with reasons).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from priolab import clean as cleaning
from priolab import provenance
from priolab.cpu import CpuSampler
from priolab.engine import rundir
from priolab.scenario import RunSpec
from priolab.workloads import WORKLOADS
from priolab.workloads.base import ProcessSpec, RunContext

GRACE_S = 15.0  # how long after the duration processes may take to finish by themselves
TERM_WAIT_S = 5.0  # SIGTERM → SIGKILL
WAIT_FOR_FILE_S = 30.0


class RunAborted(Exception):
    """SIGINT/SIGTERM arrived during a run."""


@dataclass
class Proc:
    spec: ProcessSpec
    popen: subprocess.Popen[bytes]
    start_s: float
    out: TextIO
    err: TextIO
    end_s: float | None = None
    signalled: str | None = None  # "SIGTERM"/"SIGKILL" if the harness had to stop it

    def to_json(self, run_dir: Path) -> dict[str, Any]:
        return {
            "name": self.spec.name,
            "node": self.spec.node,
            "argv": self.spec.argv,
            "pid": self.popen.pid,
            "start_time": self.start_s,
            "end_time": self.end_s,
            "exit_code": self.popen.returncode,
            "stopped_by_harness": self.signalled,
            "stdout": str(Path(self.out.name).relative_to(run_dir)),
            "stderr": str(Path(self.err.name).relative_to(run_dir)),
        }


@dataclass
class Verdict:
    reasons: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.reasons


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise RunAborted(signal.Signals(signum).name)


def _stop(procs: list[Proc]) -> None:
    """SIGTERM every live process, then SIGKILL what is left after TERM_WAIT_S."""
    live = [p for p in procs if p.popen.poll() is None]
    for p in live:
        p.signalled = "SIGTERM"
        p.popen.send_signal(signal.SIGTERM)
    deadline = time.time() + TERM_WAIT_S
    for p in live:
        try:
            p.popen.wait(timeout=max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.signalled = "SIGKILL"
            p.popen.kill()
            p.popen.wait()
    for p in procs:
        if p.end_s is None:
            p.end_s = time.time()


def judge(
    procs: list[Proc], ran_s: float, duration_s: float, cpu: dict[str, Any], link: dict[str, Any]
) -> Verdict:
    """DESIGN.md: a run is valid only if every process exited cleanly, it ran its full
    duration, the CPU was not saturated and the emulator saw no oversized frames."""
    v = Verdict()
    for p in procs:
        code = p.popen.returncode
        if p.spec.runs_to_end:
            if p.signalled:
                v.reasons.append(f"{p.spec.name} did not exit by itself ({p.signalled})")
            elif code not in p.spec.ok_exit_codes:
                v.reasons.append(f"{p.spec.name} exited with code {code}")
    if ran_s + 0.5 < duration_s:
        v.reasons.append(f"ran {ran_s:.1f} s of {duration_s:g} s")
    if cpu.get("saturated"):
        v.reasons.append(
            f"CPU saturated (mean {cpu.get('utilisation_mean_pct')} %, rule: {cpu.get('rule')})"
        )
    if link.get("oversized_frames"):
        v.reasons.append(f"emulator saw {link['oversized_frames']} oversized frames")
    for err in link.get("errors", []):
        v.reasons.append(f"link emulation: {err}")
    return v


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n")
    tmp.replace(path)


def _start(spec: ProcessSpec, network: Any, logs: Path, stop_at: float) -> Proc:
    if spec.wait_for_file is not None:
        t_end = min(stop_at, time.time() + WAIT_FOR_FILE_S)
        while not spec.wait_for_file.exists():
            if time.time() > t_end:
                raise RuntimeError(f"{spec.name}: {spec.wait_for_file} did not appear")
            time.sleep(0.02)
    if spec.start_delay_s:
        time.sleep(spec.start_delay_s)
    out_rel, err_rel = rundir.log_files(spec.name)
    out = open(logs.parent / out_rel, "w")  # noqa: SIM115 (closed in teardown)
    err = open(logs.parent / err_rel, "w")  # noqa: SIM115
    popen = network.node(spec.node).popen(spec.argv, stdout=out, stderr=err)
    return Proc(spec, popen, time.time(), out, err)


def run_one(spec: RunSpec, out_dir: Path, backend_name: str | None = None) -> dict[str, Any]:
    """Run one matrix point into `out_dir`; return its metadata."""
    from netem.probe import choose_backend, get_backend, probe_kernel
    from priolab.net import build

    out_dir = out_dir.resolve()
    work = rundir.begin(out_dir)
    logs = work / rundir.LOGS
    workload = WORKLOADS[spec.workload_kind]

    cleaning.clean(verbose=False)  # stale state of a killed run must not disturb this one
    requested = backend_name or spec.link.backend
    backend_used, why = choose_backend(requested, probe_kernel())
    backend = get_backend(backend_used)

    meta: dict[str, Any] = {
        "run": spec.to_json(),
        "backend": {"requested": requested, "used": backend_used, "reason": why},
        "git": provenance.git_info(),
        "versions": provenance.versions(workload.tools()),
        "host": provenance.host_info(),
    }
    old_handlers = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    network = None
    procs: list[Proc] = []
    sampler: CpuSampler | None = None
    link_applied: dict[str, Any] = {}
    link_final: dict[str, Any] = {}
    state_id = f"run-{os.getpid()}"
    error: str | None = None
    t_start = t_end = time.time()
    try:
        network = build(spec.topology)
        cleaning.write_state(
            state_id,
            {"netns": [os.readlink(f"/proc/{h.pid}/ns/net") for h in network.net.hosts]},
        )
        meta["interfaces"] = network.interfaces()
        if backend_used == "tc":
            from topologies.common import bridge

            bridge(
                lambda a: network.emu.run(a, check=True),
                "br0",
                [network.emu_up_in, network.emu_up_out],
            )
        link_applied = backend.apply(
            network.emu, network.emu_up_in, network.emu_up_out, spec.link,
            base_dir=spec.base_dir, run_dir=work, seed=spec.seed,
        )  # fmt: skip
        ctx = RunContext(work, spec.duration_s, spec.seed, spec.base_dir, network.pairs)
        meta["inputs"] = workload.prepare(spec.params, ctx)
        plan = workload.plan(spec.params, ctx)
        sampler = CpuSampler().start()
        t_start = time.time()
        stop_at = t_start + spec.duration_s + GRACE_S
        for ps in plan:
            procs.append(_start(ps, network, logs, stop_at))
        # wait for the processes that end by themselves, until the duration plus grace
        while time.time() < stop_at:
            for p in procs:
                if p.end_s is None and p.popen.poll() is not None:
                    p.end_s = time.time()
            if all(p.end_s is not None for p in procs if p.spec.runs_to_end):
                break
            time.sleep(0.1)
        t_end = time.time()
    except RunAborted as e:
        error = f"aborted by {e}"
    except Exception as e:  # recorded in metadata; the run is invalid, teardown still runs
        error = f"{type(e).__name__}: {e}"
    finally:
        t_end = max(t_end, t_start)
        _stop(procs)
        if network is not None:
            try:
                link_final = backend.stop()
            except Exception as e:  # noqa: BLE001
                link_final = {"errors": [f"stop failed: {e}"]}
        cpu = sampler.stop() if sampler else {"samples": 0, "saturated": False}
        for p in procs:
            p.out.close()
            p.err.close()
        if network is not None:
            network.net.stop()
        cleaning.clean(verbose=False)
        for s, h in old_handlers.items():
            signal.signal(s, h)

    enders = [p for p in procs if p.spec.runs_to_end]
    ran_s = min((p.end_s or t_end) for p in enders) - t_start if enders else t_end - t_start
    verdict = judge(procs, ran_s, spec.duration_s, cpu, link_final)
    if error:
        verdict.reasons.insert(0, error)
    meta.update(
        {
            "link_applied": link_applied,
            "link_final": link_final,
            "cpu": cpu,
            "start_time": t_start,
            "stop_time": t_end,
            "ran_s": round(ran_s, 3),
            "processes": [p.to_json(work) for p in procs],
            "valid": verdict.valid,
            "invalid_reasons": verdict.reasons,
        }
    )
    _write_json(work / rundir.METADATA, meta)
    rundir.promote(work)
    if error and error.startswith("aborted"):
        raise KeyboardInterrupt(error)
    return meta
