"""Hand-written markdown carries no time of day, no commit id and no date: measurements and
their provenance belong in generated pages (book/) or in docs/investigations/.

    python -m book.lint [FILE ...]     (default: every markdown file git tracks)

Exempt: docs/investigations/ (dated history, kept verbatim) and the generated pages
(docs/results/, docs/workloads/; not tracked anyway). Link targets and paths into
docs/investigations/ are ignored (they name dated history files). Exit 1 with one
`file:line: what` per find.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from priolab.paths import REPO_ROOT

EXEMPT = ("docs/investigations/", "docs/results/", "docs/workloads/")
PATTERNS = {
    "time of day": re.compile(r"\b(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d)?\b(?!\s*[:/])"),
    "commit id": re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
    "date": re.compile(r"\b20\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b"),
}
LINK_TARGET = re.compile(r"\]\([^)]*\)")
HISTORY_PATH = re.compile(r"\S*investigations/\S*")  # names a dated history file


def findings(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, match) of every time of day, commit id or date in the text."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        bare = HISTORY_PATH.sub("", LINK_TARGET.sub("]()", line))
        for kind, pat in PATTERNS.items():
            out += [(i, kind, m.group(0)) for m in pat.finditer(bare)]
    return out


def tracked_markdown(root: Path = REPO_ROOT) -> list[Path]:
    files = subprocess.run(
        ["git", "ls-files", "*.md"], capture_output=True, text=True, check=True, cwd=root
    ).stdout.split()
    return [root / f for f in files if not f.startswith(EXEMPT)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    files = [Path(a) for a in args] or tracked_markdown()
    bad = 0
    for f in files:
        for line, kind, m in findings(f.read_text()):
            print(f"{f}:{line}: {kind} {m!r} in a hand-written page")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
