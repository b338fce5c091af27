"""The results book from the evidence store alone (book/, priolab/evidence/materialise.py): no
results tree is read; a paper's page holds its records' numbers and figures; what rests on
stale records says so, and so does what rests on real-time records; current records carry no
mark; no scratch path leaks into a page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from book.__main__ import build
from priolab.evidence import add, store
from priolab.evidence.scenarios import expected
from priolab.workloads.rise.synthetic import SynthRun, run_path, write_run
from tests.conftest import REPO


def _runs(res: Path, site: str) -> Path:
    """quick's FB-4K-Low point, both schemes, two repetitions, hand-made (rise/synthetic.py)."""
    for scheme in ("nopri", "pri"):
        for rep in (1, 2):
            r = SynthRun(scenario="quick", setting="FB-4K-Low", scheme=scheme, rep=rep,
                         seed=rep + 10 * (scheme == "pri"), duration_s=2.0,
                         delay_ms=60.0 if scheme == "nopri" else 25.0)  # fmt: skip
            d = write_run(run_path(res, r), r)
            meta = json.loads((d / "metadata.json").read_text())
            meta["site"] = {"kind": site}
            (d / "metadata.json").write_text(json.dumps(meta))
    return res


@pytest.fixture(scope="module")
def stale_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("book")
    ev = tmp / "evidence"
    add.add(_runs(tmp / "results", "mininet"), store_dir=ev, repo=REPO)
    out = tmp / "docs"
    build(out, REPO, ev, jobs=1)
    return out


def test_pages_rest_on_the_store_and_name_stale_and_real_time_records(stale_book: Path) -> None:
    rise = (stale_book / "results" / "rise.md").read_text()
    assert "No runs are present" not in rise
    assert "4 run records of its scenarios in the evidence store" in rise
    # a claim's condition names its site with what its runs rest on (RISE's quick point is
    # a sensitivity condition of the Fig. 5 claims)
    assert "| **sensitivity** · mininet (stale: 4 of 4 runs; real time) · `scenarios/quick" in rise
    assert "(Site: mininet (stale: 4 of 4 runs; real time).)" in rise  # every figure's caption
    assert "**4 of its 4 records are stale**" in rise and "cannot be replayed" in rise
    assert "![transport_mtp_cdf](figures/mininet/quick/transport_mtp_cdf.png)" in rise
    assert (stale_book / "results" / "figures" / "mininet" / "quick" / "transport_mtp_cdf.png"
            ).is_file()  # fmt: skip
    for page in ("dtp", "qpr", "roq", "moq"):
        assert "No runs are present" in (stale_book / "results" / f"{page}.md").read_text()


def test_no_scratch_path_leaks_into_a_page(stale_book: Path) -> None:
    for p in (stale_book / "results").glob("*.md"):
        assert "priolab-book-" not in p.read_text(), p


def test_the_front_page_counts_the_records(stale_book: Path) -> None:
    front = (stale_book / "results" / "index.md").read_text()
    assert "| mininet | 1 | 4 | 4 | 4 |" in front
    assert "A full refresh of the sim cells has not been timed yet" in front


def test_current_records_carry_no_mark(tmp_path: Path) -> None:
    ev = tmp_path / "evidence"
    add.add(_runs(tmp_path / "results", "sim"), store_dir=ev, repo=REPO)
    expected.cache_clear()
    p = store.path_of(ev, "sim", "quick")
    exp = expected(REPO, "quick")
    store.write(p, [r.model_copy(update={"digests": exp.digests(r)}) for r in store.read(p)])
    out = tmp_path / "docs"
    build(out, REPO, ev, jobs=1)
    rise = (out / "results" / "rise.md").read_text()
    for mark in ("(stale: ", "records are stale**", "Stale records", "real time)"):
        assert mark not in rise, mark
    assert "(Site: sim.)" in rise
