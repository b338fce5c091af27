"""Write the generated pages of the documentation site (see book/__init__.py), from the
evidence store's records alone (evidence/README.md): they are materialised into a scratch
results tree per site (priolab/evidence/materialise.py) that the pages read."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from book import agreement, front, results, timings, workloads
from book.papers import PAPERS
from priolab.evidence import store
from priolab.evidence.materialise import Materialised, materialise
from priolab.paths import REPO_ROOT
from priolab.workloads import WORKLOADS

SITE_ORDER = ("mininet", "vm", "testbed", "sim")
"""The order a page sets the sites' trees in: the real-time sites first, sim last."""
RESULTS_TREE = {"sim": "results-sim"}
"""The results tree the workflow writes a site's runs into (others: results): where a
command a page names (to score, to fill a cell) finds them, instead of the scratch tree the
book read."""


def public(text: str, trees: list[Path]) -> str:
    """A page's text with the scratch trees' paths named as the workflow's results trees."""
    for t in trees:
        text = text.replace(str(t), RESULTS_TREE.get(t.name, "results"))
    return text


def _commit(repo: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, check=True, cwd=repo,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=False, cwd=repo,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out + (" (with uncommitted changes)" if dirty else "")


def build(out: Path, repo: Path, evidence: Path, jobs: int = 2) -> list[Path]:
    """Every generated page, from the records of the store `evidence` (materialised into a
    scratch tree per site, read side by side, never pooled: results.py)."""
    with tempfile.TemporaryDirectory(prefix="priolab-book-") as tmp:
        shown = {n for p in PAPERS for n in p.scenarios}  # the scenarios whose figures a page shows
        done = materialise(evidence, Path(tmp), repo, figures=shown, jobs=jobs)
        sites = {m.site for m in done}
        trees = [Path(tmp) / s for s in SITE_ORDER if s in sites]
        trees += [Path(tmp) / s for s in sorted(sites - set(SITE_ORDER))]
        return pages(out, repo, trees, done, evidence)


def pages(
    out: Path,
    repo: Path,
    trees: list[Path],
    done: Sequence[Materialised] = (),
    evidence: Path = store.STORE,
) -> list[Path]:
    """Every generated page from the sites' trees (`build`'s second half: materialised
    trees, or results trees laid out as the workflow's); `done` is what was materialised
    (the front page counts it)."""
    for sub in ("results", "workloads"):  # generated folders only: docs/ holds hand-written pages
        if (out / sub).exists():
            shutil.rmtree(out / sub)
        (out / sub).mkdir(parents=True)
    commit = _commit(repo)
    written = []
    scored = []
    for paper in PAPERS:
        text, judged = results.render(paper, trees, out / "results", repo, commit)
        p = out / "results" / f"{paper.key}.md"
        p.write_text(public(text, trees))
        written.append(p)
        scored.append((paper, judged))
    kinds = {n: paper.kind for paper in PAPERS for n in paper.scenarios}
    p = out / "results" / "agreement.md"
    p.write_text(public(agreement.page(agreement.sources(trees, kinds, repo)), trees))
    written.append(p)
    p = out / "results" / "index.md"
    p.write_text(front.page(scored, done, evidence))
    written.append(p)
    written.append(timings.write(repo / "evidence" / "timings", out / "results"))
    # probe is the calibration's workload, not one a scenario runs
    kinds_all = sorted(k for k in WORKLOADS if k != "probe")
    for k in kinds_all:
        p = out / "workloads" / f"{k}.md"
        p.write_text(workloads.page(k, repo))
        written.append(p)
    (out / "workloads" / "index.md").write_text(workloads.index(kinds_all))
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m book", description=__doc__)
    ap.add_argument("--evidence", type=Path, default=store.STORE,
                    help="the evidence store the pages rest on (default: evidence/)")  # fmt: skip
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "docs")
    ap.add_argument("--jobs", type=int, default=2, help="processes that draw the figures")
    args = ap.parse_args(argv)
    for p in build(args.out, REPO_ROOT, args.evidence, args.jobs):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
