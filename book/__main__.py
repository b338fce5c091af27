"""Write the generated pages of the documentation site (see book/__init__.py)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from book import agreement, front, results, timings, workloads
from book.papers import PAPERS
from priolab.paths import REPO_ROOT
from priolab.workloads import WORKLOADS


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
    scored = []
    for paper in PAPERS:
        text, judged = results.render(paper, trees, out / "results", repo, commit)
        p = out / "results" / f"{paper.key}.md"
        p.write_text(text)
        written.append(p)
        scored.append((paper, judged))
    p = out / "results" / "index.md"
    p.write_text(front.page(scored))
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
