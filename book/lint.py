"""Hand-written markdown carries no time of day, no commit id and no date, and every measured
figure it quotes links to where the measurement lives: measurements and their provenance
belong in generated pages (book/) or in docs/investigations/.

    python -m book.lint [FILE ...]     (default: every markdown file git tracks)

Exempt: docs/investigations/ (dated history, kept verbatim) and the generated pages
(docs/results/, docs/workloads/; not tracked anyway). Link targets and paths into
docs/investigations/ are ignored (they name dated history files). Exit 1 with one
`file:line: what` per find.

A measured figure is recognised by a unit only a measurement has (`MEASURED`: a speed against
real time, wall or CPU time, time per datagram, a share of runs or of a core, a load average,
a speed-up, an approximate run time "of runs" or "on this machine", an approximate duration
beside a test command). Parameters ("70 Mbit/s", "a 1 s warm-up", "10 × 120 s") have none of
these units, so they are never flagged. Such a figure must sit in the same block (paragraph,
list item, table row) as a link to a results page (`results/<page>.md`) or a dated note
(`investigations/`); one in a code block, or in no block with such a link, is a find. Inline
code (`...`) is not read for figures: it quotes commands and examples.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
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

_N = r"\d(?:[\d.,]*\d)?\s?"  # a number, and the space before its unit
_APPROX = r"(?:≈|~|\babout\s)\s?" + _N + r"(?:s|min|h)\b"  # "≈ 5 s", "~12 min", "about 2 h"
MEASURED = {
    "speed against real time": re.compile(_N + r"(?:×|x|times)\s?real[- ]time\b"),
    "wall time": re.compile(_N + r"(?:s|ms|min|h)\s(?:of\s)?wall\b(?!-)"),  # not "wall-clock"
    "CPU time": re.compile(_N + r"(?:s|min|h)(?:\s\d+\s?s)?\sof\s(?:CPU|one\score|a\score)\b"),
    "share of a core": re.compile(_N + r"%\sof\s(?:a|one)\score\b"),
    "time per operation": re.compile(
        _N + r"(?:ns|µs|us)/(?:datagram|packet|frame|op|operation|iteration|call|run)\b"
    ),
    "share of runs": re.compile(_N + r"%\sof\s(?:the\s|all\s|valid\s|its\s)?runs\b"),
    "load average": re.compile(r"\bload\saverage\s(?:of\s|was\s)?\d"),
    "speed-up": re.compile(_N + r"×\s(?:faster|slower)\b|\bspeed-?up\sof\s\d"),
    "run time": re.compile(
        _APPROX + r"\s(?:of\sruns|on\s(?:this|the|a|one)\smachine|on\sMininet)\b"
    ),
}
TEST_COMMAND = re.compile(r"\bpytest\b|\bcargo\s(?:\+\S+\s)?test\b|\bmake\stest\b")
TEST_DURATION = re.compile(_APPROX)
MEASUREMENT_LINK = re.compile(r"\]\((?:[^)\s]*/)?(?:results/[\w.-]+\.md|investigations/)[^)]*\)")
INLINE_CODE = re.compile(r"`[^`]*`")
LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s")
FENCE = re.compile(r"\s*(?:```|~~~)")


def findings(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, match) of every time of day, commit id or date in the text."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        bare = HISTORY_PATH.sub("", LINK_TARGET.sub("]()", line))
        for kind, pat in PATTERNS.items():
            out += [(i, kind, m.group(0)) for m in pat.finditer(bare)]
    return out


def blocks(text: str) -> Iterator[tuple[bool, list[tuple[int, str]]]]:
    """(is code, [(line number, line)]) per block: a paragraph, a list item with its
    continuation lines, a table row, a heading, or a fenced code block."""
    block: list[tuple[int, str]] = []
    code = False
    for i, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            if code:  # the closing fence ends the code block
                yield True, [*block, (i, line)]
                block, code = [], False
                continue
            if block:
                yield False, block
            block, code = [(i, line)], True
            continue
        if code:
            block.append((i, line))
            continue
        starts = not line.strip() or line.lstrip().startswith(("|", "#")) or LIST_ITEM.match(line)
        if starts and block:
            yield False, block
            block = []
        if line.strip():
            block.append((i, line))
        if line.lstrip().startswith(("|", "#")):  # a table row or heading is a block alone
            yield False, block
            block = []
    if block:
        yield code, block


def unlinked_figures(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, match) of every measured figure (`MEASURED`, or an approximate duration
    in a block that names a test command) whose block has no link to a results page or a
    dated note."""
    out = []
    for code, block in blocks(text):
        if not code and any(MEASUREMENT_LINK.search(line) for _, line in block):
            continue
        is_test = any(TEST_COMMAND.search(line) for _, line in block)
        for i, line in block:
            prose = line if code else INLINE_CODE.sub("", line)
            for kind, pat in MEASURED.items():
                out += [(i, kind, m.group(0).strip()) for m in pat.finditer(prose)]
            if is_test:
                out += [(i, "test duration", m.group(0)) for m in TEST_DURATION.finditer(prose)]
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
        text = f.read_text()
        for line, kind, m in findings(text):
            print(f"{f}:{line}: {kind} {m!r} in a hand-written page")
            bad += 1
        for line, kind, m in unlinked_figures(text):
            print(
                f"{f}:{line}: measured figure ({kind}) {m!r} without a link to a results "
                "page or a dated note in docs/investigations/"
            )
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
