"""``--holistic-export inspect``: each scenario run as an Inspect AI evaluation log (its ``.json`` log format).

Inspect's log viewer (``inspect view``) and its Python API (``inspect_ai.log.read_eval_log``) read these files, so a
run's samples can be browsed and its numbers loaded beside Inspect's own evaluations. The files are plain JSON
written without importing Inspect (a heavy package the plugin does not depend on); the tests check them against
the JSON Schema of Inspect's ``EvalLog`` model and, where an Inspect installation is at hand, with its own reader.

``<report dir>/<model>/<run id>/inspect/<time>_<scenario>_<id>.json`` per scenario run (Inspect's "task"), named as
Inspect names its own logs, since its log listing (and so the viewer) passes over other names: the spec (task = scenario,
the dataset and its sample ids), the results (one score per metric: ``mean`` for a mean of per-instance scores,
the metric's own name for a population or efficiency number, with ``stderr`` and the 95% interval where known) and
one sample per original instance (input, the prompt and answer as messages, gold targets, per-instance scores).
Perturbed variants stay in report.json: Inspect has no place for a sample's variant. Nothing is guessed: fields a
run does not know (token limits, sampling settings) are left out, and a number undefined on the run is left out of
the results.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..writer_kinds import WriterContext
from .every_eval_ever import LIBRARY
from .files import write_atomic
from .json_report import model_slug
from .payload import InstanceRecord, MetricResult, Report

if TYPE_CHECKING:
    from .aggregate import Results

FOLDER = "inspect"
LOG_VERSION = 2  # Inspect's EvalLog format version
_MEANS = ("instance", "scored")  # kinds whose value is the mean of per-instance scores


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _status(payload: Report) -> str:
    if payload.get("interrupted"):
        return "cancelled"
    return "success" if payload.get("complete", True) else "error"


def _score(name: str, result: MetricResult) -> dict[str, Any]:
    """One metric as Inspect's ``EvalScore``: its value under ``mean`` (or its own name), then stderr and the interval."""
    key = "mean" if result.get("kind") in _MEANS else name
    numbers = {key: result["value"], "stderr": result.get("stderr")}
    low, high = result.get("ci95") or (None, None)
    numbers.update(ci95_low=low, ci95_high=high)
    metrics = {label: {"name": label, "value": value} for label, value in numbers.items() if _finite(value)}
    details = {"family": result.get("family"), "kind": result.get("kind"), "direction": result.get("direction")}
    return {"name": name, "scorer": name, "scored_samples": result.get("n"), "metrics": metrics, "metadata": details}


def _sample(record: InstanceRecord, model: str) -> dict[str, Any]:
    instance = record["instance"]
    references = instance.get("references") or []
    gold = [str(reference["text"]) for reference in references if reference.get("correct")]
    completion = record.get("completion")
    text = str(completion["text"]) if completion is not None else None
    execution = record.get("execution") or {}
    sample: dict[str, Any] = {
        "id": str(record["instance_id"]),
        "epoch": 1,
        "input": str(instance["input"]),
        "target": gold,
        "metadata": {key: value for key, value in (("nodeid", record["nodeid"]), ("outcome", record["outcome"]),
                                                   ("split", instance.get("split")), ("group", instance.get("group"))) if value is not None},
    }  # fmt: skip
    if len(references) > len(gold):
        sample["choices"] = [str(reference["text"]) for reference in references]
    messages = [{"role": "user", "content": str(record.get("prompt") or instance["input"])}]
    output: dict[str, Any] = {"model": model, "choices": []}
    if text is not None:
        messages.append({"role": "assistant", "content": text})
        output["choices"] = [{"message": messages[-1], "stop_reason": "unknown"}]
    tokens_in, tokens_out = execution.get("tokens_in"), execution.get("tokens_out")
    if isinstance(tokens_in, int) and isinstance(tokens_out, int):
        output["usage"] = {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out}
    if _finite(execution.get("seconds")):
        sample["total_time"] = execution["seconds"]
    sample.update(messages=messages, output=output)
    answer = {"answer": text} if text is not None else {}
    sample["scores"] = {name: {"value": value, **answer} for name, value in record["scores"].items() if _finite(value)}
    if record.get("error"):
        sample["error"] = {"message": str(record["error"]), "traceback": "", "traceback_ansi": ""}
    return sample


def _file_stem(created: str | None, scenario: str, task_id: str) -> str:
    """Inspect's ``{time}_{task}_{id}`` (time as ``2026-01-31T12-00-00+00-00``; no ``_`` inside the task's part)."""
    moment = _dt.datetime.fromisoformat(created) if created else _dt.datetime.now(_dt.UTC)
    task = "".join(ch if ch.isalnum() or ch in ".-" else "-" for ch in scenario) or "task"
    return f"{moment.isoformat(timespec='seconds').replace(':', '-')}_{task}_{task_id}"


def convert(payload: Report) -> list[tuple[str, dict[str, Any]]]:
    """Every scenario run of the report as ``(file stem, Inspect log)``; a run's task id is a digest of its key."""
    model = str(payload["provenance"]["model"]["id"])
    version = (payload["provenance"].get("packages") or {}).get(LIBRARY) or "unknown"
    created = payload.get("started") or payload.get("finished")
    logs: list[tuple[str, dict[str, Any]]] = []
    for run in payload["runs"]:
        task_id = hashlib.sha256(f"{payload['run_id']}\0{run['key']}".encode()).hexdigest()[:22]
        originals = [record for record in run["instances"] if record.get("perturbation") is None]
        sample_ids = [str(record["instance_id"]) for record in originals]
        spec = {
            "task": run["scenario"],
            "task_id": task_id,
            "run_id": payload["run_id"],
            "created": created,
            "dataset": {"name": run["scenario"], "samples": len(sample_ids), "sample_ids": sample_ids},
            "model": model,
            "config": {},
            "packages": {LIBRARY: str(version)},
            "metadata": {
                "run": run["key"],
                "split": run.get("split"),
                "source": run.get("source"),
                "adapter": run.get("adapter"),
            },
        }
        scores = [_score(name, result) for name, result in run["metrics"].items() if _finite(result.get("value"))]
        log = {
            "version": LOG_VERSION,
            "status": _status(payload),
            "eval": spec,
            "results": {
                "total_samples": len(originals),
                "completed_samples": sum(record.get("completion") is not None for record in originals),
                "scores": scores,
            },
            "stats": {"started_at": created, "completed_at": payload.get("finished")},
            "samples": [_sample(record, model) for record in originals],
        }
        logs.append((_file_stem(created, run["scenario"], task_id), log))
    return logs


class InspectWriter:
    """Writes one Inspect log per scenario run; the summary's ``report:`` line names their folder."""

    name = "inspect"

    def __init__(self, report_dir: Path, model_spec: str, run_id: str) -> None:
        self.folder = report_dir / model_slug(model_spec) / run_id / FOLDER
        self.problem: str | None = None

    def write(self, results: Results, payload: Report) -> Path:
        for stem, log in convert(payload):
            write_atomic(self.folder / f"{stem}.json", json.dumps(log, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder


def make(context: WriterContext) -> InspectWriter:
    """The writer ``--holistic-export inspect`` asks for: an ``export_NAME`` module's ``make`` is its format's whole
    registration (``report/builtin_writers.py`` finds it by the module's name)."""
    return InspectWriter(context.report_dir, context.model, context.run_id)
