"""RISE's claims beside priolab's numbers on every site: the table RISE's results page opens
with (book/__main__.py), in the form of the other papers' pages (book/
results.py): one row per claim, path, site and scenario/setting, with the value and its 95 %
bootstrap CI, n, the site, the scenario file and a verdict.

The claims, the places they are measured and the numbers are reproduction.py's (CLAIMS,
PLACES, `evaluate`); this module only lays them out per site. Runs of two sites are never
pooled: each results tree is loaded and evaluated on its own.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from priolab.evidence import marks
from priolab.workloads.rise import reproduction
from priolab.workloads.rise.numbers import ci

# every scenario a claim can be measured in (reproduction.PLACES)
SCENARIOS = tuple(dict.fromkeys(sc for v in reproduction.PLACES.values() for sc, _, _ in v))
MIN_RUNS = 10  # issue 25: every cell of Figs. 5-10 rests on n >= 10 runs per scheme
PATHS = (reproduction.IDEAL, reproduction.WL)
# the sim site's command for a scenario's runs (`reps=` sets every file's repetitions)
FILL = "snakemake --cores 2 all --config site=sim reps={reps} scenario={files}"


def verdict(c: reproduction.Claim, row: dict[str, object]) -> str:
    """The book's words for reproduction.verdict_code: reproduced, not reproduced (with the
    regime of the path when a gain came out smaller than the paper's), inconclusive, or what
    the numbers cannot decide."""
    code, text = str(row["code"]), reproduction.VERDICTS[str(row["code"])]
    if code in ("inside", "holds"):
        return f"reproduced: {text}"
    if code == "straddles":
        return f"inconclusive: {text}"
    if code in ("lower", "higher", "fails"):
        regime = str(row.get("regime", ""))
        why = ""
        if c.scheme and code == "lower" and regime.startswith("not window-limited"):
            why = f", on a path where w/o Pri was {regime}"
        return f"not reproduced: {text}{why}"
    return text  # undefined (0/0), no CI (one run), the paper gives no number


def value(c: reproduction.Claim, row: dict[str, object]) -> str:
    """The cell's number: the value or ratio with its CI; where the runs give no ratio (no
    freeze in either scheme, 0/0; or none in the compared scheme, ÷ 0), both schemes' means
    with their CIs instead."""
    v = row["v"]
    if c.scheme and not math.isfinite(v[0]):  # type: ignore[index]
        why = "0/0" if math.isnan(v[0]) else "÷ 0"  # type: ignore[index]
        return f"{why}: {c.base} {ci(row['a'])}, {c.scheme} {ci(row['b'])}"  # type: ignore[arg-type]
    return ci(v)  # type: ignore[arg-type]


def runs_per_scheme(row: dict[str, object]) -> list[int]:
    return [int(x) for x in str(row["n"]).split("+")]


def _has_ci(v: tuple[float, float, float]) -> bool:
    return not any(math.isnan(x) for x in v)


def filled(c: reproduction.Claim, row: dict[str, object]) -> bool:
    """n >= MIN_RUNS per scheme and a number with a CI: the value or ratio, or where the ratio
    is 0/0 or ÷ 0, each scheme's mean."""
    if min(runs_per_scheme(row)) < MIN_RUNS:
        return False
    v = row["v"]
    if c.scheme and not math.isfinite(v[0]):  # type: ignore[index]
        return _has_ci(row["a"]) and _has_ci(row["b"])  # type: ignore[arg-type]
    return _has_ci(v)  # type: ignore[arg-type]


def fill_command(where: str, path: str, files: dict[str, Path]) -> str:
    """The sim-site command whose runs fill place `where` on `path`: the first scenario
    PLACES names for it other than quick.yaml (`make reproduce`'s, on Mininet; the figure's
    own scenario measures the place at n = 10)."""
    scs = [sc for sc, _, p in reproduction.PLACES[where] if p == path]
    pick = next((sc for sc in scs if sc != "quick"), scs[0])
    return FILL.format(reps=MIN_RUNS, files=files.get(pick, f"scenarios/{pick}.yaml"))


def open_cells(
    evaluated: list[tuple[reproduction.Claim, list[dict[str, object]]]],
    files: dict[str, Path],
) -> list[str]:
    """Every cell (claim × setting × path) without a filled row on any site, with what is
    there and the command that fills it; then the filled cells whose ratio the runs cannot
    give."""
    lines = [
        "### Cells still open",
        "",
        f"Every claim, at each of its settings and on each path, needs n ≥ {MIN_RUNS} runs per "
        "scheme and a number with a 95 % CI on at least one site (issue 25).",
        "",
    ]
    gaps, undefined = [], []
    for c, got in evaluated:
        for where in c.where:
            for path in PATHS:
                places = {f"{sc}/{st}" for sc, st, p in reproduction.PLACES[where] if p == path}
                here = [r for r in got if r["path"] == path and r["place"] in places]
                done = [r for r in here if filled(c, r)]
                cell = f"{c.figure}, {c.text} [{where}; {path}]"
                if not done:
                    have = ", ".join(f"{r['place']} {r['n']} runs" for r in here) or "not run"
                    gaps.append(f"- {cell}: {have}. Fill: `{fill_command(where, path, files)}`")
                elif c.scheme and all(not math.isfinite(r["v"][0]) for r in done):  # type: ignore[index]
                    undefined.append(cell)
    lines += [*gaps, ""] if gaps else ["None: every cell is filled on both paths.", ""]
    if undefined:
        lines += [
            "Filled, but the ratio is not a number (0/0: no freeze in either scheme; ÷ 0: none "
            "in the compared scheme, an unbounded gain), so each scheme's mean with its CI "
            "stands in the cell: "
            + "; ".join(undefined)
            + ". The freeze map below searches for paths where the schemes' freeze rates differ.",
            "",
        ]
    return lines


def rows(
    c: reproduction.Claim,
    runs: pd.DataFrame,
    files: dict[str, Path],
    evaluated: list[dict[str, object]] | None = None,
) -> list[list[str]]:
    """The claim's rows on one site's runs: value [CI], n, site, file, setting, path, verdict
    (`evaluated`: reproduction.evaluate(c, runs), when the caller has it)."""
    out = []
    for r in reproduction.evaluate(c, runs) if evaluated is None else evaluated:
        sc, st = str(r["place"]).split("/", 1)
        schemes = [s for s in (c.base, c.scheme) if s]
        sel = runs[
            (runs["scenario"] == sc) & (runs["setting"] == st) & runs["scheme"].isin(schemes)
        ]
        sites = marks.site_cell(sel)  # with the records' standing: stale, real time
        file = f"`{files[sc]}`" if sc in files else sc
        out.append(
            [
                str(r["path"]),
                value(c, r),
                str(r["n"]),
                sites,
                file,
                st,
                verdict(c, r),
            ]
        )
    return out


def section(trees: list[Path], files: dict[str, Path]) -> list[str]:
    """The claims table over the results trees given (one per site), or nothing when none
    of them holds an aggregated RISE scenario."""
    per_tree = []
    for res in trees:
        dirs = [
            res / n
            for n in SCENARIOS
            if (res / n / "runs.csv").is_file() and (res / n / "exclusions.csv").is_file()
        ]
        if dirs:
            per_tree.append(reproduction.load(dirs)[0])
    if not per_tree:
        return []
    lines = [
        "## The paper's claims beside priolab's numbers",
        "",
        "Each claim of the paper's Figs. 5, 6, 8, 9 and 10 ([RISE §4]) on each path "
        "where its setting ran: the paper's link as [RISE setup] gives it, and the regime map's "
        "window-limited path (0.05 % iid uplink loss). A ratio is the mean over runs of the "
        "baseline ÷ the mean of the compared scheme, an absolute value the mean; both with the "
        "95 % percentile bootstrap CI over runs (each scheme resampled on its own); n = valid "
        "runs (baseline + compared). Sites are never pooled. The verdict compares the paper's "
        "value with the CI; the reproduction report below says why, per setting.",
        "",
        "| source | claim | metric | paper | path | priolab [95 % CI] | n | site | "
        "scenario file | setting | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    evaluated = []
    for c in reproduction.CLAIMS:
        what = f"`{c.metric}` {c.base}" + (f" ÷ {c.scheme}" if c.scheme else "")
        per = [(runs, reproduction.evaluate(c, runs)) for runs in per_tree]
        got = [r for runs, ev in per for r in rows(c, runs, files, ev)]
        head = f"| {c.figure} | {c.text} | {what} | {reproduction.paper_text(c)} |"
        if not got:
            lines.append(f"{head} not run | | | | | | |")
        lines += [f"{head} " + " | ".join(r) + " |" for r in got]
        evaluated.append((c, [r for _, ev in per for r in ev]))
    return [*lines, "", *open_cells(evaluated, files)]
