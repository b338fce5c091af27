"""A paper's claims on its results page, for any paper (analysis/claims.py `Paper`): its
scoreboard (primary claims by verdict), a narrow claims table (claim, paper, priolab with CI
and n, verdict), and per claim a section a click away with its band and why, every condition
(primary first, then sensitivity and exploratory, each with why it was chosen), each
point's value, the mechanism read off the runs, and the command that fills what is not run.

Every verdict is analysis/verdicts.py's; nothing here decides one. Only primary rows count on
the scoreboard.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.claims import ROLE_MEANING, Claim, Condition, Paper, num
from analysis.verdicts import (
    CAP_RUNS,
    FLOOR_RUNS,
    NOT_RUN,
    VERDICTS,
    Judgement,
    PointResult,
    Side,
    judge,
    precision,
)
from priolab.evidence import marks

TREES = {"sim": "results-sim", "mininet": "results"}
"""The results folder the workflow writes each site's runs into (rules/common.smk)."""
OVER = {"one": "", "each": ", for each of its", "min": ", the smallest over its",
        "max": ", the largest over its"}  # fmt: skip


@dataclass(frozen=True, eq=False)
class Judged:
    """A claim with the judgement of each of its conditions, the primary's first."""

    claim: Claim
    judgements: tuple[Judgement, ...]

    @property
    def primary(self) -> Judgement:
        return self.judgements[0]


def judge_all(paper: Paper, rows: pd.DataFrame) -> list[Judged]:
    return [Judged(c, tuple(judge(c, cond, rows, paper.metrics) for cond in c.conditions))
            for c in paper.claims]  # fmt: skip


def counts(judged: list[Judged]) -> dict[str, int]:
    """Primary claims per verdict, every verdict listed."""
    out = dict.fromkeys(VERDICTS, 0)
    for j in judged:
        out[j.primary.verdict.kind] += 1
    return out


def anchor(kind: str) -> str:
    """The page's anchor of a verdict's list of claims."""
    return "verdict-" + kind.replace(" ", "-")


# --------------------------------------------------------------------------- numbers


def ci_text(x: float, lo: float, hi: float) -> str:
    """`x [lo, hi]` to 3 significant digits, or 4 when 3 would print one number thrice."""
    if math.isnan(lo) or math.isnan(hi):
        return f"{num(x)} (no CI)"
    texts = [num(v) for v in (x, lo, hi)]
    if lo != hi and len(set(texts)) == 1:
        texts = [f"{v:.4g}" for v in (x, lo, hi)]
    return f"{texts[0]} [{texts[1]}, {texts[2]}]"


def side_n(s: Side) -> str:
    alike = " (all alike)" if s.alike else ""
    died = f", {s.failed} died" if s.failed else ""
    return f"{s.n}{died}{alike}"


def point_n(p: PointResult) -> str:
    return " + ".join(side_n(s) for s in p.sides)


def value_text(j: Judgement) -> str:
    """The condition's value with its CI, as the narrow table shows it."""
    if j.verdict.kind == NOT_RUN:
        return "–"
    over, k = j.claim.over, len(j.points)
    if over == "one":
        return ci_text(j.value, j.lo, j.hi)
    if over == "each":
        values = [p.value for p in j.points]
        return (f"{k} points: {num(min(values))} … {num(max(values))}, CIs within "
                f"[{num(j.lo)}, {num(j.hi)}]")  # fmt: skip
    return f"{'largest' if over == 'max' else 'smallest'} of {k}: {ci_text(j.value, j.lo, j.hi)}"


def n_text(j: Judgement) -> str:
    if len(j.points) == 1:
        return point_n(j.points[0])
    died = sum(s.failed for p in j.points for s in p.sides)
    return f"≥ {j.runs_min} a side" + (f", {died} died" if died else "")


def standing(j: Judgement) -> str:
    """What the condition's numbers rest on, after its site (priolab/evidence/marks.py):
    " (stale: k of n runs)" when some of its runs were made by other code than the
    checkout's, " (real time)" when they ran on a real-time site; "" otherwise."""
    runs = [s.runs for p in j.points for s in p.sides]
    return marks.mark(pd.concat(runs, ignore_index=True)) if runs else ""


def deaths(j: Judgement) -> str:
    """The death rate per side, where any session died."""
    parts = [f"{s.cell.scheme} at {s.cell.setting}: {s.failed} of {len(s.runs)} sessions died"
             for p in j.points for s in p.sides if s.failed]  # fmt: skip
    return "; ".join(parts)


# --------------------------------------------------------------------------- conditions


def scenario_file(name: str, files: dict[str, Path]) -> str:
    return f"`{files[name]}`" if name in files else f"`{name}` (no scenario file found)"


def describe(cond: Condition, files: dict[str, Path], mark: str = "") -> str:
    """Where a condition's runs come from, in one cell: site (with `mark`, what its runs rest
    on), scenario file, settings, schemes."""
    parts = [cond.site + mark]
    for sc in dict.fromkeys(p.num.scenario for p in cond.points):
        pts = [p for p in cond.points if p.num.scenario == sc]
        settings = list(dict.fromkeys(p.num.setting for p in pts))
        schemes = list(dict.fromkeys(
            p.num.scheme + (f" ÷ {p.den.scheme}" if p.den else "") for p in pts))  # fmt: skip
        speeds = {p.num.speed for p in pts} - {"default"}
        where = settings[0] if len(settings) == 1 else f"{settings[0]} … {settings[-1]}"
        parts.append(f"{scenario_file(sc, files)} {where}, {', '.join(schemes)}"
                     + (f" ({', '.join(sorted(speeds))})" if speeds else ""))  # fmt: skip
    nums = {(p.num.scenario, p.num.setting) for p in cond.points}
    dens = {(p.den.scenario, p.den.setting) for p in cond.points if p.den is not None}
    across = sorted(dens - nums)
    if across:
        parts.append("÷ " + ", ".join(f"{scenario_file(sc, files)} {st}" for sc, st in across))
    return " · ".join(parts)


def fill_command(cond: Condition, files: dict[str, Path], reps: int = FLOOR_RUNS) -> str:
    """The command that runs the condition's cells on its site, `reps` runs each (the
    workflow runs what is missing and keeps what is there)."""
    tree = TREES.get(cond.site, "results")
    cmds = []
    for sc in dict.fromkeys(c.scenario for c in cond.cells()):
        cells = [c for c in cond.cells() if c.scenario == sc]

        def group(values: list[str]) -> str:
            v = list(dict.fromkeys(values))
            return v[0] if len(v) == 1 else "{" + ",".join(v) + "}"

        target = (f"{tree}/{sc}/{group([c.setting for c in cells])}/"
                  f"{group([c.scheme for c in cells])}/{group([c.speed for c in cells])}/"
                  f"r{{1..{reps}}}/metrics.json")  # fmt: skip
        site = " site=sim" if cond.site == "sim" else ""
        file = files.get(sc, Path(f"scenarios/{sc}.yaml"))
        cmds.append(f"snakemake --cores 2 --config{site} scenario={file} reps={reps} -- {target}")
    return " && ".join(cmds)


def extra_commands(paper: Paper, claim: Claim) -> list[str]:
    return [e.command for e in paper.extras if claim.metric in e.metrics]


# --------------------------------------------------------------------------- the page


def scoreboard(judged: list[Judged], unmeasured: int) -> list[str]:
    """The paper's scoreboard: one row per verdict, its count of primary claims and a link to
    each (a narrow table: two columns, whose second wraps)."""
    c = counts(judged)
    lines = [
        "## Scoreboard",
        "",
        "Primary claims by verdict (each claim's primary condition only: the paper's own "
        "set-up as far as priolab runs it, fixed before its runs; analysis/README.md says how "
        "a verdict is reached).",
        "",
        "| verdict | primary claims |",
        "|---|---|",
    ]
    for k in VERDICTS:
        mine = [j for j in judged if j.primary.verdict.kind == k]
        links = ", ".join(f"[{j.claim.source}: {short(j.claim.text)}](#{j.claim.key})"
                          for j in mine)  # fmt: skip
        lines.append(f'| <a id="{anchor(k)}"></a>**{k}** ({c[k]}) | {links or "–"} |')
    gone = f"; not measured here: {unmeasured} ([why](#not-measured-here))" if unmeasured else ""
    lines += [f"| all | {len(judged)} claims{gone} |", ""]
    return lines


def short(text: str, words: int = 8) -> str:
    w = text.split()
    return " ".join(w[:words]) + (" …" if len(w) > words else "")


def claims_table(judged: list[Judged]) -> list[str]:
    lines = [
        "## Claims",
        "",
        "Each claim's primary condition: priolab's value with its 95 % CI (Student-t; a ratio's "
        "on the log of the ratio) and n, the runs a side. The claim's section (its link) has "
        "the band, every condition and why.",
        "",
        "| claim | paper | priolab [95 % CI], n | verdict |",
        "|---|---|---|---|",
    ]
    for j in judged:
        p = j.primary
        n = n_text(p) if p.verdict.kind != NOT_RUN else ""
        value = value_text(p) + (f", n {n}" if n else "") + standing(p)
        lines.append(f"| [{j.claim.source}](#{j.claim.key}): {j.claim.text} | {j.claim.paper} | "
                     f"{value} | **{p.verdict.kind}** |")  # fmt: skip
    return [*lines, ""]


def details(paper: Paper, j: Judged, files: dict[str, Path]) -> list[str]:
    c = j.claim
    p = j.primary
    lines = [
        f'<a id="{c.key}"></a>',
        "",
        f"### {c.source}: {short(c.text, 12)}",
        "",
        f"*{c.text}.* Paper: {c.paper}. Measure: {c.what()}{OVER[c.over]}"
        + (f" {len(c.primary.points)} points." if c.over != "one" else "."),
        "",
        f"- Band: {c.band.text()}: {c.band.why}.",
    ]
    if c.kind != "mean" and c.direction != "none":
        lines.append(f"- The paper's direction: a {c.direction}; no effect: {c.same.text()} "
                     f"({c.same.why}).")  # fmt: skip
    lines += [f"- Verdict (primary): **{p.verdict.kind}**: {p.verdict.detail}."]
    if p.verdict.kind != NOT_RUN:
        prec = precision(p)
        lines.append(f"- Runs: {'enough' if prec.enough else 'more wanted'} ({prec.why}).")
    if deaths(p):
        lines.append(f"- Sessions the protocol lost (counted at their worst value): {deaths(p)}.")
    lines += ["", "| condition | priolab [95 % CI] | n | verdict |", "|---|---|---|---|"]
    for jj in j.judgements:
        cond = jj.condition
        n = n_text(jj) if jj.verdict.kind != NOT_RUN else "–"
        lines.append(f"| **{cond.role}** · {describe(cond, files, standing(jj))} | "
                     f"{value_text(jj)} | {n} | "
                     f"{jj.verdict.kind} |")  # fmt: skip
    lines += [""]
    for jj in j.judgements:
        lines.append(f"- *{jj.condition.role}* ({ROLE_MEANING[jj.condition.role]}): "
                     f"{jj.condition.why}.")  # fmt: skip
    lines.append("")
    if len(p.points) > 1 and p.verdict.kind != NOT_RUN:
        lines += ["Per point (primary; each CI at "
                  f"{100 * p.level:.4g} %, so that the {len(p.points)} hold together):", "",
                  "| point | priolab [CI] | n | verdict |", "|---|---|---|---|"]  # fmt: skip
        lines += [f"| {pt.point.name} | {ci_text(pt.value, pt.lo, pt.hi)} | {point_n(pt)} | "
                  f"{pt.verdict.kind} |" for pt in p.points]  # fmt: skip
        lines.append("")
    if paper.why is not None and p.verdict.kind != NOT_RUN:
        for pt in p.points:
            den = pt.den.runs if pt.den is not None else pt.num.runs[:0]
            who = pt.point.name if len(p.points) > 1 else "primary"
            lines.append(f"- What the runs show ({who}): {paper.why(pt.num.runs, den)}.")
        lines.append("")
    if p.verdict.kind == NOT_RUN or not precision(p).enough:
        lines += [fill_line(paper, p, files), ""]
    return lines


def fill_line(paper: Paper, j: Judgement, files: dict[str, Path]) -> str:
    """The command that gives the primary condition the runs it needs: 10 a side, or twice
    what it has (at most 40) when those were not enough."""
    have = j.runs_min
    reps = FLOOR_RUNS if have < FLOOR_RUNS else min(CAP_RUNS, 2 * have)
    cmd = fill_command(j.condition, files, reps)
    tree = TREES.get(j.condition.site, "results")
    more = f", then `priolab evidence add {tree}`"  # the pages read the evidence store
    more += "".join(f", then `{e}`" for e in extra_commands(paper, j.claim))
    return f"To fill the primary condition: `{cmd}`{more}."


def unmeasured_section(paper: Paper) -> list[str]:
    if not paper.unmeasured:
        return []
    lines = ['<a id="not-measured-here"></a>', "", "## Not measured here", "",
             "Statements of the paper priolab does not measure, and why:", ""]  # fmt: skip
    lines += [f"- **{u.source}**: {u.text}. {u.why}" for u in paper.unmeasured]
    return [*lines, ""]


def section(paper: Paper, judged: list[Judged], files: dict[str, Path]) -> list[str]:
    """The claims part of a paper's page: scoreboard, claims table, sites, details."""
    lines = [*scoreboard(judged, len(paper.unmeasured)), *claims_table(judged)]
    lines += ["## Where the primary conditions run", "", paper.sites, ""]
    lines += ["## The claims in detail", ""]
    for j in judged:
        lines += details(paper, j, files)
    return [*lines, *unmeasured_section(paper)]
