"""The oracle side's plumbing: read the inputs, call the reference, write the cases (runs in the oracle venv only).

An oracle script is ``main(inputs: dict, files: Path) -> dict`` with a ``"cases"`` list, passed to ``run``.
It imports HELM or fmeval and nothing of the project's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def run(main: Callable[[dict[str, Any], Path], dict[str, Any]]) -> None:
    given, produced, files = (Path(arg) for arg in sys.argv[1:4])
    output = main(json.loads(given.read_text(encoding="utf-8")), files)
    if not isinstance(output.get("cases"), list) or not output["cases"]:
        raise SystemExit(f"{sys.argv[0]}: the oracle produced no cases")
    produced.write_text(json.dumps(output, ensure_ascii=False), encoding="utf-8")
