"""What the workloads' own analyses share: reading an endpoint's CSV log with the documented
columns (a clear error naming the file), and ordering settings by the number in their name."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd


def read_csv_log(path: Path, columns: list[str], error: type[ValueError], doc: str) -> pd.DataFrame:
    """The CSV at `path`; raises `error` naming the file if it is missing, unreadable or
    lacks one of `columns` (`doc` says where the columns are documented)."""
    if not path.is_file():
        raise error(f"{path}: missing")
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise error(f"{path}: not a CSV log ({e})") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise error(f"{path}: columns {missing} missing ({doc})")
    return df


def numeric_key(setting: str) -> tuple[float, str]:
    """Sort key: the number in a setting's name ('2.85M' -> 2.85, 'd150' -> 150), names
    without one last."""
    digits = "".join(c for c in setting if c.isdigit() or c == ".")
    try:
        return (float(digits), setting)
    except ValueError:
        return (math.inf, setting)
