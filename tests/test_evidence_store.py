"""The evidence store (priolab/evidence/): a record's row round trip, deterministic files that a
refresh rewrites rather than grows, `priolab evidence add` from hand-made run folders (valid
and invalid, figure data, picture scores, calibration of a real-time run), status and the
refusal of a run whose code changed since its commit."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from priolab.cli import main as priolab
from priolab.evidence import add, digest, store
from priolab.evidence.records import Digests, ReasonRecord, RunRecord
from priolab.evidence.scenarios import expected
from priolab.evidence.status import status
from priolab.workloads.rise.synthetic import SynthRun, run_path, write_run
from tests.conftest import REPO

D = Digests(code="c" * 64, inputs="i" * 64, rust="r" * 64, python="p" * 64)


def rec(**kw: object) -> RunRecord:
    base = dict(scenario="s", site="sim", setting="A", scheme="pri", speed="default", rep=1,
                seed=7, valid=True, digests=D)  # fmt: skip
    return RunRecord.model_validate(base | kw)


def test_a_record_survives_its_row() -> None:
    r = rec(metrics={"a": 1.5, "none": None, "count": 3.0, "inf": math.inf},
            reasons=(ReasonRecord(code="cpu_saturated", detail="x", node="guest"),),
            figure_data={"mtp": {"q": [1.0, 2.0], "n": [2]}}, meta={"run": {"seed": 7}},
            picture={"ssim_mean": 0.9})  # fmt: skip
    back = RunRecord.from_row(r.to_row())
    assert back == r
    assert back.metrics["none"] is None and "absent" not in back.metrics


def test_files_are_deterministic_and_rewritten_not_grown(tmp_path: Path) -> None:
    recs = [rec(rep=i, metrics={"m": i / 3}) for i in (3, 1, 2)]
    a = store.write(tmp_path / "a.parquet", recs)
    b = store.write(tmp_path / "b.parquet", list(reversed(recs)))
    assert a.read_bytes() == b.read_bytes()
    assert [r.rep for r in store.read(a)] == [1, 2, 3]
    again = store.merge(store.read(a), recs)  # re-adding the same runs: the same bytes
    store.write(b, again)
    assert b.read_bytes() == a.read_bytes()
    newer = store.merge(store.read(a), [rec(rep=2, metrics={"m": 9.0})])
    assert len(newer) == 3 and next(r for r in newer if r.rep == 2).metrics["m"] == 9.0


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """Two valid hand-made RISE runs, one invalid, on the Mininet site, with a calibration
    report of their machine and picture scores of one run."""
    res = tmp_path / "results"
    for rep, scheme in ((1, "pri"), (1, "nopri")):
        r = SynthRun(scenario="quick", setting="FB-4K-Low", scheme=scheme, rep=rep,
                     duration_s=2.0)  # fmt: skip
        write_run(run_path(res, r), r)
    bad = SynthRun(scenario="quick", setting="FB-4K-Low", scheme="pri", rep=2, duration_s=2.0,
                   valid=False, invalid_reasons=["guest: CPU saturated"])  # fmt: skip
    write_run(run_path(res, bad), bad)
    for d in res.glob("quick/*/*/*/r*"):
        meta = json.loads((d / "metadata.json").read_text())
        meta["site"] = {"kind": "mininet"}
        meta["host"] = {"hostname": "box", "cpus": 2}
        (d / "metadata.json").write_text(json.dumps(meta))
    (res / "calibration-box.json").write_text(json.dumps({"rate": {"pass": True}}))
    (res / "picture").mkdir()
    pd.DataFrame([{"scenario": "quick", "setting": "FB-4K-Low", "scheme": "pri",
                   "speed": "moderate", "rep": 1, "ssim_mean": 0.8}]).to_csv(
        res / "picture" / "runs.csv", index=False)  # fmt: skip
    return res


def test_add_takes_every_run_of_a_results_tree(results: Path, tmp_path: Path) -> None:
    ev = tmp_path / "evidence"
    assert priolab(["evidence", "--store", str(ev), "add", str(results)]) == 0
    p = store.path_of(ev, "mininet", "quick")
    recs = store.read(p)
    assert [(r.scheme, r.rep, r.valid) for r in recs] == [
        ("nopri", 1, True), ("pri", 1, True), ("pri", 2, False)]  # fmt: skip
    good, bad = recs[1], recs[2]
    assert good.metrics["mtp_median_ms"] > 0 and good.analysis["warmup_s"] == 0.5
    assert good.figure_data["mtp"]["n"][0] > 0 and "frames" in good.figure_data  # rep 1
    assert good.picture == {"speed": "moderate", "ssim_mean": 0.8}
    assert good.calibration == {"file": "calibration-box.json", "report": {"rate": {"pass": True}}}
    assert good.machine["host"]["hostname"] == "box" and good.real_time
    assert not bad.figure_data and bad.reasons[0].code == "unstructured"
    assert good.digests.rust == digest.rust_digest(REPO, "rise", "mininet")
    assert str(results) not in json.dumps(good.meta)  # no run-folder path is kept
    size = p.stat().st_size
    before = p.read_bytes()
    assert priolab(["evidence", "--store", str(ev), "add", str(results)]) == 0
    assert p.read_bytes() == before and p.stat().st_size == size  # re-added: the same bytes


def test_status_counts_records_valid_and_stale(results: Path, tmp_path: Path, capsys) -> None:
    ev = tmp_path / "evidence"
    add.add(results, store_dir=ev, repo=REPO)
    expected.cache_clear()
    (s,) = status(ev, REPO)
    assert (s.site, s.scenario, s.records, s.valid) == ("mininet", "quick", 3, 2)
    assert s.stale == 3  # hand-made runs: not what scenarios/quick.yaml makes
    assert priolab(["evidence", "--store", str(ev), "status"]) == 0
    out = capsys.readouterr().out
    assert "mininet  quick" in out and "stale: 3 made by other inputs" in out


def test_a_record_is_current_exactly_when_its_digest_is_mains() -> None:
    expected.cache_clear()
    exp = expected(REPO, "quick")
    r = rec(scenario="quick", setting="FB-4K-Low", scheme="pri", speed="moderate", rep=2)
    want = exp.digests(r)
    assert want is not None
    assert exp.why_not(r.model_copy(update={"digests": want})) is None
    other = want.model_copy(update={"rust": "0" * 64, "code": "1" * 64})
    assert exp.why_not(r.model_copy(update={"digests": other})) == (
        "made by other Rust than main's"
    )
    gone = r.model_copy(update={"setting": "nowhere", "digests": want})
    assert "has no point nowhere" in (exp.why_not(gone) or "")
    far = r.model_copy(update={"rep": 10, "digests": want})  # made with reps=10: expanded so
    assert exp.digests(far) is not None


def _set_commit(results: Path, commit: str) -> None:
    for d in results.glob("quick/*/*/*/r*"):
        meta = json.loads((d / "metadata.json").read_text())
        meta["git"] = {"commit": commit, "dirty": False}
        (d / "metadata.json").write_text(json.dumps(meta))


def test_add_refuses_a_run_whose_code_changed_since_its_commit(
    results: Path, tmp_path: Path
) -> None:
    import subprocess

    root = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout.split()[0]  # fmt: skip
    _set_commit(results, root)  # the first commit: the harness's code differs since
    with pytest.raises(add.EvidenceError, match=r"made at commit \w+; since then its code "
                                                r"changed in analysis/"):  # fmt: skip
        add.add(results, store_dir=tmp_path / "ev", repo=REPO)
    _set_commit(results, "4b825dc642cb6eb9a060e54bf8d69288fbe4904f")  # git's empty tree
    with pytest.raises(add.EvidenceError, match="commit unknown to this repository"):
        add.add(results, store_dir=tmp_path / "ev", repo=REPO)
    assert add.add(results, store_dir=tmp_path / "ev", repo=REPO, allow_changed=True)


def test_add_names_a_run_it_cannot_read(results: Path, tmp_path: Path) -> None:
    bad = results / "quick" / "FB-4K-Low" / "pri" / "moderate" / "r9"
    bad.mkdir(parents=True)
    (bad / "metadata.json").write_text(json.dumps({"run": {"workload": {}}, "valid": False}))
    with pytest.raises(add.EvidenceError, match=r"moderate/r9: workload kind '': not one of"):
        add.add(results, store_dir=tmp_path / "ev", repo=REPO)
    assert not (tmp_path / "ev").exists()  # nothing half-written
