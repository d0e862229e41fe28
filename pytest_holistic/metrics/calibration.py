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
  least one), the documented meaning of "the C-fraction" (digest §2.2).
- ``selective_acc_at_10`` keeps HELM's count instead, so its numbers compare with HELM's: the calibration
  package's ``get_selective_stats`` returns ``accs[int(0.1 * N)]``, the accuracy of the
  ``k = floor(N / 10) + 1`` most confident instances (digest §2.2 "Selective stats" and §8 A9), e.g. 2 of 10, 1 of 9.
  Confidence ties are resolved by expectation: when the cut-off falls inside a group of equal confidences,
  that group contributes its mean correctness per included instance, i.e. the average over all orderings
  of the ties; deterministic and order-independent (HELM leaves this to an unstable ``argsort``).
- Coverage-accuracy area: the mean of the selective accuracy over the coverages ``k / N``, k = 1..N.
- Platt scaling: a logistic regression of ``correct`` on ``logit(clip(conf, 1e-12, 1 - 1e-12))`` with HELM's
  scikit-learn model, ``LogisticRegression(C=1e10)``: the minimiser of
  ``sum_i logloss(y_i, a x_i + b) + a**2 / (2 C)`` (the intercept unpenalised), fitted and evaluated on the
  same instances; ``platt_ece`` is the ECE of the rescaled confidences, 0.0 when every instance is right or
  every one wrong (HELM's convention: there is nothing to fit). We solve that objective with Newton steps
  in numpy (:func:`fit_platt`), all bootstrap resamples at once, to its minimiser. scikit-learn's default
  L-BFGS stops at a gradient tolerance of 1e-4, up to about 5e-4 from the minimiser in the fitted
  probabilities (and, on separable data, anywhere along the diverging slope), so HELM's numbers carry
  that solver noise; ours do not. The unit tests compare the two with scikit-learn run to convergence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ._inputs import binary, finite_floats, same_length
from .base import Column, Direction, F, MetricInputError, Resampled, population_metric
from .stats import per_resample, resample_weights

if TYPE_CHECKING:
    import numpy as np

Binning = Literal["mass", "width"]
HELM_CALIBRATION = "Liang et al. 2022 (HELM) §4.4; Kumar et al. 2019 (calibration); Platt 1999"


def _calibration_metric(name: str, *, direction: Direction, prepare: Callable[..., Resampled]) -> Callable[[F], F]:
    """A calibration metric over the probability of each answer and whether it is right."""
    return population_metric(
        name,
        direction=direction,
        bounds=(0.0, 1.0),
        citation=HELM_CALIBRATION,
        family="calibration",
        inputs=(Column.CONFIDENCE, Column.CORRECT),
        prepare=prepare,
    )


def _checked_once(metric: str, on_arrays: Callable[[np.ndarray, np.ndarray], float]) -> Callable[..., Resampled]:
    """A preparation that validates the two columns once; each resample then costs only ``on_arrays`` (the arithmetic)."""

    def prepare(confidences: Sequence[float], correct: Sequence[bool | int]) -> Resampled:
        return per_resample(on_arrays, *_arrays(metric, confidences, correct))

    return prepare


PLATT_EPSILON = 1e-12
PLATT_C = 1e10
"""HELM's ``LogisticRegression(C=1e10)``: the slope (not the intercept) is penalised by ``slope**2 / (2 C)``."""
PLATT_MAX_STEPS = 200
PLATT_STEP_TOLERANCE = 1e-10
"""A fit stops after a full Newton step this small relative to its parameters: quadratic convergence puts the
next one near 1e-20, so the parameters are as exact as the floating-point objective can tell."""


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

    assigned: np.ndarray = np.minimum((conf * bins).astype(int), bins - 1)
    return assigned


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


def _ece_10_bin(conf: np.ndarray, hits: np.ndarray) -> float:
    return _ece(conf, hits, 10, "mass")


def _ece_1_bin(conf: np.ndarray, hits: np.ndarray) -> float:
    return _ece(conf, hits, 1, "mass")


@_calibration_metric("ece_10_bin", direction="lower", prepare=_checked_once("ece", _ece_10_bin))
def ece_10_bin(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """HELM's default ECE: 10 equal-mass bins (fewer when there are fewer than 10 instances)."""
    return ece(confidences, correct, 10)


@_calibration_metric("ece_1_bin", direction="lower", prepare=_checked_once("ece", _ece_1_bin))
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


def _selective_accuracy(conf: np.ndarray, hits: np.ndarray, coverage: float) -> float:
    return float(_selective_accuracies(conf, hits)[covered(coverage, len(conf)) - 1])


def selective_accuracy(confidences: Sequence[float], correct: Sequence[bool | int], coverage: float = 0.1) -> float:
    """Accuracy on the ``ceil(coverage * N)`` most confident instances; the model abstains on the rest."""
    conf, hits = _arrays("selective_accuracy", confidences, correct)
    return _selective_accuracy(conf, hits, coverage)


def helm_selective_count(n: int) -> int:
    """How many instances HELM's ``selective_acc@10`` keeps: ``int(0.1 * n) + 1`` (``accs[int(0.1 * N)]``).

    ``n // 10`` equals HELM's ``int(0.1 * n)`` for every n: 0.1 as a double is slightly above 1/10, so the product
    never rounds below a multiple of 10, and a non-multiple is at least 0.1 away from the next integer.
    """
    return n // 10 + 1


def _selective_accuracy_at_10(conf: np.ndarray, hits: np.ndarray) -> float:
    return float(_selective_accuracies(conf, hits)[helm_selective_count(len(conf)) - 1])


def _coverage_accuracy_area(conf: np.ndarray, hits: np.ndarray) -> float:
    return float(_selective_accuracies(conf, hits).mean())


@_calibration_metric(
    "selective_acc_at_10", direction="higher", prepare=_checked_once("selective_accuracy", _selective_accuracy_at_10)
)
def selective_acc_at_10(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """HELM's ``selective_acc@10``: accuracy of the ``N // 10 + 1`` most confident instances (HELM's count, see module)."""
    conf, hits = _arrays("selective_accuracy", confidences, correct)
    return _selective_accuracy_at_10(conf, hits)


@_calibration_metric(
    "selective_cov_acc_area", direction="higher", prepare=_checked_once("coverage_accuracy_area", _coverage_accuracy_area)
)
def coverage_accuracy_area(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """Area under the coverage-accuracy curve: mean selective accuracy over coverages k/N, k = 1..N."""
    conf, hits = _arrays("coverage_accuracy_area", confidences, correct)
    return _coverage_accuracy_area(conf, hits)


@dataclass(frozen=True)
class PlattScaling:
    """``p' = sigmoid(coef * logit(p) + intercept)``, fitted to correctness."""

    coef: float
    intercept: float

    def __call__(self, confidences: Sequence[float]) -> list[float]:
        import numpy as np

        return [
            float(value) for value in _rescaled(_platt_features(np.asarray(confidences, dtype=float)), self.coef, self.intercept)
        ]


def _platt_features(conf: np.ndarray) -> np.ndarray:
    """``logit(clip(conf, 1e-12, 1 - 1e-12))``: what Platt scaling regresses correctness on."""
    import numpy as np

    clipped = np.clip(conf, PLATT_EPSILON, 1 - PLATT_EPSILON)
    logits: np.ndarray = np.log(clipped / (1 - clipped))
    return logits


def _rescaled(features: np.ndarray, coef: float, intercept: float) -> np.ndarray:
    """``sigmoid(coef * x + intercept)`` as ``exp(-log(1 + exp(-z)))``: no overflow for the steep fits of separable data."""
    import numpy as np

    return np.exp(-np.logaddexp(0.0, -(coef * features + intercept)))


def _platt_loss(weights: np.ndarray, centred: np.ndarray, hits: np.ndarray, slope: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """The penalised objective of each row: weighted log-loss of ``slope * centred + offset`` plus ``slope**2 / (2 C)``."""
    import numpy as np

    z = slope[:, None] * centred + offset[:, None]
    # log(1 + exp(-z)) for a right answer, log(1 + exp(z)) for a wrong one: stable at any |z|
    loss = np.logaddexp(0.0, np.where(hits == 1, -z, z))
    penalised: np.ndarray = (weights * loss).sum(axis=1) + slope**2 / (2 * PLATT_C)
    return penalised


def _newton_steps(
    weights: np.ndarray, centred: np.ndarray, hits: np.ndarray, slope: np.ndarray, offset: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's Newton step (minus the change) for (slope, offset), from the exact 2 x 2 gradient and Hessian."""
    import numpy as np

    z = slope[:, None] * centred + offset[:, None]
    p = np.exp(-np.logaddexp(0.0, -z))  # sigmoid(z)
    q = np.exp(-np.logaddexp(0.0, z))  # 1 - sigmoid(z), without cancelling when p is near 1
    residual = weights * np.where(hits == 1, -q, p)  # w (p - y)
    curvature = weights * p * q  # w p (1 - p)
    g_slope = (residual * centred).sum(axis=1) + slope / PLATT_C
    g_offset = residual.sum(axis=1)
    h_ss = (curvature * centred * centred).sum(axis=1) + 1 / PLATT_C
    h_so = (curvature * centred).sum(axis=1)
    h_oo = curvature.sum(axis=1)
    det = h_ss * h_oo - h_so * h_so
    with np.errstate(divide="ignore", invalid="ignore"):
        return (h_oo * g_slope - h_so * g_offset) / det, (h_ss * g_offset - h_so * g_slope) / det


def _line_search(
    weights: np.ndarray,
    centred: np.ndarray,
    hits: np.ndarray,
    slope: np.ndarray,
    offset: np.ndarray,
    steps: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """The step lengths (1, 1/2, 1/4, ...) that do not increase each row's objective beyond rounding; 0 if none does."""
    import numpy as np

    before = _platt_loss(weights, centred, hits, slope, offset)
    lengths = np.ones(len(slope))
    pending = np.arange(len(slope))
    for _ in range(60):
        after = _platt_loss(
            weights[pending],
            centred[pending],
            hits,
            slope[pending] - lengths[pending] * steps[0][pending],
            offset[pending] - lengths[pending] * steps[1][pending],
        )
        worse = ~(after <= before[pending] + 1e-13 * np.abs(before[pending]))  # NaN counts as worse
        pending = pending[worse]
        if not len(pending):
            return lengths
        lengths[pending] /= 2
    lengths[pending] = 0.0
    return lengths


def fit_platt(features: np.ndarray, hits: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Platt scaling's (coef, intercept) for every row of ``weights``, fitted at once by damped Newton steps.

    Row r of ``weights`` says how often each instance counts (1s for the data, multiplicities for a
    bootstrap resample), so row r minimises ``sum_i w_ri logloss(hits_i, a x_i + b) + a**2 / (2 C)``, the
    objective of scikit-learn's ``LogisticRegression(C=PLATT_C)`` on the resampled data (scikit-learn divides
    both terms by ``sum_i w_ri``, which does not move the minimiser). Every row needs both classes.

    The objective is strictly convex, so Newton's method with backtracking converges from any start; the
    features are centred per row first (the offset is the intercept at the mean feature), which keeps the
    2 x 2 system well conditioned even when all scores are equal (then the slope's only curvature is the
    tiny penalty, and the minimiser is slope 0). It starts at slope 0 and the offset of the base rate.
    """
    import numpy as np

    total = weights.sum(axis=1)
    centre = weights @ features / total
    base_rate = weights @ hits / total
    slope = np.zeros(len(weights))
    offset = np.log(base_rate / (1 - base_rate))
    active = np.arange(len(weights))
    for _ in range(PLATT_MAX_STEPS):
        if not len(active):
            break
        rows = weights[active]
        centred = features[None, :] - centre[active, None]
        d_slope, d_offset = _newton_steps(rows, centred, hits, slope[active], offset[active])
        finite = np.isfinite(d_slope) & np.isfinite(d_offset)
        small = (np.abs(d_slope) <= PLATT_STEP_TOLERANCE * (1 + np.abs(slope[active]))) & (
            np.abs(d_offset) <= PLATT_STEP_TOLERANCE * (1 + np.abs(offset[active]))
        )
        lengths = np.where(small, 1.0, 0.0)  # a step this small is below the objective's rounding: take it whole
        searched = finite & ~small
        if searched.any():
            lengths[searched] = _line_search(
                rows[searched],
                centred[searched],
                hits,
                slope[active][searched],
                offset[active][searched],
                (d_slope[searched], d_offset[searched]),
            )
        moved = finite & (lengths > 0)
        slope[active[moved]] -= lengths[moved] * d_slope[moved]
        offset[active[moved]] -= lengths[moved] * d_offset[moved]
        active = active[moved & ~small]  # done: converged, or no step improves on rounding (or is defined)
    return slope, offset - slope * centre


def platt_scaling(confidences: Sequence[float], correct: Sequence[bool | int]) -> PlattScaling | None:
    """Fit Platt scaling as HELM does (see the module docstring); None when all instances are right or all wrong."""
    import numpy as np

    conf, hits = _arrays("platt_scaling", confidences, correct)
    if hits.min() == hits.max():
        return None
    coef, intercept = fit_platt(_platt_features(conf), hits, np.ones((1, len(conf))))
    return PlattScaling(float(coef[0]), float(intercept[0]))


def platt_ece(confidences: Sequence[float], correct: Sequence[bool | int], bins: int = 10, binning: Binning = "mass") -> float:
    """ECE of the Platt-rescaled confidences (in-sample, as HELM); 0.0 when there is nothing to fit."""
    scaler = platt_scaling(confidences, correct)
    if scaler is None:
        return 0.0
    return ece(scaler(confidences), correct, bins, binning)


def _platt_ece_prepared(bins: int) -> Callable[..., Resampled]:
    """``platt_ece`` for every resample: one vectorised fit per chunk of resamples, then each resample's ECE.

    Equal to ``platt_ece`` on each resampled pair of lists up to the rounding of weighted versus repeated
    sums inside the fit (about 1e-15 in the parameters): the same objective, minimised the same way.
    """

    def prepare(confidences: Sequence[float], correct: Sequence[bool | int]) -> Resampled:
        import numpy as np

        conf, hits = _arrays("platt_scaling", confidences, correct)
        features = _platt_features(conf)

        def resampled(indices: np.ndarray) -> np.ndarray:
            weights = resample_weights(indices, len(conf))
            right = weights @ hits
            fitted = np.flatnonzero((right > 0) & (right < len(conf)))  # the others have nothing to fit: ECE 0.0
            values = np.zeros(len(indices))
            coefs, intercepts = fit_platt(features, hits, weights[fitted])
            for row, coef, intercept in zip(fitted, coefs, intercepts, strict=True):
                chosen = indices[row]
                values[row] = _ece(_rescaled(features[chosen], coef, intercept), hits[chosen], bins, "mass")
            return values

        return resampled

    return prepare


@_calibration_metric("platt_ece_10_bin", direction="lower", prepare=_platt_ece_prepared(10))
def platt_ece_10_bin(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """``ece_10_bin`` after Platt scaling: the miscalibration a monotone rescaling cannot fix."""
    return platt_ece(confidences, correct, 10)


@_calibration_metric("platt_ece_1_bin", direction="lower", prepare=_platt_ece_prepared(1))
def platt_ece_1_bin(confidences: Sequence[float], correct: Sequence[bool | int]) -> float:
    """``ece_1_bin`` after Platt scaling (close to 0 by construction of the logistic fit)."""
    return platt_ece(confidences, correct, 1)
