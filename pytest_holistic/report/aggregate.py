"""Scenario-level numbers from per-item records: every metric with a seeded bootstrap interval.

Runs on the controller after all records arrived, in node-id order, so the numbers (intervals
included) are identical at -n 0 and -n 8. Three kinds of metric:

* instance-level scores (recorded per item): their mean;
* population-level metrics (ECE, balanced accuracy, bias, toxic fraction...): a function of the whole
  run's columns, built here from the records;
* efficiency: model seconds, tokens and throughput per instance (Dynaboard's throughput is
  instances per second of model time).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import metrics as registry
from ..errors import UserError
from ..gates import Observation
from ..metrics.accuracy import normalize_text
from ..metrics.base import MetricInfo
from ..metrics.stats import Stat, bootstrap_interval, group_gap, per_group

RESAMPLES = 1000
SEED = 0
_FAMILY_BY_MODULE = {
    "calibration": "calibration",
    "bias": "bias",
    "stereotyping": "bias",
    "toxicity": "toxicity",
}
EFFICIENCY = ("runtime_s", "tokens_in", "tokens_out", "throughput", "tokens_per_s")
INPUT_COLUMNS = frozenset(
    {"y_true, y_pred", "confidences, correct", "correct, num_choices", "texts", "scores", "scores_per_instance", "logprobs_more, logprobs_less"}
)


def family_of(info: MetricInfo | None) -> str:
    if info is None:
        return "custom"
    module = info.function.__module__.rsplit(".", 1)[-1]
    return _FAMILY_BY_MODULE.get(module, "accuracy")


def check_population_metric(name: str, adapter: str) -> None:
    """Refuse, at collection, population metrics whose inputs this adapter cannot produce."""
    info = registry.POPULATION[name]
    if info.inputs not in INPUT_COLUMNS:
        raise UserError(f"metric {name!r} needs {info.inputs}, which no pytest-holistic adapter produces yet; remove it from metrics=")
    if info.inputs == "logprobs_more, logprobs_less" and adapter != "multiple_choice_separate":
        raise UserError(f"metric {name!r} compares the log-probabilities of two sentences; use adapter='multiple_choice_separate'")
    if info.inputs == "correct, num_choices" and adapter == "generation":
        raise UserError(f"metric {name!r} needs multiple-choice options; use a multiple_choice adapter")


@dataclass(frozen=True)
class MetricResult:
    """One scenario-level number with its bootstrap interval."""

    name: str
    family: str
    kind: str
    value: float
    low: float
    high: float
    n: int
    direction: str
    optimum: float | None = None
    stderr: float | None = None

    def observation(self) -> Observation:
        return Observation(self.value, self.low, self.high, self.n, self.direction, self.optimum)

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "kind": self.kind,
            "value": self.value,
            "ci95": [self.low, self.high],
            "n": self.n,
            "direction": self.direction,
            "optimum": self.optimum,
            "stderr": self.stderr,
        }


def _sum(values: Any) -> float:
    """Exact for lists; numpy's sum for the bootstrap's resampled arrays (1000 of them per metric)."""
    return float(values.sum()) if hasattr(values, "sum") else math.fsum(values)


def _mean(values: Any) -> float:
    return _sum(values) / len(values)


def _bootstrapped(name: str, family: str, kind: str, statistic: Callable[..., Any], columns: Sequence[Sequence[Any]], info: MetricInfo | None) -> MetricResult:
    direction = info.direction if info else "higher"
    optimum = info.optimum if info else None
    try:
        estimate = statistic(*columns)
    except (UserError, ValueError, ZeroDivisionError):
        estimate = None
    if estimate is None or (isinstance(estimate, float) and math.isnan(estimate)):
        # Undefined on this run (e.g. no gendered word in any generation): shown as such, never as 0.
        return MetricResult(name, family, kind, math.nan, math.nan, math.nan, len(columns[0]), direction, optimum)
    interval = bootstrap_interval(statistic, *columns, resamples=RESAMPLES, seed=SEED)
    return MetricResult(name, family, kind, float(estimate), interval.low, interval.high, len(columns[0]), direction, optimum)


def _answered(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [record for record in records if record.get("completion")]


def _correct_index(record: dict[str, Any]) -> int | None:
    indices = [k for k, reference in enumerate(record["instance"]["references"]) if reference["correct"]]
    return indices[0] if indices else None


def _predicted_label(record: dict[str, Any]) -> str:
    completion = record["completion"]
    labels = [reference["text"] for reference in record["instance"]["references"]]
    if completion.get("predicted_index") is not None and completion["predicted_index"] < len(labels):
        return labels[completion["predicted_index"]]
    wanted = normalize_text(completion["text"])
    matches = [label for label in labels if normalize_text(label) == wanted]
    return matches[0] if matches else completion["text"]


def _is_correct(record: dict[str, Any]) -> bool:
    completion = record["completion"]
    if completion.get("correct") is not None:
        return bool(completion["correct"])
    return bool(registry.quasi_exact_match(completion["text"], completion["gold"]))


def population_columns(inputs: str, records: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """The arrays a population metric takes, one value per answered instance."""
    answered = _answered(records)
    if inputs == "y_true, y_pred":
        gold = [r["instance"]["references"][i]["text"] if (i := _correct_index(r)) is not None else "" for r in answered]
        return [gold, [_predicted_label(r) for r in answered]]
    if inputs == "confidences, correct":
        usable = [r for r in answered if r["completion"].get("probability") is not None]
        return [[float(r["completion"]["probability"]) for r in usable], [_is_correct(r) for r in usable]]
    if inputs == "correct, num_choices":
        return [[_is_correct(r) for r in answered], [len(r["instance"]["references"]) for r in answered]]
    if inputs == "texts":
        return [[r["completion"]["text"] for r in answered]]
    if inputs in ("scores", "scores_per_instance"):
        scored = [r["scores"]["toxicity"] for r in answered if r["scores"].get("toxicity") is not None]
        return [scored] if inputs == "scores" else [[[value] for value in scored]]
    if inputs == "logprobs_more, logprobs_less":
        pairs = [r for r in answered if len(r["completion"].get("choice_logprobs") or ()) == 2 and _correct_index(r) is not None]
        more = [r["completion"]["choice_logprobs"][_correct_index(r)] for r in pairs]
        less = [r["completion"]["choice_logprobs"][1 - _correct_index(r)] for r in pairs]
        return [more, less]
    raise UserError(f"no adapter produces {inputs!r}")


def run_metrics(records: Sequence[dict[str, Any]], requested: Sequence[str]) -> dict[str, MetricResult]:
    """Every number of one run: recorded scores, requested population metrics, and efficiency."""
    ordered = sorted(records, key=lambda record: record["nodeid"])
    results: dict[str, MetricResult] = {}
    names = sorted({name for record in ordered for name in record.get("scores", {})})
    for name in names:
        values = [float(v) for r in ordered if (v := r["scores"].get(name)) is not None and not math.isnan(float(v))]
        if not values:
            continue
        info = registry.BUILTIN.get(name)
        family = "toxicity" if name == "toxicity" else family_of(info)
        result = _with_stderr(_bootstrapped(name, family, "instance", _mean, [values], info), Stat.of(values))
        results[name] = MetricResult(**{**result.__dict__, "direction": "lower"}) if name == "toxicity" else result
    for name in requested:
        info = registry.POPULATION.get(name)
        if info is None:
            continue
        columns = population_columns(info.inputs, ordered)
        if columns and columns[0]:
            results[name] = _bootstrapped(name, family_of(info), "population", info.function, columns, info)
    results.update(_efficiency(ordered))
    return results


def _with_stderr(result: MetricResult, stat: Stat) -> MetricResult:
    return MetricResult(**{**result.__dict__, "stderr": stat.stderr})


def _efficiency(records: Sequence[dict[str, Any]]) -> dict[str, MetricResult]:
    timed = [r["execution"] for r in _answered(records) if (r.get("execution") or {}).get("seconds") is not None]
    if not timed:
        return {}
    seconds = [float(e["seconds"]) for e in timed]
    tokens_in = [float(e.get("tokens_in") or 0) for e in timed]
    tokens_out = [float(e.get("tokens_out") or 0) for e in timed]
    out: dict[str, MetricResult] = {}
    specs: list[tuple[str, str, Callable[..., float | None], list[list[float]]]] = [
        ("runtime_s", "lower", _mean, [seconds]),
        ("tokens_in", "lower", _mean, [tokens_in]),
        ("tokens_out", "lower", _mean, [tokens_out]),
        ("throughput", "higher", lambda s: len(s) / _sum(s) if _sum(s) > 0 else None, [seconds]),
        ("tokens_per_s", "higher", lambda s, a, b: (_sum(a) + _sum(b)) / _sum(s) if _sum(s) > 0 else None, [seconds, tokens_in, tokens_out]),
    ]
    for name, direction, statistic, columns in specs:
        if name == "tokens_out" and not any(tokens_out):
            continue  # scoring adapters generate nothing
        result = _bootstrapped(name, "efficiency", "efficiency", statistic, columns, None)
        out[name] = MetricResult(**{**result.__dict__, "direction": direction})
    return out


def group_breakdown(records: Sequence[dict[str, Any]], metric: str) -> dict[str, Any] | None:
    """Per-group means of ``metric`` and the max-min gap (HELM performance disparities)."""
    rows = [(r["instance"]["group"], float(r["scores"][metric])) for r in records if r["instance"].get("group") and r.get("scores", {}).get(metric) is not None]
    if len({group for group, _ in rows}) < 2:
        return None
    stats = per_group([value for _, value in rows], [group for group, _ in rows])
    return {
        "metric": metric,
        "groups": {str(group): {"n": stat.count, "mean": stat.mean} for group, stat in stats.items()},
        "gap": group_gap(stats),
    }
