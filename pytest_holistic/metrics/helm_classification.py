"""HELM's population F1 of a classification run: ``classification_macro_f1`` and ``classification_micro_f1``.

HELM 0.5.16 (``helm/benchmark/metrics/classification_metrics.py``) has two rules for these numbers, picked by the
run's adapter; :class:`ClassAnswer` carries which one applies to an answer.

* Generated answers (``ClassificationMetric``; ``get_classification_metric_specs``, used by the core IMDB,
  CivilComments and RAFT run specs, none of which passes labels or a delimiter). Labels are compared in HELM's
  label form: lower case, ASCII punctuation removed, whitespace runs made single spaces, articles kept
  (:func:`normalize_label`; empty texts are dropped first). The classes are the given ``labels`` in that form or,
  when none are given, the true labels of the instances. A true label or an answer outside the classes counts
  for no class: a wrong answer that names no label is a false negative of the true class but a false positive
  of nothing, so it lowers recall only. A ``delimiter`` splits each answer into several labels (HELM's
  multi-label runs). Without one, HELM refuses an instance with several correct references; here they are all
  its true labels.
* Answers that pick an option (``MultipleChoiceClassificationMetric``): the true class is the text of the first
  correct option, the predicted one the text of the chosen option, or the answer itself when it names none.
  Nothing is normalised and every text on either side is a class, so an answer outside the options is a class
  of its own, with F1 0, that lowers the macro average (scikit-learn's convention).

Per class F1 = 2 TP / (2 TP + FP + FN), 0 for a class neither true nor predicted (a given label no instance
has); macro is the unweighted mean over the classes, micro pools the counts of all classes first. Two cases
follow from how HELM hands its generated answers to scikit-learn, as a matrix with one column per class:

* one class (a run whose gold labels are all ``True``, or one given label): scikit-learn reads the single column
  as binary labels, so "not that class" is scored as a second class, which an answer outside the class hits
  when the truth is outside it too; micro F1 is then the share of instances whose answer and truth agree on
  the class;
* no class at all (every gold text empty): undefined, None here, an error from scikit-learn in HELM.

Every count is a sum over instances, so a bootstrap resample needs only how often it drew each instance
(:func:`prepare_f1`); the unresampled value takes the same path with every weight 1, so both agree exactly.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple

from .base import Column, MetricInputError, Resampled, population_metric
from .stats import resample_weights

if TYPE_CHECKING:
    import numpy as np

Average = Literal["macro", "micro"]
HELM_CLASSIFICATION = (
    "Liang et al. 2022 (HELM) classification_metrics.py: ClassificationMetric (generation) and "
    "MultipleChoiceClassificationMetric (multiple choice), population F1"
)
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_BLOCK = 1 << 21
"""Resamples are weighed in blocks of about this many (resample, instance) cells, to bound the memory of a large run."""


class ClassAnswer(NamedTuple):
    """One instance as HELM's classification metrics read it.

    ``golds``: the texts of its correct references (generation) or of its correct options, first one first (multiple
    choice). ``prediction``: the answer text (generation), or the chosen option's text, else the stripped answer
    (multiple choice). ``multiple_choice`` picks the rule.
    """

    golds: tuple[str, ...]
    prediction: str
    multiple_choice: bool


def normalize_label(text: str) -> str:
    """HELM's label form: lower case, no ASCII punctuation, single spaces. Articles stay: ``the cat`` is not ``cat``."""
    return " ".join(text.lower().translate(_PUNCTUATION).split())


@dataclass(frozen=True)
class _Classes:
    """The run's answers as class indices: per instance its true and its predicted classes, as (instance, class) pairs.

    ``active`` says which classes a (resampled) run averages over: ``given`` all of them, ``true`` those some drawn
    instance has as its true class (labels inferred from the gold labels), ``seen`` those drawn on either side.
    """

    size: int
    n: int
    active: Literal["given", "true", "seen"]
    true: tuple[tuple[int, int], ...]  # sorted by class
    predicted: tuple[tuple[int, int], ...]
    hits: tuple[tuple[int, int], ...]


def _answers(metric: str, answers: Sequence[ClassAnswer]) -> list[ClassAnswer]:
    if not answers:
        raise MetricInputError(f"{metric}: needs at least one answer, got none")
    checked = []
    for index, answer in enumerate(answers):
        try:
            golds, prediction, multiple_choice = answer
        except (TypeError, ValueError):
            raise MetricInputError(
                f"{metric}: answers[{index}] = {answer!r} is not (golds, prediction, multiple_choice)"
            ) from None
        if isinstance(golds, str) or not all(isinstance(gold, str) for gold in golds) or not isinstance(prediction, str):
            raise MetricInputError(f"{metric}: answers[{index}] = {answer!r} needs a tuple of gold texts and a prediction text")
        checked.append(ClassAnswer(tuple(golds), prediction, bool(multiple_choice)))
    return checked


def _classes(metric: str, answers: Sequence[ClassAnswer], labels: Sequence[str] | None, delimiter: str | None) -> _Classes:
    """Apply the rule the answers call for (see the module docstring) and number the classes."""
    answers = _answers(metric, answers)
    kinds = {answer.multiple_choice for answer in answers}
    if len(kinds) > 1:
        raise MetricInputError(f"{metric}: the answers mix generated ones and chosen options; one run has one adapter")
    active: Literal["given", "true", "seen"]
    truths: list[tuple[str, ...]]
    guesses: list[tuple[str, ...]]
    if kinds == {True}:
        if labels or delimiter:
            raise MetricInputError(
                f"{metric}: labels and delimiter apply to generated answers; HELM's multiple-choice rule takes neither"
            )
        if not all(answer.golds for answer in answers):
            raise MetricInputError(f"{metric}: every multiple-choice answer needs its instance's correct option")
        truths = [answer.golds[:1] for answer in answers]
        guesses = [(answer.prediction,) for answer in answers]
        names = sorted({text for pair in zip(truths, guesses, strict=True) for side in pair for text in side})
        active = "seen"
    else:
        truths = [tuple(normalize_label(gold) for gold in answer.golds if gold) for answer in answers]
        pieces = [answer.prediction.split(delimiter) if delimiter else [answer.prediction] for answer in answers]
        guesses = [tuple(normalize_label(piece) for piece in split if piece) for split in pieces]
        if labels:
            names, active = sorted({normalize_label(label) for label in labels}), "given"
        else:
            names, active = sorted({text for truth in truths for text in truth}), "true"
    number = {name: index for index, name in enumerate(names)}

    def pairs(sides: list[tuple[str, ...]]) -> list[set[int]]:
        return [{number[text] for text in side if text in number} for side in sides]

    def flat(sets: list[set[int]]) -> tuple[tuple[int, int], ...]:
        return tuple(sorted(((index, cls) for index, chosen in enumerate(sets) for cls in chosen), key=lambda pair: pair[1]))

    true, predicted = pairs(truths), pairs(guesses)
    hits = [t & p for t, p in zip(true, predicted, strict=True)]
    return _Classes(len(names), len(answers), active, flat(true), flat(predicted), flat(hits))


def _per_class(weights: np.ndarray, pairs: tuple[tuple[int, int], ...], size: int) -> np.ndarray:
    """For each resample (row of ``weights``) and class, how many drawn instances have that class on this side.

    ``pairs`` are (instance, class), sorted by class, so each class's weights are summed over one contiguous run.
    """
    import numpy as np

    counts = np.zeros((weights.shape[0], size))
    if pairs:
        instances = np.asarray([instance for instance, _ in pairs])
        classes = np.asarray([cls for _, cls in pairs])
        starts = np.flatnonzero(np.diff(classes, prepend=-1))
        counts[:, classes[starts]] = np.add.reduceat(weights[:, instances], starts, axis=1)
    return counts


def _averaged(true: np.ndarray, predicted: np.ndarray, hits: np.ndarray, active: np.ndarray, average: Average) -> np.ndarray:
    """Per resample (row), the F1 of the active classes from their counts; NaN where no class is active."""
    import numpy as np

    seen = true + predicted  # 2 TP + FP + FN; the counts are small integers, so every sum below is exact
    defined = np.asarray(active.any(axis=1))
    if average == "micro":
        pooled, doubled = (seen * active).sum(axis=1), (2 * hits * active).sum(axis=1)
        micro = np.divide(doubled, pooled, out=np.zeros(len(pooled)), where=pooled > 0)
        return np.where(defined, micro, np.nan)
    per_class = np.divide(2 * hits, seen, out=np.zeros(seen.shape), where=seen > 0)
    # fsum: correctly rounded, so a resample's mean does not depend on how numpy would group the additions
    return np.asarray(
        [
            math.fsum(row[mask]) / mask.sum() if any_ else math.nan
            for row, mask, any_ in zip(per_class, active, defined, strict=True)
        ]
    )


def _f1(classes: _Classes, average: Average) -> Callable[[np.ndarray], np.ndarray]:
    """Weights (resamples x instances) -> one F1 per resample, NaN where no class is active."""
    import numpy as np

    def values(weights: np.ndarray) -> np.ndarray:
        true, predicted, hits = (
            _per_class(weights, side, classes.size) for side in (classes.true, classes.predicted, classes.hits)
        )
        if classes.active == "given":
            active = np.ones(true.shape, dtype=bool)
        else:
            active = (true if classes.active == "true" else true + predicted) > 0
        scores = _averaged(true, predicted, hits, active, average)
        one = active.sum(axis=1) == 1
        if classes.active == "seen" or not one.any():
            return scores
        # One class: HELM's indicator matrix has one column, which scikit-learn reads as binary labels, so
        # "not that class" is scored as a second class (an answer and a truth both outside it are a hit).
        total = weights.sum(axis=1)
        t, p, h = ((side * active).sum(axis=1) for side in (true, predicted, hits))
        true2, predicted2 = np.stack([t, total - t], axis=1), np.stack([p, total - p], axis=1)
        hits2 = np.stack([h, total - t - p + h], axis=1)
        binary = _averaged(true2, predicted2, hits2, true2 + predicted2 > 0, average)
        return np.where(one, binary, scores)

    return values


def prepare_f1(average: Average, labels: Sequence[str] | None = None, delimiter: str | None = None) -> Callable[..., Resampled]:
    """The metric prepared for the bootstrap: the answers are normalised and numbered once, each resample only weighed."""

    def prepare(answers: Sequence[ClassAnswer]) -> Resampled:
        import numpy as np

        classes = _classes(f"classification_{average}_f1", answers, labels, delimiter)
        values = _f1(classes, average)
        block = max(1, _BLOCK // classes.n)

        def resampled(indices: np.ndarray) -> np.ndarray:
            parts = [
                values(resample_weights(indices[start : start + block], classes.n)) for start in range(0, len(indices), block)
            ]
            return np.concatenate(parts) if parts else np.zeros(0)

        return resampled

    return prepare


def classification_f1(
    answers: Sequence[ClassAnswer],
    average: Average = "macro",
    *,
    labels: Sequence[str] | None = None,
    delimiter: str | None = None,
) -> float | None:
    """HELM's ``classification_{average}_f1`` of a run's answers; None when there is no class to score.

    ``labels`` (generated answers only) fixes the classes, as HELM's metric argument does; without it they are the
    instances' true labels. ``delimiter`` splits each generated answer into several labels.
    """
    import numpy as np

    if average not in ("macro", "micro"):
        raise MetricInputError(f"classification_f1: average must be 'macro' or 'micro', got {average!r}")
    value = float(prepare_f1(average, labels, delimiter)(answers)(np.arange(len(answers))[None, :])[0])
    return None if math.isnan(value) else value


def _registered(average: Average) -> Callable[[Sequence[ClassAnswer]], float | None]:
    def metric(answers: Sequence[ClassAnswer]) -> float | None:
        return classification_f1(answers, average)

    name = f"classification_{average}_f1"
    metric.__name__ = metric.__qualname__ = name
    metric.__doc__ = (
        f"HELM's {name} with its default arguments (classes from the gold labels, one label per answer), "
        "the rule picked by the adapter: see the module docstring."
    )
    return population_metric(
        name,
        direction="higher",
        bounds=(0.0, 1.0),
        citation=HELM_CLASSIFICATION,
        family="accuracy",
        inputs=(Column.CLASS_ANSWER,),
        prepare=prepare_f1(average),
    )(metric)


classification_macro_f1 = _registered("macro")
classification_micro_f1 = _registered("micro")
REGISTERED = (classification_macro_f1, classification_micro_f1)
