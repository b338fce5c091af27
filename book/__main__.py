"""Write the generated pages of the documentation site (see book/__init__.py)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from book import agreement, results, timings, workloads
from book.papers import PAPERS, RISE
from priolab.paths import REPO_ROOT
from priolab.workloads import WORKLOADS
from priolab.workloads.rise import book_claims


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
    return tree / "regime" / "regime_map.csv"


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
    where = f" on the {site} site ({res.name}/)" if site else ""
    fig7 = [res / n for n in picture.FIG7_SCENARIOS if (res / n / "runs.csv").is_file()]
    pic = picture.section(res / "picture" / "runs.csv", fig7)  # Fig. 7: scored, or what is not
    return [
        f"## The reproduction report{where} (claims by path, regime, freezes, key frames, "
        "the frame-tick phase, the map)",
        "",
        *results._demote(body, 1),
        "",
        *results._demote("\n".join(pic), 1),
    ]


def build(res: Path, out: Path, repo: Path, res_sim: Path | None = None) -> list[Path]:
    """Every generated page; `res_sim`: the sim site's results folder. Every page reads both
    folders, side by side, never pooled (results.py)."""
    for sub in ("results", "workloads"):  # generated folders only: docs/ holds hand-written pages
        if (out / sub).exists():
            shutil.rmtree(out / sub)
        (out / sub).mkdir(parents=True)
    commit = _commit(repo)
    trees = [res, res_sim] if res_sim and res_sim != res else [res]
    written = []
    for paper in PAPERS:
        extra = None
        if paper is RISE:
            sim = res_sim if res_sim and res_sim != res else None
            extra = (
                book_claims.section([res, *([sim] if sim else [])], results.scenario_files(repo))
                + rise_report(res, "mininet", regime_cells(sim or res))
                + (rise_report(sim, "sim") if sim else [])
            )
        p = out / "results" / f"{paper.key}.md"
        p.write_text(results.page(paper, trees, out / "results", repo, commit, extra))
        written.append(p)
    kinds = {n: paper.kind for paper in PAPERS for n in paper.scenarios}
    p = out / "results" / "agreement.md"
    p.write_text(agreement.page(agreement.sources([res, res_sim or res], kinds, repo)))
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
    ap.add_argument("--results", type=Path, default=REPO_ROOT / "results",
                    help="the Mininet (and other real-time sites') results")  # fmt: skip
    ap.add_argument("--results-sim", type=Path, default=REPO_ROOT / "results-sim",
                    help="the sim site's results, shown beside them")  # fmt: skip
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "docs")
    args = ap.parse_args(argv)
    for p in build(args.results, args.out, REPO_ROOT, args.results_sim):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
