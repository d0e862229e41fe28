"""``pytest-holistic report RUN.json... -o DIR``: several runs (one per model) merged into one leaderboard.

Each run writes its own report.json; comparing models means reading several of them side by side. This
checks that every file is a pytest-holistic report (a wrong file is a one-line UserError that names it and
the fix), builds the leaderboard (:mod:`.leaderboard`) and writes ``DIR/leaderboard.json`` and
``DIR/index.html``, each atomically so a reader never sees half a file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..errors import UserError
from .files import write_atomic
from .leaderboard import MEMORY_CAP_GB, build_leaderboard
from .payload import Report, read_payload

FIX = "pass the report.json written by a run (reports/<model>/<run id>/report.json, or that folder)"


def load_report(path: Path) -> Report:
    """One report.json (or the folder holding one) as data, checked so the page renders; else a UserError naming it."""
    return read_payload(path, FIX)


def merge(
    paths: Sequence[Path], out_dir: Path, *, memory_cap_gb: float = MEMORY_CAP_GB, comparison: bool | None = None
) -> list[Path]:
    """Load the reports, build their leaderboard, write leaderboard.json and index.html; the paths written.

    ``comparison``: show the page's sections that compare models even for one report (None: only for two or more).
    """
    if not paths:
        raise UserError(f"no report given; {FIX}")
    reports = [load_report(path) for path in paths]
    board = build_leaderboard(reports, memory_cap_gb=memory_cap_gb, paths=[str(path) for path in paths])
    from .html_report import render  # the page's templates load only when a page is written

    page = render(reports, board, comparison=comparison)
    try:
        return [
            write_atomic(out_dir / "leaderboard.json", json.dumps(board, indent=1, allow_nan=False) + "\n"),
            write_atomic(out_dir / "index.html", page),
        ]
    except OSError as error:
        why = getattr(error, "strerror", None) or error
        raise UserError(f"-o {out_dir}: cannot write there ({why}); choose a folder you can write to") from None
