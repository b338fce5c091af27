"""Aggregate every run of a scenario across repetitions.

    python -m analysis.aggregate RESULTS/<scenario> [--recompute]

Writes into RESULTS/<scenario>/:
- summary.csv   columns exactly: setting, metric, scheme, value, ci_low, ci_high, n_runs,
                n_excluded (value = mean over the valid runs of the per-run values; 95 %
                percentile bootstrap CI over runs, seeded; see analysis/stats.py)
- ratios.csv    setting, metric, scheme, reference, ratio (scheme's value ÷ the reference's;
                reference = the scenario's compare.reference; the ratio of means, without a CI)
- summary.md    the workload's header (what the metrics mean, what ran), then one markdown
                table per setting: metrics × schemes with CIs, each compared scheme ÷ the
                reference, and the excluded runs with their reasons
- runs.csv      one row per valid run: its variant names, workload parameters, each node's
                kernel UDP receive-buffer drops (`udp_rcvbuf_errors_<node>`), every metric
- exclusions.csv  one row per excluded run: path and reasons

`setting` is the setting name, or `<setting>/<speed>` when the scenario has more than one
speed (so summary.csv keeps its fixed columns and rows of different speeds never mix).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.compare import Comparison, first
from analysis.logs import AnalysisError, workload_kind
from analysis.rundirs import Run, find_run_dirs, load_run
from analysis.stats import N_RESAMPLES, SEED, bootstrap_ci
from analysis.workload import WorkloadAnalysis, analysis_for
from ground.reasons import kind

SUMMARY_COLUMNS = [
    "setting", "metric", "scheme", "value", "ci_low", "ci_high", "n_runs", "n_excluded",
]  # fmt: skip


def workload_analysis(runs: list[Run]) -> WorkloadAnalysis:
    """The analysis of the scenario's workload (the first run whose metadata names one)."""
    for r in runs:
        if r.meta.get("run"):
            return analysis_for(workload_kind(r.meta))
    return analysis_for("rise")


COMPARISON = Comparison()
"""The comparison of the scenario being aggregated (set by `aggregate` from its runs)."""


def scheme_key(s: str) -> tuple[int, str]:
    return COMPARISON.key(s)


def setting_label(run: Run, multi_speed: bool) -> str:
    return f"{run.setting}/{run.speed}" if multi_speed else run.setting


def metric_names(runs: list[Run], core: tuple[str, ...]) -> list[str]:
    """The workload's core metrics first (all of them when no run has metrics, so the table
    says what is missing), then every other metric in the order the runs have them."""
    have = [r for r in runs if r.metrics]
    names = [k for k in core if not have or any(k in r.metrics for r in have)]
    for r in runs:
        for k in r.metrics:
            if k not in names:
                names.append(k)
    return names


def udp_drop_columns(meta: dict[str, Any]) -> dict[str, int | None]:
    """`udp_rcvbuf_errors_<node>`: datagrams the node's kernel dropped from full socket
    receive buffers during the run (metadata.json's `udp_drops`; none before it was kept)."""
    drops = meta.get("udp_drops") or {}
    return {f"udp_rcvbuf_errors_{node}": (d or {}).get("RcvbufErrors")
            for node, d in sorted(drops.items())}  # fmt: skip


def runs_table(runs: list[Run], multi_speed: bool, columns: tuple[str, ...]) -> pd.DataFrame:
    rows = []
    for r in runs:
        if not r.valid:
            continue
        row: dict[str, object] = {
            "setting_label": setting_label(r, multi_speed), "setting": r.setting,
            "scheme": r.scheme, "speed": r.speed, "rep": r.rep, "path": str(r.path),
        }  # fmt: skip
        for k in columns:
            row[k] = r.workload.get(k)
        row.update(udp_drop_columns(r.meta))
        row.update(r.metrics)
        rows.append(row)
    return pd.DataFrame(rows)


def summarise(
    runs: list[Run], core: tuple[str, ...] = ()
) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """(summary table, ratios table, multi_speed) from loaded runs; `core` metrics first."""
    multi_speed = len({r.speed for r in runs}) > 1
    groups: dict[tuple[str, str], list[Run]] = {}
    for r in runs:
        groups.setdefault((setting_label(r, multi_speed), r.scheme), []).append(r)
    names = metric_names(runs, core)
    settings = list(dict.fromkeys(setting_label(r, multi_speed) for r in runs))
    rows = []
    for setting in settings:
        schemes = sorted({s for (st, s) in groups if st == setting}, key=scheme_key)
        for metric in names:
            for scheme in schemes:
                g = groups[(setting, scheme)]
                vals = [r.metrics.get(metric, math.nan) for r in g if r.valid]
                mean, lo, hi, n = bootstrap_ci(vals)
                rows.append({"setting": setting, "metric": metric, "scheme": scheme,
                             "value": mean, "ci_low": lo, "ci_high": hi, "n_runs": n,
                             "n_excluded": sum(not r.valid for r in g)})  # fmt: skip
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    return summary, ratios(summary), multi_speed


def ratios(summary: pd.DataFrame) -> pd.DataFrame:
    """Every scheme's value ÷ the reference scheme's (the scenario's `compare.reference`), per
    setting and metric. NaN when either is missing or the reference is 0 (undefined)."""
    rows = []
    reference = COMPARISON.reference
    for (setting, metric), g in summary.groupby(["setting", "metric"], sort=False):
        ref = g[g["scheme"] == reference]
        if ref.empty:
            continue
        den = float(ref["value"].iloc[0])
        for _, row in g[g["scheme"] != reference].iterrows():
            num = float(row["value"])
            ok = math.isfinite(num) and math.isfinite(den) and den != 0
            rows.append({"setting": setting, "metric": metric, "scheme": row["scheme"],
                         "reference": reference,
                         "ratio": num / den if ok else math.nan})  # fmt: skip
    return pd.DataFrame(rows, columns=["setting", "metric", "scheme", "reference", "ratio"])


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "—"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{x:.0f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def exclusion_lines(runs: list[Run], root: Path) -> list[str]:
    excluded = [r for r in runs if not r.valid]
    if not excluded:
        return ["No run excluded."]
    out = [f"{len(excluded)} run(s) excluded (invalid):"]
    for reason, n in Counter(r.reasons_prose for r in excluded).most_common():
        out.append(f"- {n} × {reason}")
    out.append("")
    out += [f"  - `{r.path.relative_to(root)}`: {r.reasons_prose}" for r in excluded]
    return out


def markdown(
    summary: pd.DataFrame,
    ratio: pd.DataFrame,
    runs: list[Run],
    root: Path,
    name: str,
    header: list[str] | None = None,
) -> str:
    """summary.md: the generic head (runs, CIs), the workload's `header` lines (what its
    metrics mean and what ran), one table per setting, the excluded runs."""
    n_valid = sum(r.valid for r in runs)
    lines = [
        f"# {name}: summary",
        "",
        f"{len(runs)} run(s) found, {n_valid} valid, {len(runs) - n_valid} excluded. "
        f"Value = mean over valid runs; [low, high] = 95 % percentile bootstrap CI over runs "
        f"({N_RESAMPLES} resamples, seed {SEED}; one run: (n=1, no CI), no interval); "
        "(n) = runs with a value. — = no data.",
        "",
        *(header or []),
    ]
    for setting, g in summary.groupby("setting", sort=False):
        schemes = sorted(g["scheme"].unique(), key=scheme_key)
        compared = COMPARISON.others(schemes)
        head = ["metric", *schemes] + [f"{s} ÷ {COMPARISON.reference}" for s in compared]
        lines += [f"## {setting}", "", "| " + " | ".join(head) + " |",
                  "|" + "---|" * len(head)]  # fmt: skip
        for metric, gm in g.groupby("metric", sort=False):
            cells = [metric]
            for s in schemes:
                row = gm[gm["scheme"] == s].iloc[0]
                if row["n_runs"] == 0:
                    cells.append(f"— (0; {row['n_excluded']} excl.)")
                    continue
                lo, hi, n = float(row["ci_low"]), float(row["ci_high"]), int(row["n_runs"])
                if n < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
                    c = f"{_fmt(row['value'])} (n={n}, no CI"  # analysis.stats.bootstrap_ci
                else:
                    c = f"{_fmt(row['value'])} [{_fmt(lo)}, {_fmt(hi)}] ({n}"
                c += f"; {row['n_excluded']} excl.)" if row["n_excluded"] else ")"
                cells.append(c)
            for s in compared:
                r = ratio[(ratio["setting"] == setting) & (ratio["metric"] == metric)
                          & (ratio["scheme"] == s)]  # fmt: skip
                cells.append(_fmt(float(r["ratio"].iloc[0])) if len(r) else "—")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Excluded runs", "", *exclusion_lines(runs, root), ""]
    return "\n".join(lines)


def aggregate(scenario_dir: Path, recompute: bool = False) -> dict[str, object]:
    paths = find_run_dirs(scenario_dir)
    if not paths:
        raise AnalysisError(
            f"{scenario_dir}: no run directories <setting>/<scheme>/<speed>/r<rep> found"
        )
    runs = [load_run(p, recompute) for p in paths]
    global COMPARISON
    COMPARISON = first(r.meta for r in runs)
    wa = workload_analysis(runs)
    summary, ratio, multi_speed = summarise(runs, wa.core_metrics)
    summary.to_csv(scenario_dir / "summary.csv", index=False)
    ratio.to_csv(scenario_dir / "ratios.csv", index=False)
    runs_table(runs, multi_speed, wa.run_columns).to_csv(scenario_dir / "runs.csv", index=False)
    pd.DataFrame(
        [{"path": str(r.path.relative_to(scenario_dir)), "setting": r.setting,
          "scheme": r.scheme, "speed": r.speed, "rep": r.rep, "reasons": r.reasons_prose,
          "kinds": "; ".join(kind(x) for x in r.reasons)}
         for r in runs if not r.valid],
        columns=["path", "setting", "scheme", "speed", "rep", "reasons", "kinds"],
    ).to_csv(scenario_dir / "exclusions.csv", index=False)  # fmt: skip
    md = markdown(summary, ratio, runs, scenario_dir, scenario_dir.name, wa.summary_header(runs))
    (scenario_dir / "summary.md").write_text(md)
    return {
        "runs": len(runs),
        "valid": int(np.sum([r.valid for r in runs])),
        "excluded": exclusion_lines(runs, scenario_dir),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.aggregate", description=__doc__)
    ap.add_argument("scenario_dir", type=Path)
    ap.add_argument("--recompute", action="store_true", help="recompute every metrics.json")
    args = ap.parse_args(argv)
    if not args.scenario_dir.is_dir():
        print(f"error: {args.scenario_dir}: not a directory", file=sys.stderr)
        return 2
    try:
        res = aggregate(args.scenario_dir, args.recompute)
    except AnalysisError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{args.scenario_dir}: {res['runs']} runs, {res['valid']} valid")
    for line in res["excluded"]:  # type: ignore[attr-defined]
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
