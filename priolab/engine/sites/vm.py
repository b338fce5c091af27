"""The VM site: one run inside the stock-kernel VM (vm/), on the tc backend.

Debian's own kernel has netem, act_police and the Open vSwitch datapath, which this machine's
kernel lacks. The site boots the VM (vm/run.py) and runs the Mininet site inside it: the
same plan, agent, judge and run folder, with the link on tc (netem/tc.py) and a dumbbell's
switches on Open vSwitch (priolab/net.py picks OVS where the datapath exists). The checkout
is shared at its own path; the scenario's folder, its input files' folders and the run's
parent folder are shared at theirs, so the run writes `<out>.partial/` and renames it to
`<out>` exactly as on the host. metadata.json then gains a `vm` block (kernel, image, boot
and wall time, emulated CPUs) and `site.kind` "vm" (`site.inside`: the site that ran inside).

The judge runs inside the VM on the VM's own CPU samples: a run the emulated CPUs could not
keep up with is judged "CPU saturated" (invalid), like any other. The guest cannot see the
host starving its vCPU threads (TCG reports no steal time), so the site also samples this
machine's CPU while the VM runs and applies the same rule (priolab/cpu.py) to the samples
within the run's start and stop times (the guest's clock is the host's): "host CPU
saturated" makes the run invalid too. The emulated CPUs are host threads, so a busy guest
is a busy host: this is the rule that sees both. The run inside stops short of promoting
its folder (`run-one --keep-partial`); the site then judges it once more with the host's
CPU as one more input (engine/finish.py `rejudge`) and only then renames it.

Every boot uses both host cores: run it under the machine-wide netns lock.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ground import data, rundir
from ground.reasons import site_error
from priolab import cpu
from priolab.engine.agent import CpuSampler
from priolab.engine.finish import finish, rejudge
from priolab.engine.plan import RunPlan
from priolab.engine.sites.mininet import _empty_plan
from priolab.scenario import RunSpec, input_files

REPO = Path(__file__).resolve().parents[3]
DEFAULT_BACKEND = "tc"
"""The VM exists to run the tc backend on a stock kernel (issue 12)."""
VM_MARGIN_S = 240.0
"""assumption: boot (~25 s under TCG), Mininet's build and teardown and power-off fit in
this beyond the run's own duration and the agents' stop wait."""
START_MARGIN_S = 4.0
"""The Mininet site's margin between launching the agents and t0, inside the VM
(PRIOLAB_START_MARGIN_S). Measured: with the host's 0.5 s an agent under TCG started its
first process 1.34 s late (host load ~3); assumption: 4 s covers a loaded host."""
TIME_FACTOR = 4.0
"""assumption: a run's wall time inside TCG is at most this many times its duration (the
planned duration is fixed; start-up, analysis-free teardown and python are what stretch)."""


def inner_argv(spec: RunSpec, scenario: Path, out_dir: Path, backend: str) -> list[str]:
    """The command the VM runs: the host checkout's `priolab run-one` on the Mininet site."""
    return [
        str(REPO / ".venv" / "bin" / "python"), "-m", "priolab.cli", "run-one",
        str(scenario.resolve()), "--setting", spec.setting, "--scheme", spec.scheme,
        "--speed", spec.speed, "--rep", str(spec.rep), "--out", str(out_dir),
        "--backend", backend, "--keep-partial",
    ]  # fmt: skip


def inner_env() -> dict[str, str]:
    """The environment the run inside adds: the start margin, and PRIOLAB_DATA where the host
    has it (vm/run.py shares that folder at its own path), so that the scenario's `data:`
    references resolve inside as they did outside."""
    env = {"PRIOLAB_START_MARGIN_S": str(START_MARGIN_S)}
    root = data.external_root()
    return env | ({data.ENV: str(root)} if root else {})


def shares(scenario: Path, out_dir: Path) -> list[Path]:
    """Host folders the run reads or writes besides the checkout and PRIOLAB_DATA."""
    folders = {scenario.resolve().parent, out_dir.parent}
    folders.update(f.parent for f in input_files(scenario))
    return sorted(folders)


def timeout_s(spec: RunSpec) -> float:
    return spec.duration_s * TIME_FACTOR + VM_MARGIN_S


def vm_block(res: Any, image_dir: Path) -> dict[str, Any]:
    """What metadata.json records about the VM a run ran in."""
    from vm.run import MEMORY_MB, SMP

    first = res.results[0] if res.results else {}
    return {
        "kernel": res.kernel,
        "image": str(image_dir),
        "accel": "tcg",
        "smp": SMP,
        "memory_mb": MEMORY_MB,
        "boot_s": res.boot_s,
        "wall_s": round(res.wall_s, 1),
        "command_s": first.get("duration_s"),
        "command_rc": first.get("rc"),
        "timed_out": res.timed_out,
    }


def run_one_in_vm(
    spec: RunSpec, scenario: Path, out_dir: Path, backend: str | None = None
) -> dict[str, Any]:
    """Run one matrix point inside the VM into `out_dir` (on the host); return its
    metadata. Raises vm.image.VmUnavailable when the VM cannot be built or booted."""
    from vm.image import build
    from vm.run import Command, run_job

    out_dir = out_dir.resolve()
    backend = backend or DEFAULT_BACKEND
    img = build()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    t = timeout_s(spec)
    t_boot = time.time()
    inner = Command(inner_argv(spec, scenario, out_dir, backend), timeout_s=t, cwd=str(REPO),
                    env=inner_env())  # fmt: skip
    with CpuSampler() as host:  # this machine's CPU, with the time of each sample
        res = run_job(
            [inner],
            timeout_s=t + VM_MARGIN_S,
            image=img,
            shares=shares(scenario, out_dir),
        )
    work = rundir.partial(out_dir)  # the run inside judged it there and left it unpromoted
    meta_path = work / rundir.METADATA
    if not meta_path.exists() or meta_path.stat().st_mtime < t_boot:
        # the VM judged no run: record an invalid one with what the VM said
        if not work.is_dir():
            work = rundir.begin(out_dir)
        first = res.results[0] if res.results else {}
        why = (f"the VM run did not finish: {res.summary()}\n"
               f"{str(first.get('stderr', ''))[-1500:] or res.guest_log[-1500:]}")  # fmt: skip
        plan_path = work / rundir.PLAN
        plan = (RunPlan.read(plan_path) if plan_path.exists()
                else _empty_plan(spec, out_dir, work, backend, backend, "vm site"))  # fmt: skip
        finish(work, plan, site_errors=[site_error(why)], promote=False)
    meta = rundir.read_metadata(work)
    host_cpu = cpu.during(host, meta.get("start_time"), meta.get("stop_time"))
    site = {**meta.get("site", {}), "kind": "vm", "inside": meta.get("site", {}).get("kind")}
    vm = {**vm_block(res, img.dir), "host_cpu": host_cpu}
    return rejudge(work, host_cpu, {"site": site, "vm": vm})
