"""One results page per paper, from the evidence store's records (evidence/README.md).

For each paper (papers.py): its scoreboard, claims and each claim's conditions and verdict
(claims_page.py, judged by analysis/verdicts.py), its notes and its own sections (the paper's
hooks), each scenario's summary and figures, and the provenance (commits the runs were made
at, their code digests, the calibration reports, the invalid runs with their reasons). With no
records the page says so, and every claim names the commands that fill it. Reads only
aggregated scenario folders (runs.csv, exclusions.csv, summary.md, figures/), each run's
metadata.json and the per-run files a paper declares (`Paper.extras`), as the store's records
materialise them (priolab/evidence/materialise.py: one tree per site, never `results/`).

A page reads the sites' trees side by side: a scenario with records of two sites gives two
rows per claim and setting, one under the other, and two sections, each headed by its site;
runs of two sites are never pooled. The site of a number is the one its runs' metadata.json
records (`site.kind`). A number, a figure or a section that rests on stale records (made by
other code than the checkout's) or on real-time records (not replayable) says so
(priolab/evidence/marks.py).
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.claims import PageContext, Paper
from book import claims_page
from book.bibliography import BY_KEY, cite_block
from ground import rundir
from priolab.evidence import marks
from priolab.evidence.scenarios import scenario_files


@dataclass
class ScenarioRuns:
    name: str
    dir: Path
    file: Path | None  # scenarios/<file>.yaml whose `name:` is `name`
    runs: pd.DataFrame  # runs.csv (valid runs), with `site` and `commit` columns added
    excluded: pd.DataFrame  # exclusions.csv
    tree: str = "results"  # the site's tree it was read from (its name: the site)
    cost: str = ""  # what its valid runs cost, from their metadata.json (run_cost)

    @property
    def sites(self) -> str:
        """The sites its valid runs ran on, as their metadata.json records them."""
        return ", ".join(sorted(set(self.runs["site"]))) if not self.runs.empty else "–"

    @property
    def where(self) -> str:
        """The site, as a heading names it: `the sim site`."""
        if self.runs.empty:
            return f"the {self.tree} records (no valid run)"
        sites = sorted(set(self.runs["site"]))
        if sites == [NO_SITE]:
            return f"the {self.tree} records ({NO_SITE})"
        return f"the {' and '.join(sites)} site{'s' if len(sites) > 1 else ''}"

    @property
    def standing(self) -> str:
        """What its numbers rest on, for a section's head: stale or real-time records."""
        runs = pd.concat([self.runs, self.excluded], ignore_index=True)
        out = []
        k = marks.stale_count(runs)
        if k:
            out.append(f"**{k} of its {len(runs)} records are stale** (made by other code "
                       f"than this checkout's: {'; '.join(marks.why_stale(runs))}); "
                       "`make book-refresh` reruns them.")  # fmt: skip
        if marks.real_time(runs):
            out.append("Its runs ran in real time on the machines the provenance names: they "
                       "cannot be replayed, and rest on those machines and their calibration "
                       "reports.")  # fmt: skip
        return " ".join(out)


def _csv(p: Path) -> pd.DataFrame:
    if not p.is_file():
        return pd.DataFrame()
    try:
        return pd.read_csv(p)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def _meta(run_dir: Path) -> dict:
    try:
        return json.loads((run_dir / rundir.METADATA).read_text())
    except (OSError, ValueError):
        return {}


def load_scenario(results: Path, name: str, files: dict[str, Path]) -> ScenarioRuns | None:
    """The scenario's aggregated runs, or None when it was not aggregated (no runs.csv)."""
    d = results / name
    if not (d / "runs.csv").is_file():
        return None
    runs = _csv(d / "runs.csv")
    metas: list[dict] = []
    if not runs.empty:
        metas = [_meta(Path(p)) for p in runs["path"]]
        runs["site"] = [str((m.get("site") or {}).get("kind", NO_SITE)) for m in metas]
        runs["commit"] = [
            str((m.get("git") or {}).get("commit") or "unknown")[:12]
            + ("+dirty" if (m.get("git") or {}).get("dirty") else "")
            for m in metas
        ]
    excluded = _csv(d / "exclusions.csv")
    return ScenarioRuns(name, d, files.get(name), runs, excluded, results.name, run_cost(metas))


def _spread(xs: list[float], unit: str) -> str:
    """`median unit (min–max)`, or one value."""
    med = fmt(float(np.median(xs)))
    lo, hi = fmt(min(xs)), fmt(max(xs))
    sep = "" if unit == "×" else " "
    return f"{med}{sep}{unit}" + (f" (range {lo}–{hi})" if lo != hi else "")


def _runs(n: int) -> str:
    return f"{n} run" + ("" if n == 1 else "s")


def run_cost(metas: list[dict]) -> str:
    """What the runs cost, from their metadata.json: on the sim site the virtual seconds, the
    wall and CPU seconds of priolab-sim and the speed-up over real time (`site`); on a
    real-time site the wall seconds it ran (`ran_s`). Empty when no run recorded any."""
    keys = ("virtual_s", "wall_s", "cpu_s")
    sim = [s for m in metas if isinstance(s := m.get("site"), dict) and s.get("kind") == "sim"
           and all(isinstance(s.get(k), int | float) for k in keys)]  # fmt: skip
    out = []
    if sim:
        speed = [s["virtual_s"] / s["wall_s"] for s in sim if s["wall_s"] > 0]
        out.append(
            f"on the sim site, {_runs(len(sim))} of {_spread([s['virtual_s'] for s in sim], 's')} "
            f"in virtual time took {_spread([s['wall_s'] for s in sim], 's')} of wall time and "
            f"{_spread([s['cpu_s'] for s in sim], 's')} of CPU time each (priolab-sim)"
            + (f", {_spread(speed, '×')} real time" if speed else "")
        )
    real: dict[str, list[float]] = {}
    for m in metas:
        site = str((m.get("site") or {}).get("kind", NO_SITE))
        if site != "sim" and isinstance(m.get("ran_s"), int | float):
            real.setdefault(site, []).append(float(m["ran_s"]))
    out += [f"{f'on the {k} site,' if k != NO_SITE else 'where the site is not recorded,'} "
            f"{_runs(len(v))} took {_spread(v, 's')} each in real time"
            for k, v in sorted(real.items())]  # fmt: skip
    return "; ".join(out)


NO_SITE = "site not recorded"
"""A run whose metadata.json has no `site` (or no metadata.json): said, not guessed."""


def _by_name(scenarios: list[ScenarioRuns]) -> dict[str, list[ScenarioRuns]]:
    """Scenario name → its aggregates, one per results folder, in the folders' order."""
    out: dict[str, list[ScenarioRuns]] = {}
    for s in scenarios:
        out.setdefault(s.name, []).append(s)
    return out


ROW_KEYS = ("scenario", "setting", "scheme", "speed", "rep")


def rows_of(scenarios: list[ScenarioRuns]) -> pd.DataFrame:
    """One row per run of the scenarios, as analysis/verdicts.py reads runs: the valid ones
    (runs.csv, `valid` True) and the invalid ones (exclusions.csv, `valid` False, their
    reasons), each with its scenario, site and the results folder it was read from (`tree`)."""
    parts = []
    for s in scenarios:
        if not s.runs.empty:
            parts.append(s.runs.assign(scenario=s.name, valid=True, tree=s.tree))
        if not s.excluded.empty:
            sites = [str((_meta(s.dir / str(p)).get("site") or {}).get("kind", NO_SITE))
                     for p in s.excluded["path"]]  # fmt: skip
            parts.append(s.excluded.assign(scenario=s.name, valid=False, site=sites, tree=s.tree))
    if not parts:
        return pd.DataFrame(columns=[*ROW_KEYS, "site", "valid", "tree"])
    return pd.concat(parts, ignore_index=True)


def with_extras(rows: pd.DataFrame, paper: Paper, trees: Sequence[Path]) -> pd.DataFrame:
    """The rows with the per-run metrics of the paper's extra files (`Paper.extras`), joined
    per results folder on the run's matrix point."""
    for extra in paper.extras:
        got = []
        for t in trees:
            f = _csv(t / extra.path)
            if f.empty or not set(ROW_KEYS) <= set(f.columns):
                continue
            f["setting"] = f["setting"].astype(str).str.split("/").str[0]
            got.append(f[[*ROW_KEYS, *[m for m in extra.metrics if m in f]]].assign(tree=t.name))
        if not got or rows.empty:
            continue
        add = pd.concat(got, ignore_index=True)
        rows = rows.drop(columns=[m for m in extra.metrics if m in rows])
        for k in ROW_KEYS:
            rows[k] = rows[k].astype(str)
            add[k] = add[k].astype(str)
        rows = rows.merge(add, on=[*ROW_KEYS, "tree"], how="left")
    return rows


def fmt(x: float) -> str:
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞"
    return f"{x:.3g}"


def ci(v: tuple[float, float, float], n: int) -> str:
    x, lo, hi = v
    if n < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{fmt(x)} (n={n}, no CI)"
    return f"{fmt(x)} [{fmt(lo)}, {fmt(hi)}]"


def _demote(md: str, by: int = 1) -> list[str]:
    out, code = [], False
    for line in md.splitlines():
        if line.startswith("```"):
            code = not code
        if not code and line.startswith("#"):
            line = "#" * by + line
        out.append(line)
    return out


def figures_section(s: ScenarioRuns, out_dir: Path) -> list[str]:
    """Copy the scenario's PNG figures beside the page (figures/<folder>/<scenario>/) and
    embed them with their captions, each caption naming the site."""
    figs = sorted((s.dir / "figures").glob("*.png")) if (s.dir / "figures").is_dir() else []
    if not figs:
        return ["No figures yet (`snakemake figures`).", ""]
    rel = Path("figures", s.tree, s.name)
    (out_dir / rel).mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for f in figs:
        shutil.copy2(f, out_dir / rel / f.name)
        cap = f.with_suffix(".txt")
        caption = cap.read_text().strip() if cap.is_file() else f.stem
        lines += [
            f"![{f.stem}]({(rel / f.name).as_posix()})",
            "",
            f"{caption} (Site: {s.sites}{marks.mark(s.runs)}.)",
            "",
        ]
    return lines


def provenance_section(
    scenarios: list[ScenarioRuns], trees: Sequence[Path], repo_commit: str
) -> list[str]:
    lines = ["## Provenance", ""]
    lines.append(f"Page generated by `python -m book` at commit {repo_commit}, from the "
                 "records of the evidence store (`evidence/`).")  # fmt: skip
    lines.append("")
    for tree in trees:
        cals = sorted(tree.glob("calibration-*.json"))
        if cals:
            lines += [f"Calibration reports (`priolab calibrate`) of the machines the "
                      f"{tree.name} records ran on, kept in those records:"]  # fmt: skip
            lines += [f"- `{c.name}`{_cal_summary(c)}" for c in cals]
            lines.append("")
    for s in scenarios:
        lines += [f"### {s.name} on {s.where}", ""]
        if not s.runs.empty:
            commits = ", ".join(sorted(set(s.runs["commit"])))
            lines += [f"Valid runs: {len(s.runs)}, made at commit(s) {commits}.", ""]
            if s.standing:
                lines += [s.standing, ""]
            lines += [f"- `{_run_id(p)}`{_stale_note(r)}" for p, r in
                      zip(s.runs["path"], s.runs.to_dict("records"), strict=True)]  # fmt: skip
            lines.append("")
        if not s.excluded.empty:
            lines += ["Invalid runs (excluded) and why:", ""]
            lines += [f"- `{r.path}`: {r.reasons}" for r in s.excluded.itertuples()]
            lines.append("")
    return lines


def _run_id(path: str) -> str:
    """A run's place in its scenario (`<setting>/<scheme>/<speed>/r<rep>`), not the scratch
    folder its record was materialised into."""
    return "/".join(Path(path).parts[-4:])


def _stale_note(row: dict) -> str:
    why = row.get(marks.STALE)
    return f" (stale: {why})" if isinstance(why, str) and why else ""


def _cal_summary(p: Path) -> str:
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError):
        return " (unreadable)"
    verdicts = [v for v in _walk(d, "pass") if isinstance(v, bool)]
    if not verdicts:
        return ""
    return f": {sum(verdicts)} of {len(verdicts)} targets passed"


def _walk(d: object, key: str) -> list[object]:
    if isinstance(d, dict):
        return [v for k, v in d.items() if k == key] + [
            x for v in d.values() for x in _walk(v, key)
        ]
    if isinstance(d, list):
        return [x for v in d for x in _walk(v, key)]
    return []


def no_runs(paper: Paper, files: dict[str, Path], trees: Sequence[Path]) -> list[str]:
    first = next((files[s] for s in paper.scenarios if s in files), None)
    scenario = f" scenario={first}" if first else ""
    mininet = f"snakemake --cores 2 --config{scenario}" if first else "snakemake --cores 2"
    sim = f"snakemake --cores 2 --config site=sim{scenario}"
    return [
        '!!! warning "No runs are present"',
        f"    The evidence store (`evidence/`) holds no record of this paper's scenarios "
        f"({', '.join(paper.scenarios)}), so this page holds no measured number. Produce them "
        f"with `{mininet}` (Mininet, into results/) or `{sim}` (the sim site, into "
        "results-sim/, where it can run the scenario), add them with `priolab evidence add "
        "results` or `priolab evidence add results-sim`, and rebuild the pages with `make "
        "docs`; `make book-refresh` does all of it for every sim cell of the book.",
        "",
    ]


def page(
    paper: Paper,
    results: Path | Sequence[Path],
    out_dir: Path,
    repo: Path,
    repo_commit: str,
) -> str:
    """The markdown of one paper's results page from one results folder or several (read side
    by side, in the order given); figures are copied under out_dir."""
    return render(paper, results, out_dir, repo, repo_commit)[0]


def render(
    paper: Paper,
    results: Path | Sequence[Path],
    out_dir: Path,
    repo: Path,
    repo_commit: str,
) -> tuple[str, list[claims_page.Judged]]:
    """`page`'s markdown and the claims' judgements (the front page's scoreboard counts
    them)."""
    trees = [results] if isinstance(results, Path) else list(results)
    files = scenario_files(repo)
    found = [s for n in paper.scenarios for t in trees if (s := load_scenario(t, n, files))]
    rows = with_extras(rows_of(found), paper, trees)
    judged = claims_page.judge_all(paper, rows)
    n_records = sum(len(s.runs) + len(s.excluded) for s in found)
    lines = [
        f"# {paper.short}: results",
        "",
        f"Paper: {BY_KEY[paper.short].short()}. Workload: "
        f"[`{paper.kind}`](../workloads/{paper.kind}.md). Generated from the {n_records} run "
        "records of its scenarios in the evidence store (`evidence/`) by `snakemake book` "
        "(`python -m book`); nothing on this page is typed by hand. Every number names its "
        "site: a condition of a claim, the heading of a scenario's section; a site followed "
        "by *stale* rests on records made by other code than this page's (`make "
        "book-refresh` reruns them), by *real time* on runs of a real-time site (not "
        "replayable: their machines and calibration reports are in the provenance).",
        "",
        *cite_block(paper.short),
    ]
    if not found:
        lines += no_runs(paper, files, trees)
    lines += claims_page.section(paper, judged, files)
    lines += list(paper.notes)
    lines += [""] if paper.notes else []
    context = PageContext(rows, tuple(trees), out_dir)
    for hook in paper.sections:
        lines += hook(context)
    for s in found:
        lines += [f"## Scenario {s.name} on {s.where}", ""]
        lines.append(f"Scenario file: `{s.file}`." if s.file else "Scenario file: not found.")
        lines += [
            f" Valid runs: {len(s.runs)}; invalid: {len(s.excluded)}; site(s): {s.sites}. "
            f"Every number in this section is from {s.where}.",
            "",
        ]
        if s.standing:
            lines += ['!!! warning "What this section rests on"', f"    {s.standing}", ""]
        if s.cost:
            lines += [f"Cost of a run: {s.cost} (metadata.json).", ""]
        summary = s.dir / "summary.md"
        if summary.is_file():
            lines += _demote(summary.read_text(), 2)
            lines.append("")
        lines += figures_section(s, out_dir)
    if found:
        lines += provenance_section(found, trees, repo_commit)
    return "\n".join(lines).rstrip() + "\n", judged
