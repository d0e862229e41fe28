"""What a metric is: a pure function returning a named ``Score``, plus metadata for gates and reports.

Three kinds, each with its own registry in :mod:`pytest_holistic.metrics`:

* ``instance``: ``f(prediction, references) -> Score`` per item, averaged over the run;
* ``population``: a function of whole-run columns (ECE, balanced accuracy, toxic fraction...);
* ``scored``: a per-item score that another model gives the answer (a toxicity classifier; judges
  later), computed in batches on the worker next to the answer.

``MetricInfo.family`` says which HELM family a metric reports under, and ``inputs`` names, as typed
``Column`` values, what the metric consumes, so collection can refuse a metric whose inputs the adapter
cannot produce and aggregation can build its arrays without parsing text.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, TypeVar, runtime_checkable

from ..errors import HolisticError, UserError
from ..options import Option
from ..scenarios.instance import Reference

if TYPE_CHECKING:
    import numpy as np

Direction = Literal["higher", "lower", "target"]
"""Which way is better. ``"target"`` means closest to ``MetricInfo.optimum`` (CrowS-Pairs stereotyping: 0.5)."""

Family = Literal["accuracy", "calibration", "robustness", "equivariance", "fairness", "bias", "toxicity", "efficiency", "custom"]
"""HELM's metric families, plus ``equivariance`` (contrast sets, which HELM files under robustness but whose
answers are meant to change) and ``custom`` for scores a test records under its own name."""
FAMILIES: tuple[Family, ...] = (
    "accuracy",
    "calibration",
    "robustness",
    "equivariance",
    "fairness",
    "bias",
    "toxicity",
    "custom",
    "efficiency",
)
EFFICIENCY = ("runtime_s", "tokens_in", "tokens_out", "throughput", "tokens_per_s")
"""The efficiency figures of every run, from its items' execution (not per-instance scores)."""

F = TypeVar("F", bound=Callable[..., Any])
Kind = Literal["instance", "population", "scored"]


class Column(Enum):
    """One array a metric consumes, with one entry per answered instance of the run (value: what it holds)."""

    TEXT = "the text of each answer"
    REFERENCES = "the correct outputs of each instance"
    GOLD_LABEL = "the correct label of each instance"
    PREDICTED_LABEL = "the label each answer chose"
    CONFIDENCE = "the probability the model gave each answer"
    CORRECT = "whether each answer is right"
    NUM_CHOICES = "the number of options of each instance"
    LOGPROB_MORE = "the log-probabilities of two sentences (the more stereotypical one, tagged correct)"
    LOGPROB_LESS = "the log-probabilities of two sentences (the less stereotypical one)"
    DOCUMENT_LOGPROB = "the total log-probability of each document"
    NUM_BYTES = "the number of bytes of each document"
    NUM_TOKENS = "the number of tokens of each document"
    RANKED_RELEVANCES = "the relevance of each ranked passage, per query"
    BBQ_ANSWER = (
        "the BBQ context and question type of each instance and the role (target, non_target, unknown, other) of its answer"
    )
    SOURCE_TEXT = "the input text of each instance (the article a summary summarises)"
    RANKED_GOLD = "whether each ranked passage is a gold match (1) or not (0), per query"
    CLASS_ANSWER = "the correct labels of each instance and the label its answer gave, as HELM's classification F1 reads them"


INSTANCE_COLUMNS: frozenset[Column] = frozenset({Column.BBQ_ANSWER})
"""Columns read from the instance's own tags next to the answer, so every adapter can feed them."""


@dataclass(frozen=True)
class ScoresOf:
    """The per-instance values of another metric (e.g. the ``toxicity`` score of every answer).

    ``nested``: one list per instance (several completions each), as HELM's expected maximum toxicity takes.
    """

    metric: str
    nested: bool = False

    @property
    def value(self) -> str:
        return f"the {self.metric} score of each answer"


Input = Column | ScoresOf


class Resampled(Protocol):
    """A population metric prepared once for a run's columns, then evaluated on many bootstrap resamples at once.

    The bootstrap recomputes a metric about a thousand times; whatever the metric does per instance (tokenise
    a text, validate a value) should happen once, and each resample only re-weigh the prepared numbers.
    """

    def __call__(self, indices: np.ndarray) -> np.ndarray:
        """One value per row of ``indices`` (resamples x instances, drawn with replacement); NaN where undefined.

        Each value must equal what the metric's function returns on the resampled columns
        (``columns[k][row]``), with None or a ``MetricInputError`` read as NaN.
        """
        ...


class MetricInputError(UserError, ValueError):
    """Inputs a metric cannot score: empty, mismatched lengths, NaN, out of range. The message says which."""


class ScorerUnavailable(HolisticError):
    """A scoring model cannot run in this environment; ``str(error)`` is a one-line skip reason."""


class ScorerError(HolisticError):
    """A scoring model ran but failed (HTTP error, malformed answer): an error outcome, never a score of 0."""


class Score(float):
    """A float that knows which metric produced it, so ``record(exact_match(...))`` needs no name.

    It behaves as a plain number in asserts and arithmetic (``assert quasi_exact_match(p, refs)``).
    """

    metric: str

    def __new__(cls, value: float, metric: str) -> Self:
        score = super().__new__(cls, value)
        score.metric = metric
        return score

    def __getnewargs__(self) -> tuple[float, str]:  # type: ignore[override]
        return (float(self), self.metric)

    def __repr__(self) -> str:
        return f"{self.metric}={float(self):.4g}"


@dataclass(frozen=True)
class MetricInfo:
    """Metadata that gates and reports need: family, direction, bounds, inputs and where the definition comes from."""

    name: str
    direction: Direction
    bounds: tuple[float, float]
    citation: str
    function: Callable[..., Any]
    kind: Kind = "instance"
    optimum: float | None = None
    inputs: tuple[Input, ...] = (Column.TEXT, Column.REFERENCES)
    family: Family = field(kw_only=True)
    prepare: Callable[..., Resampled] | None = field(default=None, kw_only=True)
    """``prepare(*columns)``: the metric made ready for bootstrap resampling (see ``Resampled``); None: call ``function`` per resample."""


@runtime_checkable
class Scorer(Protocol):
    """A model that turns answer texts into per-answer scores (a toxicity classifier, a judge)."""

    name: str

    @property
    def version(self) -> str:
        """Which weights or code scored (a class attribute, an instance attribute or a property)."""
        ...

    def score(self, texts: Sequence[str]) -> list[float]:
        """One score per text, in order."""
        ...


@runtime_checkable
class ContextScorer(Protocol):
    """A scorer that also reads one more column per text: the references (METEOR, BERTScore) or the source text."""

    name: str

    @property
    def version(self) -> str:
        """Which weights or code scored (a class attribute, an instance attribute or a property)."""
        ...

    def score(self, texts: Sequence[str], context: Sequence[Any], /) -> list[float]:
        """One score per text, in order; ``context[i]`` is what ``texts[i]`` is scored against."""
        ...


@dataclass(frozen=True)
class ScoredMetric:
    """A per-instance metric that a scoring model computes; the user picks the model with one option, declared here.

    ``make_scorer(spec)`` builds the scorer (importing its libraries only then) from the value of ``option``, ``""``
    for a metric without one, and may raise ``ScorerUnavailable``. The option's own ``parse`` checks the value at
    start-up, so a model-scored metric and its option live in one module and the settings know neither.
    """

    info: MetricInfo
    make_scorer: Callable[[str], Scorer | ContextScorer]
    option: Option[str] | None = None

    @property
    def name(self) -> str:
        return self.info.name


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
    *,
    direction: Direction = "higher",
    bounds: tuple[float, float] = (0.0, 1.0),
    citation: str,
    family: Family = "accuracy",
    strip_prediction: bool = False,
) -> Callable[[Callable[[str, str], float]], Callable[..., Score]]:
    """Lift ``f(gold, prediction) -> float`` into ``metric(prediction, references) -> Score``.

    The instance score is the maximum over the correct references (HELM); no correct reference gives 0.
    ``strip_prediction``: the prediction is stripped before any reference sees it, as HELM's
    ``compute_reference_metrics`` strips every completion, so a blank answer is an empty one (which HELM's
    functions score 0) even against a blank reference. The undecorated function stays ``metric.__wrapped__``.
    """

    def decorate(per_reference: Callable[[str, str], float]) -> Callable[..., Score]:
        name = per_reference.__name__

        @functools.wraps(per_reference)
        def metric(prediction: str, references: Iterable[str | Reference] | str) -> Score:
            if isinstance(references, str | Reference):
                references = (references,)
            golds = correct_texts(references)
            seen = prediction.strip() if strip_prediction else prediction
            value = max((per_reference(gold, seen) for gold in golds), default=0.0)
            return Score(value, name)

        metric.info = MetricInfo(name, direction, bounds, citation, metric, family=family)  # type: ignore[attr-defined]
        return metric

    return decorate


def population_metric(
    name: str,
    *,
    family: Family,
    direction: Direction,
    bounds: tuple[float, float],
    citation: str,
    inputs: Sequence[Input],
    optimum: float | None = None,
    prepare: Callable[..., Resampled] | None = None,
) -> Callable[[F], F]:
    """Attach population ``MetricInfo`` to ``function`` (as ``function.info``) without changing what it returns.

    ``name`` is the registry (and gate) name, e.g. ``ece_10_bin``; ``inputs`` are the columns the function
    takes, in order, so aggregation knows what to pass and collection what the adapter must produce.
    ``prepare`` (optional) gives the bootstrap a vectorised form of the same function (see ``Resampled``).
    """

    def decorate(function: F) -> F:
        function.info = MetricInfo(  # type: ignore[attr-defined]
            name,
            direction,
            bounds,
            citation,
            function,
            kind="population",
            optimum=optimum,
            inputs=tuple(inputs),
            family=family,
            prepare=prepare,
        )
        return function

    return decorate
