"""The plugin's output files written one by one, each whatever happened to the others.

report.json, report.html and the ``--holistic-junit`` file are independent: a disk that fills up under one
writer, or a fault in one renderer, must not cost the others, and each failure is one line in the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import error_line

if TYPE_CHECKING:
    from .aggregate import Results
    from .payload import Report


class Writer(Protocol):
    """One output file; ``problem`` is a one-line note when it had to be written somewhere else."""

    name: str
    problem: str | None

    def write(self, results: Results, payload: Report) -> Path: ...


def _why(error: BaseException) -> str:
    """An error in a few words: the system's reason for an OSError (and its file), else its type and first line."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    return error_line(error, typed=True)


def write_outputs(writers: Sequence[Writer], results: Results, payload: Report) -> list[Path]:
    """Every writer's file, in order; a writer that fails gets its one-line ``problem`` and the next one still runs."""
    written = []
    for writer in writers:
        try:
            written.append(writer.write(results, payload))
        except Exception as error:  # noqa: BLE001 - any writer's failure is reported, never allowed to stop the next
            writer.problem = f"could not write the {writer.name} report ({_why(error)})"
    return written
