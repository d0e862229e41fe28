"""Scenario statistics: a mergeable summary (``Stat``), a seeded bootstrap, and per-group breakdowns.

``Stat`` keeps count, mean and the sum of squared deviations (Welford; Chan et al. for merging) rather
than raw sums of squares, which lose all precision when values are large and close together, so
per-worker partials combine to the serial answer (the report merges each worker's per-batch model time).
Scenario metrics are computed on the controller from every record instead, because their bootstrap
intervals and the population metrics need the values themselves, not a summary.

``bootstrap_interval`` resamples instances with replacement (Efron 1979; percentile method) for any
scenario-level statistic, e.g. ECE or balanced accuracy, where no closed-form interval exists.
``per_group`` and ``group_gap`` give HELM's performance disparities (seeds digest §2.4 (ii), §8 A8):
the metric on each group's subset, and the max - min gap as an optional summary.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import MetricInputError

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


@dataclass(frozen=True)
class Bootstrap:
    """A statistic's value on the data and its percentile bootstrap interval."""

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


def bootstrap_interval(
    statistic: Callable[..., float | None],
    *columns: Sequence[Any],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
    method: str = "bc",
) -> Bootstrap:
    """Bootstrap interval of ``statistic(*columns)`` over instances: bias-corrected percentiles by default.

    Plain percentiles (``method="percentile"``) can leave the estimate outside its own interval for
    biased statistics such as ECE on small samples; the bias correction (Efron 1987, "BC") shifts the
    percentiles by how far the estimate sits from the resamples' median.

    Each column holds one value per instance (e.g. confidences and correctness for ECE); a resample draws
    instance indices with replacement from ``numpy.random.default_rng(seed)`` and applies the same indices
    to every column, so paired values stay paired. The same seed gives the same interval. Resamples whose
    statistic is undefined (None, NaN, or an input error such as a class missing from the resample) are
    dropped; if all are, the interval is (NaN, NaN).
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
    arrays = [np.asarray(column) if not isinstance(column, np.ndarray) else column for column in columns]
    estimate = _defined(statistic, *columns)
    rng = np.random.default_rng(seed)
    values = []
    for indices in rng.integers(0, n, size=(resamples, n)):
        value = _defined(statistic, *(array[indices].tolist() for array in arrays))
        if not math.isnan(value):
            values.append(value)
    if not values:
        return Bootstrap(estimate, math.nan, math.nan, confidence, resamples, seed)
    tail = (1.0 - confidence) / 2
    quantiles = [tail, 1.0 - tail]
    if method == "bc" and not math.isnan(estimate):
        quantiles = _bias_corrected(values, estimate, tail)
    elif method not in ("bc", "percentile"):
        raise MetricInputError(f"bootstrap_interval: method must be 'bc' or 'percentile', got {method!r}")
    low, high = np.quantile(np.asarray(values), quantiles)
    return Bootstrap(estimate, float(low), float(high), confidence, resamples, seed)


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


def group_gap(stats: Mapping[Hashable, Stat]) -> float:
    """Best minus worst group mean (max - min); NaN when no group has a value."""
    means = [stat.mean for stat in stats.values() if stat.count]
    return max(means) - min(means) if means else math.nan
