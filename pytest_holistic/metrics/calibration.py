"""Calibration and selective classification, as HELM computes them.

Sources: HELM paper §4.4 (seeds digest §2.2, ``000_83ef39e7fc8767f1.txt`` L1690-1696): ECE with "10 bins
with an equal number of probabilities per bin", selective accuracy at coverage 0.1 and the area under the
coverage-accuracy curve; the exact algorithms follow HELM's ``compute_calibration_metrics`` and the
``calibration`` package (Kumar et al. 2019) as summarised in the digest, with Platt (1999) scaling.

Inputs are, per instance, the probability the model gave its prediction (``confidences`` in [0, 1]) and
whether the prediction was right (``correct``: booleans or 0/1).

- ``ECE = sum_b (n_b / N) * |mean(conf_b) - mean(correct_b)|``, empty bins contributing nothing.
- Equal-mass bins (HELM): sort the confidences, split them into ``B = min(bins, N)`` parts as equal as
  ``numpy.array_split`` makes them, put a boundary after each part, and assign every confidence to the
  first boundary >= it. Equal confidences therefore always share a bin (boundaries that
  coincide merge), so the result is deterministic and independent of the instance order. For distinct
  confidences this is exactly a split of the sorted list into equal parts. ``binning="width"`` gives
  equal-width bins [0, 1/B), ..., [(B-1)/B, 1] instead (digest §8 C1).
- Selective accuracy at coverage ``c``: accuracy on the ``k = ceil(c * N)`` most confident instances (at
  least one). HELM indexes ``floor(c * N) + 1`` instances (digest §8 A9); we keep the documented meaning.
  Confidence ties are resolved by expectation: when the cut-off falls inside a group of equal confidences,
  that group contributes its mean correctness per included instance, i.e. the average over all orderings
  of the ties; deterministic and order-independent (HELM leaves this to an unstable ``argsort``).
- Coverage-accuracy area: the mean of the selective accuracy over the coverages ``k / N``, k = 1..N.
- Platt scaling: a logistic regression of ``correct`` on ``logit(clip(conf, 1e-12, 1 - 1e-12))`` (scikit-learn
  ``LogisticRegression(C=1e10, solver="lbfgs")``, effectively unregularised, as HELM), fitted and evaluated
  on the same instances; ``platt_ece`` is the ECE of the rescaled confidences, 0.0 when every instance is
  right or every one wrong (HELM's convention: there is nothing to fit).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ._inputs import binary, finite_floats, same_length
from .base import Column, Direction, F, MetricInputError, population_metric

if TYPE_CHECKING:
    import numpy as np

Binning = Literal["mass", "width"]
HELM_CALIBRATION = "Liang et al. 2022 (HELM) §4.4; Kumar et al. 2019 (calibration); Platt 1999"


def _calibration_metric(name: str, *, direction: Direction) -> Callable[[F], F]:
    """A calibration metric over the probability of each answer and whether it is right."""
    return population_metric(
        name,
        direction=direction,
        bounds=(0.0, 1.0),
        citation=HELM_CALIBRATION,
        family="calibration",
        inputs=(Column.CONFIDENCE, Column.CORRECT),
    )


PLATT_EPSILON = 1e-12


def _arrays(metric: str, confidences: Sequence[float], correct: Sequence[bool | int]) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    same_length(metric, confidences=confidences, correct=correct)
    conf = finite_floats(metric, "confidences", confidences, low=0.0, high=1.0)
    hits = binary(metric, "correct", correct)
    return np.asarray(conf, dtype=float), np.asarray(hits, dtype=float)


def _equal_mass_bins(conf: np.ndarray, bins: int) -> np.ndarray:
    import numpy as np

    parts = np.array_split(np.sort(conf), min(bins, len(conf)))
    # HELM places each boundary halfway to the next part; no confidence lies strictly between the two
    # parts, so the part's largest value assigns the same instances, without rounding at the midpoint.
    bounds = np.asarray(sorted({float(part[-1]) for part in parts[:-1]} | {1.0}))
    return np.searchsorted(bounds, conf, side="left")


def _equal_width_bins(conf: np.ndarray, bins: int) -> np.ndarray:
    import numpy as np

    return np.minimum((conf * bins).astype(int), bins - 1)


def _ece(conf: np.ndarray, hits: np.ndarray, bins: int, binning: Binning) -> float:
    import numpy as np

    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise MetricInputError(f"ece: the number of bins must be a positive integer, got {bins!r}")
    if binning == "mass":
        assignment = _equal_mass_bins(conf, bins)
    elif binning == "width":
        assignment = _equal_width_bins(conf, bins)
    else:
        raise MetricInputError(f"ece: binning must be 'mass' or 'width', got {binning!r}")
    total = 0.0
    for label in np.unique(assignment):
        members = assignment == label
        total += members.sum() / len(conf) * abs(conf[members].mean() - hits[members].mean())
    return float(total)


def ece(confidences: Sequence[float], correct: Sequence[bool | int], bins: int = 10, binning: Binning = "mass") -> float:
    """Expected calibration error over ``bins`` equal-mass (default) or equal-width bins."""
    conf, hits = _arrays("ece", confidences, correct)
    return _ece(conf, hits, bins, binning)


@_calibration_metric("ece_10_bin", direction="lower")
def ece_10_bin(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """HELM's default ECE: 10 equal-mass bins (fewer when there are fewer than 10 instances)."""
    return ece(confidences, correct, 10)


@_calibration_metric("ece_1_bin", direction="lower")
def ece_1_bin(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """``|mean(confidence) - accuracy|``: overall over- or under-confidence."""
    return ece(confidences, correct, 1)


def _selective_accuracies(conf: np.ndarray, hits: np.ndarray) -> np.ndarray:
    """Accuracy of the k most confident instances for k = 1..N, confidence ties averaged over."""
    import numpy as np

    values, inverse, sizes = np.unique(-conf, return_inverse=True, return_counts=True)
    group_hits = np.bincount(inverse.ravel(), weights=hits, minlength=len(values))
    before_count = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    before_hits = np.concatenate(([0.0], np.cumsum(group_hits)[:-1]))
    k = np.arange(1, len(conf) + 1)
    group = np.repeat(np.arange(len(values)), sizes)  # the tie group holding the k-th most confident
    correct_in_top_k = before_hits[group] + (k - before_count[group]) * group_hits[group] / sizes[group]
    return correct_in_top_k / k


def covered(coverage: float, n: int) -> int:
    """How many instances coverage ``coverage`` keeps: ``ceil(coverage * n)``, at least 1."""
    if not 0.0 < coverage <= 1.0 or math.isnan(coverage):
        raise MetricInputError(f"selective_accuracy: coverage must be in (0, 1], got {coverage!r}")
    return max(1, math.ceil(round(coverage * n, 9)))


def selective_accuracy(confidences: Sequence[float], correct: Sequence[bool | int], coverage: float = 0.1) -> float:
    """Accuracy on the ``ceil(coverage * N)`` most confident instances; the model abstains on the rest."""
    conf, hits = _arrays("selective_accuracy", confidences, correct)
    return float(_selective_accuracies(conf, hits)[covered(coverage, len(conf)) - 1])


@_calibration_metric("selective_acc_at_10", direction="higher")
def selective_acc_at_10(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """Selective accuracy at coverage 0.1 (HELM's ``selective_acc@10``, up to its off-by-one)."""
    return selective_accuracy(confidences, correct, 0.1)


@_calibration_metric("selective_cov_acc_area", direction="higher")
def coverage_accuracy_area(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """Area under the coverage-accuracy curve: mean selective accuracy over coverages k/N, k = 1..N."""
    conf, hits = _arrays("coverage_accuracy_area", confidences, correct)
    return float(_selective_accuracies(conf, hits).mean())


@dataclass(frozen=True)
class PlattScaling:
    """``p' = sigmoid(coef * logit(p) + intercept)``, fitted to correctness."""

    coef: float
    intercept: float

    def __call__(self, confidences: Sequence[float]) -> list[float]:
        import numpy as np

        conf = np.clip(np.asarray(confidences, dtype=float), PLATT_EPSILON, 1 - PLATT_EPSILON)
        z = self.coef * np.log(conf / (1 - conf)) + self.intercept
        # sigmoid(z) = exp(-log(1 + exp(-z))): the same number, without overflowing for the steep fits of separable data
        return [float(value) for value in np.exp(-np.logaddexp(0.0, -z))]


def platt_scaling(confidences: Sequence[float], correct: Sequence[bool | int]) -> PlattScaling | None:
    """Fit Platt scaling as HELM does; None when all instances are right or all wrong."""
    import numpy as np

    conf, hits = _arrays("platt_scaling", confidences, correct)
    if hits.min() == hits.max():
        return None
    from sklearn.linear_model import LogisticRegression

    clipped = np.clip(conf, PLATT_EPSILON, 1 - PLATT_EPSILON)
    features = np.log(clipped / (1 - clipped)).reshape(-1, 1)
    model = LogisticRegression(C=1e10, solver="lbfgs").fit(features, hits.astype(int))
    return PlattScaling(float(model.coef_[0][0]), float(model.intercept_[0]))


def platt_ece(confidences: Sequence[float], correct: Sequence[bool | int], bins: int = 10, binning: Binning = "mass") -> float:
    """ECE of the Platt-rescaled confidences (in-sample, as HELM); 0.0 when there is nothing to fit."""
    scaler = platt_scaling(confidences, correct)
    if scaler is None:
        return 0.0
    return ece(scaler(confidences), correct, bins, binning)


@_calibration_metric("platt_ece_10_bin", direction="lower")
def platt_ece_10_bin(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """``ece_10_bin`` after Platt scaling: the miscalibration a monotone rescaling cannot fix."""
    return platt_ece(confidences, correct, 10)


@_calibration_metric("platt_ece_1_bin", direction="lower")
def platt_ece_1_bin(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """``ece_1_bin`` after Platt scaling (close to 0 by construction of the logistic fit)."""
    return platt_ece(confidences, correct, 1)
