"""Every paper's claims as declared (priolab/workloads/<kind>/paper.py): each names cells its
scenario files define, exactly one primary condition, a site that can run its cells, a metric
with its rule for failed sessions, and a band with a reason; the book finds every paper."""

from __future__ import annotations

import math
import re

import pytest

from analysis.claims import ROLES, Claim, Paper
from analysis.verdicts import MIN_RUNS
from book.bibliography import REFERENCES
from book.papers import PAPERS
from book.results import scenario_files
from ground.data import skip_reason
from priolab import scenario
from priolab.engine.sim_spec import sim_problems
from tests.conftest import REPO, has_dataset

FILES = scenario_files(REPO)
SPECS: dict[str, list] = {}


def specs(name: str) -> list:
    """The scenario's runs (its matrix expanded), by scenario name; a skip naming the dataset
    when the scenario reads one that is absent (loading it resolves its `data:` files)."""
    if name not in SPECS:
        path = REPO / FILES[name]
        for ds in sorted(set(re.findall(r"data:([\w.-]+)/", path.read_text()))):
            if not has_dataset(ds):
                pytest.skip(f"{path.name}: {skip_reason(ds)}")
        SPECS[name] = scenario.expand(scenario.load(path), path)
    return SPECS[name]


def test_the_book_finds_the_five_papers_in_the_bibliographys_order() -> None:
    assert [p.key for p in PAPERS] == ["rise", "dtp", "qpr", "roq", "moq"]
    assert [p.short for p in PAPERS] == [r.key for r in REFERENCES]


@pytest.mark.parametrize("paper", PAPERS, ids=lambda p: p.key)
def test_every_cell_of_every_condition_is_a_run_of_its_scenario_file(paper: Paper) -> None:
    missing = []
    for c in paper.claims:
        for cond in c.conditions:
            for cell in cond.cells():
                if cell.scenario not in FILES:
                    missing.append(f"{c.key}: no scenario file named {cell.scenario}")
                    continue
                have = {(r.setting, r.scheme, r.speed) for r in specs(cell.scenario)}
                if (cell.setting, cell.scheme, cell.speed) not in have:
                    missing.append(f"{c.key} ({cond.role}): {cell}")
    assert not missing, missing


@pytest.mark.parametrize("paper", PAPERS, ids=lambda p: p.key)
def test_each_claim_has_one_primary_and_labelled_others(paper: Paper) -> None:
    for c in paper.claims:
        roles = [cond.role for cond in c.conditions]
        assert roles.count("primary") == 1 and roles[0] == "primary", c.key
        assert set(roles) <= set(ROLES), c.key
        assert all(cond.why.strip() for cond in c.conditions), c.key
        assert c.band.why.strip() and c.text and c.source and c.paper, c.key
        assert c.primary.site in ("sim", "mininet"), c.key
        assert c.primary.scenarios() and set(c.primary.scenarios()) <= set(paper.scenarios), (
            c.key)  # fmt: skip
        assert c.precision_scale > 0 and math.isfinite(c.precision_scale), c.key


@pytest.mark.parametrize("paper", PAPERS, ids=lambda p: p.key)
def test_a_sim_condition_names_cells_the_sim_site_can_run(paper: Paper) -> None:
    """HTTP/2 over TCP cannot run on the sim site: a claim whose cells need it is Mininet's."""
    wrong = []
    for c in paper.claims:
        for cond in c.conditions:
            if cond.site != "sim":
                continue
            for cell in cond.cells():
                run = next(r for r in specs(cell.scenario)
                           if (r.setting, r.scheme, r.speed) == (cell.setting, cell.scheme,
                                                                 cell.speed))  # fmt: skip
                if sim_problems(run):
                    wrong.append(f"{c.key} ({cond.role}): {cell}")
    assert not wrong, wrong


def test_exploratory_conditions_say_why_and_the_paper_text_reading_is_primary() -> None:
    """The conditions issue 37 names as chosen after data are exploratory, never primary:
    RISE's 0.05 % loss path, QPR's loss-blind reading, dtp-loss-tail, RoQ's photo-pans clip."""
    by_key = {p.key: p for p in PAPERS}

    def roles_of(paper: str, match: str) -> set[str]:
        return {cond.role for c in by_key[paper].claims for cond in c.conditions
                if any(match in x for cell in cond.cells()
                       for x in (cell.scenario, cell.setting, cell.scheme))}  # fmt: skip

    assert roles_of("rise", "-wl") == {"exploratory"}
    assert roles_of("rise", "L0.05") == {"exploratory"}
    assert roles_of("qpr", "lossblind") == {"exploratory"}
    assert roles_of("dtp", "dtp-loss-tail") == {"exploratory"}
    photos = {cond.role for c in by_key["roq"].claims for cond in c.conditions
              if "roq-rfc8867" in cond.scenarios()}  # fmt: skip
    assert photos == {"exploratory"}  # the photo-pans file
    assert roles_of("roq", "roq-rfc8867-testsrc") >= {"primary"}


def test_the_issues_missing_claims_are_carried() -> None:
    """Issue 37's list of claims the pages did not carry: each is a claim now (or a stated
    reason why not, checked by its key in `unmeasured`)."""
    keys = {p.key: {c.key for c in p.claims} for p in PAPERS}
    assert {"fig7-5g-ssim", "fig7-fb-ssim", "fig7-5g-psnr", "fig7-fb-psnr", "fig5-fb-low-730ms",
            "fig9-prid-guest-keyframes"} <= keys["rise"]  # fmt: skip
    assert {"fig3-5x", "fig5-1-2x", "fig3-dtpd-above-sctp-6"} <= keys["dtp"]
    assert any("§VI-B" in u.source for p in PAPERS for u in p.unmeasured if p.key == "dtp")
    assert {"fig12-h2-0p05", "fig12-h2-0p5-10mbps", "fig13-h2-above-q0-at-0",
            "fig14-qpr-2x-h2-at-5", "q0-q50-10pct-break-down"} <= keys["qpr"]  # fmt: skip
    assert {"fig4-alternates", "fig4-very-fast", "fig5-dip-drops", "fig6-recovery-late",
            "fig7-quicfb-slow-ramp"} <= keys["roq"]  # fmt: skip
    assert {"figs6-8-i-spread-same", "figs6-8-p-spread-same", "fig8-b-spread-grows"} <= keys[
        "moq"]  # fmt: skip
    assert {f"fig10-ft-above-fefs-{b}ms" for b in (500, 700, 1000, 2000, 3000)} <= keys["moq"]


def test_primary_cells_list_for_the_lead() -> None:
    """Every primary condition names at least one cell and MIN_RUNS is the floor a verdict
    needs (the page's fill command asks for more)."""
    cells = [(p.key, c.key, cell, c.primary.site) for p in PAPERS for c in p.claims
             for cell in c.primary.cells()]  # fmt: skip
    assert len(cells) > 100 and MIN_RUNS == 5
    assert all(isinstance(c, Claim) for p in PAPERS for c in p.claims)
