"""Several runs, one leaderboard: HELM's mean win rate and Dynaboard's Dynascore over report.json payloads.

No single number ranks language models, so the leaderboard keeps every (scenario, metric) cell and adds two
aggregates that say how they were made.

Mean win rate (HELM, Liang et al. 2022; formula from stanford-crfm/helm
``src/helm/benchmark/presentation/summarize.py``, ``compute_aggregate_row_win_rates``): per column, a model's
win rate is the share of the *other* models with a value there that it beats, in the column's direction;
its mean win rate is the mean over the columns where it has one (``None`` where it has none), taken with
``statistics.mean`` as HELM takes it. Columns with fewer than two values are skipped. A tie is worth half a
win, as in HELM 0.5.16 (equal values share the wins between them), so the order of the reports changes
nothing; ``tests/conformance/test_helm_metrics.py`` checks the rates against HELM's own function. Two
extensions, outside what HELM's tables hold: values within ``TIE_REL``/``TIE_ABS`` of each other count as
tied (HELM ties only equal floats), and a "target" column (e.g. stereotyping, best at 0.5) ranks by distance
to its optimum (HELM's columns are only higher- or lower-is-better). NaN counts as missing.

Dynascore (Dynaboard, Ma et al. 2021, "Dynaboard: An Evaluation-As-A-Service Platform for Holistic
Next-Generation Benchmarking", sections 3-4, Eq. 1-2, footnote 10):

* every metric is made a *good* (more is better); memory becomes ``cap - used`` (cap 16 GB by default);
* models are sorted by performance, most accurate first; for each neighbouring pair whose performance
  differs by more than epsilon = 1e-4 (performance on a 0-1 scale), MRS(M) = |dM / dperf|; AMRS(M) is the
  mean of these, and AMRS(perf) = 1;
* Dynascore(x) = sum over M of w_M * M(x) / AMRS(M), with default weights w_perf = 0.5 and 0.5 / (m - 1) for
  each of the other m - 1 metrics; user weights are normalised to sum 1.

AMRS is undefined when no pair survives the epsilon test (all models as accurate) or is 0 (all models equal
on M along the pairs): such a metric cannot be converted into performance units and is left out of the
score, with the weights normalised over the metrics that remain. Scores are comparable only within one
scenario, since each has its own AMRS.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .labels import run_labels
from .payload import MetricResult, Report, Run, RunWithoutRecords, Worker

SCHEMA = "pytest-holistic/leaderboard"
SCHEMA_VERSION = 1
DYNA_METRICS = ("perf", "throughput", "memory", "fairness", "robustness")
EPSILON = 1e-4
"""Dynaboard's threshold on a performance difference (footnote 10), for performance as a 0-1 fraction."""
MEMORY_CAP_GB = 16.0
MIB_PER_GB = 1024.0
MEMORY_RESOLUTION_GB = 0.1
"""Peak memory is compared to 0.1 GB: a process's peak moves by megabytes between runs of the same model, and a
difference that small would otherwise set memory's exchange rate against performance (Dynaboard reports GB)."""
"""Reports record MiB; the leaderboard's GB are binary (GiB), as memory sizes usually are."""
MAIN = "main"
TIE_REL = 1e-9
TIE_ABS = 1e-12
"""Values this close count as tied: a distance to a target computed two ways differs in the last bits."""


# --- mean win rate -------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    """A finite float, or None for anything else (missing, null, NaN, text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def badness(value: float, direction: str, optimum: float | None = None) -> float | None:
    """A number where smaller is better, or None when the direction says nothing (unknown, or target without optimum)."""
    if direction == "higher":
        return -value
    if direction == "lower":
        return value
    if direction == "target" and optimum is not None:
        return abs(value - optimum)
    return None


def _tied(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TIE_REL, abs_tol=TIE_ABS)


def column_win_rates(values: Mapping[str, Any], direction: str, optimum: float | None = None) -> dict[str, float]:
    """Each model's share of the other valid models it beats in one column (ties half); empty below two values."""
    scored: dict[str, float] = {}
    for model, value in values.items():
        number = _number(value)
        bad = None if number is None else badness(number, direction, optimum)
        if bad is not None:
            scored[model] = bad
    if len(scored) < 2:
        return {}
    others = len(scored) - 1
    rates = {}
    for model, mine in scored.items():
        credit = 0.0
        for other, theirs in scored.items():
            if other == model:
                continue
            credit += 0.5 if _tied(mine, theirs) else float(mine < theirs)
        rates[model] = credit / others
    return rates


def mean_win_rates(
    table: Mapping[str, Mapping[str, Any]],
    directions: Mapping[str, str | None],
    optima: Mapping[str, float | None] | None = None,
) -> dict[str, float | None]:
    """HELM's mean win rate of each model (row of ``table``) over the columns named in ``directions``.

    ``table[model][column]`` is a value or None/absent; ``directions[column]`` is "higher", "lower" or "target"
    (with ``optima[column]``); a column with no usable direction is skipped, as HELM skips those without one.
    """
    optima = optima or {}
    totals: dict[str, list[float]] = {model: [] for model in table}
    for column, direction in directions.items():
        if direction is None:
            continue
        values = {model: row.get(column) for model, row in table.items()}
        for model, rate in column_win_rates(values, direction, _number(optima.get(column))).items():
            totals[model].append(rate)
    return {model: (statistics.mean(rates) if rates else None) for model, rates in totals.items()}


# --- Dynascore -------------------------------------------------------------------------------------------


def default_weights(metrics: Sequence[str]) -> dict[str, float]:
    """Dynaboard's defaults: half the weight on performance, the other half shared by the other metrics."""
    if "perf" not in metrics:
        raise ValueError("a Dynascore needs the 'perf' metric")
    others = [metric for metric in metrics if metric != "perf"]
    weights = {metric: 0.5 / len(others) for metric in others}
    return {"perf": 0.5 if others else 1.0, **weights}


def normalise_weights(weights: Mapping[str, float], metrics: Sequence[str]) -> dict[str, float]:
    """The weights of ``metrics`` scaled to sum 1 (Dynaboard's z_M); negative or non-finite weights are refused."""
    chosen = {metric: float(weights.get(metric, 0.0)) for metric in metrics}
    if any(not math.isfinite(weight) or weight < 0 for weight in chosen.values()):
        raise ValueError(f"Dynascore weights must be finite and non-negative, got {chosen}")
    total = sum(chosen.values())
    if total <= 0:
        raise ValueError(f"Dynascore weights of {list(metrics)} sum to 0; give at least one a positive weight")
    return {metric: weight / total for metric, weight in chosen.items()}


def _by_performance(goods: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Models from most to least accurate; equal performance by name, so the result does not depend on input order."""
    return sorted(goods, key=lambda model: (-goods[model]["perf"], model))


def marginal_rates(goods: Mapping[str, Mapping[str, float]], metric: str, epsilon: float = EPSILON) -> list[float]:
    """Eq. 1: |dM / dperf| between neighbours in performance order, skipping pairs whose perf gap is not above epsilon.

    A gap equal to epsilon (up to float noise) is skipped too: Table 2 rounds perf to 0.01 points, so its shown
    gap of exactly epsilon (hate speech, T5 76.59 vs BERT 76.58) stands for a smaller true one, and only
    skipping it reproduces the published ranking.
    """
    order = _by_performance(goods)
    rates = []
    for better, worse in itertools.pairwise(order):
        gap = goods[better]["perf"] - goods[worse]["perf"]
        if gap > epsilon and not math.isclose(gap, epsilon, rel_tol=TIE_REL):
            rates.append(abs((goods[better][metric] - goods[worse][metric]) / gap))
    return rates


def amrs(goods: Mapping[str, Mapping[str, float]], metric: str, epsilon: float = EPSILON) -> float | None:
    """Average marginal rate of substitution of ``metric`` for performance; None where undefined or 0."""
    if metric == "perf":
        return 1.0
    rates = marginal_rates(goods, metric, epsilon)
    if not rates:
        return None
    mean = sum(rates) / len(rates)
    return mean if mean > 0 else None


def scores(
    goods: Mapping[str, Mapping[str, float]], rates: Mapping[str, float | None], weights: Mapping[str, float]
) -> dict[str, float]:
    """Eq. 2 for given AMRS values and weights: sum of z_M * M(x) / AMRS(M) over the metrics with an AMRS.

    The weights are normalised over those metrics, so this is what a page recomputes when a user moves a slider.
    """
    usable = {metric: rate for metric, rate in rates.items() if rate}
    z = normalise_weights(weights, list(usable))
    return {model: sum(z[metric] * values[metric] / rate for metric, rate in usable.items()) for model, values in goods.items()}


@dataclass(frozen=True)
class Dynascore:
    """One scenario's Dynascore: the exchange rates, the weights used, and each model's score and rank."""

    amrs: dict[str, float | None]
    weights: dict[str, float]
    scores: dict[str, float]
    ranking: list[str]


def dynascore(
    goods: Mapping[str, Mapping[str, float]], weights: Mapping[str, float] | None = None, epsilon: float = EPSILON
) -> Dynascore:
    """Dynascores of models whose goods all name the same metrics, "perf" (a 0-1 fraction) among them."""
    if not goods:
        return Dynascore({}, {}, {}, [])
    metrics = list(next(iter(goods.values())))
    if any(set(values) != set(metrics) for values in goods.values()):
        raise ValueError("every model's goods must name the same metrics")
    rates = {metric: amrs(goods, metric, epsilon) for metric in metrics}
    usable = [metric for metric in metrics if rates[metric]]
    z = normalise_weights(default_weights(metrics) if weights is None else weights, usable)
    result = scores(goods, rates, z)
    ranking = sorted(result, key=lambda model: (-result[model], model))
    return Dynascore(rates, z, result, ranking)


# --- from reports ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    """One run of one report as the leaderboard reads it."""

    scenario: str
    main: str | None
    metrics: Mapping[str, MetricResult]


def model_names(reports: Sequence[Report]) -> list[str]:
    """Each report's model name; where two reports share one, both get their run id (as the HTML page names them)."""
    names = [str((report.get("model") or {}).get("name") or "model") for report in reports]
    labelled = [
        f"{name} ({report.get('run_id')})" if names.count(name) > 1 else name for name, report in zip(names, reports, strict=True)
    ]
    seen: dict[str, int] = {}
    unique = []
    for label in labelled:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return unique


def _identity(entry: Run | RunWithoutRecords, name: str | None = None) -> tuple[str, str]:
    """A report entry's (key, scenario), for ``report.labels``; older or hand-made entries may lack either. ``name``:
    a run's name, which stands in for a missing scenario (an entry of ``runs_without_records`` has none)."""
    scenario = str(entry.get("scenario") or name or entry.get("key"))
    return str(entry.get("key") or scenario), scenario


def _run_identity(run: Run) -> tuple[str, str]:
    return _identity(run, run.get("name"))


def run_columns(reports: Sequence[Report]) -> list[list[str]]:
    """Per report, the label of each of its runs: the row (leaderboard) or section (page) the run belongs to.

    A scenario that no report ran twice keeps its name, so one model's run lines up with another's whatever their
    test functions are called. A scenario that some report ran twice is labelled by ``report.labels`` over every
    report's runs of it: two runs of one report never share a column, and the same test function of two models'
    reports shares one. The name carries the run's edition (``boolq [offline: 2 of HELM's 5 in-context examples]``),
    so a run with fewer examples than HELM's never shares a column with one that has HELM's.
    """
    clashing: set[str] = set()
    for report in reports:
        keys: dict[str, set[str]] = {}
        entries = (*map(_run_identity, report.get("runs") or ()), *map(_identity, report.get("runs_without_records") or ()))
        for key, scenario in entries:
            keys.setdefault(scenario, set()).add(key)
        clashing.update(scenario for scenario, found in keys.items() if len(found) > 1)
    identities = (identity for report in reports for identity in map(_run_identity, report.get("runs") or ()))
    every = (identity for identity in identities if identity[1] in clashing)
    labels = run_labels(every)
    columns = []
    for report in reports:
        seen: dict[str, int] = {}
        named = []
        for run in report.get("runs") or ():
            key, scenario = _run_identity(run)
            label = labels.of(key, scenario, str(run.get("name") or scenario))
            seen[label] = seen.get(label, 0) + 1  # one key twice (a hand-made report): still two columns
            named.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
        columns.append(named)
    return columns


def _runs(report: Report, labels: Sequence[str]) -> list[_Run]:
    """The report's runs under their labels (``run_columns``), each with its main metric and its numbers."""
    runs = []
    for run, label in zip(report.get("runs") or (), labels, strict=True):
        requested = run.get("requested_metrics") or []
        metrics = run.get("metrics")
        runs.append(_Run(label, str(requested[0]) if requested else None, metrics if isinstance(metrics, Mapping) else {}))
    return runs


HELM = "helm"
"""The win-rate group over HELM's run groups (``helm_groups``): HELM Lite's and Classic's own "Mean win rate"."""


def _helm_value(run: Run, metric: str) -> float | None:
    """A run's number as HELM's table counts it: a per-group run (one HELM run per MMLU subject) gives the mean of
    its groups' means, as HELM averages its runs; any other run its own value."""
    if (run.get("adapter") or {}).get("per_group"):
        for breakdown in run.get("groups") or ():
            if isinstance(breakdown, Mapping) and breakdown.get("metric") == metric:
                means = [_number((group or {}).get("mean")) for group in (breakdown.get("groups") or {}).values()]
                known = [mean for mean in means if mean is not None]
                return statistics.mean(known) if known else None
    entry = (run.get("metrics") or {}).get(metric)
    return _number(entry.get("value")) if isinstance(entry, Mapping) else None


def helm_groups(reports: Sequence[Report], names: Sequence[str]) -> dict[str, Any]:
    """Each model's value per HELM run group: the mean over the group's runs of their main metric (HELM Lite's
    LegalBench column is the mean of its five tasks, MMLU's the mean of its subjects), as HELM's tables aggregate.

    A run's group is its scenario's ``helm_group`` (by default its scenario); an offline edition's runs form a group of
    their own (``narrative_qa [offline edition: ...]``), so they never share a column with HELM's settings.
    """
    columns: dict[str, dict[str, Any]] = {}
    values: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for name, report in zip(names, reports, strict=True):
        for run in report.get("runs") or ():
            requested = run.get("requested_metrics") or []
            metrics = run.get("metrics") or {}
            main = str(requested[0]) if requested else None
            entry = metrics.get(main) if main is not None else None
            if main is None or not isinstance(entry, Mapping):
                continue
            group = str(run.get("helm_group") or run.get("scenario") or run.get("key"))
            key = group if not run.get("edition") else f"{group} [{run.get('edition')}]"
            column = columns.setdefault(key, {"key": key, "metric": main, "direction": entry.get("direction"), "runs": []})
            if column["metric"] != main:
                column["metric"] = MAIN  # runs of one group with different main metrics: the column says so
            scenario = str(run.get("scenario") or "")
            if scenario not in column["runs"]:
                column["runs"].append(scenario)
            value = _helm_value(run, main)
            if value is not None:
                values[name].setdefault(key, []).append(value)
    cells = {
        name: {key: (statistics.mean(found[key]) if found.get(key) else None) for key in columns}
        for name, found in values.items()
    }
    rates = mean_win_rates(cells, {key: column["direction"] for key, column in columns.items()})
    return {
        "columns": [{**column, "runs": sorted(column["runs"])} for column in columns.values()],
        "cells": cells,
        "win_rates": rates,
    }


MEMORY_FIELDS: tuple[tuple[Literal["peak_gpu_mib", "peak_rss_mib"], str], ...] = (
    ("peak_gpu_mib", "GPU peak"),
    ("peak_rss_mib", "peak RSS"),
)
"""A worker's peak memory fields (literal, so mypy checks them against ``Worker``), the GPU's first."""
REPLAYED = "of the run that computed the replayed answers"
NOT_MEASURED = "not measured: every answer was replayed from the cache, and the run that computed them recorded no peak memory"


def _computed_here(worker: Worker) -> bool:
    """Whether a worker loaded the model (a load time, or a batch computed); a row without either count is taken as so."""
    load, batches = _number(worker.get("load_seconds")), _number(worker.get("batches"))
    return (load is None and batches is None) or bool(load) or bool(batches)


def _largest(rows: Sequence[Worker | Mapping[str, Any]]) -> tuple[float, str] | None:
    """The largest GPU peak any row recorded, else the largest process peak, in GB, and which it is."""
    for field, what in MEMORY_FIELDS:
        values = [number for row in rows if (number := _number(row.get(field))) is not None]
        if values:
            return round(max(values) / MIB_PER_GB, 1), what  # to MEMORY_RESOLUTION_GB
    return None


def peak_memory_gb(report: Report) -> tuple[float | None, str]:
    """The report's peak memory in GB and what it measured: GPU peak where any worker recorded one, else process RSS.

    Only workers that loaded the model measured it. When every answer was replayed from the cache, the replaying
    process measured nothing about the model: the figures the computing run left in the cache (the model's
    ``details``) stand in, named as such, or there is no figure.
    """
    workers = [worker for worker in (report.get("workers") or {}).values() if isinstance(worker, Mapping)]
    computed = [worker for worker in workers if _computed_here(worker)]
    if computed or not workers:
        found = _largest(computed)
        return found if found is not None else (None, "no peak memory recorded")
    details = (report.get("model") or {}).get("details")
    found = _largest([details]) if isinstance(details, Mapping) else None
    return (found[0], f"{found[1]} {REPLAYED}") if found is not None else (None, NOT_MEASURED)


def _cell(entry: MetricResult) -> dict[str, Any]:
    ci = entry.get("ci95")
    low, high = ci if isinstance(ci, list | tuple) and len(ci) == 2 else (None, None)
    n = entry.get("n")
    return {
        "value": _number(entry.get("value")),
        "low": _number(low),
        "high": _number(high),
        "n": n if isinstance(n, int) and not isinstance(n, bool) else 0,
    }


def _as_good(entry: MetricResult | None) -> float | None:
    """A metric value as a good on a 0-1 scale: itself if higher is better, 1 - it if lower, 1 - |it - optimum| for a target."""
    if not entry:
        return None
    value = _number(entry.get("value"))
    if value is None:
        return None
    direction = entry.get("direction")
    if direction == "lower":
        return 1.0 - value
    if direction == "target":
        optimum = _number(entry.get("optimum"))
        return None if optimum is None else 1.0 - abs(value - optimum)
    return value


def _describe(key: str, entry: MetricResult | None) -> str:
    direction = (entry or {}).get("direction")
    if direction == "lower":
        return f"1 - {key}"
    if direction == "target":
        return f"1 - |{key} - {(entry or {}).get('optimum')}|"
    return key


def _scenario_dynascore(
    scenario: str,
    runs: Mapping[str, _Run],
    memory: Mapping[str, float | None],
    memory_source: str,
    cap: float,
    epsilon: float,
) -> dict[str, Any]:
    """One scenario's Dynascore entry: which report field fed each metric, the goods, AMRS, scores and ranking."""
    sources: dict[str, str | None] = {}
    candidates: dict[str, dict[str, float | None]] = {model: {} for model in runs}
    notes = []
    main = next((run.main for run in runs.values() if run.main), None)
    # every field is read only when a run names its main metric
    fields = {"perf": main or "", "throughput": "throughput", "fairness": f"fairness.{main}", "robustness": f"robustness.{main}"}
    for metric in DYNA_METRICS:
        if metric == "memory":
            recorded = any(memory.get(model) is not None for model in runs)
            sources[metric] = f"{cap:g} GB - {memory_source} (GB)" if recorded else None
            for model in runs:
                used = memory.get(model)
                candidates[model][metric] = None if used is None else cap - used
            continue
        name = fields[metric]
        example = next((run.metrics.get(name) for run in runs.values() if main and run.metrics.get(name)), None)
        sources[metric] = _describe(f"{scenario}/{name}", example) if main and example else None
        for model, run in runs.items():
            entry = run.metrics.get(name) if main else None
            candidates[model][metric] = _as_good(entry) if metric != "throughput" else _number((entry or {}).get("value"))
    scored = {model: values for model, values in candidates.items() if values["perf"] is not None}
    unscored = sorted(set(runs) - set(scored))
    if unscored:
        notes.append(f"no main-metric value for {', '.join(unscored)}: left out of the Dynascore")
    kept = []
    for metric in DYNA_METRICS:
        lacking = sorted(model for model, values in scored.items() if values[metric] is None)
        if metric == "perf" or not lacking:
            kept.append(metric)
        elif scored:
            sources[metric] = None
            notes.append(f"{metric} dropped: no value for {', '.join(lacking)}")
    goods = {model: {metric: float(values[metric]) for metric in kept} for model, values in scored.items()}  # type: ignore[arg-type]
    weights = normalise_weights(default_weights(DYNA_METRICS), kept)
    rates: dict[str, float | None] = {metric: None for metric in DYNA_METRICS}
    result: dict[str, float | None] = {model: None for model in runs}
    ranking: list[str] = []
    if goods:
        board = dynascore(goods, weights, epsilon)
        rates.update(board.amrs)
        weights = board.weights
        result.update(board.scores)
        ranking = board.ranking
        for metric in kept:
            if board.amrs[metric] is None:
                notes.append(
                    f"{metric} left out: its AMRS is undefined (no performance gap above {epsilon:g}, or no change in it)"
                )
    return {
        "sources": sources,
        "goods": goods,
        "amrs": rates,
        "weights": weights,
        "scores": result,
        "ranking": ranking,
        "notes": notes,
    }


def build_leaderboard(
    reports: Sequence[Report],
    *,
    memory_cap_gb: float = MEMORY_CAP_GB,
    paths: Sequence[str | Path] | None = None,
    epsilon: float = EPSILON,
) -> dict[str, Any]:
    """The leaderboard of report.json payloads (one per model run): cells, mean win rates and Dynascores."""
    names = model_names(reports)
    paths = list(paths) if paths is not None else [""] * len(reports)
    if len(paths) != len(reports):
        raise ValueError(f"{len(paths)} paths for {len(reports)} reports")
    columns: dict[str, dict[str, Any]] = {}
    cells: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in names}
    by_scenario: dict[str, dict[str, _Run]] = {}
    memory: dict[str, float | None] = {}
    memory_of: dict[str, str] = {}
    for name, report, labels in zip(names, reports, run_columns(reports), strict=True):
        memory[name], memory_of[name] = peak_memory_gb(report)
        for run in _runs(report, labels):
            by_scenario.setdefault(run.scenario, {})[name] = run
            main_first = [run.main] if run.main is not None and run.main in run.metrics else []
            ordered = main_first + [metric for metric in run.metrics if metric != run.main]
            for metric in ordered:
                entry = run.metrics[metric]
                if not isinstance(entry, Mapping):
                    continue
                key = f"{run.scenario}/{metric}"
                column = columns.setdefault(
                    key,
                    {
                        "key": key,
                        "scenario": run.scenario,
                        "metric": metric,
                        "family": str(entry.get("family") or "other"),
                        "direction": entry.get("direction"),
                        "optimum": _number(entry.get("optimum")),
                        "main": False,
                    },
                )
                column["main"] = column["main"] or metric == run.main
                cells[name][key] = _cell(entry)
    empty = {"value": None, "low": None, "high": None, "n": 0}
    for row in cells.values():
        for key in columns:
            row.setdefault(key, dict(empty))
    table = {name: {key: cell["value"] for key, cell in row.items()} for name, row in cells.items()}
    optima = {key: column["optimum"] for key, column in columns.items()}
    groups: dict[str, list[str]] = {MAIN: [key for key, column in columns.items() if column["main"]]}
    for key, column in columns.items():
        groups.setdefault(column["family"], []).append(key)
    win_rates = {
        group: mean_win_rates(table, {key: columns[key]["direction"] for key in keys}, optima) for group, keys in groups.items()
    }
    helm = helm_groups(reports, names)
    win_rates[HELM] = helm["win_rates"]
    memory_source = " / ".join(sorted({memory_of[name] for name in names if memory[name] is not None})) or "peak memory"
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "models": [
            {
                "name": name,
                "run_id": str(report.get("run_id") or ""),
                "created": report.get("created"),
                "report": str(path),
                "model": str((report.get("model") or {}).get("name") or ""),
                "complete": report.get("complete"),
                "memory_gb": memory[name],
                "memory_source": memory_of[name],
            }
            for name, report, path in zip(names, reports, paths, strict=True)
        ],
        "columns": list(columns.values()),
        "cells": cells,
        "win_rates": win_rates,
        "helm_groups": {"columns": helm["columns"], "cells": helm["cells"]},
        "dynascore": {
            "metrics": list(DYNA_METRICS),
            "default_weights": default_weights(DYNA_METRICS),
            "memory_cap_gb": memory_cap_gb,
            "epsilon": epsilon,
            "scenarios": {
                scenario: _scenario_dynascore(scenario, runs, memory, memory_source, memory_cap_gb, epsilon)
                for scenario, runs in by_scenario.items()
            },
        },
    }
