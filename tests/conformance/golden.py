"""Reading the committed goldens: what HELM's and fmeval's own code produced (see ``generate_goldens.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent / "golden"


def load(section: str) -> dict[str, Any]:
    """The golden file of ``section``: ``produced_by`` (versions), ``cases`` and whatever else the oracle wrote."""
    path = GOLDEN / f"{section}.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; run: python tests/conformance/generate_goldens.py --only {section}")
    return json.loads(path.read_text(encoding="utf-8"))


def files(section: str) -> Path:
    """The folder of auxiliary files (word lists in the references' formats) both sides of ``section`` read."""
    return GOLDEN / section


def cases(section: str) -> list[dict[str, Any]]:
    return load(section)["cases"]
