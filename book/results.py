"""One results page per paper, from the run folders present under the results folders.

For each paper (papers.py): the claims beside priolab's numbers (mean or ratio of means with
its 95 % bootstrap CI, n runs, site, scenario file, setting), each scenario's summary and
figures, and the provenance (commits the runs were made at, the run folders, the calibration
reports, the invalid runs with their reasons). With no run folders the page says so and names
the commands that produce them. Reads only aggregated scenario folders (runs.csv,
exclusions.csv, summary.md, figures/) and each run's metadata.json.

A page reads several results folders side by side (the workflow's `results/`, Mininet and the
other real-time sites, and `results-sim/`, the sim site): a scenario aggregated in two of
them gives two rows per claim and setting, one under the other, and two sections, each
headed by its site; runs of two folders are never pooled. The site of a number is the one its
runs' metadata.json records (`site.kind`).
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from analysis.judged import finite, runs_text
from analysis.stats import bootstrap_ci, bootstrap_ratio_ci
from book.bibliography import BY_KEY, cite_block
from book.papers import Claim, Paper
from ground import rundir


@dataclass
class ScenarioRuns:
    name: str
    dir: Path
    file: Path | None  # scenarios/<file>.yaml whose `name:` is `name`
    runs: pd.DataFrame  # runs.csv (valid runs), with `site` and `commit` columns added
    excluded: pd.DataFrame  # exclusions.csv
    tree: str = "results"  # the results folder it was read from (its name), e.g. results-sim
    cost: str = ""  # what its valid runs cost, from their metadata.json (run_cost)

    @property
    def sites(self) -> str:
        """The sites its valid runs ran on, as their metadata.json records them."""
        return ", ".join(sorted(set(self.runs["site"]))) if not self.runs.empty else "–"

    @property
    def where(self) -> str:
        """Site and folder, as a heading names them: `the sim site (results-sim/)`."""
        if self.runs.empty:
            return f"{self.tree}/ (no valid run, so no site)"
        sites = sorted(set(self.runs["site"]))
        if sites == [NO_SITE]:
            return f"{self.tree}/ ({NO_SITE})"
        return f"the {' and '.join(sites)} site{'s' if len(sites) > 1 else ''} ({self.tree}/)"


def scenario_files(repo: Path) -> dict[str, Path]:
    """Scenario name → its file under scenarios/ or a folder of it (the `name:` key)."""
    out: dict[str, Path] = {}
    for f in sorted((repo / "scenarios").rglob("*.yaml")):
        try:
            name = (yaml.safe_load(f.read_text()) or {}).get("name")
        except yaml.YAMLError:
            continue
        if isinstance(name, str):
            out[name] = f.relative_to(repo)
    return out


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


def _label(runs: pd.DataFrame) -> str:
    """The column that names a row's setting: `setting_label` (`<setting>/<speed>` when the
    scenario has several speeds, so a claim is never pooled over them), else `setting`."""
    return "setting_label" if "setting_label" in runs else "setting"


def verdict(c: Claim, v: tuple[float, float, float], n: int) -> str:
    x, lo, hi = v
    if math.isnan(x):
        return "undefined"
    if n < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return "no CI: compare the value"
    if hi < c.lo:
        return "priolab lower (CI below the paper)"
    if lo > c.hi:
        return "priolab higher (CI above the paper)"
    return "paper's value inside the CI"


def claim_rows(c: Claim, scenarios: list[ScenarioRuns]) -> list[list[str]]:
    """One row per (scenario, setting and speed, results folder) where the claim's schemes
    both ran; a setting's rows from the several folders follow each other."""
    rows = []
    for name, group in _by_name(scenarios).items():
        if c.scenarios and name not in c.scenarios:
            continue
        group = [s for s in group if not s.runs.empty and c.metric in s.runs]
        for setting in dict.fromkeys(x for s in group for x in s.runs[_label(s.runs)]):
            if c.settings and str(setting).split("/")[0] not in c.settings:
                continue
            for s in group:
                rows += _judged_row(c, s, setting) if c.judge else _row(c, s, setting)
    return rows


def _row(c: Claim, s: ScenarioRuns, setting: str) -> list[list[str]]:
    """The claim's mean or ratio with its CI over the runs of (scenario, setting)."""
    at = s.runs[s.runs[_label(s.runs)] == setting]
    num, den = at[at["scheme"] == c.num], at[at["scheme"] == c.den]
    a = finite(num, c.metric)
    if not len(a):
        return []
    if c.den:
        b = finite(den, c.metric)
        if not len(b):
            return []
        n = min(len(a), len(b))
        v = bootstrap_ratio_ci(a, b) if np.mean(b) != 0 else (math.nan,) * 3
        n_text = runs_text(c.metric, num, den)
    else:
        v, n = bootstrap_ci(a)[:3], len(a)
        n_text = runs_text(c.metric, num)
    sites = ", ".join(sorted(set(pd.concat([num, den])["site"])))
    file = f"`{s.file}`" if s.file else s.name
    return [[ci(v, n), n_text, sites, file, str(setting), verdict(c, v, n)]]  # type: ignore[arg-type]


def _judged_row(c: Claim, s: ScenarioRuns, setting: str) -> list[list[str]]:
    """The claim's own judge (judged.py) over the runs of (scenario, setting)."""
    assert c.judge is not None
    label = _label(s.runs)
    at = s.runs[s.runs[label] == setting]
    num, den = at[at["scheme"] == c.num], at[at["scheme"] == c.den] if c.den else at[:0]
    where = str(setting)
    if c.den_setting:  # the denominator from another setting (and the same speed)
        other = "/".join([c.den_setting, *str(setting).split("/")[1:]])
        den = s.runs[(s.runs[label] == other) & (s.runs["scheme"] == (c.den or c.num))]
        where = f"{setting} ÷ {other}"
    if num.empty or ((c.den or c.den_setting) and den.empty):
        return []
    j = c.judge(num, den)
    sites = ", ".join(sorted(set(num["site"]) | set(den["site"])))
    file = f"`{s.file}`" if s.file else s.name
    return [[j.value, j.n, sites, file, where, j.verdict]]


def claims_section(paper: Paper, scenarios: list[ScenarioRuns]) -> list[str]:
    lines = [
        "## The paper's claims beside priolab's numbers",
        "",
        "Mean over valid runs, or the ratio of two schemes' means, with its 95 % percentile "
        'bootstrap CI (analysis/stats.py); n = valid runs (numerator + denominator), "all '
        "alike\" where a side's runs measured the same in everything (sim runs in which the "
        "seed had nothing to draw on repeat one result: their CI is no evidence of a real "
        "stack's spread, which the agreement page has from Mininet); site = where those runs "
        "ran (their metadata.json). A setting run on several sites has one row per site, "
        "one under the other; their runs are never pooled.",
        "",
        *(
            [
                "Verdicts (analysis/judged.py): *reproduced* when the CI supports the "
                "paper's statement; *differs* when the effect has the paper's direction but "
                "another size, or when the CI holds 1 where the paper saw a difference; *not "
                "reproduced* when the CI lies on the other side. Each reason is read off the "
                "same runs.",
                "",
            ]
            if paper.why is not None
            else []
        ),
        "| source | claim | metric | paper | priolab [95 % CI] | n | site | scenario file | "
        "setting | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in paper.claims:
        what = f"`{c.metric}` {c.num}" + (f" ÷ {c.den}" if c.den else "")
        if c.den_setting:
            what = f"`{c.metric}` {c.num} ÷ {c.den or c.num} at {c.den_setting}"
        rows = claim_rows(replace(c, judge=paper.judge(c)), scenarios)
        if not rows:
            lines.append(f"| {c.figure} | {c.text} | {what} | {c.paper} | not run | | | | | |")
        for r in rows:
            lines.append(f"| {c.figure} | {c.text} | {what} | {c.paper} | " + " | ".join(r) + " |")
    return [*lines, ""]


# The verdict's leading words as analysis/judged.py and `verdict` word them, most specific first
VERDICT_KINDS = ("not reproduced", "reproduced", "differs", "not run", "no verdict")


def verdict_kind(verdict: str) -> str:
    """The verdict's leading word(s) ("reproduced", "differs", ...); the text when none fits."""
    return next((k for k in VERDICT_KINDS if verdict.startswith(k)), verdict)


def readings_section(paper: Paper, scenarios: list[ScenarioRuns]) -> list[str]:
    """The claims measured under two or more of the paper's readings (Claim.reading), one
    column per reading (Paper.readings): each cell the verdict's word with priolab's value, n
    and site, from the same rows as the claims table (whose verdict says why), and per reading
    how many of its claims it reproduces. Empty when the paper has no readings."""
    groups: dict[tuple[str, str, tuple[str, ...]], dict[str, Claim]] = {}
    for c in paper.claims:
        if c.reading and c.reading in paper.readings:
            key = (c.figure, c.text.removesuffix(f" [{c.reading}]"), c.settings)
            groups.setdefault(key, {})[c.reading] = c
    groups = {k: g for k, g in groups.items() if len(g) >= 2}
    if not groups:
        return []
    lines = [
        "## Which reading reproduces which claim",
        "",
        "Every claim measured under more than one reading, one column per reading: the "
        "verdict, priolab's value [95 % CI], n and site, as in the claims table above (whose "
        "verdict also says why); – where the reading's scenario has no such scheme.",
        "",
        "| source | claim | paper | " + " | ".join(paper.readings) + " |",
        "|---|---|---|" + "---|" * len(paper.readings),
    ]
    tally: dict[str, list[bool]] = {r: [] for r in paper.readings}
    for (figure, text, _), by_reading in groups.items():
        cells = []
        for r in paper.readings:
            reading_claim = by_reading.get(r)
            if reading_claim is None:
                cells.append("–")
                continue
            judged = replace(reading_claim, judge=paper.judge(reading_claim))
            rows = [row for row in claim_rows(judged, scenarios)
                    if verdict_kind(row[5]) != "not run"]  # fmt: skip
            if rows:
                tally[r].append(all(verdict_kind(row[5]) == "reproduced" for row in rows))
            texts = [f"**{verdict_kind(row[5])}** {row[0]} (n {row[1]}, {row[2]})" for row in rows]
            cells.append("; ".join(texts) or "not run")
        paper_value = next(iter(by_reading.values())).paper
        lines.append(f"| {figure} | {text} | {paper_value} | " + " | ".join(cells) + " |")
    lines.append("")
    for r, got in tally.items():
        ran = f"{sum(got)} of the {len(got)} claims it ran" if got else "no claim: not run"
        lines.append(f"- {r}: reproduces {ran}.")
    return [*lines, ""]


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
            f"{caption} (Site: {s.sites}.)",
            "",
        ]
    return lines


def provenance_section(
    scenarios: list[ScenarioRuns], trees: Sequence[Path], repo_commit: str
) -> list[str]:
    lines = ["## Provenance", ""]
    lines.append(f"Page generated by `python -m book` at commit {repo_commit}.")
    lines.append("")
    for results in trees:
        cals = sorted(results.glob("calibration-*.json"))
        if cals:
            lines += [f"Calibration reports (`priolab calibrate`) in {results.name}/: "]
            top = results.parent
            lines += [f"- `{c.relative_to(top) if c.is_relative_to(top) else c}`{_cal_summary(c)}"
                      for c in cals]  # fmt: skip
        else:
            lines.append(f"Calibration reports: none in {results.name}/.")
        lines.append("")
    for s in scenarios:
        lines += [f"### {s.name} on {s.where}", ""]
        if not s.runs.empty:
            commits = ", ".join(sorted(set(s.runs["commit"])))
            lines += [f"Valid runs: {len(s.runs)}, made at commit(s) {commits}.", ""]
            lines += [f"- `{p}`" for p in s.runs["path"]]
            lines.append("")
        if not s.excluded.empty:
            lines += ["Invalid runs (excluded) and why:", ""]
            lines += [f"- `{r.path}`: {r.reasons}" for r in s.excluded.itertuples()]
            lines.append("")
    return lines


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
    folders = " or ".join(f"{t.name}/" for t in trees)
    return [
        '!!! warning "No runs are present"',
        f"    No run folder of this paper's scenarios ({', '.join(paper.scenarios)}) was found "
        f"in {folders}, so this page holds no measured number. Produce them with `{mininet}` "
        f"(Mininet, into results/) or `{sim}` (the sim site, into results-sim/, where it can "
        "run the scenario); any of the scenarios above works the same way. Then rebuild the "
        "pages with `make docs`.",
        "",
    ]


def page(
    paper: Paper,
    results: Path | Sequence[Path],
    out_dir: Path,
    repo: Path,
    repo_commit: str,
    extra: list[str] | None = None,
) -> str:
    """The markdown of one paper's results page from one results folder or several (read side
    by side, in the order given); figures are copied under out_dir."""
    trees = [results] if isinstance(results, Path) else list(results)
    files = scenario_files(repo)
    found = [s for n in paper.scenarios for t in trees if (s := load_scenario(t, n, files))]
    folders = ", ".join(f"{t.name}/" for t in trees)
    lines = [
        f"# {paper.short}: results",
        "",
        f"Paper: {BY_KEY[paper.short].short()}. Workload: "
        f"[`{paper.kind}`](../workloads/{paper.kind}.md). Generated from the run folders in "
        f"{folders} by `snakemake book` (`python -m book`); nothing on this page is typed by "
        "hand. Every number names its site: a column of the claims, the heading of a "
        "scenario's section.",
        "",
        *cite_block(paper.short),
    ]
    if not found:
        lines += no_runs(paper, files, trees)
    if paper.claims:
        lines += claims_section(paper, found)
        lines += readings_section(paper, found)
    lines += list(paper.notes)
    lines += extra or []
    for s in found:
        lines += [f"## Scenario {s.name} on {s.where}", ""]
        lines.append(f"Scenario file: `{s.file}`." if s.file else "Scenario file: not found.")
        lines += [
            f" Valid runs: {len(s.runs)}; invalid: {len(s.excluded)}; site(s): {s.sites}. "
            f"Every number in this section is from {s.where}.",
            "",
        ]
        if s.cost:
            lines += [f"Cost of a run: {s.cost} (metadata.json).", ""]
        summary = s.dir / "summary.md"
        if summary.is_file():
            lines += _demote(summary.read_text(), 2)
            lines.append("")
        lines += figures_section(s, out_dir)
    if found:
        lines += provenance_section(found, trees, repo_commit)
    return "\n".join(lines).rstrip() + "\n"
