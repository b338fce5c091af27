"""Sim against Mininet (issue 22 item 8): per point (scenario, setting, scheme) the workload's
key metric on each site, mean with its 95 % bootstrap CI and n, and the ratio sim ÷ Mininet
with a bootstrap CI (the two sites' runs resampled independently).

The points are the agreement scenarios (scenarios/agreement/*.yaml: three or more points per
sim workload, shown as soon as either site has runs) and every results-book scenario with
valid runs on both sites. Runs come from two results folders, the workflow's Mininet tree
(`results/`) and its sim tree (`results-sim/`), and from a run's own `site.kind`, so a folder
holding both sites' runs counts too.

One generator, two callers: the results book's agreement page (`python -m book`)
and `snakemake agreement` (rules/analysis.smk), which runs this module:

    python -m book.agreement --mininet results --sim results-sim \\
        --md results-sim/agreement.md --csv results-sim/agreement.csv
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from analysis.stats import bootstrap_ci, bootstrap_ratio_ci
from analysis.why import all_alike
from book.results import ci, fmt, load_scenario
from priolab.paths import REPO_ROOT

SITES = ("mininet", "sim")
AGREEMENT_DIR = Path("scenarios", "agreement")
KEY_METRIC = {
    "rise": "mtp_p95_ms",  # the motion-to-photon tail w/ Pri cuts on a window-limited uplink
    "dtp": "deadline_ratio",  # the share of blocks that meet their deadline
    "qpr": "throughput_mean_mbps",  # the segment throughput partial reliability keeps up
    "moq": "latency_I_median_ms",  # how late I frames arrive, what FT cuts under a backlog
    "roq": "ssim_mean",  # the quality the paper's claims are stated in
}
"""The one metric per workload the agreement is judged on (its question's answer)."""
FILL = (
    "Run the agreement scenarios on both sites: "
    "`snakemake --cores 2 agreement --config site=sim scenario=agreement` (sim, into "
    "results-sim/) and `snakemake --cores 2 agreement --config scenario=agreement reps=5` "
    "(Mininet, into results/), then `make docs`."
)


@dataclass(frozen=True)
class Source:
    """One scenario's valid runs from both folders (a `site` column per run) and its kind."""

    name: str
    kind: str
    runs: pd.DataFrame
    both_sites_only: bool  # a results-book scenario: only points run on both sites
    settings: list[str] = field(default_factory=list)  # the rows' order (others: as found)


@dataclass(frozen=True)
class Row:
    scenario: str
    setting: str
    scheme: str
    metric: str
    values: dict[str, list[float]]  # site → the metric's finite values, one per valid run
    alike: dict[str, bool] = field(default_factory=dict)  # site → its runs repeat one result

    def stats(self, site: str) -> tuple[float, float, float, int]:
        return bootstrap_ci(self.values[site])

    def ratio(self) -> tuple[float, float, float]:
        if not all(self.values[s] for s in SITES):
            return math.nan, math.nan, math.nan
        return bootstrap_ratio_ci(self.values["sim"], self.values["mininet"])


def agreement_scenarios(repo: Path = REPO_ROOT) -> dict[str, str]:
    """Name → workload kind of every scenarios/agreement/*.yaml."""
    return {n: k for n, (k, _) in _agreement_files(repo).items()}


def _agreement_files(repo: Path) -> dict[str, tuple[str, list[str]]]:
    """Name → (workload kind, settings in the file's order) of scenarios/agreement/*.yaml."""
    out: dict[str, tuple[str, list[str]]] = {}
    for f in sorted((repo / AGREEMENT_DIR).glob("*.yaml")):
        data = yaml.safe_load(f.read_text()) or {}
        out[str(data["name"])] = (str(data["workload"]["kind"]), [str(k) for k in data["settings"]])
    return out


def merged_runs(roots: list[Path], name: str) -> pd.DataFrame:
    """The valid runs of `name` in every root that aggregated it (runs.csv), one frame."""
    found = [s.runs for r in dict.fromkeys(roots) if (s := load_scenario(r, name, {}))]
    found = [f for f in found if not f.empty]
    return pd.concat(found, ignore_index=True) if found else pd.DataFrame()


def sources(roots: list[Path], book: dict[str, str], repo: Path = REPO_ROOT) -> list[Source]:
    """The agreement scenarios, then the results book's scenarios (`book`: name → kind)."""
    agree = _agreement_files(repo)
    out = [Source(n, k, merged_runs(roots, n), False, order) for n, (k, order) in agree.items()]
    out += [Source(n, k, merged_runs(roots, n), True) for n, k in book.items() if n not in agree]
    return out


def rows(src: list[Source]) -> list[Row]:
    out: list[Row] = []
    for s in src:
        metric = KEY_METRIC.get(s.kind)
        r = s.runs
        if metric is None or r.empty or metric not in r or "site" not in r:
            continue
        groups = list(r.groupby(["setting", "scheme"], sort=False))
        rank = {k: i for i, k in enumerate(s.settings)}
        groups.sort(key=lambda kg: rank.get(str(kg[0][0]), len(rank)))  # stable: schemes stay
        for (setting, scheme), g in groups:
            have = g[np.isfinite(g[metric].to_numpy(float))]
            per_site = {site: have[have["site"] == site] for site in SITES}
            values = {site: [float(x) for x in at[metric]] for site, at in per_site.items()}
            if not any(values.values()) or (s.both_sites_only and not all(values.values())):
                continue
            alike = {site: all_alike(at) for site, at in per_site.items()}
            out.append(Row(s.name, str(setting), str(scheme), metric, values, alike))
    return out


def _site_cell(row: Row, site: str) -> str:
    mean, lo, hi, n = row.stats(site)
    alike = ", all alike" if row.alike.get(site) else ""
    return "–" if n == 0 else f"{ci((mean, lo, hi), n)} ({n}{alike})"


def table_md(body: list[Row]) -> list[str]:
    lines = [
        "| scenario | setting | scheme | metric | Mininet [CI] (n) | sim [CI] (n) "
        "| sim ÷ Mininet [CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in body:
        x, lo, hi = r.ratio()
        ratio = f"{fmt(x)} [{fmt(lo)}, {fmt(hi)}]" if math.isfinite(lo) else fmt(x)
        sites = " | ".join(_site_cell(r, s) for s in SITES)
        lines.append(
            f"| {r.scenario} | {r.setting} | {r.scheme} | `{r.metric}` | {sites} | {ratio} |"
        )
    return lines


def table_csv(body: list[Row]) -> pd.DataFrame:
    recs = []
    for r in body:
        rec: dict[str, object] = {"scenario": r.scenario, "setting": r.setting,
                                  "scheme": r.scheme, "metric": r.metric}  # fmt: skip
        for site in SITES:
            mean, lo, hi, n = r.stats(site)
            rec |= {f"{site}_mean": mean, f"{site}_ci_low": lo, f"{site}_ci_high": hi,
                    f"{site}_n": n, f"{site}_all_alike": bool(r.alike.get(site))}  # fmt: skip
        rec["ratio"], rec["ratio_ci_low"], rec["ratio_ci_high"] = r.ratio()
        recs.append(rec)
    return pd.DataFrame(recs)


def page(src: list[Source]) -> str:
    lines = [
        "# Sim against Mininet: agreement",
        "",
        "Per point, the workload's key metric (" + ", ".join(
            f"{k}: `{m}`" for k, m in KEY_METRIC.items()) + ") on the `mininet` and the `sim` "
        "site: the mean over valid runs with its 95 % bootstrap CI and n (\"all alike\" where "
        "a site's runs measured the same in everything: sim runs whose seed had nothing to "
        "draw on repeat one result, and their CI shows no spread), and the ratio "
        "sim ÷ Mininet with a bootstrap CI (each site's runs resampled on their own). The "
        "points: the agreement scenarios (`scenarios/agreement/`: per sim workload one point "
        "where its mechanism matters, one where it does not, one at a boundary; each shown "
        "once either site has runs) and every results-book scenario run on both sites. "
        "Generated by `snakemake book` and by `snakemake agreement`.",
        "",
    ]  # fmt: skip
    body = rows(src)
    if not body:
        return "\n".join([*lines, '!!! warning "No runs are present"',
                          "    No agreement point has valid runs yet, so the table is empty. "
                          + FILL, ""])  # fmt: skip
    one_sided = any(not all(r.values.values()) for r in body)
    note = ["", "A point with runs on one site only has no ratio yet. " + FILL] if one_sided else []
    return "\n".join([*lines, *table_md(body), *note, ""])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m book.agreement", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--mininet", type=Path, default=REPO_ROOT / "results")
    ap.add_argument("--sim", type=Path, default=REPO_ROOT / "results-sim")
    ap.add_argument("--md", type=Path, required=True, help="the table as a markdown page")
    ap.add_argument("--csv", type=Path, help="the table as CSV (one row per point)")
    args = ap.parse_args(argv)
    src = sources([args.mininet, args.sim], {})
    args.md.parent.mkdir(parents=True, exist_ok=True)
    args.md.write_text(page(src))
    if args.csv:
        table_csv(rows(src)).to_csv(args.csv, index=False)
    print(args.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
