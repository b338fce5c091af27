"""The papers cited properly (book/bibliography.py): the bibliography page is current, each
entry is well-formed BibTeX with no guessed DOI, and every results page cites its paper with
its BibTeX block and names nothing outside the repository."""

from __future__ import annotations

import re

import pytest

from book import bibliography
from book.__main__ import build
from book.papers import PAPERS
from tests.conftest import REPO


def test_the_bibliography_page_is_current() -> None:
    """docs/bibliography.md is book/bibliography.py's page (`python -m book.bibliography`)."""
    assert (REPO / "docs" / "bibliography.md").read_text() == bibliography.page()
    assert bibliography.main(["--check"]) == 0


def test_every_paper_of_the_book_has_an_entry() -> None:
    assert [p.short for p in PAPERS] == [r.key for r in bibliography.REFERENCES]


@pytest.mark.parametrize("ref", bibliography.REFERENCES, ids=lambda r: r.key)
def test_each_entry_is_well_formed_bibtex(ref: bibliography.Reference) -> None:
    text = ref.bibtex()
    assert text.startswith(f"@{ref.entry_type}{{{ref.key},\n") and text.endswith("\n}")
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    fields = dict(re.findall(r"^  (\w+) = \{(.*)\},?$", text, re.M))
    assert fields["title"] == "{" + ref.title + "}"
    assert ("doi" in fields) == (ref.doi is not None)
    if ref.doi:
        assert re.fullmatch(r"10\.\d{4,9}/\S+", ref.doi)
    # what the entry lacks, it says it lacks, and where its other fields come from
    missing = [name for name, v in (("venue", ref.venue), ("DOI", ref.doi)) if v is None]
    for name in missing:
        assert any(name.lower() in s.lower() and "not in the text" in s for s in ref.sources), (
            ref.key,
            name,
        )


def test_only_the_papers_whose_text_gives_a_doi_have_one() -> None:
    """RISE's text prints its DOI; the other four texts give none, and none is guessed."""
    assert {r.key: r.doi for r in bibliography.REFERENCES if r.doi} == {
        "RISE": "10.1145/3743093.3771029"
    }


def test_every_results_page_cites_its_paper_with_its_bibtex(tmp_path) -> None:
    written = build(tmp_path / "docs", REPO, tmp_path / "no-evidence")  # an empty store
    pages = {p.relative_to(tmp_path / "docs").as_posix(): p.read_text() for p in written}
    for paper in PAPERS:
        text = pages[f"results/{paper.key}.md"]
        ref = bibliography.BY_KEY[paper.short]
        assert f"```bibtex\n{ref.bibtex()}\n```" in text
        assert f"../bibliography.md#{ref.anchor}" in text
        assert not re.search(r"\.\./shared|seeds/00", text)
