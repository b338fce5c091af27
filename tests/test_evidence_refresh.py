"""What `make book-refresh` reruns (book/refresh.py, priolab/evidence/refresh.py): every sim
point of the book's scenarios, current, stale or missing in the store, the points the sim
cannot run named; and the line on the book's front page that states what a full refresh cost,
with its estimate on a Slurm cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from book import front
from book.refresh import book_scenarios, plan
from priolab.evidence import store
from priolab.evidence.records import RunRecord
from priolab.evidence.refresh import TIMING_FILE, Timing, slurm_estimate_s
from priolab.evidence.scenarios import expected
from tests.conftest import REPO, dataset


def test_the_book_rests_on_every_papers_scenarios_the_agreement_and_the_map() -> None:
    names = book_scenarios(REPO)
    assert {"quick", "dtp-bandwidth", "qpr-readings", "roq-rfc8867", "moq-sports"} <= set(names)
    assert {"agree-rise", "agree-roq", "rise-loss-queue-map"} <= set(names)
    assert len(names) == len(set(names))


def _records(scenario: str, tmp: Path) -> list[RunRecord]:
    """Every point of `scenario` at 1 repetition, as current records (digests main's)."""
    from priolab.evidence.digest import normalised_run
    from priolab.evidence.records import Digests
    from priolab.scenario import expand, load

    expected.cache_clear()
    f = REPO / "scenarios" / f"{scenario}.yaml"
    sc = load(f).model_copy(update={"repetitions": 1})
    blank = Digests(code="", inputs="", rust="", python="")
    out = []
    for spec in expand(sc, f):
        r = RunRecord(scenario=scenario, site="sim", setting=spec.setting, scheme=spec.scheme,
                      speed=spec.speed, rep=spec.rep, seed=spec.seed, valid=True, digests=blank,
                      meta={"run": normalised_run(spec.to_json(), REPO)})  # fmt: skip
        out.append(r.model_copy(update={"digests": expected(REPO, scenario).digests(r)}))
    return out


def test_points_are_current_stale_or_missing(tmp_path: Path) -> None:
    ev = tmp_path / "evidence"
    recs = _records("dtp-quick", tmp_path)
    stale = recs[0].model_copy(update={"digests": recs[0].digests.model_copy(
        update={"code": "0" * 64, "python": "0" * 64})})  # fmt: skip
    store.write(store.path_of(ev, "sim", "dtp-quick"), [stale, *recs[1:]])
    pts, left = plan(ev, REPO, 2, only=["dtp-quick"])
    states = [p.state for p in pts]
    assert len(pts) == 2 * len(recs) and not left
    assert states.count("stale") == 1 and states.count("current") == len(recs) - 1
    assert states.count("missing") == len(recs)  # the second repetitions
    p = next(p for p in pts if p.state == "stale")
    assert p.rel_dir == Path("dtp-quick", stale.setting, stale.scheme, stale.speed, "r1")


def test_the_points_the_sim_cannot_run_are_named(tmp_path: Path) -> None:
    dataset("sigcomm21-5g-variegated")  # qpr-quick's traces: a skip naming the fetch if absent
    pts, left = plan(tmp_path / "empty", REPO, 1, only=["qpr-quick"])
    assert pts and all(p.state == "missing" and "/h2/" not in str(p.rel_dir) for p in pts)
    # its 4 settings × h2 × the file's 2 repetitions (a refresh never runs fewer than the file)
    assert [(x.scenario, x.why.split(":")[0]) for x in left] == [("qpr-quick", "8 points")]
    assert "HTTP/2 over the kernel's TCP" in left[0].why
    with pytest.raises(SystemExit, match="not scenarios of the book"):
        plan(tmp_path / "empty", REPO, 1, only=["nowhere"])


def test_the_front_page_states_the_cost_of_a_full_refresh(tmp_path: Path) -> None:
    t = Timing(commit="ab" * 20, machine="2 CPUs, some CPU", cores=2, reps=10, points=700,
               runs=7000, wall_s=7200.0, cpu_s=14000.0, longest_run_s=90.0)  # fmt: skip
    # (14000 CPU s + 7000 jobs × 4.2 s) / (10 nodes × 2 cores) = 2170 s; never below 90 s
    assert slurm_estimate_s(t, 10, 2) == pytest.approx(2170.0)
    assert slurm_estimate_s(t.model_copy(update={"runs": 1, "cpu_s": 1.0}), 10, 2) == 90.0
    assert "has not been timed yet" in front.timing_line(tmp_path)
    (tmp_path / TIMING_FILE).write_text(t.model_dump_json())
    line = front.timing_line(tmp_path)
    assert "(7000 runs of 700 points at 10 repetitions" in line
    assert "took 2.00 h of wall time on 2 cores (2 CPUs, some CPU) and 3.89 h of CPU time" in line
    assert "10 nodes of 2 cores: about 0.60 h" in line
