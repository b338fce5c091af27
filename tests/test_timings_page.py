"""book/timings.py: the timings page from the records in evidence/timings/, and .ci/timed-make,
which writes them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from book.timings import page
from tests.conftest import REPO


def test_page_says_what_is_not_measured(tmp_path: Path) -> None:
    text = page(tmp_path)
    assert "Not measured yet: `.ci/timed-make test`" in text
    assert "Not measured yet: `.ci/timed-make reproduce`" in text
    assert "PRIOLAB_TIMINGS_DIR=evidence/timings" in text
    assert "Not measured yet: `.ci/time-apt-bare`" in text


def test_page_shows_the_debian_packages_from_bare(tmp_path: Path) -> None:
    rec = {"mirror": "http://deb.debian.org/debian", "commit": "c" * 40,
           "host": {"cpu_model": "AMD EPYC", "cpus": 2}, "debootstrap_s": 61.0,
           "sets": [{"set": "run", "wall_s": 95.0, "packages_installed": 400, "root_mb": 900},
                    {"set": "test", "wall_s": 290.0, "packages_installed": 1100,
                     "root_mb": 3100}]}  # fmt: skip
    (tmp_path / "apt-bare.json").write_text(json.dumps(rec))
    text = page(tmp_path)
    assert "debootstrap minbase, 61 s" in text
    assert "| `make apt` (`make reproduce`'s) | 95 s | 400 | 900 MB |" in text
    assert "| `make apt` and `make apt-test` | 290 s | 1100 | 3100 MB |" in text


def test_page_shows_each_step_and_the_vm_jobs_share(tmp_path: Path) -> None:
    host = {"cpu_model": "AMD EPYC", "cpus": 2}
    test = {"target": "test", "commit": "a" * 40, "host": host, "wall_s": 1200.0, "rc": 0,
            "steps": [{"step": "apt", "wall_s": 120.0, "cpu_s": 30.0, "rc": 0},
                      {"step": "test-python", "wall_s": 1080.0, "cpu_s": 1500.0,
                       "rc": 0}]}  # fmt: skip
    vm = {"boot_s": 20.0, "wall_s": 300.0, "budget_s": 600.0, "host": host, "commit": "b" * 40,
          "probe_startup_s": {"n": 3, "median": 1.5, "max": 2.0}, "tests_s": 250.0,
          "files_s": {"vm/intests/test_tc_backend.py": 250.0},
          "cases": [{"file": "vm/intests/test_tc_backend.py", "name": "test_delay",
                     "seconds": 250.0, "outcome": "passed"}]}  # fmt: skip
    (tmp_path / "test.json").write_text(json.dumps(test))
    (tmp_path / "vm-job.json").write_text(json.dumps(vm))
    text = page(tmp_path)
    assert "20.0 min in all (passed), on 2 cores of AMD EPYC, at commit `aaaaaaaaaaaa`" in text
    assert "| `make test-python` | 1080 s | 1500 s | 90 % |" in text
    assert "The in-VM job (inside `make test-python`) took 300 s, 25 % of the whole" in text
    assert "| `vm/intests/test_tc_backend.py` | 1 | 250 | 100 % |" in text
    assert "Not measured yet: `.ci/timed-make reproduce`" in text


def test_timed_make_records_each_step(tmp_path: Path) -> None:
    """.ci/timed-make against a Makefile of two steps, the second failing: both timed, make's
    exit code (2 for a failed recipe) kept, the record in evidence/timings/."""
    (tmp_path / ".ci").mkdir()
    shutil.copy2(REPO / ".ci" / "timed-make", tmp_path / ".ci" / "timed-make")
    (tmp_path / "Makefile").write_text(
        "DEMO_STEPS := one two\n"
        "one:\n\t@sleep 0.2\n"
        "two:\n\t@exit 3\n"
        "print-steps-%:\n\t@echo $(DEMO_STEPS)\n"
    )
    r = subprocess.run([str(tmp_path / ".ci" / "timed-make"), "demo"], cwd=tmp_path,
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 2, r.stderr
    rec = json.loads((tmp_path / "evidence" / "timings" / "demo.json").read_text())
    assert [s["step"] for s in rec["steps"]] == ["one", "two"]
    assert [s["rc"] for s in rec["steps"]] == [0, 2] and rec["rc"] == 2
    assert rec["steps"][0]["wall_s"] >= 0.2 and rec["wall_s"] >= rec["steps"][0]["wall_s"]
    assert rec["host"]["cpus"] >= 1
