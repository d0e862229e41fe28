"""``--holistic-export every-eval-ever``: the run's results as Every Eval Ever files, next to its report.json.

``<report dir>/<model>/<run id>/every_eval_ever/`` holds, per scenario run, ``<run>.json`` (the aggregate log) and
``<run>_samples.jsonl`` (its instance rows), the layout of the coalition's own converters. The aggregate file names
its rows' file by its name in that folder (the coalition's datastore path is only known once a user publishes
there), with the sha256 and row count its ``detailed_evaluation_results`` asks for. The conversion and what it
leaves out are described in :mod:`.every_eval_ever`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import metrics as registry
from ..writer_kinds import WriterContext
from .every_eval_ever import EvaluationLog, Lookup, convert
from .files import write_atomic
from .json_report import model_slug
from .payload import Report

if TYPE_CHECKING:
    from .aggregate import Results

FOLDER = "every_eval_ever"


def _line(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False)


def write_log(folder: Path, log: EvaluationLog) -> Path:
    """The rows' file first (its checksum goes into the aggregate), then the aggregate file; the aggregate's path."""
    samples = f"{log.stem}_samples.jsonl"
    text = "".join(_line(row) + "\n" for row in log.rows)
    write_atomic(folder / samples, text)
    aggregate = dict(log.aggregate)
    aggregate["detailed_evaluation_results"] = {
        "format": "jsonl",
        "file_path": samples,
        "hash_algorithm": "sha256",
        "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "total_rows": len(log.rows),
    }
    return write_atomic(folder / f"{log.stem}.json", json.dumps(aggregate, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


class EveryEvalEverWriter:
    """Writes the folder of Every Eval Ever files; the summary's ``report:`` line names the folder."""

    name = "every-eval-ever"

    def __init__(self, report_dir: Path, model_spec: str, run_id: str) -> None:
        self.folder = report_dir / model_slug(model_spec) / run_id / FOLDER
        self.problem: str | None = None

    def write(self, results: Results, payload: Report) -> Path:
        finders: dict[str, Lookup] = {run.key: run.find for run in results.runs}
        for log in convert(payload, finders, registry.find):
            write_log(self.folder, log)
        self.folder.mkdir(parents=True, exist_ok=True)  # a run without scenario runs still gets its (empty) folder
        return self.folder


def make(context: WriterContext) -> EveryEvalEverWriter:
    """The writer ``--holistic-export every-eval-ever`` asks for: an ``export_NAME`` module's ``make`` is its format's whole
    registration (``report/builtin_writers.py`` finds it by the module's name)."""
    return EveryEvalEverWriter(context.report_dir, context.model, context.run_id)
