"""`priolab evidence verify` (priolab/evidence/verify.py): what it compares (the verdict, and
the metrics by analysis/sameness.py's rule), and for real: a point of scenarios/dtp-quick.yaml
run on the sim site, added to a store, rerun and found the same; a tampered record found out,
naming the field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from priolab.cli import main as priolab
from priolab.evidence import add, store
from priolab.evidence.records import Digests, RunRecord
from priolab.evidence.scenarios import expected
from priolab.evidence.verify import current_sim_records, differences, sample
from priolab.paths import sim_binary
from tests.conftest import REPO


def _rec(**kw: object) -> RunRecord:
    d = Digests(code="c", inputs="i", rust="r", python="p")
    base = dict(scenario="s", site="sim", setting="A", scheme="x", speed="d", rep=1, seed=1,
                valid=True, digests=d)  # fmt: skip
    return RunRecord.model_validate(base | kw)


def test_differences_name_each_field() -> None:
    a = _rec(metrics={"n": 5.0, "f": 0.5, "only_a": 1.0})
    b = _rec(metrics={"n": 6.0, "f": 0.5 * (1 + 1e-12), "only_b": 1.0}, valid=False)
    d = differences(a, b)  # the metrics by analysis.sameness (tests/test_sameness.py)
    assert "valid: recorded True, rerun False" in d
    assert "n: got 6.0, expected 5.0" in d
    assert not any(x.startswith("f:") for x in d)
    assert "only_a: missing, expected 1.0" in d and "only_b: 1.0, not expected" in d


def test_the_sample_is_seeded() -> None:
    recs = [_rec(rep=i) for i in range(1, 20)]
    assert sample(recs, 5, 1) == sample(list(reversed(recs)), 5, 1)
    assert sample(recs, 5, 1) != sample(recs, 5, 2)
    assert len(sample(recs, 50, 1)) == 19


needs_sim = pytest.mark.skipif(not sim_binary().is_file(),
                               reason="priolab-sim is not built (cargo build --release -p "
                                      "priolab-sim)")  # fmt: skip


@needs_sim
def test_a_sim_record_reruns_the_same_and_a_tampered_one_does_not(tmp_path: Path, capsys) -> None:
    res = tmp_path / "results-sim"
    out = res / "dtp-quick" / "3MBps" / "dtp" / "cubic" / "r1"
    subprocess.run([sys.executable, "-m", "priolab.cli", "run-one",
                    str(REPO / "scenarios" / "dtp-quick.yaml"), "--setting", "3MBps",
                    "--scheme", "dtp", "--speed", "cubic", "--rep", "1", "--site", "sim",
                    "--out", str(out)],
                   check=True, cwd=REPO, capture_output=True)  # fmt: skip
    for step in ("analysis.tables", "analysis.metrics"):
        subprocess.run([sys.executable, "-m", step, str(out)], check=True, capture_output=True)
    ev = tmp_path / "evidence"
    add.add(res, store_dir=ev, repo=REPO)
    expected.cache_clear()
    current, stale = current_sim_records(ev, REPO)
    assert len(current) == 1 and stale == 0
    assert priolab(["evidence", "--store", str(ev), "verify", "--sample", "1"]) == 0
    assert "ok   dtp-quick/3MBps/dtp/cubic/r1" in capsys.readouterr().out
    verify_only = ["evidence", "--store", str(ev), "verify", "--sample", "1", "--only"]
    assert priolab([*verify_only, "quick,dtp-quick"]) == 0  # make test's cheap sample
    assert "verify: 1 of 1 current" in capsys.readouterr().out
    assert priolab([*verify_only, "quick"]) == 1
    assert "0 current sim records of quick" in capsys.readouterr().err
    p = store.path_of(ev, "sim", "dtp-quick")
    (r,) = store.read(p)
    tampered = dict(r.metrics, deadline_ratio=(r.metrics["deadline_ratio"] or 0.0) + 0.25)
    store.write(p, [r.model_copy(update={"metrics": tampered})])
    assert priolab(["evidence", "--store", str(ev), "verify", "--sample", "1"]) == 1
    text = capsys.readouterr().out
    assert "FAIL dtp-quick/3MBps/dtp/cubic/r1" in text and "deadline_ratio: got" in text
    store.write(p, [r.model_copy(update={"digests": r.digests.model_copy(
        update={"code": "0" * 64})})])  # fmt: skip
    assert priolab(["evidence", "--store", str(ev), "verify", "--sample", "1"]) == 1
    assert "0 current sim records" in capsys.readouterr().err
