"""The VM's host and guest plumbing without booting: the recipe hash, qemu's command line,
the guest's job runner, and the runner's hard timeout that kills qemu."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from vm import guest_run, image, run
from vm.image import Image


def test_recipe_hash_follows_every_recipe_file(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "vm"
    shutil.copytree(image.HERE, copy, ignore=shutil.ignore_patterns("__pycache__", "intests"))
    monkeypatch.setattr(image, "HERE", copy)
    base = image.recipe_hash()
    for name in image.RECIPE_FILES:
        f = copy / name
        old = f.read_bytes()
        f.write_bytes(old + b"\n# changed\n")
        assert image.recipe_hash() != base, name
        f.write_bytes(old)
    assert image.recipe_hash() == base
    (copy / "run.py").write_text("# not part of the recipe\n")
    assert image.recipe_hash() == base


def test_cached_image_needs_a_complete_build(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PRIOLAB_VM_CACHE", str(tmp_path))
    d = image.image_dir()
    d.mkdir(parents=True)
    for f in ("rootfs.img", "vmlinuz", "initrd.img"):
        (d / f).write_bytes(b"x")
    assert image.cached_image() is None  # no stamp: the build did not finish
    (d / "recipe.sha256").write_text("0" * 64 + "\n")
    assert image.cached_image() is None  # an older recipe
    (d / "recipe.sha256").write_text(image.recipe_hash() + "\n")
    assert image.cached_image() == Image(d)


def test_qemu_argv(tmp_path: Path) -> None:
    img = Image(tmp_path / "img")
    argv = run.qemu_argv(img, tmp_path / "job", Path("/work/x"), Path("/work/shared/data"))
    joined = " ".join(argv)
    assert argv[0] == "qemu-system-x86_64"
    assert "-accel tcg,thread=multi" in joined and "-cpu max" in joined
    assert "-nic none" in joined and "-no-reboot" in joined
    assert f"file={img.rootfs},format=raw,if=virtio,snapshot=on" in argv
    assert "priolab.src=/work/x" in joined and "priolab.data=/work/shared/data" in joined
    tags = [a.split("mount_tag=")[1].split(",")[0] for a in argv if "mount_tag=" in a]
    assert tags == ["job", "src", "data"]


def test_guest_runner_runs_in_order_and_reports(tmp_path: Path) -> None:
    job = {"commands": [
        {"argv": [sys.executable, "-c", "import os; print(os.environ['PRIOLAB_IN_VM'])"]},
        {"argv": [sys.executable, "-c", "import sys; sys.exit(3)"]},
        {"argv": [sys.executable, "-c", "import time; time.sleep(30)"], "timeout_s": 0.5},
        {"argv": ["/nonexistent/tool"]},
    ]}  # fmt: skip
    (tmp_path / "job.json").write_text(json.dumps(job))
    assert guest_run.run_job(tmp_path) == 0
    res = json.loads((tmp_path / "results.json").read_text())["results"]
    assert [r["rc"] for r in res] == [0, 3, None, None]
    assert res[0]["stdout"].strip() == "1"
    assert res[2].get("timeout") is True
    assert "cannot start" in res[3]["stderr"]
    assert (tmp_path / "out").is_dir()


def test_runner_kills_qemu_at_the_hard_timeout(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(run, "qemu_argv", lambda *a: ["sleep", "60"])
    img = Image(tmp_path)
    res = run.run_job([["true"]], timeout_s=0.5, job_dir=tmp_path / "job", image=img)
    assert res.timed_out and res.wall_s < 10
    assert res.results == [] and not res.ok()
    assert json.loads((tmp_path / "job" / "job.json").read_text())["commands"][0]["argv"] == [
        "true"
    ]


def test_budget_scales_with_the_slower_of_boot_and_probe_start_up() -> None:
    b = run.Budget(base_s=100.0, reference_boot_s=30.0, reference_startup_s=1.0, max_scale=2.0)
    assert b.limit_s(None, None) == 60.0  # before the boot is known: the longest boot allowed
    assert b.limit_s(20.0, 0.5) == 120.0  # a fast host gets base_s, never less
    assert b.limit_s(45.0, 1.2) == 45.0 + 150.0  # boot 1.5x slower
    assert b.limit_s(30.0, 1.8) == 30.0 + 180.0  # probe start-up 1.8x slower
    assert b.limit_s(30.0, 9.0) == 30.0 + 200.0  # at most max_scale
    assert b.cap_s() == 260.0


def _hanging_qemu(job: Path, boot_s: float, startups_s: list[float]):  # noqa: ANN202
    """A stand-in for qemu_argv: a process that reports the boot and the probes' start-up
    into the job folder as the guest would, then hangs."""

    def argv(*a: object) -> list[str]:
        code = (
            "import json, pathlib, time\n"
            f"j = pathlib.Path({str(job)!r})\n"
            "(j / 'out').mkdir(exist_ok=True)\n"
            f"boot = {{'boot_s': {boot_s}, 'results': []}}\n"
            f"probes = {{'startup_s': {startups_s}}}\n"
            "(j / 'results.json').write_text(json.dumps(boot))\n"
            "(j / 'out' / 'probe-startup.json').write_text(json.dumps(probes))\n"
            "time.sleep(60)\n"
        )
        return [sys.executable, "-c", code]

    return argv


def test_runner_kills_qemu_at_the_scaled_budget(tmp_path: Path, monkeypatch) -> None:
    """A fake qemu that reports a boot and a slow probe start-up, then hangs: the job ends at
    boot + base_s x 2 (the start-up ratio), not at the hard timeout."""
    job = tmp_path / "job"
    monkeypatch.setattr(run, "qemu_argv", _hanging_qemu(job, boot_s=0.2, startups_s=[2.0]))
    budget = run.Budget(base_s=0.5, reference_boot_s=2.0, reference_startup_s=1.0, max_scale=4)
    res = run.run_job([["true"]], timeout_s=30, job_dir=job, image=Image(tmp_path), budget=budget)
    assert res.timed_out and res.budget_s == 0.2 + 0.5 * 2.0
    assert res.budget_s <= res.wall_s < 10
    assert res.boot_s == 0.2 and res.probe_startup_s == [2.0]
    assert "probe start-up median 2.00 s" in res.summary() and "1 s budget" in res.summary()


def test_budget_stops_a_job_early_on_a_host_too_slow_for_its_cap() -> None:
    b = run.Budget(base_s=100.0, reference_boot_s=30.0, reference_startup_s=1.0, max_scale=2.0)
    assert b.too_slow(None, []) is None
    assert b.too_slow(59.0, [1.9, 2.0, 1.5]) is None  # slow, but within the cap
    why = b.too_slow(61.0, [])
    assert why is not None and "boot took 61.00 s, 2.0x the reference 30 s" in why
    assert b.too_slow(30.0, [5.0, 5.0]) is None  # two probes: not yet judged by them
    why = b.too_slow(30.0, [5.0, 2.5, 0.5])
    assert why is not None and "probe start-up median took 2.50 s" in why


def test_runner_stops_a_job_whose_boot_shows_the_host_too_slow(tmp_path: Path, monkeypatch) -> None:
    """A fake qemu that boots 3x slower than the reference and hangs: the runner stops it at
    once, saying why, instead of waiting out the budget."""
    job = tmp_path / "job"
    monkeypatch.setattr(run, "qemu_argv", _hanging_qemu(job, boot_s=6.0, startups_s=[]))
    budget = run.Budget(base_s=30.0, reference_boot_s=2.0, reference_startup_s=1.0, max_scale=2)
    res = run.run_job([["true"]], timeout_s=60, job_dir=job, image=Image(tmp_path), budget=budget)
    assert res.timed_out and res.wall_s < 10
    assert res.too_slow is not None and "boot took 6.00 s, 3.0x" in res.too_slow
    assert "stopped early: the VM's boot took 6.00 s" in res.summary()


def test_runner_reports_a_qemu_that_fails_to_start(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(run, "qemu_argv", lambda *a: ["sh", "-c", "echo bad option >&2; exit 1"])
    with pytest.raises(run.VmUnavailable, match="bad option"):
        run.run_job([["true"]], timeout_s=5, job_dir=tmp_path / "job", image=Image(tmp_path))


def test_in_vm_pytest_command_writes_junit_to_the_job(tmp_path: Path, monkeypatch) -> None:
    """The command the VM runs, run here: the in-VM tests skip outside the VM (saying so) and
    the JUnit report lands in $PRIOLAB_VM_OUT, where tests/test_vm.py reads it."""
    import subprocess

    from vm.cli import in_vm_pytest_argv

    monkeypatch.setenv("PRIOLAB_VM_OUT", str(tmp_path))
    monkeypatch.delenv("PRIOLAB_IN_VM", raising=False)
    r = subprocess.run(in_vm_pytest_argv(["vm/intests/test_ovs.py"]), capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:]
    assert "runs inside the priolab VM" in r.stdout
    assert "<testcase" in (tmp_path / "junit.xml").read_text()


def test_compare_table_rows() -> None:
    from vm.compare_table import table

    fig = {"compare": {
        "loss": {"iid 5%": {
            "tc": {"expected_loss_pct": 5.0, "expected_burst": 1.05,
                   "seeds": [{"seed": 1, "loss_pct": 4.9, "burst_mean": 1.1,
                              "bursts_1_2_3_4_5plus": [200, 10, 1, 0, 0]}]},
            "userspace": {"expected_loss_pct": 5.0, "expected_burst": 1.05,
                          "seeds": [{"seed": 1, "loss_pct": 5.2, "burst_mean": 1.0,
                                     "bursts_1_2_3_4_5plus": [210, 9, 0, 0, 0]}]}}},
        "rate": {"2 Mbit/s (offered 1.3x)": {"tc": {"measured_mbps": 1.98},
                                             "userspace": {"measured_mbps": 2.01}}},
    }}  # fmt: skip
    lines = table(fig).splitlines()
    assert lines[0].startswith("| case | metric | model | tc (netem) | linkem |")
    assert "| iid 5% | loss (%), seed 1 / 2 | 5.00 | 4.90 | 5.20 |" in lines
    assert "| iid 5% | bursts of 1/2/3/4/5+, seed 1 |  | 200/10/1/0/0 | 210/9/0/0/0 |" in lines
    assert any(line.startswith("| 2 Mbit/s") and "1.98 | 2.01" in line for line in lines)


def test_extra_shares_are_tagged_and_mounted_at_their_paths(tmp_path: Path) -> None:
    src, data = tmp_path / "src", tmp_path / "data"
    res, inner = tmp_path / "results", tmp_path / "results" / "sc"
    got = run.extra_shares([inner, res, src / "scenarios", data / "x", res], src, data)
    assert got == [res] and res.is_dir()  # nested, inside src or data: seen through another
    argv = run.qemu_argv(Image(tmp_path / "img"), tmp_path / "job", src, None, got)
    tags = [a.split("mount_tag=")[1].split(",")[0] for a in argv if "mount_tag=" in a]
    assert tags == ["job", "src", "x0"]
    assert f"local,path={res},mount_tag=x0,security_model=none,id=x0" in argv


def test_guest_runner_reports_a_share_it_cannot_mount(tmp_path: Path) -> None:
    job = {"commands": [{"argv": ["true"]}],
           "mounts": [{"tag": "nosuchtag", "path": str(tmp_path / "m")}]}  # fmt: skip
    (tmp_path / "job.json").write_text(json.dumps(job))
    assert guest_run.run_job(tmp_path) == 0
    report = json.loads((tmp_path / "results.json").read_text())
    assert [r["rc"] for r in report["results"]] == [0]  # the commands still run
    assert len(report["mount_errors"]) == 1 and "nosuchtag" in report["mount_errors"][0]


def test_vm_site_runs_the_mininet_site_inside_with_tc(tmp_path: Path) -> None:
    from priolab.engine.sites import vm as site
    from priolab.scenario import expand, load

    sc = tmp_path / "scenarios" / "standin.yaml"
    sc.parent.mkdir()
    shutil.copy(Path(__file__).resolve().parent.parent / "scenarios" / "standin.yaml", sc)
    spec = expand(load(sc), sc)[0]
    out = tmp_path / "results" / spec.rel_dir
    argv = site.inner_argv(spec, sc, out, "tc")
    assert argv[:4] == [str(site.REPO / ".venv/bin/python"), "-m", "priolab.cli", "run-one"]
    assert argv[argv.index("--out") + 1] == str(out)
    assert argv[argv.index("--backend") + 1] == "tc"
    assert "--site" not in argv  # inside, the Mininet site runs
    assert site.shares(sc, out) == sorted({sc.parent, out.parent})
    assert site.timeout_s(spec) > spec.duration_s


def test_vm_site_judges_the_host_cpu_during_the_run() -> None:
    """The guest cannot see its vCPU threads starved: the host's samples within the run's
    start/stop decide, with the project's rule; outside the run (the boot) they do not."""
    from priolab.cpu import during
    from priolab.engine.agent import CpuSampler

    h = CpuSampler(interval_s=0.5)  # the sampler the site runs, never started: samples by hand
    h.times = [0.0, 1.0, 2.0] + [10.0 + i for i in range(10)]
    h.samples = [1.0] * 3 + [0.3] * 10
    assert not during(h, 10.0, 19.0)["saturated"]
    assert during(h, 0.0, 2.0)["saturated"]
    assert during(h, None, 5.0)["samples"] == 0
    assert during(h, 1.0, 19.0)["samples"] == 12  # 2 of 12 samples busy, mean 0.42


def test_vm_site_leaves_the_inner_run_for_the_host_to_judge() -> None:
    """The run inside the VM is judged but not renamed: the host judges it once more with its
    own CPU (engine/finish.py rejudge), so a finished folder is never rewritten."""
    from priolab.cli import parser
    from priolab.engine.sites import vm as site
    from priolab.scenario import expand, load

    sc = Path(__file__).resolve().parent.parent / "scenarios" / "standin.yaml"
    argv = site.inner_argv(expand(load(sc), sc)[0], sc, Path("/o/r1"), "tc")
    assert "--keep-partial" in argv
    assert parser().parse_args(argv[3:]).keep_partial


def test_timing_record_says_where_the_in_vm_time_went(tmp_path: Path) -> None:
    from vm.timings import markdown, record

    out = tmp_path / "out"
    out.mkdir()
    (out / "probe-startup.json").write_text(json.dumps({"startup_s": [1.0, 3.0, 2.0]}))
    (out / "junit.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="vm.intests.test_tc_backend" name="test_delay" time="30.5"/>'
        '<testcase classname="vm.intests.test_tc_backend" name="test_seed" time="9.5"/>'
        '<testcase classname="vm.intests.test_ovs" name="test_ovs_is_available" time="60">'
        '<failure message="no ovs"/></testcase>'
        "</testsuite></testsuites>"
    )
    rec = record(tmp_path, {"boot_s": 20.0, "wall_s": 150.0, "budget_s": 900.0})
    assert rec["probe_startup_s"] == {"n": 3, "median": 2.0, "max": 3.0}
    assert rec["tests_s"] == 100.0
    assert rec["files_s"] == {"vm/intests/test_tc_backend.py": 40.0, "vm/intests/test_ovs.py": 60.0}
    assert [c["outcome"] for c in rec["cases"]] == ["passed", "passed", "failure"]
    page = "\n".join(markdown(rec))
    assert "boot 20 s, the tests 100 s, the rest (pytest's start inside, power-off) 30 s" in page
    assert "| `vm/intests/test_ovs.py` | 1 | 60 | 60 % |" in page
    assert page.index("test_ovs::test_ovs_is_available") < page.index("test_tc_backend::test_delay")
