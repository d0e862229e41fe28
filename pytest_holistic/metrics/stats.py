"""A mergeable summary statistic, so per-worker partials combine to the serial answer.

It keeps count, mean and the sum of squared deviations (Welford; Chan et al. for merging) rather
than raw sums of squares, which lose all precision when values are large and close together.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

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
