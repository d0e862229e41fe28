"""A mergeable summary statistic, so per-worker partials combine to the serial answer."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Stat:
    """Count, sum, sum of squares, min and max of a metric's per-instance values."""

    count: int = 0
    total: float = 0.0
    sum_squares: float = 0.0
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
        return Stat(self.count + 1, self.total + value, self.sum_squares + value * value, min(self.min, value), max(self.max, value))

    def merge(self, other: Stat) -> Stat:
        return Stat(
            self.count + other.count,
            self.total + other.total,
            self.sum_squares + other.sum_squares,
            min(self.min, other.min),
            max(self.max, other.max),
        )

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else math.nan

    @property
    def variance(self) -> float:
        """Sample variance (n - 1 denominator); 0 for a single value."""
        if self.count < 2:
            return 0.0
        centered = self.sum_squares - self.total * self.total / self.count
        return max(centered, 0.0) / (self.count - 1)

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
