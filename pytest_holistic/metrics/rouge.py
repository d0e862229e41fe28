"""ROUGE-1, ROUGE-2 and ROUGE-L through Google's ``rouge_score`` package, as HELM uses it.

Source: Lin 2004 (ROUGE); HELM ``evaluate_reference_metrics.py`` (seeds digest §2.1, §2.8):
``RougeScorer([type], use_stemmer=True)``, F-measure, maximum over the correct references.
fmeval calls ROUGE-1/2 "recall-based" (digest §8 C13), so every order also comes as a precision and a
recall variant: ``rouge(order, measure)`` builds them, and the registry holds all nine under the names
``rouge_{1,2,l}`` (F-measure) and ``rouge_{1,2,l}_{precision,recall}``.

Tokenisation is ``rouge_score``'s: lower-case, every run of characters outside [a-z0-9] is a separator,
Porter stemming of tokens longer than three characters. Text in other scripts therefore scores 0.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

from .base import Score, reference_metric

Order = Literal["1", "2", "l"]
Measure = Literal["fmeasure", "precision", "recall"]
ORDERS: tuple[Order, ...] = ("1", "2", "l")
MEASURES: tuple[Measure, ...] = ("fmeasure", "precision", "recall")
_ROUGE_TYPE = {"1": "rouge1", "2": "rouge2", "l": "rougeL"}
HELM_ROUGE = "Lin 2004 (ROUGE); HELM evaluate_reference_metrics.py (rouge_score, use_stemmer=True)"


@functools.cache
def _scorer(rouge_type: str) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer([rouge_type], use_stemmer=True)


def rouge_name(order: Order, measure: Measure = "fmeasure") -> str:
    """Registry name: ``rouge_2`` for the F-measure, ``rouge_2_recall`` for a variant."""
    return f"rouge_{order}" if measure == "fmeasure" else f"rouge_{order}_{measure}"


def rouge(order: Order, measure: Measure = "fmeasure") -> Callable[..., Score]:
    """The metric ``f(prediction, references) -> Score`` for one ROUGE order and measure (one object each)."""
    return _rouge(order, measure)


@functools.cache
def _rouge(order: Order, measure: Measure) -> Callable[..., Score]:
    if order not in ORDERS:
        raise ValueError(f"ROUGE order must be one of {ORDERS}, got {order!r}")
    if measure not in MEASURES:
        raise ValueError(f"ROUGE measure must be one of {MEASURES}, got {measure!r}")
    rouge_type = _ROUGE_TYPE[order]

    def per_reference(gold: str, prediction: str) -> float:
        return float(getattr(_scorer(rouge_type).score(gold, prediction)[rouge_type], measure))

    per_reference.__name__ = per_reference.__qualname__ = rouge_name(order, measure)
    per_reference.__doc__ = f"ROUGE-{order.upper()} {measure} (stemmed), maximum over the correct references."
    return reference_metric(citation=HELM_ROUGE, strip_prediction=True)(per_reference)


rouge_1 = rouge("1")
rouge_2 = rouge("2")
rouge_l = rouge("l")
ALL_ROUGE: tuple[Callable[..., Score], ...] = tuple(rouge(order, measure) for order in ORDERS for measure in MEASURES)
