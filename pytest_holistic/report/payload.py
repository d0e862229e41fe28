"""The shape of a ``report.json`` payload, declared once, and its one reader, :func:`read_payload`.

``json_report.build_report`` writes a :class:`Report` and every reader (the page, the overview, the leaderboard,
the exports, merging, the baseline comparison) reads one, so a key renamed on one side fails mypy on the other
(``tests/unit/test_report_payload.py`` keeps the declared keys equal to those a real session writes).

Required keys are those every readable version has (:data:`.schema.OLDEST_READABLE` to :data:`SCHEMA_VERSION`) and
the reader checks (``schema``, ``schema_version``, ``model`` and ``runs``; a run's ``key`` and ``scenario``); the
rest are ``NotRequired``: this version writes them all, an older report may lack them, so readers ``.get`` them.
Values stay as JSON gives them: a number may be null where the schema allows it. (No ``from __future__ import
annotations`` here: Python 3.11 then counts every ``NotRequired`` key as required at run time.)
"""

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

# 2: per-run and per-record "scorers" replace "toxicity_scorer"; records name their run and perturbation.
# 3: "complete", "interrupted", "not_completed", "runs_without_records", "warnings", gate "status", worker "final";
#    runs' "replayed_from_cache" and "truncated"; metrics' "min"/"max"; groups' "worst"/"best"/"direction";
#    model "variant" (the dtype and device kind in the cache key); records' completion "cached"/"truncated_tokens";
#    the report lives in a folder per run (<model>/<run id>/report.json), with <model>/latest naming the newest.
# 4: perturbed variants: records' "perturbation" (the variant label) and instance "perturbation"/"contrasts"; runs'
#    "perturbations" (per preset: family, params, changed/unchanged counts, before/after/worst/delta per metric,
#    consistency, wer), "perturbation_skips"; family-level robustness/fairness/equivariance numbers in "metrics";
#    "counterexamples" on records of property tests; "perturbation_notes" (what the numbers left out and why).
# 5: a JSON Schema ships with the package (data/schema/report.schema.json); "finished"; metrics' "interval" (the method:
#    "bootstrap", or "wilson" for the mean of <= 500 values that are all 0/1); "comparison"; provenance's "model" (id,
#    revision, weights fingerprint, dtype, device), "datasets" (per run: name, revision, file hash, instances and their
#    hash), "seeds", "os", "cpu", "gpus"; the command has its secrets replaced by "***"; sources' "instances_sha256".
# 6: runs' "early_stop" (--holistic-stop-early: where the run stopped, or why it ran in full) and gates' "sequence" (the
#    confidence sequence's interval and decision after n of N, its level and method); runs' "label" (the name, with the
#    test function or node id when another run of the session has the same scenario: ``report.labels``).
# 7: runs' "helm_group" (the HELM run group whose leaderboard column averages the run with others: HELM Lite's tasks).
SCHEMA_VERSION = 7


class Reference(TypedDict):
    text: str
    correct: bool
    relevance: NotRequired[float]


class Instance(TypedDict, total=False):
    id: str
    input: str
    references: list[Reference]
    split: str
    group: str | float | bool | None
    tags: list[str]
    perturbation: str | None
    helm_id: str
    contrasts: list[dict[str, Any]]


class Completion(TypedDict, total=False):
    text: str
    gold: list[str]
    choices: list[str]
    predicted_index: int | None
    probability: float | None
    logprob: float | None
    choice_logprobs: list[float | None]
    tokens_in: int
    tokens_out: int
    seconds: float | None
    correct_indices: list[int]
    truncated_tokens: int
    cached: bool
    correct: bool | None
    choice_scores: list[float | None]
    ranking: list[int]
    num_bytes: int
    scored_tokens: int


class InstanceRecord(TypedDict, total=False):
    """One item's record (a run's ``instances``)."""

    nodeid: str
    run: str
    instance_id: str
    perturbation: str | None
    instance: Instance
    prompt: str | None
    completion: Completion | None
    scores: dict[str, float | None]
    scorers: dict[str, dict[str, str]]
    outcome: str
    skipped: list[str]
    error: str | None
    counterexample: dict[str, Any]
    execution: dict[str, Any]


class MetricResult(TypedDict, total=False):
    """One metric of a run: its value, 95% interval, count and which way is better."""

    family: str
    kind: str
    value: float | None
    ci95: list[float | None]
    interval: str
    n: int
    direction: str
    optimum: float | None
    stderr: float | None
    min: float | None
    max: float | None
    dropped_resamples: int


class GateSequence(TypedDict, total=False):
    """A gate's confidence sequence (``--holistic-stop-early``)."""

    stopped: bool
    n: int
    of: int
    ci: list[float | None]
    decision: str
    level: float
    method: str


class Gate(TypedDict, total=False):
    """A gate's verdict, at the top level and in its run."""

    status: str
    gate: str
    origin: str
    run: str
    scenario: str
    metric: str
    bound: str
    op: str
    threshold: float
    observed: float | None
    n: int
    ci95: list[float | None]
    passed: bool
    message: str
    sequence: GateSequence


class Perturbation(TypedDict, total=False):
    """One preset's numbers in a run: per metric, its before, after, worst and delta."""

    family: str
    params: dict[str, Any]
    variants: int
    source: str
    word_lists: dict[str, Any]
    changed: int
    flipped: int
    unchanged: int
    left_out: int
    metrics: dict[str, dict[str, MetricResult]]
    consistency: MetricResult
    wer: MetricResult


class GroupStats(TypedDict, total=False):
    n: int
    mean: float | None


class GroupBreakdown(TypedDict, total=False):
    """One metric across a run's groups: each group's mean, the worst, the best and the gap."""

    metric: str
    direction: str
    groups: dict[str, GroupStats]
    worst: str | None
    best: str | None
    gap: float | None


class EarlyStop(TypedDict, total=False):
    stopped: bool
    n: int
    of: int
    level: float
    method: str
    reason: str | None
    gates: dict[str, GateSequence]
    answered_past_stop: int
    not_computed: int


class Run(TypedDict):
    """One run (a test function's scenario): its settings, numbers, gates and records."""

    key: str
    scenario: str
    name: NotRequired[str]
    label: NotRequired[str]
    edition: NotRequired[str | None]
    helm_group: NotRequired[str]
    split: NotRequired[str]
    source: NotRequired[str]
    source_provenance: NotRequired[dict[str, Any]]
    adapter: NotRequired[dict[str, Any]]
    few_shot_ids: NotRequired[list[str]]
    requested_metrics: NotRequired[list[str]]
    n: NotRequired[int]
    not_completed: NotRequired[int]
    outcomes: NotRequired[dict[str, int]]
    replayed_from_cache: NotRequired[int]
    truncated: NotRequired[int]
    metrics: NotRequired[dict[str, MetricResult]]
    perturbations: NotRequired[dict[str, Perturbation]]
    perturbation_skips: NotRequired[list[str]]
    perturbation_notes: NotRequired[list[str]]
    groups: NotRequired[list[GroupBreakdown]]
    skipped: NotRequired[list[str]]
    scorers: NotRequired[dict[str, dict[str, str]]]
    gates: NotRequired[list[Gate]]
    early_stop: NotRequired[EarlyStop]
    instances: NotRequired[list[InstanceRecord]]


class Model(TypedDict):
    """The model as the run described it (only ``name`` when it never loaded)."""

    name: str
    backend: NotRequired[str]
    revision: NotRequired[str | None]
    variant: NotRequired[dict[str, str]]
    details: NotRequired[dict[str, Any]]


class Worker(TypedDict, total=False):
    """One process's counts, timings and device."""

    generation_requests: int
    loglikelihood_requests: int
    cache_hits: int
    batches: int
    model_seconds: float
    load_seconds: float
    batch_seconds: dict[str, Any]
    device: str | None
    cuda_visible_devices: str | None
    batch_size: int | None
    cache_problem: str | None
    peak_rss_mib: float | None
    peak_gpu_mib: float | None
    model_failure: str | None
    final: bool


class ModelProvenance(TypedDict, total=False):
    id: str
    backend: str | None
    revision: str | None
    weights_fingerprint: str | None
    dtype: str | None
    device: str | None


class Provenance(TypedDict, total=False):
    """Which weights, data, seeds, command, machine and packages the numbers belong to."""

    model_spec: str
    model: ModelProvenance
    datasets: list[dict[str, Any]]
    seeds: dict[str, Any]
    command: list[str]
    os: str
    os_release: str
    platform: str
    machine: str
    cpu: str | None
    cpu_count: int | None
    python: str
    python_implementation: str
    gpus: Any
    packages: dict[str, str | None]


class NotCompleted(TypedDict, total=False):
    nodeid: str
    run: str | None
    reason: str


class RunWithoutRecords(TypedDict, total=False):
    key: str
    scenario: str
    collected: int
    selected: int
    reason: str


class ModelTime(TypedDict, total=False):
    batches: int
    seconds_per_batch: dict[str, Any] | None


class ComparedBaseline(TypedDict):
    """The stored run a comparison is with (``compare.Baseline.describe``)."""

    path: str
    run_id: str
    model: str
    created: str | None
    complete: bool | None


class ComparedMean(TypedDict):
    """One side's mean of a compared metric, with a proportion's small-sample intervals (0/1 scores, few pairs)."""

    mean: float
    intervals: NotRequired[dict[str, list[float]]]


class McNemar(TypedDict):
    this_1_baseline_0: int
    this_0_baseline_1: int
    p_value: float


class BootstrapClusters(TypedDict):
    by: str
    count: int


class ComparedMetric(TypedDict):
    """One (variant label, metric) row of a compared scenario; a row that compares nothing (``missing``) has the first five."""

    metric: str
    perturbation: str | None
    direction: str
    n: int
    missing: str | None
    this: NotRequired[ComparedMean]
    baseline: NotRequired[ComparedMean]
    difference: NotRequired[float]
    ci95: NotRequired[list[float | None]]
    interval_method: NotRequired[str]
    clusters: NotRequired[BootstrapClusters]
    stderr: NotRequired[float | None]
    mde: NotRequired[float | None]
    mde_note: NotRequired[str | None]
    mcnemar: NotRequired[McNemar | None]
    verdict: NotRequired[str]
    unscored: NotRequired[int]


class MatchedInstances(TypedDict):
    matched: int
    added_count: int
    removed_count: int
    added: list[str]
    removed: list[str]


class ComparedScenario(TypedDict):
    """A run on both sides: how it was matched, which instances match up, and its rows."""

    label: str
    scenario: str
    key: str
    baseline_key: str
    matched_by: str
    instances: MatchedInstances
    metrics: list[ComparedMetric]


class UnpairedRun(TypedDict):
    """A run on one side only, with the per-instance metrics its originals recorded."""

    scenario: str
    key: str
    instances: int
    metrics: list[str]


class RegressionCheck(TypedDict):
    """A ``--holistic-fail-on-regression`` check's verdict, with its row's numbers (None where it has no row)."""

    nodeid: str
    scenario: str
    metric: str
    margin: float
    status: str
    message: str
    difference: float | None
    ci95: list[float | None] | None
    n: int | None
    verdict: str | None
    mde: float | None
    mde_note: str | None


class Comparison(TypedDict):
    """``comparison`` (``--holistic-baseline``): this run against the stored one, as this version writes it (no reader
    reads it back); ``regressions`` is added once the checks are judged."""

    baseline: ComparedBaseline
    methods: dict[str, str]
    scenarios: list[ComparedScenario]
    only_in_this_run: list[UnpairedRun]
    only_in_baseline: list[UnpairedRun]
    regressions: NotRequired[list[RegressionCheck]]


class NotCompared(TypedDict):
    """``comparison`` of a run that ended early: nothing paired, no check judged."""

    baseline: ComparedBaseline
    not_evaluated: str
    regressions: list[RegressionCheck]


class Report(TypedDict):
    """A whole ``report.json``."""

    schema: str
    schema_version: int
    created: NotRequired[str]
    started: NotRequired[str | None]
    finished: NotRequired[str]
    run_id: NotRequired[str]
    complete: NotRequired[bool]
    interrupted: NotRequired[str | None]
    not_completed: NotRequired[list[NotCompleted]]
    lost_workers: NotRequired[dict[str, str]]
    runs_without_records: NotRequired[list[RunWithoutRecords]]
    warnings: NotRequired[list[str]]
    model: Model
    provenance: NotRequired[Provenance]
    runs: list[Run]
    gates: NotRequired[list[Gate]]
    comparison: NotRequired[Comparison | NotCompared | None]
    workers: NotRequired[dict[str, Worker]]
    model_time: NotRequired[ModelTime]


def read_payload(source: Path | Mapping[str, Any], fix: str = "", name: str | None = None) -> Report:
    """A report.json (or the folder holding one), or a payload already in memory, checked once and typed.

    Anything else is a UserError naming the file (``name``, else the path; ``payload`` for data in memory), the
    problem and ``fix``: missing, unreadable, not a regular file, too large, not JSON, nested too deeply, not a
    report, written by a newer version, or not valid: a report of this version against its schema, an older one
    against the fields the readers use (:func:`.schema.reader_schema`). The first problem is named. What is
    returned is safe to render.
    """
    from ..errors import UserError
    from . import schema

    if isinstance(source, Mapping):
        data: Any = source
        name = name or "payload"
    else:
        path = source
        if path.is_dir() and (path / "report.json").exists():
            path = path / "report.json"
        name = name or str(path)
        raw = schema._read_regular(path, name, fix)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise UserError(f"{name}: cannot read it ({error}); {fix}") from None
        try:
            data = json.loads(
                text, parse_float=schema._finite_float, parse_int=schema._bounded_int, parse_constant=schema._not_json
            )
        except json.JSONDecodeError as error:
            raise UserError(f"{name}: not JSON ({error.msg} at line {error.lineno}); {fix}") from None
        except RecursionError:
            raise UserError(f"{name}: not a report (JSON nested deeper than this reader follows); {fix}") from None
        except ValueError as error:
            raise UserError(f"{name}: not JSON ({schema._printable(str(error))}); {fix}") from None
    if schema._too_deep(data, schema.MAX_DEPTH):
        raise UserError(f"{name}: not a report (JSON nested deeper than {schema.MAX_DEPTH} levels); {fix}")
    if not isinstance(data, Mapping) or data.get("schema") != schema.REPORT_SCHEMA or not isinstance(data.get("runs"), list):
        raise UserError(f'{name}: not a pytest-holistic report (no "schema": "{schema.REPORT_SCHEMA}" with "runs"); {fix}')
    version = data.get("schema_version")
    oldest = schema.OLDEST_READABLE
    if isinstance(version, bool) or not isinstance(version, int) or not oldest <= version <= SCHEMA_VERSION:
        raise UserError(
            f"{name}: report schema version {schema._printable(repr(version), 40)}, but this pytest-holistic reads versions "
            f"{oldest} to {SCHEMA_VERSION}; use the pytest-holistic that wrote it, or {fix}"
        )
    problems = schema._problems(data, schema.load_schema() if version == SCHEMA_VERSION else schema.reader_schema())
    if problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise UserError(f"{name}: not a valid report ({problems[0]}{more}); {fix}")
    return cast(Report, data)
