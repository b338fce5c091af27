"""The results book's front page (docs/results/index.md): the scoreboard (per paper, its
primary claims by verdict, each count a link to that verdict's claims on the paper's page),
the pages beside them, what the evidence store holds (records per site, valid, stale) and the
measured time of a full sim refresh, with its estimate on a Slurm cluster (from
evidence/refresh.json, which `make book-refresh` writes when it starts from an empty
store)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from analysis.claims import Paper
from analysis.verdicts import VERDICTS
from book.bibliography import BY_KEY
from book.claims_page import Judged, anchor, counts
from priolab.evidence.materialise import Materialised
from priolab.evidence.refresh import TIMING_FILE, Timing, slurm_estimate_s

SLURM_NODES = (10, 50)
"""The cluster sizes the estimate names (assumption: nodes like the measuring machine)."""


def _h(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h" if seconds >= 360 else f"{seconds / 60:.1f} min"


def timing_line(evidence: Path) -> str:
    """The generated line on a full refresh's cost, or what makes it."""
    p = evidence / TIMING_FILE
    if not p.is_file():
        return ("A full refresh of the sim cells has not been timed yet: `make book-refresh` "
                "from an empty store (`evidence/records/sim/` removed) times it and writes "
                f"`evidence/{TIMING_FILE}`.")  # fmt: skip
    t = Timing.model_validate(json.loads(p.read_text()))
    est = "; ".join(
        f"{n} nodes of {t.cores} cores: about {_h(slurm_estimate_s(t, n, t.cores))}"
        for n in SLURM_NODES
    )
    return (
        f"A full refresh of the book's sim cells from an empty store ({t.runs} runs of "
        f"{t.points} points at {t.reps} repetitions, `make book-refresh` at commit "
        f"{t.commit[:12]}) took {_h(t.wall_s)} of wall time on {t.cores} cores "
        f"({t.machine}) and {_h(t.cpu_s)} of CPU time. On a Slurm cluster (profiles/slurm: one "
        f"job per run, {t.job_overhead_cpu_s:g} CPU s per job beside it), estimated as the "
        "CPU time and the jobs' overhead spread over the nodes' cores, and never less than "
        f"the longest run ({_h(t.longest_run_s)}): {est}."
    )


def scoreboard(papers: Sequence[tuple[Paper, list[Judged]]]) -> list[str]:
    """One column per paper, one row per verdict (a narrow table: short numbers under short
    names), each count a link to that verdict's claims on the paper's page."""
    tallies = [(paper, counts(judged), len(judged)) for paper, judged in papers]
    head = " | ".join(f"[{p.short}]({p.key}.md)" for p, _, _ in tallies)
    lines = [
        "## Scoreboard",
        "",
        "Every claim of the papers has one primary condition: the paper's own set-up as far "
        "as priolab can run it, fixed in the claim before its runs. The table counts each "
        "paper's claims by the verdict of that condition alone (analysis/README.md, 'Claims and "
        "verdicts'), from the records of the evidence store; a paper's page lists every claim "
        "with its other conditions, labelled sensitivity or exploratory.",
        "",
        f"| verdict | {head} |",
        "|---|" + "---|" * len(tallies),
    ]
    for k in VERDICTS:
        cells = [f"[{c[k]}]({p.key}.md#{anchor(k)})" if c[k] else "0" for p, c, _ in tallies]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    lines.append("| claims | " + " | ".join(str(n) for _, _, n in tallies) + " |")
    gone = [f"[{len(p.unmeasured)}]({p.key}.md#not-measured-here)" if p.unmeasured else "0"
            for p, _, _ in tallies]  # fmt: skip
    total = {k: sum(c[k] for _, c, _ in tallies) for k in VERDICTS}
    lines += [
        "| not measured here | " + " | ".join(gone) + " |",
        "",
        f"All papers: {sum(n for _, _, n in tallies)} claims, "
        + ", ".join(f"{total[k]} {k}" for k in VERDICTS)
        + f"; {sum(len(p.unmeasured) for p, _, _ in tallies)} statements not measured here.",
        "",
    ]
    return lines


def page(
    papers: Sequence[tuple[Paper, list[Judged]]], done: Sequence[Materialised], evidence: Path
) -> str:
    """The front page: the scoreboard of `papers` (each with its claims' judgements), the
    pages, and what the store's materialised records (`done`) hold."""
    by_site: dict[str, list[Materialised]] = {}
    for m in done:
        by_site.setdefault(m.site, []).append(m)
    lines = [
        "# Results",
        "",
        "One page per paper, each claim beside priolab's number, and the sim-vs-Mininet "
        "agreement. Every page is generated from the run records of the evidence store "
        "(`evidence/`, evidence/README.md) by `make docs`; no run folder is read.",
        "",
        *scoreboard(papers),
        "## The pages",
        "",
        *[f"- [{p.short}]({p.key}.md): {BY_KEY[p.short].short()}" for p, _ in papers],
        "- [Sim against Mininet: agreement](agreement.md): each paper's page says, from it, on "
        "which site its primary conditions run",
        "",
        "## What the pages rest on",
        "",
        "| site | scenarios | records | valid | stale |",
        "|---|---|---|---|---|",
    ]
    for site, ms in sorted(by_site.items()):
        lines.append(f"| {site} | {len(ms)} | {sum(m.records for m in ms)} | "
                     f"{sum(m.valid for m in ms)} | {sum(m.stale for m in ms)} |")  # fmt: skip
    if not by_site:
        lines.append("| – | 0 | 0 | 0 | 0 |")
    lines += [
        "",
        "A record is stale when the code that made it differs from this checkout's (its code "
        "digest: the run's inputs, the Rust its programs link, the Python that planned it and "
        "computed its metrics); `make book-refresh` reruns the stale sim records. Real-time "
        "records (Mininet, the VM, a testbed) cannot be rerun to check: they carry the "
        "machine they ran on and its calibration report.",
        "",
        "## A full refresh",
        "",
        timing_line(evidence),
        "",
    ]
    return "\n".join(lines)
