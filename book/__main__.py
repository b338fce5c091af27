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

from book import agreement, front, results, rise_maps, timings, workloads
from book.papers import PAPERS, RISE
from priolab.evidence import store
from priolab.evidence.materialise import Materialised, materialise
from priolab.paths import REPO_ROOT
from priolab.workloads import WORKLOADS
from priolab.workloads.rise import book_claims

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


def regime_cells(tree: Path) -> Path:
    """Where a results tree keeps the regime map's cells (rule regime_map's output)."""
    return rise_maps.cells_file(tree)


def rise_report(res: Path, site: str = "", cells: Path | None = None) -> list[str]:
    """The reproduction report's body (claims per path, regime, freezes, the freeze map,
    key-frame causes, the frame-tick phase, the map) for the RISE scenarios aggregated under
    `res`, demoted under one heading; `site` names the site in the heading (runs of two sites
    are never pooled: one report per results tree). `cells`: the regime map's cells (a sim
    sweep, so the sim tree's: `snakemake regime_map`); by default `res`'s own."""
    from priolab.workloads.rise import picture, reproduction

    dirs = [
        res / n
        for n in RISE.scenarios
        if (res / n / "runs.csv").is_file() and (res / n / "exclusions.csv").is_file()
    ]
    if not dirs:
        return []
    pts = res / "map" / "rise_map_points.csv"
    cells = cells or regime_cells(res)
    text = reproduction.report(
        dirs, pts if pts.is_file() else None, cells if cells.is_file() else None
    )
    body = text.split("\n", 1)[1]  # its own title goes
    where = f" on the {site} site" if site else ""
    fig7 = [res / n for n in picture.FIG7_SCENARIOS if (res / n / "runs.csv").is_file()]
    pic = picture.section(res / "picture" / "runs.csv", fig7)  # Fig. 7: scored, or what is not
    stale = _stale_scenarios(dirs)
    return [
        f"## The reproduction report{where} (claims by path, regime, freezes, key frames, "
        "the frame-tick phase, the map)",
        "",
        *(
            [
                '!!! warning "What this report rests on"',
                f"    Stale records (made by other "
                f"code than this page's; `make book-refresh` reruns them): {stale}.",
                "",
            ]
            if stale
            else []
        ),
        *results._demote(body, 1),
        "",
        *results._demote("\n".join(pic), 1),
    ]


def _stale_scenarios(dirs: list[Path]) -> str:
    """`scenario: k of n` for each of the dirs whose materialised runs include stale ones."""
    import pandas as pd

    from priolab.evidence import marks

    parts = []
    for d in dirs:
        frames = [pd.read_csv(d / f) for f in ("runs.csv", "exclusions.csv")
                  if (d / f).is_file() and (d / f).stat().st_size > 1]  # fmt: skip
        runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        k = marks.stale_count(runs)
        if k:
            parts.append(f"{d.name}: {k} of {len(runs)}")
    return "; ".join(parts)


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


def is_sim(tree: Path) -> bool:
    """A tree of the sim site's runs (materialised: `sim`; a workflow's: `results-sim`)."""
    return tree.name in ("sim", RESULTS_TREE["sim"])


def site_of(tree: Path) -> str:
    """The site a tree holds: its name (materialised), or the workflow's tree's site."""
    return "sim" if is_sim(tree) else ("mininet" if tree.name == "results" else tree.name)


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
    sim = next((t for t in trees if is_sim(t)), None)
    real = [t for t in trees if not is_sim(t)]
    if sim is not None:
        rise_maps.derive(sim)
    for t in real:
        rise_maps.derive(t, cells=regime_cells(sim) if sim else None)
    written = []
    for paper in PAPERS:
        extra = None
        if paper is RISE:
            files = results.scenario_files(repo)
            cells = regime_cells(sim) if sim else None
            extra = book_claims.section(trees, files)
            for t in trees:
                extra += rise_report(t, site_of(t), cells if t is not sim else regime_cells(t))
            extra += rise_maps.section(trees, out / "results")
        p = out / "results" / f"{paper.key}.md"
        p.write_text(public(results.page(paper, trees, out / "results", repo, commit, extra),
                            trees))  # fmt: skip
        written.append(p)
    kinds = {n: paper.kind for paper in PAPERS for n in paper.scenarios}
    p = out / "results" / "agreement.md"
    p.write_text(public(agreement.page(agreement.sources(trees, kinds, repo)), trees))
    written.append(p)
    p = out / "results" / "index.md"
    p.write_text(front.page(done, evidence, repo))
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
