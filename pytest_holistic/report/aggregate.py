"""Scenario-level numbers from item records, keyed by (run, perturbation, metric), each with a 95% interval.

Runs on the controller once all records arrived, in node-id order, so the numbers (intervals included)
are identical at -n 0 and -n 8. Three kinds of metric:

* per-item scores (instance metrics, model-scored metrics, and what tests ``record()``): their mean;
* population metrics (ECE, balanced accuracy, bias, toxic fraction...): a function of the run's
  columns (:mod:`.columns`);
* efficiency: model seconds, tokens and throughput per instance (Dynaboard's throughput is
  instances per second of model time).

Intervals are a seeded bootstrap over instances, except for the mean of at most ``SMALL_BINARY_N`` values that
are all 0 or 1 (exact match, a pass/fail score): that is a proportion, and its interval is Wilson's score
interval. Bowyer et al., "Position: Don't Use the CLT in LLM Evals With Fewer Than a Few Hundred Datapoints"
(ICML 2025), show that CLT intervals, and the bootstrap with them, undercover at that size: a bootstrap of 50
right answers out of 50 is the single point [1, 1]. Wilson rather than Clopper–Pearson: Brown, Cai & DasGupta
(2001) find Wilson's coverage close to the nominal 95% on average for small n, while Clopper–Pearson's
guaranteed coverage makes it wider than needed (a ``.lower`` gate would fail runs it should pass); Wilson is
also closed-form and always contains the observed proportion. Each result says which it used
(``interval_method``).

A population metric can be undefined on a resample (a class or a gendered word the resample did not draw). Such
resamples are left out of the interval and counted (``dropped_resamples``); when more than ``MAX_DROPPED_SHARE``
of them are, the interval is refused (NaN bounds, null in the report) and :meth:`RunResults.interval_warnings`
says why.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

from .. import metrics as registry
from ..errors import InternalError, UserError
from ..gates import GateResult, MetricName, Observation
from ..metrics.base import Direction, Family, MetricInfo, MetricInputError, Resampled
from ..metrics.paired import wilson_interval
from ..metrics.stats import Stat, bootstrap_interval, group_extremes, group_gap, per_group
from ..models.base import ModelInfo
from ..perturbations.naming import parse as parse_derived
from ..records import CollectedRun, ItemRecord, RunInfo, WorkerSummary
from .columns import column_values
from .labels import Labels, run_labels
from .payload import Comparison, NotCompared
from .perturbed import PerturbationResults, perturbation_results

RESAMPLES = 1000
SEED = 0
SMALL_BINARY_N = 500
"""Up to this many 0/1 values a mean gets Wilson's interval. Bowyer et al. (ICML 2025) put the trouble below "a few
hundred" items; at 500 the two intervals are within about 0.005 of each other for proportions away from 0 and 1,
so the threshold sits past the range where they differ, and larger runs keep the bootstrap like every other metric."""

MAX_DROPPED_SHARE = 0.05
"""Above this share of undefined resamples the bootstrap interval is refused. The kept resamples are only those
that drew what the metric needs, a conditional distribution rather than the sampling distribution the interval
stands for; once the left-out share exceeds 5%, the interval's own nominal error rate, that selection alone can
shift the bounds by as much as the 95% coverage allows, so no interval is reported rather than a misleading one."""

IntervalMethod = Literal["bootstrap", "wilson"]


@dataclass(frozen=True)
class MetricResult:
    """One scenario-level number with its 95% interval (which always contains ``value``) and how it was computed.

    ``min`` and ``max`` are the extremes of the per-instance values the number averages (instance
    metrics, and the per-instance efficiency means); None for population metrics and ratios, which have
    no per-instance values.
    """

    name: str
    family: Family
    kind: str
    value: float
    low: float
    high: float
    n: int
    direction: Direction
    optimum: float | None = None
    stderr: float | None = None
    min: float | None = None
    max: float | None = None
    interval_method: IntervalMethod = "bootstrap"
    dropped_resamples: int = 0

    @property
    def interval_refused(self) -> bool:
        """More than ``MAX_DROPPED_SHARE`` of the resamples were undefined, so the interval was withheld."""
        return self.dropped_resamples > MAX_DROPPED_SHARE * RESAMPLES

    def observation(self) -> Observation:
        return Observation(self.value, self.low, self.high, self.n, self.direction, self.optimum)

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "kind": self.kind,
            "value": self.value,
            "ci95": [self.low, self.high],
            "interval": self.interval_method,
            "n": self.n,
            "direction": self.direction,
            "optimum": self.optimum,
            "stderr": self.stderr,
            "min": self.min,
            "max": self.max,
            "dropped_resamples": self.dropped_resamples,
        }


def _sum(values: Any) -> float:
    """Exact for lists; numpy's sum for the bootstrap's resampled arrays (1000 of them per metric)."""
    return float(values.sum()) if hasattr(values, "sum") else math.fsum(values)


def _mean(values: Any) -> float:
    return _sum(values) / len(values)


def _bootstrapped(
    name: str,
    family: Family,
    kind: str,
    direction: Direction,
    optimum: float | None,
    statistic: Callable[..., Any],
    columns: Sequence[Sequence[Any]],
    bounds: tuple[float, float] | None = None,
    prepare: Callable[..., Resampled] | None = None,
) -> MetricResult:
    try:
        estimate = statistic(*columns)
    except (UserError, ValueError, ZeroDivisionError):
        estimate = None
    if estimate is None or (isinstance(estimate, float) and math.isnan(estimate)):
        # Undefined on this run (e.g. no gendered word in any generation): shown as such, never as 0.
        return MetricResult(name, family, kind, math.nan, math.nan, math.nan, len(columns[0]), direction, optimum)
    undefined = _UndefinedCount()
    interval = bootstrap_interval(
        undefined.statistic(statistic),
        *columns,
        resamples=RESAMPLES,
        seed=SEED,
        bounds=bounds,
        prepare=None if prepare is None else undefined.prepare(prepare),
    )
    low, high = interval.low, interval.high
    if undefined.count > MAX_DROPPED_SHARE * RESAMPLES:
        low = high = math.nan
    return MetricResult(
        name, family, kind, float(estimate), low, high, len(columns[0]), direction, optimum, dropped_resamples=undefined.count
    )


@dataclass
class _UndefinedCount:
    """Counts the resamples on which a statistic is undefined (None, NaN, or an input error).

    ``bootstrap_interval`` drops them silently; wrapping the statistic and its vectorised preparation counts them
    as they are computed, at no extra evaluation. The estimate, also passed through the wrapper, is defined
    whenever the bootstrap runs (:func:`_bootstrapped` checks it first), so every count is a resample.
    """

    count: int = 0

    def statistic(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*columns: Sequence[Any]) -> Any:
            try:
                value = function(*columns)
            except MetricInputError:
                self.count += 1
                raise
            if value is None or (isinstance(value, float) and math.isnan(value)):
                self.count += 1
            return value

        return counted

    def prepare(self, prepare: Callable[..., Resampled]) -> Callable[..., Resampled]:
        def prepared(*columns: Sequence[Any]) -> Resampled:
            resampled = prepare(*columns)  # a MetricInputError here sends the bootstrap to the counted statistic

            def counted(indices: Any) -> Any:
                import numpy as np

                values = np.asarray(resampled(indices), dtype=float)
                self.count += int(np.isnan(values).sum())
                return values

            return counted

        return prepared


def _of_info(info: MetricInfo, kind: str, statistic: Callable[..., Any], columns: Sequence[Sequence[Any]]) -> MetricResult:
    """The metric's number and interval; a population metric's own function is resampled through its preparation."""
    prepare = info.prepare if statistic is info.function else None
    return _bootstrapped(info.name, info.family, kind, info.direction, info.optimum, statistic, columns, info.bounds, prepare)


def _successes(values: Sequence[float]) -> int | None:
    """How many values are 1 when every value is 0 or 1 (a proportion Wilson's interval fits); None otherwise."""
    ones = 0
    for value in values:
        if value == 1:
            ones += 1
        elif value != 0:
            return None
    return ones


def _mean_result(
    name: str,
    family: Family,
    kind: str,
    direction: Direction,
    optimum: float | None,
    values: Sequence[float],
    bounds: tuple[float, float] | None = None,
    proportion: bool = True,
) -> MetricResult:
    """The mean of per-instance values with its interval (Wilson's for a small 0/1 sample), standard error and extremes.

    ``proportion`` False keeps the bootstrap for a metric whose range goes beyond [0, 1], where values of only 0
    and 1 are a coincidence of the sample, not a proportion.
    """
    ones = _successes(values) if proportion and len(values) <= SMALL_BINARY_N else None
    if ones is None:
        result = _bootstrapped(name, family, kind, direction, optimum, _mean, [values], bounds)
    else:
        low, high = wilson_interval(ones, len(values))
        value = ones / len(values)
        result = MetricResult(name, family, kind, value, low, high, len(values), direction, optimum, interval_method="wilson")
    stat = Stat.of(values)
    return replace(result, stderr=stat.stderr, min=stat.min, max=stat.max)


def _within_unit(info: MetricInfo | None) -> bool:
    """Whether a metric's values lie in [0, 1], so that values of only 0 and 1 are a proportion (unknown: taken as so)."""
    return info is None or (info.bounds[0] >= 0.0 and info.bounds[1] <= 1.0)


MetricLookup = Callable[[str], MetricInfo | None]
"""A metric's registered description by name: the built-ins, and in a session also its registered scored metrics."""


def summarise(
    name: str,
    family: Family,
    kind: str,
    direction: Direction,
    optimum: float | None,
    values: Sequence[float],
    find: MetricLookup = registry.find,
) -> MetricResult:
    """The mean of per-instance values with its interval (see :data:`SMALL_BINARY_N`), standard error and extremes.

    A derived number (``robustness.exact_match``) is a proportion when its metric's range is [0, 1]; a word error
    rate never is (insertions take it above 1).
    """
    parsed = parse_derived(name)
    base = parsed.base if parsed is not None else name
    proportion = kind != "wer" and _within_unit(find(base) if base is not None else None)
    return _mean_result(name, family, kind, direction, optimum, list(values), proportion=proportion)


def metric_results(
    records: Sequence[ItemRecord], population: Sequence[MetricInfo], find: MetricLookup = registry.find
) -> dict[str, MetricResult]:
    """Every number of one (run, perturbation): per-item score means, population metrics, and efficiency."""
    ordered = sorted(records, key=lambda record: record.nodeid)
    results: dict[str, MetricResult] = {}
    for name in sorted({name for record in ordered for name in record.scores}):
        values = [value for record in ordered if (value := record.scores.get(name)) is not None and not math.isnan(value)]
        if not values:
            continue
        info = find(name)
        if info is None:  # a score the test recorded under its own name (0/1 values: a pass rate)
            results[name] = _mean_result(name, "custom", "instance", "higher", None, values)
        else:
            results[name] = _mean_result(
                info.name, info.family, "instance", info.direction, info.optimum, values, info.bounds, _within_unit(info)
            )
    for info in population:
        columns = column_values(info.inputs, ordered)
        if columns and columns[0]:
            results[info.name] = _of_info(info, "population", info.function, columns)
    results.update(_efficiency(ordered))
    return results


def _efficiency(records: Sequence[ItemRecord]) -> dict[str, MetricResult]:
    timed = [record.completion for record in records if record.completion is not None]
    if not timed:
        return {}
    seconds = [float(completion.seconds) for completion in timed]
    tokens_in = [float(completion.tokens_in) for completion in timed]
    tokens_out = [float(completion.tokens_out) for completion in timed]
    specs: list[tuple[str, Direction, Callable[..., float | None], list[list[float]]]] = [
        ("runtime_s", "lower", _mean, [seconds]),
        ("tokens_in", "lower", _mean, [tokens_in]),
        ("tokens_out", "lower", _mean, [tokens_out]),
        ("throughput", "higher", lambda s: len(s) / _sum(s) if _sum(s) > 0 else None, [seconds]),
        (
            "tokens_per_s",
            "higher",
            lambda s, a, b: (_sum(a) + _sum(b)) / _sum(s) if _sum(s) > 0 else None,
            [seconds, tokens_in, tokens_out],
        ),
    ]
    out: dict[str, MetricResult] = {}
    for name, direction, statistic, columns in specs:
        if name == "tokens_out" and not any(tokens_out):
            continue  # scoring adapters generate nothing
        result = _bootstrapped(name, "efficiency", "efficiency", direction, None, statistic, columns, (0.0, math.inf))
        if statistic is _mean:  # a mean of per-request values: their extremes are meaningful too
            result = replace(result, min=min(columns[0]), max=max(columns[0]))
        out[name] = result
    return out


def group_breakdown(
    records: Sequence[ItemRecord], metric: str, direction: Direction = "higher", optimum: float | None = None
) -> dict[str, Any] | None:
    """Per-group means of ``metric``, its worst and best group by ``direction``, and the gap (HELM performance disparities)."""
    rows = [
        (str(record.instance.group), value)
        for record in records
        if record.instance.group not in (None, "") and (value := record.scores.get(metric)) is not None and not math.isnan(value)
    ]
    if len({group for group, _ in rows}) < 2:
        return None
    stats = per_group([value for _, value in rows], [group for group, _ in rows])
    worst, best = group_extremes(stats, direction, optimum) or (None, None)
    return {
        "metric": metric,
        "direction": direction,
        "groups": {str(group): {"n": stat.count, "mean": stat.mean} for group, stat in stats.items()},
        "worst": worst,
        "best": best,
        "gap": group_gap(stats, direction, optimum),
    }


def _group_statistic(statistic: str, direction: Direction) -> Callable[..., float | None]:
    """The gap or the worst group's mean of (values, group codes), on lists or the bootstrap's resampled arrays;
    None (undefined) when fewer than two groups are drawn."""
    import numpy as np

    def computed(values: Any, codes: Any) -> float | None:
        values, codes = np.asarray(values, dtype=float), np.asarray(codes, dtype=int)
        counts = np.bincount(codes)
        present = counts > 0
        if int(present.sum()) < 2:
            return None
        means = np.bincount(codes, weights=values)[present] / counts[present]
        worst = float(means.min() if direction == "higher" else means.max())
        return float(means.max() - means.min()) if statistic == "gap" else worst

    return computed


def group_number(
    records: Sequence[ItemRecord], name: str | MetricName, find: MetricLookup = registry.find
) -> MetricResult | None:
    """``groups.gap.<metric>`` or ``groups.worst.<metric>`` over the originals' instance groups, with a bootstrap
    interval over instances; None for another name, a metric with an optimum, or no score of it at all.

    ``name`` is a gate's ``metric_name`` (read once, at the gate) or the name itself."""
    from ..gates import GROUP_STATISTICS

    name = MetricName(name) if isinstance(name, str) else name
    parsed = name.group
    if parsed is None or parsed[0] not in GROUP_STATISTICS:
        return None
    statistic, base = parsed
    info = find(base)
    direction: Direction = info.direction if info is not None else "higher"
    if direction == "target":
        return None
    rows = [
        (value, str(record.instance.group))
        for record in records
        if record.perturbation is None and record.outcome != "skipped" and record.instance.group not in (None, "")
        and (value := record.scores.get(base)) is not None and not math.isnan(value)
    ]  # fmt: skip
    if not rows:
        return None
    codes = {group: code for code, group in enumerate(sorted({group for _, group in rows}))}
    columns: list[list[float]] = [[value for value, _ in rows], [float(codes[group]) for _, group in rows]]
    bounds = info.bounds if info is not None else None
    width = (0.0, bounds[1] - bounds[0]) if bounds is not None and statistic == "gap" else bounds
    chosen = direction if statistic == "worst" else "lower"  # a smaller gap is better
    return _bootstrapped(
        name.text, "fairness", f"group_{statistic}", chosen, None, _group_statistic(statistic, direction), columns, width
    )


@dataclass
class RunResults:
    """One run's records (the latest per item) and what they add up to, per perturbation (None: originals)."""

    info: RunInfo
    _records: dict[str, ItemRecord] = field(default_factory=dict)
    _metrics: dict[str | None, dict[str, MetricResult]] = field(default_factory=dict, repr=False)
    _perturbed: PerturbationResults | None = field(default=None, repr=False)
    _observations: dict[str, Observation] | None = field(default=None, repr=False)
    find: MetricLookup = field(default=registry.find, repr=False, compare=False)
    early_stop: dict[str, Any] | None = None  # a run that could stop early: whether and where it stopped, or why not
    _group_numbers: dict[str, MetricResult | None] = field(default_factory=dict, repr=False)

    @property
    def key(self) -> str:
        return self.info.key

    @property
    def scenario(self) -> str:
        return self.info.scenario

    def add(self, record: ItemRecord) -> None:
        if record.run_key != self.key:
            raise InternalError(f"record of run {record.run_key!r} was given to run {self.key!r}")
        self._records[record.nodeid] = record  # a rerun item replaces its earlier record
        self._metrics.clear()
        self._group_numbers.clear()
        self._perturbed = None
        self._observations = None

    def keep_instances(self, instances: Collection[str]) -> int:
        """Keep only the records of these instances (a run stopped early: those before its stop); how many were dropped."""
        dropped = [nodeid for nodeid, record in self._records.items() if record.instance.id not in instances]
        for nodeid in dropped:
            del self._records[nodeid]
        self._metrics.clear()
        self._group_numbers.clear()
        self._perturbed = None
        self._observations = None
        return len(dropped)

    @property
    def records(self) -> list[ItemRecord]:
        """Sorted by node id, so every number is independent of the order workers finished in."""
        return [self._records[nodeid] for nodeid in sorted(self._records)]

    def perturbations(self) -> list[str | None]:
        return sorted({record.perturbation for record in self._records.values()}, key=lambda p: (p is not None, p or ""))

    def metrics(self, perturbation: str | None = None) -> dict[str, MetricResult]:
        """The scenario-level numbers of one variant label (computed once); for the originals (None) with the
        family-level robustness, fairness and equivariance numbers of their variants."""
        if perturbation not in self._metrics:
            population = [info for name in self.info.metrics if (info := registry.POPULATION.get(name)) is not None]
            # An item the test skipped (pytest.skip after the answer came) is left out, as a deselected one would be.
            chosen = [record for record in self.records if record.perturbation == perturbation and record.outcome != "skipped"]
            results = metric_results(chosen, population, self.find)
            if perturbation is None:
                results.update(self.perturbed().families)
            self._metrics[perturbation] = results
        return self._metrics[perturbation]

    def perturbed(self) -> PerturbationResults:
        """What the variants add: worst case, before/after, delta, consistency, WER (empty without perturbations)."""
        if self._perturbed is None:
            chosen = [record for record in self.records if record.outcome != "skipped"]
            self._perturbed = perturbation_results(chosen, self.info, partial(summarise, find=self.find), self.find)
        return self._perturbed

    def observations(self) -> dict[str, Observation]:
        """Every metric as gates see it (value, 95% interval, n, direction): the originals' and the variants' numbers.

        Computed once per set of records: every gate of the run reads the same mapping.
        """
        if self._observations is None:
            results = {**self.metrics(), **self.perturbed().perturbations}
            self._observations = {name: result.observation() for name, result in results.items()}
        return self._observations

    def group_observation(self, name: MetricName) -> Observation | None:
        """A gate's ``groups.gap.<metric>`` / ``groups.worst.<metric>``, computed when a gate asks (None: not one)."""
        if name.text not in self._group_numbers:
            self._group_numbers[name.text] = group_number(self.records, name, self.find)
        result = self._group_numbers[name.text]
        return result.observation() if result is not None else None

    def groups(self) -> list[dict[str, Any]]:
        """Per-group breakdowns (HELM performance disparities) of the run's declared per-item metrics."""
        declared = set(self.info.metrics)
        originals = [record for record in self.records if record.perturbation is None]
        chosen = [result for name, result in self.metrics().items() if result.kind == "instance" and name in declared]
        breakdowns = (group_breakdown(originals, result.name, result.direction, result.optimum) for result in chosen)
        return [breakdown for breakdown in breakdowns if breakdown is not None]

    def interval_warnings(self, label: str | None = None) -> list[str]:
        """One line for the run (named ``label``, else its scenario) naming every number whose bootstrap interval was
        refused (too many undefined resamples).

        One line per run, not per number: a suite of many generation scenarios with HELM's six bias metrics would
        otherwise print dozens of near-identical lines.
        """
        results = sorted({**self.metrics(), **self.perturbed().perturbations}.items())  # what the report shows
        refused = [f"{name} ({result.dropped_resamples} of {RESAMPLES})" for name, result in results if result.interval_refused]
        if not refused:
            return []
        return [
            f"{label or self.scenario}: no 95% interval for {', '.join(refused)}: undefined on more than {MAX_DROPPED_SHARE:.0%} of "
            "the bootstrap resamples, as too few instances carry what the metric needs (e.g. both classes, a group word)"
        ]

    def skipped(self) -> list[str]:
        return sorted({reason for record in self._records.values() for reason in record.skipped})

    def outcomes(self) -> dict[str, int]:
        return dict(sorted(Counter(record.outcome for record in self._records.values()).items()))

    def scorers(self) -> dict[str, Mapping[str, str]]:
        """The scoring model behind each model-scored metric of this run."""
        found: dict[str, Mapping[str, str]] = {}
        for record in self.records:
            for name, scorer in record.scorers.items():
                found.setdefault(name, scorer)
        return found


Progress = Callable[[str, int, int], None]
"""Told ``(label, k, total)`` before the k-th of ``total`` runs is aggregated (1-based)."""


def aggregate_runs(runs: Sequence[RunResults], progress: Progress | None = None, labels: Labels | None = None) -> None:
    """Compute every run's numbers now (each run keeps them), telling ``progress`` before each run.

    The bootstrap intervals are the slow part of the end of a session (seconds per run); a caller that
    shows a terminal calls this first, so the user sees which scenario is being computed, and the gates
    and writers that ask for the numbers afterwards get them at once. ``labels`` names each run as every output
    does (the session's, from the caller, which knows the runs without records too); else by these runs alone.
    """
    labels = labels or run_labels((run.key, run.scenario) for run in runs)
    for k, run in enumerate(runs, start=1):
        if progress is not None:
            progress(labels.of(run.key, run.scenario), k, len(runs))
        run.metrics()


@dataclass
class Results:
    """Everything the writers need: the runs, the gates, the model, and what each worker did."""

    model_spec: str
    model: ModelInfo | None
    runs: list[RunResults]
    gates: list[GateResult]
    workers: dict[str, WorkerSummary]
    command: list[str]
    run_id: str = ""
    interrupted: str | None = None  # why the run ended early; None when it ran to the end
    unfinished: list[dict[str, str | None]] = field(default_factory=list)  # collected items without a final report
    collected: list[CollectedRun] = field(default_factory=list)  # runs collected but without any record
    lost_workers: dict[str, str] = field(default_factory=dict)  # xdist workers that died, and how
    warnings: list[str] = field(default_factory=list)
    started: str = ""  # ISO 8601 UTC time the session started (the report's "created" is when it was written)
    comparison: Comparison | NotCompared | None = None  # --holistic-baseline: the paired comparison with the stored run
    items_known: bool = True  # collection finished, so each collected run's selected count means what it says

    @property
    def complete(self) -> bool:
        """Every collected item finished, no worker was lost, and nothing stopped the run early."""
        return (
            self.interrupted is None
            and not self.unfinished
            and not self.lost_workers
            and all(worker.final for worker in self.workers.values())
        )

    def labels(self) -> Labels:
        """Every collected run's label (``report.labels``), so each output names two runs of one scenario alike."""
        infos = [*(run.info for run in self.runs), *(entry.run for entry in self.collected)]
        return run_labels((info.key, info.scenario) for info in infos)

    def batch_seconds(self) -> Stat:
        """Per-batch model time over all workers: their partial statistics merged."""
        total = Stat()
        for worker in self.workers.values():
            total = total.merge(worker.batch_seconds)
        return total
