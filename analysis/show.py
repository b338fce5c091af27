"""Print a scenario's summary.md and list its figures (the end of `make reproduce`).

    python -m analysis.show RESULTS/<scenario>

Aggregates first if summary.md is missing (figures are not drawn here: analysis.figures).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.aggregate import aggregate
from analysis.logs import AnalysisError


def show(scenario_dir: Path) -> str:
    if not (scenario_dir / "summary.md").is_file():
        aggregate(scenario_dir)
    lines = [(scenario_dir / "summary.md").read_text().rstrip(), "", "## Figures", ""]
    figs = sorted((scenario_dir / "figures").glob("*.png"))
    if not figs:
        lines.append(f"(none yet: python -m analysis.figures {scenario_dir})")
    for png in figs:
        cap = png.with_suffix(".txt")
        caption = cap.read_text().strip() if cap.is_file() else ""
        lines.append(f"- {png} (+ .pdf): {caption}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.show", description=__doc__)
    ap.add_argument("scenario_dir", type=Path)
    args = ap.parse_args(argv)
    if not args.scenario_dir.is_dir():
        print(f"error: {args.scenario_dir}: not a directory", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(show(args.scenario_dir))
    except AnalysisError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
