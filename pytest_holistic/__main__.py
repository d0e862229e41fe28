"""``pytest-holistic`` / ``python -m pytest_holistic``: commands that work on finished runs, outside pytest.

``report RUN.json... -o DIR`` merges the report.json of several runs (one per model) into one leaderboard
(:mod:`pytest_holistic.report.merge`). A bad input is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import UserError
from .report.leaderboard import MEMORY_CAP_GB

PROG = "pytest-holistic"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Work on the reports of finished pytest-holistic runs.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    report = commands.add_parser(
        "report",
        help="merge several runs' report.json into one leaderboard (leaderboard.json and index.html)",
        description="Merge the report.json of several runs (one per model) into DIR/leaderboard.json and DIR/index.html.",
    )
    report.add_argument("reports", nargs="+", type=Path, metavar="RUN.json", help="a run's report.json, or its folder")
    report.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write the leaderboard into")
    report.add_argument(
        "--memory-cap-gb",
        type=float,
        default=MEMORY_CAP_GB,
        metavar="GB",
        help=f"Dynascore's memory budget: memory counts as cap minus peak use (default {MEMORY_CAP_GB:g})",
    )
    report.add_argument(
        "--compare",
        action="store_true",
        help="show the leaderboard, win rates and Dynascore even for one run (by default only for two runs or more)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; 0 on success, 2 on a user error (one line on stderr)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "report":
        if not math.isfinite(args.memory_cap_gb) or args.memory_cap_gb <= 0:
            parser.error(f"--memory-cap-gb {args.memory_cap_gb}: give a positive number of GB, e.g. 16")
        if not args.output.strip():
            parser.error("-o/--output is empty: name the folder to write leaderboard.json and index.html into")
        from .printable import printable
        from .report.merge import merge

        try:
            comparison = True if args.compare else None
            written = merge(args.reports, Path(args.output), memory_cap_gb=args.memory_cap_gb, comparison=comparison)
        except UserError as error:
            print(printable(f"{PROG} report: error: {error}"), file=sys.stderr)
            return 2
        for path in written:
            print(printable(str(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
