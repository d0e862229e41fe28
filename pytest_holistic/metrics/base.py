"""What a metric is: a pure function returning a named ``Score``, plus metadata for gates and reports."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ..errors import UserError
from ..scenarios.instance import Reference

Direction = Literal["higher", "lower", "target"]
"""Which way is better. ``"target"`` means closest to ``MetricInfo.optimum`` (CrowS-Pairs stereotyping: 0.5)."""

F = TypeVar("F", bound=Callable[..., Any])
Kind = Literal["instance", "population"]
"""``instance``: ``f(prediction, references) -> Score``, averaged over instances (lives in ``BUILTIN``).
``population``: a function of whole-scenario arrays (accuracy over labels, ECE, bias); lives in ``POPULATION``."""


class MetricInputError(UserError, ValueError):
    """Inputs a metric cannot score: empty, mismatched lengths, NaN, out of range. The message says which."""


class Score(float):
    """A float that knows which metric produced it, so ``record(exact_match(...))`` needs no name.

    It behaves as a plain number in asserts and arithmetic (``assert quasi_exact_match(p, refs)``).
    """

    metric: str

    def __new__(cls, value: float, metric: str) -> Score:
        score = super().__new__(cls, value)
        score.metric = metric
        return score

    def __getnewargs__(self) -> tuple[float, str]:  # type: ignore[override]
        return (float(self), self.metric)

    def __repr__(self) -> str:
        return f"{self.metric}={float(self):.4g}"


@dataclass(frozen=True)
class MetricInfo:
    """Metadata that gates and reports need: direction, bounds and where the definition comes from."""

    name: str
    direction: Direction
    bounds: tuple[float, float]
    citation: str
    function: Callable[..., Any]
    kind: Kind = "instance"
    optimum: float | None = None
    inputs: str = "prediction, references"


def correct_texts(references: Iterable[str | Reference]) -> tuple[str, ...]:
    """The correct reference texts; plain strings count as correct."""
    texts = []
    for reference in references:
        if isinstance(reference, Reference):
            if reference.correct:
                texts.append(reference.text)
        else:
            texts.append(str(reference))
    return tuple(texts)


def reference_metric(
    *, direction: Direction = "higher", bounds: tuple[float, float] = (0.0, 1.0), citation: str
) -> Callable[[Callable[[str, str], float]], Callable[..., Score]]:
    """Lift ``f(gold, prediction) -> float`` into ``metric(prediction, references) -> Score``.

    The instance score is the maximum over the correct references (HELM); no correct reference gives 0.
    """

    def decorate(per_reference: Callable[[str, str], float]) -> Callable[..., Score]:
        name = per_reference.__name__

        @functools.wraps(per_reference)
        def metric(prediction: str, references: Iterable[str | Reference] | str) -> Score:
            if isinstance(references, str | Reference):
                references = (references,)
            golds = correct_texts(references)
            value = max((per_reference(gold, prediction) for gold in golds), default=0.0)
            return Score(value, name)

        metric.info = MetricInfo(name, direction, bounds, citation, metric)  # type: ignore[attr-defined]
        return metric

    return decorate


def info_of(function: Any) -> MetricInfo:
    return function.info


def population_metric(
    name: str,
    *,
    direction: Direction,
    bounds: tuple[float, float],
    citation: str,
    inputs: str,
    optimum: float | None = None,
) -> Callable[[F], F]:
    """Attach population ``MetricInfo`` to ``function`` (as ``function.info``) without changing what it returns.

    ``name`` is the registry (and gate) name, e.g. ``ece_10_bin``; ``inputs`` names the arguments the
    function takes, so reports and callers know what to pass.
    """

    def decorate(function: F) -> F:
        function.info = MetricInfo(  # type: ignore[attr-defined]
            name, direction, bounds, citation, function, kind="population", optimum=optimum, inputs=inputs
        )
        return function

    return decorate
