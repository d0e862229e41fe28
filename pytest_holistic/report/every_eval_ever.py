"""A run's results in the EvalEval Coalition's "Every Eval Ever" schema (version 0.2.2), as plain data.

Every Eval Ever is a shared format for evaluation results that other tools and the coalition's datastore read. This
module only converts: the report payload (what ``report.json`` holds) becomes, per scenario run, one aggregate log
(``eval.schema.json``) and its instance-level rows (``instance_level_eval.schema.json``); writing the files is
:mod:`.export_every_eval_ever`'s job.

How the fields are filled, and where the schema asks for something a run does not know:

* One log per scenario run (``evaluation_name`` is the scenario), one ``evaluation_results`` entry per metric, its
  ``evaluation_result_id`` the metric's name; an instance row per (original instance, metric with a per-instance
  score), joined to its result by that id, as the schema asks ("one instance record per aggregate result").
* A metric is exported only when the schema can state it truthfully: ``lower_is_better`` and
  ``min_score``/``max_score`` come from the metric registry, so a score a test recorded under its own name (no
  registered bounds), a metric best at a target value (bias: neither higher nor lower is better), a scale without
  a finite bound (perplexity; 0.2.2 allows only JSON numbers, which have no infinity) and a number undefined on the
  run are left out, each named with its reason in ``eval_library.additional_details["metrics_not_exported"]``.
  Perturbation numbers keep their base metric's scale (``robustness.exact_match``); their deltas are left out.
* ``is_correct`` (required on every row) means the instance got the metric's best possible score.
* Rows cover the original instances only: a perturbed variant's scores feed the perturbation numbers, not the
  result a row must point to, and stay in ``report.json``.
* ``source_organization_name`` is ``"unknown"`` and ``evaluator_relationship`` is ``"other"``: who runs the plugin,
  and how they relate to the model's developer, is not something a run knows.
* ``evaluation_id`` is the run's identity (file stem, model, the report's run id), never the time of the export;
  ``retrieved_timestamp`` is when the report was finished, in Unix seconds, as the schema asks.
* Generation settings the plugin does not set (temperature, top-p) are left out rather than guessed.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..metrics.base import MetricInfo
from ..perturbations.naming import parse as parse_derived
from .aggregate import RESAMPLES
from .payload import InstanceRecord, MetricResult, Report, Run

SCHEMA_VERSION = "0.2.2"
LIBRARY = "pytest-holistic"
_SCALED = ("worst", "before", "after")  # perturbation statistics on their base metric's scale

Lookup = Callable[[str], MetricInfo | None]


@dataclass
class EvaluationLog:
    """One scenario run: its aggregate log and its instance rows (the writer adds the link to the rows' file)."""

    stem: str
    aggregate: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)


def _strings(values: Mapping[str, Any]) -> dict[str, str]:
    """The schema's ``additional_details``: strings only, None left out, anything else as JSON text."""
    return {key: value if isinstance(value, str) else json.dumps(value) for key, value in values.items() if value is not None}


def _epoch(iso: str | None) -> str:
    """An ISO 8601 time as Unix seconds (the schema's ``retrieved_timestamp``); now when the report has none."""
    moment = _dt.datetime.fromisoformat(iso) if iso else _dt.datetime.now(_dt.UTC)
    return str(int(moment.timestamp()))


def metric_scale(name: str, find: Lookup) -> MetricInfo | str:
    """The registry's description of ``name`` (a perturbation number's base metric), or why the schema cannot state it."""
    info = find(name)
    derived = parse_derived(name) if info is None else None
    if derived is not None and derived.base is not None and derived.statistic in _SCALED:
        info = find(derived.base)
    if info is None:
        return "no registered direction and bounds"
    if info.direction == "target":
        return f"best at a target value ({info.optimum}), which lower_is_better cannot state"
    if not all(math.isfinite(bound) for bound in info.bounds):
        return "a scale without a finite bound, which schema 0.2.2 cannot state in JSON"
    return info


def _best(info: MetricInfo) -> float:
    return info.bounds[1] if info.direction == "higher" else info.bounds[0]


def _uncertainty(result: MetricResult) -> dict[str, Any]:
    uncertainty: dict[str, Any] = {"num_samples": int(result["n"])}
    low, high = result.get("ci95") or (None, None)
    if low is not None and high is not None:
        uncertainty["confidence_interval"] = {"lower": low, "upper": high, "confidence_level": 0.95, "method": result["interval"]}
    if result.get("interval") == "bootstrap":
        uncertainty["num_bootstrap_samples"] = RESAMPLES
    if result.get("stderr") is not None:
        uncertainty["standard_error"] = {"value": result["stderr"], "method": "analytic"}
    return uncertainty


def _result(name: str, result: MetricResult, info: MetricInfo, scenario: str, source: dict[str, Any]) -> dict[str, Any]:
    low, high = info.bounds
    return {
        "evaluation_result_id": name,
        "evaluation_name": scenario,
        "source_data": source,
        "metric_config": {
            "metric_id": name,
            "metric_name": name,
            "lower_is_better": info.direction == "lower",
            "score_type": "continuous",
            "min_score": low,
            "max_score": high,
            "additional_details": _strings(
                {"family": result.get("family"), "kind": result.get("kind"), "citation": info.citation}
            ),
        },
        "score_details": {
            "score": result["value"],
            "details": _strings(
                {"min": result.get("min"), "max": result.get("max"), "dropped_resamples": result.get("dropped_resamples")}
            ),
            "uncertainty": _uncertainty(result),
        },
    }


def _source_data(run: Run, dataset: Mapping[str, Any], sample_ids: list[str]) -> dict[str, Any]:
    """A hub dataset as ``hf_dataset`` (repository, config, revision); a shipped or user file as ``other``."""
    details = _strings(
        {
            "run": run["key"],
            "source": run.get("source"),
            "config": dataset.get("config"),
            "revision": dataset.get("revision"),
            "sha256": dataset.get("sha256"),
            "instances_sha256": dataset.get("instances_sha256"),
        }
    )
    if dataset.get("kind") == "hf":
        return {
            "dataset_name": run["scenario"],
            "source_type": "hf_dataset",
            "hf_repo": str(dataset.get("name")),
            "hf_split": str(run.get("split")),
            "samples_number": len(sample_ids),
            "sample_ids": sample_ids,
            "additional_details": details,
        }
    return {"dataset_name": run["scenario"], "source_type": "other", "additional_details": details}


def _model_info(payload: Report) -> dict[str, Any]:
    model = payload["provenance"]["model"]
    identity = str(model["id"])
    info: dict[str, Any] = {"name": str(payload["model"]["name"]), "id": identity}
    if "/" in identity and not identity.startswith(("/", ".", "~")) and "://" not in identity:
        info["developer"] = identity.split("/", 1)[0]
    if model.get("backend"):
        info["inference_engine"] = {"name": str(model["backend"])}
    details = {key: model.get(key) for key in ("revision", "weights_fingerprint", "dtype", "device")}
    info["additional_details"] = _strings({**details, **_deployment(model.get("backend"))})
    return info


def _deployment(backend: object) -> dict[str, str]:
    """How the model was deployed and whether its weights are open, in the words schema 0.3.0 requires.

    Weights the transformers backend loaded in this process were deployed by whoever ran it, from weights they
    had; a served model's deployment and weights are the server's business, and a scripted stand-in is no model,
    so those say ``unknown`` rather than guess. (0.2.2 takes them as plain details.)
    """
    if backend == "transformers":
        return {"deployment_type": "self_deployed", "model_availability": "open_weights"}
    return {"deployment_type": "unknown", "model_availability": "unknown"}


def sample_hash(raw: str, reference: list[str]) -> str:
    """The coalition's cross-model join key: sha256 of the input and its references as compact, sorted JSON."""
    text = json.dumps({"raw": raw, "reference": reference}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _rows(record: InstanceRecord, scored: Mapping[str, MetricInfo], common: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per exported metric this original instance has a score for."""
    instance = record["instance"]
    references = instance.get("references") or []
    gold = [str(reference["text"]) for reference in references if reference.get("correct")]
    choices = [str(reference["text"]) for reference in references] if len(references) > len(gold) else None
    completion = record.get("completion")
    text = str(completion["text"]) if completion is not None else None
    execution = record.get("execution") or {}
    tokens_in, tokens_out, seconds = execution.get("tokens_in"), execution.get("tokens_out"), execution.get("seconds")
    shared: dict[str, Any] = {
        **common,
        "sample_id": str(record["instance_id"]),
        "sample_hash": sample_hash(str(instance["input"]), gold),
        "interaction_type": "single_turn",
        "input": {"raw": str(instance["input"]), "formatted": record.get("prompt"), "reference": gold, "choices": choices},
        "output": {"raw": [text] if text is not None else []},
        "error": record.get("error"),
        "metadata": _strings(
            {
                "nodeid": record["nodeid"],
                "outcome": record["outcome"],
                "split": instance.get("split"),
                "group": instance.get("group"),
            }
        ),
    }
    if isinstance(tokens_in, int) and isinstance(tokens_out, int):
        shared["token_usage"] = {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out}
    if isinstance(seconds, int | float) and math.isfinite(seconds) and seconds >= 0:
        shared["performance"] = {
            "latency_ms": seconds * 1000,
            "additional_details": _strings({"cached": execution.get("cached")}),
        }
    rows = []
    for name, info in scored.items():
        score = record["scores"].get(name)
        if not isinstance(score, int | float) or not math.isfinite(score):
            continue
        attribution = [
            {"turn_idx": 0, "source": "output.raw", "extracted_value": text, "extraction_method": name, "is_terminal": True}
        ]
        rows.append(
            {
                **shared,
                "evaluation_result_id": name,
                "answer_attribution": attribution if text is not None else [],
                "evaluation": {"score": score, "is_correct": score == _best(info)},
            }
        )
    return rows


def file_stem(key: str, taken: set[str]) -> str:
    """A file name for a run key (``test_mmlu.py::test_mmlu`` -> ``test_mmlu.py__test_mmlu``), unique in ``taken``."""
    base = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in key).strip("._") or "run"
    stem, number = base, 2
    while stem in taken:
        stem, number = f"{base}-{number}", number + 1
    taken.add(stem)
    return stem


def convert(payload: Report, finders: Mapping[str, Lookup], default: Lookup) -> list[EvaluationLog]:
    """Every scenario run of the report as a log; ``finders`` holds each run's metric lookup, by run key."""
    model_info = _model_info(payload)
    model_id = model_info["id"]
    datasets = {entry["run"]: entry for entry in payload["provenance"]["datasets"]}
    version = (payload["provenance"].get("packages") or {}).get(LIBRARY) or "unknown"
    logs: list[EvaluationLog] = []
    taken: set[str] = set()
    for run in payload["runs"]:
        find = finders.get(run["key"], default)
        stem = file_stem(run["key"], taken)
        evaluation_id = f"{stem}/{model_id.replace('/', '_')}/{payload['run_id']}"
        originals = [record for record in run["instances"] if record.get("perturbation") is None]
        source = _source_data(run, datasets.get(run["key"], {}), sorted({str(r["instance_id"]) for r in originals}))
        results, scored, left_out = [], {}, {}
        for name, result in run["metrics"].items():
            scale = metric_scale(name, find)
            if isinstance(scale, str) or result.get("value") is None:
                left_out[name] = scale if isinstance(scale, str) else "undefined on this run"
                continue
            results.append(_result(name, result, scale, run["scenario"], source))
            if result.get("kind") != "population":
                scored[name] = scale
        common = {"schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": model_id}
        common["evaluation_name"] = run["scenario"]
        rows = [row for record in originals for row in _rows(record, scored, common)]
        aggregate = {
            "schema_version": SCHEMA_VERSION,
            "evaluation_id": evaluation_id,
            "evaluation_timestamp": payload.get("started") or payload.get("finished"),
            "retrieved_timestamp": _epoch(payload.get("finished")),
            "source_metadata": {
                "source_name": LIBRARY,
                "source_type": "evaluation_run",
                "source_organization_name": "unknown",
                "evaluator_relationship": "other",
            },
            "model_info": model_info,
            "eval_library": {
                "name": LIBRARY,
                "version": str(version),
                "additional_details": _strings(
                    {
                        "run_id": payload["run_id"],
                        "report_schema_version": payload.get("schema_version"),
                        "metrics_not_exported": left_out,
                    }
                ),
            },
            "evaluation_results": [_with_generation(result, run) for result in results],
        }
        if aggregate["evaluation_timestamp"] is None:
            del aggregate["evaluation_timestamp"]
        logs.append(EvaluationLog(stem, aggregate, rows))
    return logs


def _with_generation(result: dict[str, Any], run: Run) -> dict[str, Any]:
    """The adapter's settings: ``max_tokens`` where it is one the schema accepts, the rest as details."""
    adapter = dict(run.get("adapter") or {})
    arguments: dict[str, Any] = {}
    if isinstance(adapter.get("max_tokens"), int) and adapter["max_tokens"] >= 1:
        arguments["max_tokens"] = adapter["max_tokens"]
    details = _strings({**adapter, "few_shot_ids": run.get("few_shot_ids")})
    return {**result, "generation_config": {"generation_args": arguments, "additional_details": details}}
