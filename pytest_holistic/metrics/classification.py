"""Dataset-level classification metrics with scikit-learn's semantics, in plain Python.

Sources: fmeval classification accuracy (seeds digest §2.1, ``004_dd35effd67fc4985.txt`` L74-78,
L226-241): accuracy, balanced accuracy and precision/recall with a multiclass averaging strategy whose
semantics "follow scikit-learn"; Catwalk (``001_043c1860632fa768.txt`` L357-361) for the relative
improvement over the random baseline.

- Per label ``l``: TP = #(true = l and predicted = l), predicted count, true count.
  precision_l = TP / predicted, recall_l = TP / true, F1_l = 2 TP / (predicted + true); 0 when undefined
  (scikit-learn's ``zero_division=0``).
- ``micro`` pools the counts of all labels first; ``macro`` is the unweighted mean over labels;
  ``weighted`` weights each label by its true count (0 if no label has any true instance).
- Labels are those given, or else the sorted union of true and predicted labels.
- Balanced accuracy is the mean recall over the classes present in the true labels (not "accuracy in the
  binary case", digest §8 C12).

Written in Python rather than calling scikit-learn so the plugin needs no heavy import to score a run;
the unit tests check agreement with scikit-learn on random inputs.

HELM's own classification F1 (``classification_macro_f1``, ``classification_micro_f1`` in
:mod:`.helm_classification`) differs for generated answers: it takes its classes from the gold labels and counts
an answer outside them for no class, so such an answer is a miss but no false positive and no extra class in the
macro mean; here every label seen on either side is a class, and micro F1 equals accuracy.
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Literal, cast

from ._inputs import binary, finite_floats, same_length
from .base import Column, MetricInputError, population_metric

Average = Literal["micro", "macro", "weighted"]
AVERAGES: tuple[Average, ...] = ("micro", "macro", "weighted")
FMEVAL = "Amazon fmeval classification_accuracy (scikit-learn semantics, zero_division=0)"
CATWALK = "Groeneveld et al. 2023 (Catwalk): relative improvement over the random baseline, 100*(acc - b)/b"


def _label_order(labels: set[Hashable]) -> list[Hashable]:
    try:
        return sorted(labels)  # type: ignore[type-var]
    except TypeError:
        return sorted(labels, key=lambda label: (type(label).__name__, repr(label)))


def _counts(
    metric: str, y_true: Sequence[Hashable], y_pred: Sequence[Hashable], labels: Sequence[Hashable] | None
) -> tuple[list[Hashable], Counter[Hashable], Counter[Hashable], Counter[Hashable]]:
    same_length(metric, y_true=y_true, y_pred=y_pred)
    if labels is None:
        order = _label_order(set(y_true) | set(y_pred))
    else:
        order = list(dict.fromkeys(labels))
        if not order:
            raise MetricInputError(f"{metric}: labels must name at least one label")
    hits = Counter(t for t, p in zip(y_true, y_pred, strict=True) if t == p)
    return order, hits, Counter(y_pred), Counter(y_true)


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def _average(per_label: list[float], support: list[int], average: Average, metric: str) -> float:
    if average == "macro":
        return sum(per_label) / len(per_label)
    if average == "weighted":
        total = sum(support)
        return _ratio(sum(value * weight for value, weight in zip(per_label, support, strict=True)), total)
    raise MetricInputError(f"{metric}: average must be one of {AVERAGES}, got {average!r}")


def _score(
    kind: str, y_true: Sequence[Hashable], y_pred: Sequence[Hashable], average: Average, labels: Sequence[Hashable] | None
) -> float:
    metric = f"{kind}(average={average!r})"
    if average not in AVERAGES:
        raise MetricInputError(f"{metric}: average must be one of {AVERAGES}, got {average!r}")
    order, hits, predicted, true = _counts(metric, y_true, y_pred, labels)
    tp = [hits[label] for label in order]
    pred = [predicted[label] for label in order]
    support = [true[label] for label in order]
    if average == "micro":
        tp_sum, pred_sum, true_sum = sum(tp), sum(pred), sum(support)
        if kind == "precision":
            return _ratio(tp_sum, pred_sum)
        if kind == "recall":
            return _ratio(tp_sum, true_sum)
        return _ratio(2 * tp_sum, pred_sum + true_sum)
    if kind == "precision":
        per_label = [_ratio(a, b) for a, b in zip(tp, pred, strict=True)]
    elif kind == "recall":
        per_label = [_ratio(a, b) for a, b in zip(tp, support, strict=True)]
    else:
        per_label = [_ratio(2 * a, b + c) for a, b, c in zip(tp, pred, support, strict=True)]
    return _average(per_label, support, average, metric)


@population_metric(
    "classification_accuracy",
    direction="higher",
    bounds=(0.0, 1.0),
    citation=FMEVAL,
    family="accuracy",
    inputs=(Column.GOLD_LABEL, Column.PREDICTED_LABEL),
)
def classification_accuracy(y_true: Sequence[Hashable], y_pred: Sequence[Hashable]) -> float:
    """Fraction of instances whose predicted label equals the true label."""
    n = same_length("classification_accuracy", y_true=y_true, y_pred=y_pred)
    return sum(t == p for t, p in zip(y_true, y_pred, strict=True)) / n


@population_metric(
    "balanced_accuracy",
    direction="higher",
    bounds=(0.0, 1.0),
    citation=FMEVAL,
    family="accuracy",
    inputs=(Column.GOLD_LABEL, Column.PREDICTED_LABEL),
)
def balanced_accuracy(y_true: Sequence[Hashable], y_pred: Sequence[Hashable]) -> float:
    """Mean per-class recall over the classes that occur in ``y_true``: a majority-class guesser scores 1/k."""
    _, hits, _, true = _counts("balanced_accuracy", y_true, y_pred, None)
    classes = _label_order(set(true))
    return sum(hits[label] / true[label] for label in classes) / len(classes)


def precision(
    y_true: Sequence[Hashable],
    y_pred: Sequence[Hashable],
    *,
    average: Average = "micro",
    labels: Sequence[Hashable] | None = None,
) -> float:
    """Precision, averaged as scikit-learn's ``precision_score(average=..., zero_division=0)``."""
    return _score("precision", y_true, y_pred, average, labels)


def recall(
    y_true: Sequence[Hashable],
    y_pred: Sequence[Hashable],
    *,
    average: Average = "micro",
    labels: Sequence[Hashable] | None = None,
) -> float:
    """Recall, averaged as scikit-learn's ``recall_score(average=..., zero_division=0)``."""
    return _score("recall", y_true, y_pred, average, labels)


def f1(
    y_true: Sequence[Hashable],
    y_pred: Sequence[Hashable],
    *,
    average: Average = "micro",
    labels: Sequence[Hashable] | None = None,
) -> float:
    """F1, averaged as scikit-learn's ``f1_score(average=..., zero_division=0)``."""
    return _score("f1", y_true, y_pred, average, labels)


def _registered(kind: str, average: Average) -> object:
    function = {"precision": precision, "recall": recall, "f1": f1}[kind]

    def metric(y_true: Sequence[Hashable], y_pred: Sequence[Hashable]) -> float:
        return function(y_true, y_pred, average=average)

    metric.__name__ = metric.__qualname__ = f"{kind}_{average}"
    metric.__doc__ = (
        f"{kind} with average={average!r} over the labels seen in y_true or y_pred (scikit-learn's convention: an answer "
        "outside the labels is a class of its own). HELM's numbers for generated labels are classification_*_f1."
    )
    return population_metric(
        f"{kind}_{average}",
        direction="higher",
        bounds=(0.0, 1.0),
        citation=FMEVAL,
        family="accuracy",
        inputs=(Column.GOLD_LABEL, Column.PREDICTED_LABEL),
    )(metric)


AVERAGED = tuple(_registered(kind, average) for kind in ("precision", "recall", "f1") for average in AVERAGES)


@population_metric(
    "relative_improvement",
    direction="higher",
    bounds=(-100.0, float("inf")),
    citation=CATWALK,
    family="accuracy",
    inputs=(Column.CORRECT, Column.NUM_CHOICES),
)
def relative_improvement(correct: Sequence[bool | int], num_choices: int | Sequence[int]) -> float:
    """Catwalk's accuracy gain over chance, in percent: ``100 * (acc - b) / b``.

    ``b`` is the expected accuracy of uniform guessing, the mean of ``1/k`` over instances (``1/k`` when every
    instance has ``k`` choices). A model at chance scores 0; a perfect one ``100 * (k - 1)``.
    """
    hits = binary("relative_improvement", "correct", correct)
    if isinstance(num_choices, numbers.Integral):
        choices = [int(num_choices)] * len(hits)
    else:
        choices = list(cast(Sequence[int], num_choices))
    same_length("relative_improvement", correct=hits, num_choices=choices)
    finite_floats("relative_improvement", "num_choices", choices, low=1.0)
    baseline = sum(1 / k for k in choices) / len(choices)
    accuracy = sum(hits) / len(hits)
    return 100.0 * (accuracy / baseline - 1.0)  # this form never rounds below its bound, -100 (accuracy 0)
