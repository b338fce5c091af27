"""RISE's claims beside priolab's numbers on every site: the table RISE's results page opens
with (book/__main__.py), in the form of the other papers' pages (book/
results.py): one row per claim, path, site and scenario/setting, with the value and its 95 %
bootstrap CI, n, the site, the scenario file and a verdict.

The claims, the places they are measured and the numbers are reproduction.py's (CLAIMS,
PLACES, `evaluate`); this module only lays them out per site. Runs of two sites are never
pooled: each results tree is loaded and evaluated on its own.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from priolab.workloads.rise import reproduction
from priolab.workloads.rise.numbers import ci

# every scenario a claim can be measured in (reproduction.PLACES)
SCENARIOS = tuple(dict.fromkeys(sc for v in reproduction.PLACES.values() for sc, _, _ in v))


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


def rows(c: reproduction.Claim, runs: pd.DataFrame, files: dict[str, Path]) -> list[list[str]]:
    """The claim's rows on one site's runs: value [CI], n, site, file, setting, path, verdict."""
    out = []
    for r in reproduction.evaluate(c, runs):
        sc, st = str(r["place"]).split("/", 1)
        schemes = [s for s in (c.base, c.scheme) if s]
        sel = runs[
            (runs["scenario"] == sc) & (runs["setting"] == st) & runs["scheme"].isin(schemes)
        ]
        sites = ", ".join(sorted(set(sel["site"]))) if "site" in sel else "–"
        file = f"`{files[sc]}`" if sc in files else sc
        out.append(
            [
                str(r["path"]),
                ci(r["v"]),  # type: ignore[arg-type]
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
        "Each claim of the paper's Figs. 5, 6, 8, 9 and 10 (seeds/000 section 4) on each path "
        "where its setting ran: the paper's link as SPEC-rise.md gives it, and the regime map's "
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
    for c in reproduction.CLAIMS:
        what = f"`{c.metric}` {c.base}" + (f" ÷ {c.scheme}" if c.scheme else "")
        got = [r for runs in per_tree for r in rows(c, runs, files)]
        head = f"| {c.figure} | {c.text} | {what} | {reproduction.paper_text(c)} |"
        if not got:
            lines.append(f"{head} not run | | | | | | |")
        lines += [f"{head} " + " | ".join(r) + " |" for r in got]
    return [*lines, ""]
