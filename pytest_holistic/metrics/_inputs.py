"""Input checks shared by the population metrics: one clear error instead of a wrong number."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .base import MetricInputError


def same_length(metric: str, **columns: Sequence[Any]) -> int:
    """The common length of ``columns``; an error naming them if they differ or are empty."""
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name} has {length}" for name, length in lengths.items())
        raise MetricInputError(f"{metric}: inputs must have the same length; {shown}")
    length = next(iter(lengths.values()))
    if length == 0:
        raise MetricInputError(f"{metric}: needs at least one value, got none")
    return length


def finite_floats(metric: str, name: str, values: Sequence[Any], low: float = -math.inf, high: float = math.inf) -> list[float]:
    """``values`` as floats, each finite and within [low, high]; an error naming the first bad one."""
    floats = []
    for index, value in enumerate(values):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise MetricInputError(f"{metric}: {name}[{index}] = {value!r} is not a number") from None
        if not math.isfinite(number) or not low <= number <= high:
            bounds = f" in [{low:g}, {high:g}]" if (low, high) != (-math.inf, math.inf) else ""
            raise MetricInputError(f"{metric}: {name}[{index}] = {value!r} must be a finite number{bounds}")
        floats.append(number)
    return floats


def binary(metric: str, name: str, values: Sequence[Any]) -> list[int]:
    """``values`` as 0/1 integers (booleans, 0/1 or 0.0/1.0); an error naming the first other value."""
    result = []
    for index, value in enumerate(values):
        if isinstance(value, bool) or (not isinstance(value, str) and value in (0, 1)):
            result.append(int(value))
            continue
        raise MetricInputError(f"{metric}: {name}[{index}] = {value!r} must be a boolean or 0/1")
    return result
