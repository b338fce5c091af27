"""The papers priolab reproduces, as citations: a short key each ([RISE], [DTP], [QPR], [RoQ],
[MoQ]), the reference, where each of its fields comes from, and a BibTeX entry.

    python -m book.bibliography [--check]    write docs/bibliography.md (or check it is current)

Every field is taken from the paper's own text as priolab has it. Where the text does not give a
field, the entry says so, and a field found elsewhere names its public source; a DOI is never
guessed. Code, scenario files and pages cite a paper by its key, and a section of it as
[RoQ §5.2]; the RISE setup (docs/rise-setup.md) is [RISE setup]. The results pages
(book/results.py) cite their paper from here, with its BibTeX block.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from priolab.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "bibliography.md"


@dataclass(frozen=True)
class Reference:
    key: str  # the short key: [RISE], [RoQ §5.2]
    entry_type: str  # BibTeX: inproceedings, article, misc
    authors: tuple[str, ...]  # "First Last"; empty where no source names them
    title: str
    venue: str | None  # None: not known
    year: int | None
    doi: str | None
    what: str  # what priolab takes from the paper
    sources: tuple[str, ...]  # markdown: where each field comes from, what is missing
    extra: tuple[tuple[str, str], ...] = ()  # more BibTeX fields, in order

    @property
    def anchor(self) -> str:
        return self.key.lower()

    def short(self) -> str:
        """`Lin et al., "Title", venue year` for a page's text."""
        who = (
            self.authors[0].split()[-1] + (" et al." if len(self.authors) > 2 else "")
            if self.authors
            else "authors not in the text"
        )
        if len(self.authors) == 2:
            who = f"{self.authors[0].split()[-1]} and {self.authors[1].split()[-1]}"
        where = ", ".join(str(x) for x in (self.venue, self.year) if x)
        return f'{who}, "{self.title}"' + (f", {where}" if where else "")

    def reference(self) -> str:
        """The full reference in markdown, with its DOI as a link where there is one."""
        who = ", ".join(self.authors) if self.authors else "(authors not in the text)"
        parts = [f"{who}.", f"“{self.title}”."]
        if self.venue:
            parts.append(f"{self.venue}.")
        if self.year:
            parts.append(f"{self.year}.")
        doi = f"[doi:{self.doi}](https://doi.org/{self.doi})" if self.doi else "No DOI known."
        return " ".join([*parts, doi])

    def bibtex(self) -> str:
        fields: list[tuple[str, str]] = []
        if self.authors:
            fields.append(("author", " and ".join(self.authors)))
        fields.append(("title", "{" + self.title + "}"))
        if self.venue:
            name = "journal" if self.entry_type == "article" else "booktitle"
            fields.append((name if self.entry_type != "misc" else "howpublished", self.venue))
        if self.year:
            fields.append(("year", str(self.year)))
        fields += list(self.extra)
        if self.doi:
            fields.append(("doi", self.doi))
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        return f"@{self.entry_type}{{{self.key},\n{body}\n}}"

    def bibtex_block(self) -> list[str]:
        """The BibTeX entry as a fenced markdown block, and a blank line after it."""
        return ["```bibtex", self.bibtex(), "```", ""]


RISE = Reference(
    key="RISE",
    entry_type="inproceedings",
    authors=("Sen Lin", "Andre Chen", "Kevin Zhikai Chen", "Aleksandar Kuzmanovic"),
    title="Leveraging Cross-Directional Dependency in Realtime Interactive Streaming",
    venue="ACM Multimedia Asia (MMAsia '25)",
    year=2025,
    doi="10.1145/3743093.3771029",
    what="the primary experiment: bidirectional view-dependent streaming, datagram priority "
    "channels (Algorithm 1), the Pri / Pri-U / Pri-D ablation, the bitrate sweep; MTP latency, "
    "freeze rate, position mismatch. Its testbed as priolab runs it: [RISE setup](rise-setup.md)",
    sources=(
        "Authors, title, venue, year, place, pages and DOI: the paper's own “ACM Reference "
        "Format” and its first page. The author block on the first page lists Kevin Zhikai Chen "
        "before Andre Chen; the order here is the one the paper asks to be cited by.",
    ),
    extra=(
        ("address", "Kuala Lumpur, Malaysia"),
        ("publisher", "ACM"),
        ("numpages", "8"),
    ),
)

DTP = Reference(
    key="DTP",
    entry_type="misc",
    authors=(
        "Jie Zhang",
        "Hang Shi",
        "Yong Cui",
        "Feng Qian",
        "Wei Wang",
        "Kai Zheng",
        "Jianping Wu",
    ),  # fmt: skip
    title="To Punctuality and Beyond: Meeting Application Deadlines with DTP",
    venue=None,
    year=None,
    doi=None,
    what="deadline-aware block delivery over QUIC streams (the Active-Drop-at-Sender scheduler, "
    "adaptive redundancy); tc on a separate router; the ratio of blocks that meet their "
    "deadline",
    sources=(
        "Authors (Tsinghua University, Huawei Technologies, University of Minnesota – Twin "
        "Cities, Zhongguancun Laboratory) and title: the paper's first page.",
        "Venue, year and DOI: **not in the text** priolab has, and not found in a public "
        "source; left out rather than guessed. The newest work the text cites is from 2021.",
    ),
    extra=(("note", "Venue, year and DOI not given in the text"),),
)

QPR = Reference(
    key="QPR",
    entry_type="article",
    authors=(
        "Hemanth Kumar Ravuri",
        "Maria Torres Vega",
        "Jeroen van der Hooft",
        "Tim Wauters",
        "Filip De Turck",
    ),  # fmt: skip
    title="Adaptive Partially Reliable Delivery of Immersive Media Over QUIC-HTTP/3",
    venue="IEEE Access",
    year=2023,
    doi=None,
    what="partially reliable delivery (streams in the viewport, datagrams outside); Mininet "
    "and tc; 5G throughput traces; Gilbert-Elliott bursty loss of 0–5 %; freezes and throughput",
    sources=(
        "Authors (Ghent University – imec, KU Leuven) and title: the paper's first page, a "
        "“Research Article” in an IEEE journal's layout.",
        "Journal and year: **not in the text**; from the public index entry "
        "<https://www.aminer.org/pub/645648bed68f896efae5a73f> (“IEEE Access (2023)”, with the "
        "same title and abstract). The text's newest citation was accessed in February 2023.",
        "DOI: **not in the text**, and not found; left out rather than guessed.",
    ),
)

ROQ = Reference(
    key="RoQ",
    entry_type="misc",
    authors=("Mathis Engelbart", "Jörg Ott"),
    title="Congestion Control for Real-time Media over QUIC",
    venue=None,
    year=2021,
    doi=None,
    what="RTP in QUIC datagrams with SCReAM or NewReno, RTCP or QUIC-inferred feedback; RFC 8867 "
    "style capacity steps (1 Mbit/s, 500 kbit/s from 30 s to 60 s), a 400 ms drop-tail queue, "
    "one-way delays of 1, 50, 150 and 300 ms; SSIM and the target bitrate",
    sources=(
        "Title: the running title of the text priolab has, which starts at the abstract: it "
        "carries no author block, no venue and no reference list.",
        "Authors and year: **not in the text**; from the public library catalogue entry "
        "<https://searchworks.jioinstitute.edu.in/?f%5Beds_publisher_facet%5D%5B%5D=acm&q="
        "%22Testbed%22&search_field=descriptor> (“Congestion control for "
        "real-time media over QUIC”, Mathis Engelbart and Jörg Ott, published 2021, with the "
        "same abstract). The RTP-over-QUIC Internet-Draft the text builds on is by the same two "
        "authors (draft-engelbart-rtp-over-quic).",
        "Venue and DOI: **not in the text**, and not found; left out rather than guessed.",
    ),
    extra=(("note", "Venue and DOI not given in the text"),),
)

MOQ = Reference(
    key="MoQ",
    entry_type="inproceedings",
    authors=("Zafer Gurel", "Tugce Erkilic Civelek", "Ali C. Begen", "Alex Giladi"),
    title="A Fresh Look at Live Sports Streaming with Prioritized Media-over-QUIC Transport",
    venue="IBC2023 Technical Papers",
    year=2023,
    doi=None,
    what="frame-type stream prioritisation (I > P > B, one stream each) against one stream in "
    "encode order; the on-time-display ratio against a latency budget; 2.7 / 2.85 / 3 Mbit/s "
    "caps",
    sources=(
        "Authors (Ozyegin University, Comcast) and title: the paper's first page.",
        "Venue and year: **not in the text**; IBC publishes it as one of its IBC2023 Technical "
        "Papers (<https://ibc.org/technical-papers/ibc2023-tech-papers-a-fresh-look-at-live-"
        "sports-streaming-with-prioritized-media-over-quic-transport/10264.article>). The "
        "text's references were accessed in May and June 2023.",
        "DOI: **not in the text**, and not found; left out rather than guessed.",
    ),
    extra=(("publisher", "IBC"),),
)

REFERENCES = (RISE, DTP, QPR, ROQ, MOQ)
BY_KEY = {r.key: r for r in REFERENCES}


def cite_block(key: str, page_dir: str = "..") -> list[str]:
    """The lines a generated page prints to cite a paper: its reference, a link to the
    bibliography (relative to the page's folder under docs/), and its BibTeX block."""
    r = BY_KEY[key]
    link = f"[bibliography]({page_dir}/bibliography.md#{r.anchor})"
    return [f"Cite the paper as **[{r.key}]** ({link}): " + r.reference(), "", *r.bibtex_block()]


def page() -> str:
    """docs/bibliography.md."""
    lines = [
        "# Bibliography",
        "",
        "<!-- generated by `python -m book.bibliography` from book/bibliography.py; "
        "edit that file, not this page -->",
        "",
        "priolab cites each paper it reproduces by a short key: **[RISE]**, **[DTP]**, "
        "**[QPR]**, **[RoQ]**, **[MoQ]**. A section, figure or table of a paper is cited by the "
        "key and its number: [RoQ §5.2] is section 5.2 of RoQ, [DTP Fig. 3] its Figure 3. "
        "**[RISE setup]** is [the RISE setup](rise-setup.md): what priolab's RISE scenarios "
        "take from [RISE], in our own words.",
        "",
        "Each entry below is taken from the paper's text as priolab has it. Where the text does "
        "not give a field, the entry says so; a field found elsewhere names its public source, "
        "and no DOI is guessed. Each results page cites its paper with the same BibTeX block.",
        "",
        "| key | paper |",
        "|---|---|",
    ]
    lines += [f"| [{r.key}](#{r.anchor}) | {r.short()} |" for r in REFERENCES]
    lines.append("")
    for r in REFERENCES:
        lines += [
            f"## {r.key}",
            "",
            r.reference(),
            "",
            f"What priolab takes from it: {r.what}.",
            "",
            "Where the entry comes from:",
            "",
            *[f"- {s}" for s in r.sources],
            "",
            *r.bibtex_block(),
        ]
    lines += [
        "## Citing priolab",
        "",
        "priolab itself: `CITATION.cff` at the root of the repository (Citation File Format).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = page()
    if args == ["--check"]:
        if not PAGE.is_file() or PAGE.read_text() != text:
            print(f"{PAGE}: not current; run `python -m book.bibliography`", file=sys.stderr)
            return 1
        return 0
    if args:
        print("usage: python -m book.bibliography [--check]", file=sys.stderr)
        return 2
    Path(PAGE).write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
