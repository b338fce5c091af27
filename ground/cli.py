"""What the folders that add a subcommand to `priolab` (their `register(subparsers)`) share."""

from __future__ import annotations

import argparse


def documented(
    sub: argparse._SubParsersAction, name: str, help: str, doc: str | None
) -> argparse.ArgumentParser:
    """A subcommand listed with `help`, whose own --help prints `doc` (its module's docstring:
    usage lines and all) as it is written."""
    return sub.add_parser(
        name, help=help, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
