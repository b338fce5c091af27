"""The sim site: one run as one `priolab-sim run SPEC.json` process, in virtual time.

Check what the run asks for (engine/sim_spec.py: tc, programs that are not Rust
endpoints... a SimPlanError naming each key, before anything runs) → plan it as any site
does (engine/plan.py: the workload's argv lists and start offsets) → write plan.json,
linkem.json and sim-spec.json → run `priolab-sim run sim-spec.json` (its own stdout and
stderr in logs/priolab-sim.*) → turn its sim-report.json into the node reports every site
writes (engine/sim_report.py) → judge, write metadata.json, promote `.partial`
(engine/finish.py). No namespaces, no root, no machine lock: sim runs may go in parallel.

The wall clock only bounds the process (WALL_FACTOR × the plan's deadline + WALL_MARGIN_S);
what the endpoints see is priolab-sim's virtual clock.
"""

from __future__ import annotations

import json
import platform
import resource
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from ground import rundir
from ground.errors import UserError
from ground.reasons import Reason, aborted, first_abort, site_error
from priolab.engine.finish import finish
from priolab.engine.plan import RunPlan, plan
from priolab.engine.sim_report import node_reports, run_errors, site_block
from priolab.engine.sim_spec import LINK_CONFIG, check, sim_site, sim_spec
from priolab.engine.sites.mininet import RunAborted, _empty_plan, on_signal
from priolab.paths import sim_binary
from priolab.scenario import RunSpec
from priolab.workloads import WORKLOADS
from priolab.workloads.base import RunContext

WALL_FACTOR = 4.0
"""assumption: priolab-sim runs 30-400× faster than real time (measured, notes); a run whose
wall time exceeds 4× its virtual deadline has hung and is stopped."""
WALL_MARGIN_S = 60.0
"""Beyond WALL_FACTOR: process start, the TLS set-up, writing logs."""
STOP_WAIT_S = 10.0
"""SIGTERM → SIGKILL for priolab-sim itself."""


class SimBinaryMissing(UserError):
    title = "the sim site needs priolab-sim"


def _execute(binary: Path, spec_file: Path, work: Path, limit_s: float) -> dict[str, Any]:
    """Run priolab-sim to its end (or the wall limit); its exit code, wall and CPU seconds."""
    out_rel, err_rel = rundir.log_files("priolab-sim")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t_start = time.monotonic()
    timed_out = False
    with open(work / out_rel, "wb") as out, open(work / err_rel, "wb") as err:
        proc = subprocess.Popen(
            [str(binary), "run", str(spec_file)], stdout=out, stderr=err,
            stdin=subprocess.DEVNULL, cwd=work, start_new_session=True,
        )  # fmt: skip
        try:
            proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:  # also on SIGINT/SIGTERM (RunAborted)
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=STOP_WAIT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "exit_code": proc.returncode, "timed_out": timed_out,
        "wall_s": round(time.monotonic() - t_start, 3), "cpu_s": round(cpu_s, 3),
        "wall_limit_s": limit_s,
        "stderr_tail": (work / err_rel).read_text(errors="replace")[-2000:],
    }  # fmt: skip


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) else None


def run_one(spec: RunSpec, out_dir: Path, backend_name: str | None = None) -> dict[str, Any]:
    """One matrix point on the sim site into `out_dir`; return its metadata. Raises
    SimPlanError (what the sim cannot do) or SimBinaryMissing before anything is written."""
    check(spec, backend_name)
    binary = sim_binary()
    if not binary.is_file():
        raise SimBinaryMissing(binary, [("", "not found: build it (cargo build --release -p "
                                         "sim) or name another with PRIOLAB_SIM")])  # fmt: skip
    out_dir = out_dir.resolve()
    work = rundir.begin(out_dir)
    old_handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    run_plan: RunPlan | None = None
    errors: list[Reason] = []
    inputs: dict[str, str] = {}
    spec_json: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    measured: dict[str, Any] = {}
    try:
        site = sim_site(spec, work)
        ctx = RunContext(work, spec.duration_s, spec.seed, spec.base_dir, site.pairs)
        inputs = WORKLOADS[spec.workload_kind].prepare(spec.params, ctx)
        run_plan = plan(spec, site, out_dir.parent)
        run_plan.out_dir, run_plan.partial_dir = str(out_dir), str(work)
        (work / rundir.PLAN).write_text(json.dumps(run_plan.to_json(), indent=1))
        spec_json = sim_spec(run_plan, site, work, spec.sim)
        (work / LINK_CONFIG).write_text(json.dumps(run_plan.link.applied["config"]))
        (work / rundir.SIM_SPEC).write_text(json.dumps(spec_json, indent=1))
        limit_s = WALL_FACTOR * float(spec_json["deadline_s"]) + WALL_MARGIN_S
        measured = _execute(binary, work / rundir.SIM_SPEC, work, limit_s)
        if measured["timed_out"]:
            errors.append(
                site_error(f"priolab-sim did not finish within {limit_s:g} s of wall time")
            )
        report = _read_report(work / rundir.SIM_REPORT)
        outputs = [f for p in spec_json["processes"] for f in (p["stdout"], p["stderr"])]
        outputs.append(spec_json["link"]["packet_log"])
        outputs += (spec_json.get("capture") or {}).get("files", {}).values()
        present = {f for f in outputs if f is not None and Path(f).is_file()}
        errors += map(site_error, run_errors(spec_json, report, measured["exit_code"],
                                       measured.pop("stderr_tail"), present))  # fmt: skip
        if report is not None:
            host = {"hostname": platform.node(), "kernel": platform.release()}
            for node, rep in node_reports(run_plan, spec_json, report, host).items():
                (work / rundir.node_report(node)).write_text(rep.model_dump_json(indent=1))
    except RunAborted as e:
        errors.append(aborted(e))
    except Exception as e:  # recorded in metadata; the run is invalid
        errors.append(site_error(f"{type(e).__name__}: {e}"))
    finally:
        for s, h in old_handlers.items():
            signal.signal(s, h)

    if run_plan is None:  # failed before a plan existed: record what is known
        run_plan = _empty_plan(spec, out_dir, work, spec.link.backend, "userspace", "sim", "sim")
    block = site_block(spec_json or {"seed": spec.seed, "epoch_unix_ns": None}, report, measured)
    block["binary"] = str(binary)
    meta = finish(work, run_plan, site_errors=errors, extra={"inputs": inputs, "site": block})
    abort = first_abort(errors)
    if abort is not None:
        raise KeyboardInterrupt(abort.detail)
    return meta
