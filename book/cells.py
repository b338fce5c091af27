"""The primary cells of every paper's claims and whether they have the runs they need.

    python -m book.cells [--evidence evidence] [--paper KEY]
    python -m book.cells --results results [--results results-sim ...] [--paper KEY]

One line per primary cell (scenario, setting, scheme, speed, site), with the claims that read
it and analysis/verdicts.py's decision on its runs (`wanted`: at least 10 runs a side, then
until every claim's interval is narrow enough, or 40), from the records of the evidence store
(materialised per site, as the pages read them), or from results trees named by --results.
What a refresh of the evidence runs next; the command that fills a claim's cells is on its
page.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from analysis.verdicts import wanted
from book import results
from book.papers import PAPERS
from priolab.evidence import store
from priolab.evidence.materialise import materialise
from priolab.paths import REPO_ROOT


def lines(trees: list[Path], repo: Path, only: str = "") -> list[str]:
    files = results.scenario_files(repo)
    out = ["| paper | scenario | setting | scheme | speed | site | claims | runs | enough |",
           "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for paper in PAPERS:
        if only and paper.key != only:
            continue
        found = [s for n in paper.scenarios for t in trees
                 if (s := results.load_scenario(t, n, files))]  # fmt: skip
        rows = results.with_extras(results.rows_of(found), paper, trees)
        readers: dict[tuple[object, str], list[str]] = {}
        for c in paper.claims:
            for cell in c.primary.cells():
                readers.setdefault((cell, c.primary.site), []).append(c.key)
        for cell, site, p in wanted(paper, rows):
            keys = ", ".join(readers[(cell, site)])
            out.append(f"| {paper.key} | {cell.scenario} | {cell.setting} | {cell.scheme} | "
                       f"{cell.speed} | {site} | {keys} | {p.runs} | "
                       f"{'yes' if p.enough else 'no'}: {p.why} |")  # fmt: skip
    return out


def from_store(evidence: Path, repo: Path, only: str = "") -> list[str]:
    """`lines` from the store's records, materialised per site into a scratch folder (no
    figures)."""
    with tempfile.TemporaryDirectory(prefix="priolab-cells-") as tmp:
        done = materialise(evidence, Path(tmp), repo, figures=())
        trees = sorted({Path(tmp) / m.site for m in done})
        return lines(trees, repo, only)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m book.cells", description=__doc__)
    ap.add_argument("--evidence", type=Path, default=store.STORE,
                    help="the evidence store (default: evidence/)")  # fmt: skip
    ap.add_argument("--results", type=Path, action="append", default=[],
                    help="read this results tree instead of the store (repeatable)")  # fmt: skip
    ap.add_argument("--paper", default="", help="one paper's key (rise, dtp, qpr, roq, moq)")
    args = ap.parse_args(argv)
    if args.results:
        out = lines(list(args.results), REPO_ROOT, args.paper)
    else:
        out = from_store(args.evidence, REPO_ROOT, args.paper)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
