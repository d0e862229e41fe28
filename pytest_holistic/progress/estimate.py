"""How long is left, as a range as wide as what was seen so far is uneven.

A point estimate from the rate so far reads as a promise: one batch of long prompts after a few short ones, and
"about 13 s left" becomes minutes. Here each finished batch (or each window of finished items) gives its seconds
per unit of work, a unit being whatever the caller counts (a request, a character of prompt); the time left is
the remaining work at the mean rate give or take one standard deviation of those rates (each weighed by its
work), kept within the fastest and the slowest rate seen. Units that scale with a batch's length (characters
rather than requests, or the seconds an item took last time) keep the range honest when the work still to come
is heavier than the work done. Before two samples it is unknown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def duration(seconds: float) -> str:
    """A duration in words: ``59 s``, ``2 min 05 s``, ``2 h 01 min``."""
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 90:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def span(low: float, high: float) -> str:
    """A range of seconds in words, rounded outwards so it holds both ends: ``about 20-40 s``, ``under 3 min``;
    ``about 4 min`` when both ends round to the same number."""
    unit, size = ("s", 1) if high < 90 else ("min", 60) if high < 90 * 60 else ("h", 3600)
    if round(low / size) == round(high / size):  # as good as one number
        return f"about {max(1, round(high / size))} {unit}"
    lo, hi = math.floor(low / size), math.ceil(high / size)
    if lo <= 0:
        return f"under {hi} {unit}"
    return f"about {lo}-{hi} {unit}"


@dataclass
class TimeLeft:
    """Seconds per unit of work, one sample per finished batch; the time the remaining work takes, in words."""

    rates: list[float] = field(default_factory=list)
    units: list[float] = field(default_factory=list)  # each sample's weight: a window of little work says little

    def add(self, units: float, seconds: float) -> None:
        if units > 0 and seconds >= 0:
            self.rates.append(seconds / units)
            self.units.append(units)

    def bounds(self, remaining: float) -> tuple[float, float] | None:
        """The shortest and the longest plausible time for ``remaining`` units; None before two samples.

        The rates are weighed by their samples' work: the mean is the whole time over the whole work done, and a
        window that finished one short item while a long one ran says as little as the work it finished.
        """
        count = len(self.rates)
        if count < 2:
            return None
        weight = math.fsum(self.units)
        mean = math.fsum(rate * units for rate, units in zip(self.rates, self.units, strict=True)) / weight
        variance = math.fsum(units * (rate - mean) ** 2 for rate, units in zip(self.rates, self.units, strict=True)) / weight
        spread = math.sqrt(variance * count / (count - 1))  # the sample deviation when every sample weighs the same
        low, high = max(min(self.rates), mean - spread), min(max(self.rates), mean + spread)
        return remaining * low, remaining * high

    def text(self, remaining: float) -> str:
        found = self.bounds(remaining)
        return "time left unknown" if found is None else f"{span(*found)} left"
