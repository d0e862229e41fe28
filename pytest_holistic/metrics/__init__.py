"""Metrics: pure functions returning a named :class:`Score`, and the registry that gates consult."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..errors import UserError
from .accuracy import exact_match, f1_score, normalize_text, prefix_exact_match, quasi_exact_match, quasi_prefix_exact_match
from .base import MetricInfo, Score
from .stats import Stat

BUILTIN: Mapping[str, MetricInfo] = MappingProxyType(
    {
        function.info.name: function.info  # type: ignore[attr-defined]
        for function in (exact_match, quasi_exact_match, prefix_exact_match, quasi_prefix_exact_match, f1_score)
    }
)


def lookup(name: str) -> MetricInfo:
    """The built-in metric called ``name``, or a user error listing the known names."""
    try:
        return BUILTIN[name]
    except KeyError:
        raise UserError(f"unknown metric {name!r}; known metrics: {', '.join(sorted(BUILTIN))}") from None


__all__ = [
    "BUILTIN",
    "MetricInfo",
    "Score",
    "Stat",
    "exact_match",
    "f1_score",
    "lookup",
    "normalize_text",
    "prefix_exact_match",
    "quasi_exact_match",
    "quasi_prefix_exact_match",
]
