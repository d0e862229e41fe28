"""Scenario statistics: a mergeable summary (``Stat``), a seeded bootstrap, and per-group breakdowns.

``Stat`` keeps count, mean and the sum of squared deviations (Welford; Chan et al. for merging) rather
than raw sums of squares, which lose all precision when values are large and close together, so
per-worker partials combine to the serial answer (the report merges each worker's per-batch model time).
Scenario metrics are computed on the controller from every record instead, because their bootstrap
intervals and the population metrics need the values themselves, not a summary.

``bootstrap_interval`` resamples instances with replacement (Efron 1979) for any scenario-level
statistic, e.g. ECE or balanced accuracy, where no closed-form interval exists; by default its interval
is built around the estimate, so a reported value always lies inside its own interval. A metric whose
per-instance work is costly (tokenising texts, fitting a model) passes a preparation (``MetricInfo.prepare``)
that does that work once and computes every resample from the same index matrix in numpy.
``per_group``, ``group_extremes`` and ``group_gap`` give HELM's performance disparities (seeds digest
§2.4 (ii), §8 A8): the metric on each group's subset, its worst and best group by the metric's
direction, and how far apart they are.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from .base import Direction, MetricInputError, Resampled

if TYPE_CHECKING:
    import numpy as np

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Stat:
    """Count, mean, sum of squared deviations, min and max of a metric's per-instance values."""

    count: int = 0
    mean_: float = 0.0
    m2: float = 0.0
    min: float = math.inf
    max: float = -math.inf

    @classmethod
    def of(cls, values: Iterable[float]) -> Stat:
        stat = cls()
        for value in values:
            stat = stat.add(value)
        return stat

    def add(self, value: float) -> Stat:
        value = float(value)
        count = self.count + 1
        delta = value - self.mean_
        mean = self.mean_ + delta / count
        return Stat(count, mean, self.m2 + delta * (value - mean), min(self.min, value), max(self.max, value))

    def merge(self, other: Stat) -> Stat:
        if not other.count:
            return self
        if not self.count:
            return other
        count = self.count + other.count
        delta = other.mean_ - self.mean_
        mean = self.mean_ + delta * other.count / count
        m2 = self.m2 + other.m2 + delta * delta * self.count * other.count / count
        return Stat(count, mean, m2, min(self.min, other.min), max(self.max, other.max))

    @property
    def total(self) -> float:
        return self.mean_ * self.count

    @property
    def mean(self) -> float:
        return self.mean_ if self.count else math.nan

    @property
    def variance(self) -> float:
        """Sample variance (n - 1 denominator); 0 for a single value."""
        if self.count < 2:
            return 0.0
        return max(self.m2, 0.0) / (self.count - 1)

    @property
    def stderr(self) -> float:
        return math.sqrt(self.variance / self.count) if self.count else math.nan

    def interval(self, bounds: tuple[float, float] | None = None) -> tuple[float, float]:
        """95% normal-approximation interval of the mean, clipped to the metric's bounds."""
        if not self.count:
            return (math.nan, math.nan)
        half = Z_95 * self.stderr
        low, high = self.mean - half, self.mean + half
        if bounds is not None:
            low, high = max(low, bounds[0]), min(high, bounds[1])
        return (low, high)

    def to_dict(self, bounds: tuple[float, float] | None = None) -> dict[str, float | int | list[float]]:
        low, high = self.interval(bounds)
        return {
            "n": self.count,
            "mean": self.mean,
            "stderr": self.stderr,
            "ci95": [low, high],
            "min": self.min if self.count else math.nan,
            "max": self.max if self.count else math.nan,
        }


DEFAULT_RESAMPLES = 1000
CHUNK_CELLS = 1 << 20
"""A prepared statistic sees at most this many (resample, instance) cells at once, so its work arrays stay small."""


@dataclass(frozen=True)
class Bootstrap:
    """A statistic's value on the data and its bootstrap interval (see ``bootstrap_interval`` for the methods)."""

    estimate: float
    low: float
    high: float
    confidence: float
    resamples: int
    seed: int

    @property
    def interval(self) -> tuple[float, float]:
        return (self.low, self.high)

    def to_dict(self) -> dict[str, float | int | list[float]]:
        return {
            "estimate": self.estimate,
            "interval": [self.low, self.high],
            "confidence": self.confidence,
            "resamples": self.resamples,
            "seed": self.seed,
        }


METHODS = ("centred", "bc", "percentile")


def bootstrap_interval(
    statistic: Callable[..., float | None],
    *columns: Sequence[Any],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
    method: str = "centred",
    bounds: tuple[float, float] | None = None,
    prepare: Callable[..., Resampled] | None = None,
) -> Bootstrap:
    """Bootstrap interval of ``statistic(*columns)`` over instances; by default it always contains the estimate.

    Methods (``tail`` = (1 - confidence) / 2; ``q(a)`` = the a-quantile of the resampled statistics):

    - ``"centred"`` (default): the percentile interval of the resamples with their median bias removed,
      ``[estimate - (q(0.5) - q(tail)), estimate + (q(1 - tail) - q(0.5))]``. It keeps the spread and the
      skew of the resamples but places them at the estimate, so the estimate is inside by construction;
      for a statistic whose resamples centre on the estimate (a mean) it is the plain percentile interval.
    - ``"bc"``: Efron's (1987) bias-corrected percentiles, levels ``Phi(2 z0 -+ z)`` with
      ``z0 = Phi^-1(share of resamples below the estimate)``. It contains the estimate only while
      ``|z0| <= z``, i.e. while the estimate lies inside the central ``confidence`` of its own resamples.
      Folded statistics such as ECE (a sum of ``|mean confidence - accuracy|``) break that on small runs:
      resampling noise mostly adds miscalibration, nearly all resamples sit above the estimate, and BC
      moves the whole interval below it (MMLU's ``platt_ece_10_bin``: 0.085 reported in [0.048, 0.073]).
      BC then describes a de-biased quantity that the report does not print.
    - ``"percentile"``: plain percentiles, which miss the estimate in the same cases, on the other side.

    ``bounds`` (the metric's range) clips the interval: the parameter cannot lie outside it, so clipping
    loses no coverage, and the estimate stays inside. Each column holds one value per instance (e.g.
    confidences and correctness for ECE); a resample draws instance indices with replacement from
    ``numpy.random.default_rng(seed)`` and applies the same indices to every column, so paired values stay
    paired. The same seed gives the same interval. Resamples whose statistic is undefined (None, NaN, or an
    input error such as a class missing from the resample) are dropped; if all are, the interval is (NaN,
    NaN). An undefined estimate has nothing to centre on, so it gets the plain percentiles.

    ``prepare`` (a metric's ``MetricInfo.prepare``) computes the same resampled values from the same index
    matrix, vectorised: ``prepare(*columns)`` does the per-instance work once and returns a ``Resampled``.
    Without it (or when the columns fail its validation) ``statistic`` is called on every resample.
    """
    import numpy as np

    if not columns:
        raise MetricInputError("bootstrap_interval: pass at least one column of per-instance values")
    n = len(columns[0])
    if n == 0 or any(len(column) != n for column in columns):
        raise MetricInputError(f"bootstrap_interval: columns must be non-empty and equally long, got {[len(c) for c in columns]}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricInputError(f"bootstrap_interval: resamples must be a positive integer, got {resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricInputError(f"bootstrap_interval: confidence must be in (0, 1), got {confidence!r}")
    if method not in METHODS:
        raise MetricInputError(f"bootstrap_interval: method must be one of {', '.join(METHODS)}, got {method!r}")
    estimate = _defined(statistic, *columns)
    indices = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    prepared = _prepared(prepare, columns)
    if prepared is None:
        values = _resampled_one_by_one(statistic, columns, indices)
    else:
        values = np.concatenate([np.asarray(prepared(chunk), dtype=float) for chunk in _chunks(indices)])
    values = values[~np.isnan(values)]
    if not len(values):
        return Bootstrap(estimate, math.nan, math.nan, confidence, resamples, seed)
    tail = (1.0 - confidence) / 2
    if math.isnan(estimate) or method == "percentile":
        low, high = (float(q) for q in np.quantile(np.asarray(values), [tail, 1.0 - tail]))
    elif method == "bc":
        low, high = (float(q) for q in np.quantile(np.asarray(values), _bias_corrected(values, estimate, tail)))
    else:
        low, high = _centred(values, estimate, tail)
    if bounds is not None:
        low, high = _clipped(low, high, bounds, estimate)
    return Bootstrap(estimate, low, high, confidence, resamples, seed)


def _prepared(prepare: Callable[..., Resampled] | None, columns: Sequence[Sequence[Any]]) -> Resampled | None:
    """The statistic prepared for ``columns``; None without a preparation or for columns it rejects.

    Columns that fail validation (a NaN confidence) leave the per-resample path to decide, as before, which
    resamples are defined: one that never draws the bad instance still has a value.
    """
    if prepare is None:
        return None
    try:
        return prepare(*columns)
    except MetricInputError:
        return None


def _resampled_one_by_one(
    statistic: Callable[..., float | None], columns: Sequence[Sequence[Any]], indices: np.ndarray
) -> np.ndarray:
    """``statistic`` of each resample (a row of ``indices``), NaN where undefined: the path for metrics without a preparation."""
    import numpy as np

    arrays = [column if isinstance(column, np.ndarray) else _items(column) for column in columns]
    values = [_defined(statistic, *(array[row].tolist() for array in arrays)) for row in indices]
    return np.asarray(values, dtype=float)


def _chunks(indices: np.ndarray) -> list[np.ndarray]:
    """Consecutive row blocks of ``indices`` holding at most ``CHUNK_CELLS`` cells (at least one row each)."""
    rows = max(1, CHUNK_CELLS // indices.shape[1])
    return [indices[start : start + rows] for start in range(0, len(indices), rows)]


def resample_weights(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each resample (row of ``indices``) draws each of the ``n`` instances, as a float (rows x n) matrix.

    A statistic that is a sum over instances of prepared per-instance numbers is then ``weights @ numbers``
    for every resample at once; the multiplicities are small integers, so integer sums stay exact.
    """
    import numpy as np

    rows = indices.shape[0]
    flat = (indices + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(float)


def per_resample(function: Callable[..., float | None], *arrays: np.ndarray) -> Resampled:
    """A ``Resampled`` that calls ``function`` on each resample of already validated ``arrays``.

    For metrics that are cheap per call but check and convert their inputs every time (ECE, selective
    accuracy): the checks run once in the preparation, and each resample gets array slices holding the very
    values the unprepared metric would have converted its lists into, so it pays only for the arithmetic.
    """
    import numpy as np

    def resampled(indices: np.ndarray) -> np.ndarray:
        return np.asarray([_defined(function, *(array[row] for array in arrays)) for row in indices], dtype=float)

    return resampled


def _items(column: Sequence[Any]) -> Any:
    """The column as a 1-d object array: resamples hand the statistic the very values the estimate saw.

    ``numpy.asarray`` would turn mixed labels (``[0, "a"]``) into strings and fail on ragged rows (the
    ranked relevances of queries with different numbers of passages).
    """
    import numpy as np

    items = np.empty(len(column), dtype=object)
    for index, value in enumerate(column):
        items[index] = value
    return items


def _centred(values: Sequence[float], estimate: float, tail: float) -> tuple[float, float]:
    """The resamples' percentile interval moved by their median bias: ``estimate`` minus/plus non-negative spreads."""
    import numpy as np

    low, median, high = (float(q) for q in np.quantile(np.asarray(values), [tail, 0.5, 1.0 - tail]))
    # Spreads of ordered quantiles are >= 0 (max() only guards interpolation rounding), so low <= estimate <= high exactly.
    return estimate - max(median - low, 0.0), estimate + max(high - median, 0.0)


def _clipped(low: float, high: float, bounds: tuple[float, float], estimate: float) -> tuple[float, float]:
    """The interval within the metric's range, never cut past the estimate (which should lie in the range anyway)."""
    if math.isnan(estimate):
        return max(low, bounds[0]), min(high, bounds[1])
    return max(low, min(bounds[0], estimate)), min(high, max(bounds[1], estimate))


def _bias_corrected(values: Sequence[float], estimate: float, tail: float) -> list[float]:
    """Quantile levels of the BC interval; ties with the estimate count half (discrete statistics)."""
    normal = NormalDist()
    count = len(values)
    below = sum(value < estimate for value in values) + 0.5 * sum(value == estimate for value in values)
    share = min(max(below / count, 0.5 / count), 1.0 - 0.5 / count)
    z0 = normal.inv_cdf(share)
    z = normal.inv_cdf(1.0 - tail)
    return [normal.cdf(2 * z0 - z), normal.cdf(2 * z0 + z)]


def _defined(statistic: Callable[..., float | None], *columns: Sequence[Any]) -> float:
    try:
        value = statistic(*columns)
    except MetricInputError:
        return math.nan
    return math.nan if value is None else float(value)


def per_group(values: Sequence[float], groups: Sequence[Hashable]) -> dict[Hashable, Stat]:
    """One ``Stat`` per group of the per-instance ``values``, in sorted group order (by ``str`` if unorderable)."""
    if len(values) != len(groups):
        raise MetricInputError(f"per_group: {len(values)} values but {len(groups)} group labels")
    stats: dict[Hashable, Stat] = {}
    for value, group in zip(values, groups, strict=True):
        stats[group] = stats.get(group, Stat()).add(value)
    try:
        order = sorted(stats)  # type: ignore[type-var]
    except TypeError:
        order = sorted(stats, key=str)
    return {group: stats[group] for group in order}


def _badness(value: float, direction: Direction, optimum: float | None) -> float:
    """One scale on which larger is worse, whatever the metric's direction (gates' default optimum: 0.5)."""
    if direction == "higher":
        return -value
    if direction == "lower":
        return value
    return abs(value - (0.5 if optimum is None else optimum))


def group_extremes(
    stats: Mapping[Hashable, Stat], direction: Direction = "higher", optimum: float | None = None
) -> tuple[Hashable, Hashable] | None:
    """The worst and the best group by the metric's direction (lowest toxicity is best); None when no group has a value.

    Ties go to the first group (worst) and the last group (best) in ``stats``' order, so equal groups still
    name two different groups.
    """
    defined = [group for group, stat in stats.items() if stat.count]
    if not defined:
        return None

    def key(group: Hashable) -> float:
        return _badness(stats[group].mean, direction, optimum)

    return max(defined, key=key), min(reversed(defined), key=key)


def group_gap(stats: Mapping[Hashable, Stat], direction: Direction = "higher", optimum: float | None = None) -> float:
    """How much worse the worst group is than the best; NaN when no group has a value.

    For higher- and lower-is-better metrics this is the max - min of the group means (HELM's disparity);
    for a metric with an optimum it is the difference of the two groups' distances to the optimum, since
    two groups equally far on either side of it are equally good.
    """
    extremes = group_extremes(stats, direction, optimum)
    if extremes is None:
        return math.nan
    worst, best = extremes
    return _badness(stats[worst].mean, direction, optimum) - _badness(stats[best].mean, direction, optimum)
