"""Reading the word lists and maps in ``pytest_holistic/data/perturbations``: tab-separated rows, ``#`` comments.

Each file's header says where its facts come from. Tables are read once per process (they are immutable
tuples, so sharing them is safe) and only when a perturbation that needs them runs.
"""

from __future__ import annotations

import functools
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data" / "perturbations"


@functools.cache
def rows(name: str) -> tuple[tuple[str, ...], ...]:
    """The rows of ``data/perturbations/<name>``: tab-separated fields, blank and ``#`` lines skipped."""
    text = (DATA / name).read_text(encoding="utf-8")
    return tuple(
        tuple(field.strip() for field in line.split("\t"))
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )
