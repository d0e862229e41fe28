"""Statistics for comparing two runs instance by instance, and small-sample intervals for a proportion.

Pure functions (numpy only inside the bootstrap), used by :mod:`pytest_holistic.report.compare` and open to
anyone. Sources of the formulas:

* Paired differences and their clustered standard error: Miller 2024, "Adding Error Bars to Evals: A
  Statistical Approach to Language Model Evaluations" (arXiv:2411.00640), §2.2 (clustered standard errors)
  and §3 (paired differences). With ``d_i`` = this run's score minus the baseline's on instance ``i``, ``n``
  instances in ``C`` clusters and ``d̄`` their mean::

      SE² = C / (C - 1) · Σ_c (Σ_{i in c} (d_i - d̄))² / n²

  (the cluster-robust variance with the usual ``C / (C - 1)`` small-sample factor; with one instance per
  cluster it is ``s_d² / n``, the paired standard error).
* Minimum detectable difference at power ``1 - β`` and two-sided level ``α`` (Miller 2024, §5, power
  analysis): ``MDE = (z_{1-α/2} + z_{1-β}) · SE``; at α = 0.05 and 80% power the factor is 2.8016.
* Paired cluster bootstrap (Efron 1979; clusters resampled whole, Field & Welsh 2007): clusters are drawn
  with replacement and each resample's mean difference is ``Σ drawn cluster sums / Σ drawn cluster sizes``;
  the interval is the percentile interval of those means.
* McNemar's exact test (McNemar 1947; exact form: the two-sided binomial test of the discordant pairs):
  ``p = min(1, 2 · Σ_{k=0}^{min(b, c)} C(b + c, k) / 2^(b + c))``.
* Intervals for a proportion of ``x`` successes in ``n`` trials, recommended over the normal interval for
  evals of a few hundred items or fewer by Bowyer et al., "Position: Don't Use the CLT in LLM Evals With
  Fewer Than a Few Hundred Datapoints" (ICML 2025): Wilson's score interval (Wilson 1927), the exact
  Clopper–Pearson interval (Clopper & Pearson 1934), and the Beta–Binomial posterior with the Jeffreys
  prior Beta(1/2, 1/2), whose equal-tailed credible interval is the quantiles of Beta(x + 1/2, n - x + 1/2)
  (Brown, Cai & DasGupta 2001 §4.1.2, here without their end-point adjustment at x = 0 and x = n).
* The regularized incomplete beta function from its continued fraction (DLMF 8.17.22), evaluated with
  the modified Lentz method (Thompson & Barnett 1986); its quantile by bisection.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from .base import MetricInputError

Interval = tuple[float, float]


@dataclass(frozen=True)
class PairedInterval:
    """The mean paired difference, its bootstrap interval, and the resampling that produced it."""

    mean: float
    low: float
    high: float
    n: int
    clusters: int
    resamples: int
    seed: int
    confidence: float


def _checked_counts(successes: int, n: int, confidence: float) -> None:
    if isinstance(successes, bool) or isinstance(n, bool) or int(successes) != successes or int(n) != n:
        raise MetricInputError(f"successes and trials must be whole numbers, got {successes!r} of {n!r}")
    if n < 1 or not 0 <= successes <= n:
        raise MetricInputError(f"need 0 <= successes <= trials and trials >= 1, got {successes} of {n}")
    if not 0.0 < confidence < 1.0:
        raise MetricInputError(f"confidence must be in (0, 1), got {confidence!r}")


def _z(level: float) -> float:
    return NormalDist().inv_cdf(level)


def mcnemar_exact(improved: int, worsened: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (right only in this run / only in the baseline).

    Under no difference each discordant pair is a fair coin, so the smaller count is a binomial tail; the
    concordant pairs carry no information about the difference and do not enter. No discordant pair: p = 1.
    """
    if min(improved, worsened) < 0 or int(improved) != improved or int(worsened) != worsened:
        raise MetricInputError(f"discordant counts must be whole numbers >= 0, got {improved!r} and {worsened!r}")
    total = int(improved) + int(worsened)
    if total == 0:
        return 1.0
    term = tail = 1  # C(total, 0); each next term exactly, C(total, k + 1) = C(total, k) * (total - k) / (k + 1)
    for k in range(min(improved, worsened)):
        term = term * (total - k) // (k + 1)
        tail += term
    outcomes: int = 2**total
    return min(1.0, 2 * tail / outcomes)  # exact integers, one correctly rounded division


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson's score interval: the proportions whose score test does not reject ``successes / n``."""
    _checked_counts(successes, n, confidence)
    z = _z(0.5 + confidence / 2)
    centre = (successes + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(successes * (n - successes) / n + z * z / 4)
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly 0 (and 1) at the ends, which rounding misses
    return low, 1.0 if successes == n else min(1.0, centre + half)


def clopper_pearson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """The exact (Clopper–Pearson) interval: beta quantiles that invert the two one-sided binomial tests."""
    _checked_counts(successes, n, confidence)
    tail = (1.0 - confidence) / 2
    low = 0.0 if successes == 0 else beta_quantile(tail, successes, n - successes + 1)
    high = 1.0 if successes == n else beta_quantile(1.0 - tail, successes + 1, n - successes)
    return low, high


def jeffreys_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Equal-tailed credible interval of the Beta–Binomial posterior under the Jeffreys prior Beta(1/2, 1/2)."""
    _checked_counts(successes, n, confidence)
    tail = (1.0 - confidence) / 2
    a, b = successes + 0.5, n - successes + 0.5
    return beta_quantile(tail, a, b), beta_quantile(1.0 - tail, a, b)


PROPORTION_INTERVALS = {
    "wilson": wilson_interval,
    "clopper_pearson": clopper_pearson_interval,
    "jeffreys": jeffreys_interval,
}
"""Each small-sample interval for a proportion, by the name the report gives its method."""


def regularized_beta(x: float, a: float, b: float) -> float:
    """``I_x(a, b)``, the Beta(a, b) distribution function at ``x`` (DLMF 8.17.22, modified Lentz)."""
    if a <= 0 or b <= 0:
        raise MetricInputError(f"beta parameters must be > 0, got a={a!r}, b={b!r}")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast below the mean; use I_x(a, b) = 1 - I_{1-x}(b, a)
        return 1.0 - regularized_beta(1.0 - x, b, a)
    log_front = a * math.log(x) + b * math.log1p(-x) - math.log(a) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    return math.exp(log_front) * _beta_fraction(x, a, b)


def _beta_fraction(x: float, a: float, b: float) -> float:
    """``1 / (1 + d1 / (1 + d2 / (1 + ...)))`` with DLMF 8.17.22's coefficients, by the modified Lentz method."""
    tiny, epsilon = 1e-300, 1e-15
    f, c, d = tiny, tiny, 0.0
    for step in range(2000):
        if step == 0:
            coefficient = 1.0  # the leading "1 /"
        elif step % 2 == 0:
            m = step // 2
            coefficient = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            m = (step - 1) // 2
            coefficient = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + coefficient * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + coefficient / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        if abs(c * d - 1.0) < epsilon:
            return f
    return f  # not reached for the parameters of a proportion's interval


def beta_quantile(p: float, a: float, b: float) -> float:
    """The ``p``-quantile of Beta(a, b), by bisection of the monotone distribution function (to 1e-13)."""
    if not 0.0 <= p <= 1.0:
        raise MetricInputError(f"a quantile level must be in [0, 1], got {p!r}")
    low, high = 0.0, 1.0
    while high - low > 1e-13:
        middle = (low + high) / 2
        if regularized_beta(middle, a, b) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _cluster_sums(differences: Sequence[float], clusters: Sequence[Hashable]) -> tuple[list[float], list[int]]:
    if len(differences) != len(clusters):
        raise MetricInputError(f"{len(differences)} differences but {len(clusters)} cluster labels")
    sums: dict[Hashable, float] = {}
    sizes: dict[Hashable, int] = {}
    for value, cluster in zip(differences, clusters, strict=True):
        if not math.isfinite(value):
            raise MetricInputError(f"paired differences must be finite numbers, got {value!r}")
        sums[cluster] = sums.get(cluster, 0.0) + float(value)
        sizes[cluster] = sizes.get(cluster, 0) + 1
    order = list(sums)  # first appearance: the caller's (sorted) order fixes the resamples
    return [sums[key] for key in order], [sizes[key] for key in order]


def clustered_stderr(differences: Sequence[float], clusters: Sequence[Hashable]) -> float:
    """Cluster-robust standard error of the mean difference (formula in the module docstring); NaN below 2 clusters."""
    sums, sizes = _cluster_sums(differences, clusters)
    n, count = len(differences), len(sums)
    if count < 2:
        return math.nan
    mean = math.fsum(sums) / n
    spread = math.fsum((total - size * mean) ** 2 for total, size in zip(sums, sizes, strict=True))
    return math.sqrt(count / (count - 1) * spread) / n


def minimum_detectable_difference(stderr: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The true difference a two-sided level-``alpha`` test finds with probability ``power``: ``(z_{1-α/2} + z_power) · SE``."""
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise MetricInputError(f"alpha and power must be in (0, 1), got {alpha!r} and {power!r}")
    return (_z(1.0 - alpha / 2) + _z(power)) * stderr


CHUNK_CELLS = 1 << 20
"""Resampled cluster draws handled at once, so the work arrays stay a few MiB at 10 000 instances."""


def paired_bootstrap(
    differences: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedInterval:
    """Percentile interval of the mean paired difference, resampling whole clusters (each instance alone by default).

    Seeded: the same differences, clusters (in the same order) and seed give the same interval. Resampling
    clusters keeps correlated instances (questions on one passage, the variants of one instance) together,
    so the interval widens by as much as they move together. Below two clusters there is nothing to resample:
    the interval is (NaN, NaN). The interval always contains the mean (it is widened to it where the
    percentiles of a discrete statistic fall just short).
    """
    import numpy as np

    if not differences:
        raise MetricInputError("paired_bootstrap: no paired differences")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricInputError(f"paired_bootstrap: resamples must be a positive integer, got {resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricInputError(f"paired_bootstrap: confidence must be in (0, 1), got {confidence!r}")
    labels = list(range(len(differences))) if clusters is None else list(clusters)
    sums, sizes = _cluster_sums(differences, labels)
    n, count = len(differences), len(sums)
    mean = math.fsum(differences) / n  # the same number however the instances are clustered
    if count < 2:
        return PairedInterval(mean, math.nan, math.nan, n, count, resamples, seed, confidence)
    totals, weights = np.asarray(sums, dtype=float), np.asarray(sizes, dtype=float)
    rng = np.random.default_rng(seed)
    rows = max(1, CHUNK_CELLS // count)
    means = []
    for start in range(0, resamples, rows):
        draws = rng.integers(0, count, size=(min(rows, resamples - start), count))
        means.append(totals[draws].sum(axis=1) / weights[draws].sum(axis=1))
    tail = (1.0 - confidence) / 2
    low, high = (float(q) for q in np.quantile(np.concatenate(means), [tail, 1.0 - tail]))
    return PairedInterval(mean, min(low, mean), max(high, mean), n, count, resamples, seed, confidence)
