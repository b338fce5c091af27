"""`priolab evidence verify` (priolab/evidence/verify.py): the comparison rule (counts exactly,
floats within a relative tolerance), and for real: a point of scenarios/dtp-quick.yaml run on
the sim site, added to a store, rerun and found the same; a tampered record found out, naming
the field."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from priolab.cli import main as priolab
from priolab.evidence import add, store
from priolab.evidence.records import Digests, RunRecord
from priolab.evidence.scenarios import expected
from priolab.evidence.verify import current_sim_records, differences, same, sample
from priolab.paths import sim_binary
from tests.conftest import REPO


def test_counts_must_be_equal_and_floats_close() -> None:
    assert same(3.0, 3.0) and not same(1_000_000_000.0, 1_000_000_001.0)  # counts: exact
    assert same(0.1 + 0.2, 0.3)  # a float's last bits
    assert not same(0.3, 0.3001)
    assert same(0.0, 1e-17)  # a mean of zeros on another CPU
    assert same(math.nan, math.nan) and not same(math.nan, 1.0)
    assert same(math.inf, math.inf) and not same(math.inf, 1e308)
    assert same(None, None) and not same(None, 0.0)


def _rec(**kw: object) -> RunRecord:
    d = Digests(code="c", inputs="i", rust="r", python="p")
    base = dict(scenario="s", site="sim", setting="A", scheme="x", speed="d", rep=1, seed=1,
                valid=True, digests=d)  # fmt: skip
    return RunRecord.model_validate(base | kw)


def test_differences_name_each_field() -> None:
    a = _rec(metrics={"n": 5.0, "f": 0.5, "only_a": 1.0})
    b = _rec(metrics={"n": 6.0, "f": 0.5 * (1 + 1e-12), "only_b": 1.0}, valid=False)
    d = differences(a, b)
    assert "valid: recorded True, rerun False" in d
    assert "n: recorded 5.0, rerun 6.0" in d
    assert not any(x.startswith("f:") for x in d)
    assert "only_a: only recorded" in d and "only_b: only in the rerun" in d


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
    p = store.path_of(ev, "sim", "dtp-quick")
    (r,) = store.read(p)
    tampered = dict(r.metrics, deadline_ratio=(r.metrics["deadline_ratio"] or 0.0) + 0.25)
    store.write(p, [r.model_copy(update={"metrics": tampered})])
    assert priolab(["evidence", "--store", str(ev), "verify", "--sample", "1"]) == 1
    text = capsys.readouterr().out
    assert "FAIL dtp-quick/3MBps/dtp/cubic/r1" in text and "deadline_ratio: recorded" in text
    store.write(p, [r.model_copy(update={"digests": r.digests.model_copy(
        update={"code": "0" * 64})})])  # fmt: skip
    assert priolab(["evidence", "--store", str(ev), "verify", "--sample", "1"]) == 1
    assert "0 current sim records" in capsys.readouterr().err
