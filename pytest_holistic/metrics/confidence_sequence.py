"""Anytime-valid confidence sequences for bounded means, so a gate can be decided as early as the evidence allows.

A fixed-n interval checked after every batch is wrong more often than its level says. A confidence sequence
covers the mean at every sample size at once, P(∃t: μ ∉ C_t) ≤ α, so a run may stop the first time the
sequence leaves a gate's threshold out, and the decision keeps its level.

Method: the hedged-capital betting confidence sequence of Waudby-Smith & Ramdas, "Estimating means of
bounded random variables by betting", JRSS-B 86(1), 2024 (arXiv:2010.09686), with the choices of its
authors' reference code (confseq 0.0.11, ``betting_cs``), which ``tests/conformance`` compares against.
Observations are rescaled from [low, high] to x ∈ [0, 1]. For a candidate mean m::

    K⁺_t(m) = ∏_{i≤t} (1 + λ⁺_i(m) (x_i − m)),    K⁻_t(m) = ∏_{i≤t} (1 − λ⁻_i(m) (x_i − m)),
    K_t(m)  = max(θ K⁺_t(m), (1 − θ) K⁻_t(m)),  θ = 1/2,        C_t = {m : K_t(m) ≤ 1/α}.

The bets are predictable (made from x_1 … x_{t−1} only)::

    μ̂_t = (1/2 + Σ_{i≤t} x_i) / (t + 1),    σ̂²_t = (1/4 + Σ_{i≤t} (x_i − μ̂_i)²) / (t + 1),    σ̂²_0 = 1/4,
    λ_t = sqrt(2 log(1/(θα)) / (t log(1 + t) σ̂²_{t−1})),
    λ⁺_t(m) = min(λ_t, c/m),    λ⁻_t(m) = min(λ_t, c/(1 − m)),    c = 1/2.

At m = μ both capitals are nonnegative martingales starting at 1, so Ville's inequality gives
P(∃t: K_t(μ) > 1/α) ≤ α. K⁺ falls and K⁻ rises with m, so C_t is an interval; it is read on the grid
m ∈ {0, 1/1000, …, 1} as [first accepted − 1/1000, last accepted + 1/1000] (all of [0, 1] when no grid point
is accepted), which contains C_t.

Sampling without replacement (``population=N``, the paper's extension to a finite population drawn in uniformly
random order): the mean of the next draw given the past is m_t = (N m − Σ_{i<t} x_i) / (N − t + 1), which
replaces m in the factors and the truncation; m is rejected once m_t leaves [0, 1], and C_t is intersected with
what the draws so far force, [S_t / N, (S_t + N − t) / N]. Then μ is the mean of the N values themselves.

Differences: a paired difference of two scores in [low, high] lies in [low − high, high − low] and is one
sequence (``difference_sequence``). Means of separate groups (a fairness gap) use one sequence per group, each at
level 1 − α/k for k groups: by the union bound all k cover their means at every time with probability ≥ 1 − α,
so intervals computed from theirs (a difference, the spread max − min) are anytime-valid too (``GroupSequences``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from .base import MetricInputError

if TYPE_CHECKING:
    import numpy as np

Interval = tuple[float, float]
Decision = Literal["holds", "fails", "undecided"]

THETA = 0.5
"""Weight of the capital that bets on a higher mean; the rest bets on a lower one."""
TRUNCATION = 0.5
"""c: a bet never risks more than half the capital, so the capital never falls below half in one step."""
BREAKS = 1000
"""Grid steps on [0, 1], as in the reference."""
_CHUNK = 256
"""Observations processed at once in ``update``: bounds the (observations × grid) arrays to a few MB."""


def _alpha(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise MetricInputError(f"level must be in (0, 1), got {level!r}")
    return 1.0 - level


def log_boundary(level: float) -> float:
    """log 1/α: a mean whose hedged capital K_t(m) rises above it is rejected."""
    return math.log(1 / _alpha(level))


def _hedged(log_up: np.ndarray, log_down: np.ndarray) -> np.ndarray:
    """log K = log max(θ K⁺, (1 − θ) K⁻) from the two log-capitals."""
    import numpy as np

    return np.maximum(math.log(THETA) + log_up, math.log(1 - THETA) + log_down)


def _bets(
    x: np.ndarray, alpha: float, count: int = 0, total: float | np.ndarray = 0.0, squares: float | np.ndarray = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """λ_t for each observation on the last axis of ``x``, after ``count`` earlier ones (their Σx and Σ(x − μ̂)²).

    Returns the bets and the running Σx and Σ(x − μ̂)² after each observation. Sums are accumulated in order from
    the earlier total, so the numbers are those a single pass over the whole sequence gives.
    """
    import numpy as np

    steps = x.shape[-1]
    t = count + np.arange(1, steps + 1)
    total = np.asarray(total, dtype=float)[..., None]
    sums = np.cumsum(np.concatenate([np.broadcast_to(total, x.shape[:-1] + (1,)), x], axis=-1), axis=-1)[..., 1:]
    means = np.minimum((0.5 + sums) / (t + 1), 1)
    squares = np.asarray(squares, dtype=float)[..., None]
    deviations = np.concatenate([np.broadcast_to(squares, x.shape[:-1] + (1,)), (x - means) ** 2], axis=-1)
    spread = np.cumsum(deviations, axis=-1)  # spread[..., j]: Σ(x − μ̂)² over the first count + j observations
    variances = (0.25 + spread[..., :-1]) / t  # σ̂²_{t−1} = (1/4 + Σ_{i<t}) / ((t − 1) + 1); at t = 1 the prior 1/4
    bets = np.sqrt(2 * math.log(1 / (alpha * THETA)) / (t * np.log(1 + t) * variances))
    return bets, sums, spread[..., 1:]


def _log_growth(x: np.ndarray, bets: np.ndarray, mean: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """log of one step's factor for K⁺ and for K⁻, the bets truncated at c/m and c/(1 − m) (arrays broadcast)."""
    import numpy as np

    with np.errstate(divide="ignore"):
        up = np.minimum(bets, TRUNCATION / mean)
        down = np.minimum(bets, TRUNCATION / (1 - mean))
    return np.log(1 + up * (x - mean)), np.log(1 - down * (x - mean))


def _drawn_means(
    mean: np.ndarray | float, before: np.ndarray, t: np.ndarray, population: int, ruled_out: np.ndarray | bool, axis: int
) -> tuple[np.ndarray, np.ndarray]:
    """Without replacement: m_t = (N m − Σ_{i<t} x_i) / (N − t + 1), and where it has left [0, 1] (for good).

    Once m_t < 0 or m_t > 1 it stays out (Σ x_i and Σ (1 − x_i) only grow), so m is rejected from then on; those
    entries of m_t are replaced by 1/2 only to keep the arithmetic finite.
    """
    import numpy as np

    drawn = (population * mean - before) / (population - (t - 1))
    out = np.logical_or.accumulate(ruled_out | (drawn < 0) | (drawn > 1), axis=axis)
    return np.where(out, 0.5, drawn), out


def log_capital(x: np.ndarray, mean: float, level: float = 0.95, population: int | None = None) -> np.ndarray:
    """log K_t(m) at one candidate mean for every t, for sequences of [0, 1] values on the last axis of ``x``.

    The sequential test of one mean: ``log_capital(x, m) > log_boundary(level)`` at some t rejects m with error
    probability ≤ α when m is the true mean. Cheap enough to simulate many sequences at once. With
    ``population``, the draws are without replacement from N values and m is their mean (+inf once ruled out).
    """
    import numpy as np

    x = np.asarray(x, dtype=float)
    if not bool(((x >= 0) & (x <= 1)).all()):
        raise MetricInputError("log_capital takes observations rescaled to [0, 1]")
    bets, sums, _ = _bets(x, _alpha(level))
    means: np.ndarray | float = mean
    out: np.ndarray | bool = False
    if population is not None:
        before = np.concatenate([np.zeros(x.shape[:-1] + (1,)), sums[..., :-1]], axis=-1)
        means, out = _drawn_means(mean, before, np.arange(1, x.shape[-1] + 1), population, False, axis=-1)
    up, down = _log_growth(x, bets, means)
    return np.where(out, math.inf, _hedged(np.cumsum(up, axis=-1), np.cumsum(down, axis=-1)))


class ConfidenceSequence:
    """The running confidence sequence for the mean of observations known to lie in [low, high].

    ``interval`` is the running intersection of every C_s, s ≤ n: still valid (the mean is in every C_s at once,
    with probability ≥ level), never wider than before, so a decision once made stays made. ``latest`` is C_n alone.
    Each observation costs O(grid): the log-capital at each grid point is kept, not recomputed.
    """

    def __init__(
        self, low: float = 0.0, high: float = 1.0, level: float = 0.95, population: int | None = None, breaks: int = BREAKS
    ) -> None:
        import numpy as np

        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise MetricInputError(f"bounds must be finite with low < high, got [{low!r}, {high!r}]")
        if population is not None and population < 1:
            raise MetricInputError(f"population must be a positive count, got {population!r}")
        self.low, self.high, self.level, self.population = float(low), float(high), level, population
        self._alpha = _alpha(level)
        self._bound = log_boundary(level)
        self._step = 1 / breaks
        self._grid = np.arange(0, 1 + 1 / breaks, step=1 / breaks)
        self._log_up = np.zeros(len(self._grid))
        self._log_down = np.zeros(len(self._grid))
        self._ruled_out = np.zeros(len(self._grid), dtype=bool)  # without replacement: m_t has left [0, 1]
        self._count = 0
        self._total = 0.0
        self._squares = 0.0
        self._latest: Interval = (0.0, 1.0)
        self._running: Interval = (0.0, 1.0)

    @property
    def n(self) -> int:
        return self._count

    @property
    def interval(self) -> Interval:
        """The running-intersection interval for the mean, on the observations' scale."""
        return self._scaled(self._running)

    @property
    def latest(self) -> Interval:
        """C_n alone, without the intersection with earlier sizes (on the observations' scale)."""
        return self._scaled(self._latest)

    def decide(self, op: str, threshold: float) -> Decision:
        """Whether ``mean OP threshold`` holds, fails, or cannot be told yet from ``interval``."""
        return decide(self.interval, op, threshold)

    def update(self, values: float | Iterable[float]) -> list[Interval]:
        """Add observations, in order; return ``interval`` as it stood after each one.

        The per-observation intervals tell a caller the exact n at which a gate was settled even when records
        arrive in batches. A value outside [low, high] (or NaN) is refused before any is added.
        """
        import numpy as np

        given = values if isinstance(values, (int, float, np.ndarray)) else list(values)
        batch = np.atleast_1d(np.asarray(given, dtype=float))
        if batch.ndim != 1:
            raise MetricInputError(f"observations must be a flat sequence, got shape {batch.shape}")
        outside = ~((batch >= self.low) & (batch <= self.high))  # NaN too
        if outside.any():
            raise MetricInputError(f"observations must lie in [{self.low:g}, {self.high:g}]; got {batch[outside][:3].tolist()}")
        if self.population is not None and self._count + len(batch) > self.population:
            raise MetricInputError(f"{self._count + len(batch)} observations from a population of {self.population}")
        x = (batch - self.low) / (self.high - self.low)
        steps: list[Interval] = []
        for start in range(0, len(x), _CHUNK):
            steps.extend(self._scaled(step) for step in self._absorb(x[start : start + _CHUNK]))
        return steps

    def _absorb(self, x: np.ndarray) -> list[Interval]:
        """Take a chunk of rescaled observations; return the running interval after each, on [0, 1]."""
        import numpy as np

        bets, sums, spread = _bets(x, self._alpha, self._count, self._total, self._squares)
        t = self._count + np.arange(1, len(x) + 1)
        grid = self._grid[None, :]
        if self.population is None:
            mean: np.ndarray = np.broadcast_to(grid, (len(x), len(self._grid)))
            ruled_out = np.broadcast_to(self._ruled_out, mean.shape)
        else:
            before = np.concatenate([[self._total], sums[:-1]])[:, None]  # Σ x_i over i < t
            mean, ruled_out = _drawn_means(grid, before, t[:, None], self.population, self._ruled_out, axis=0)
        up, down = _log_growth(x[:, None], bets[:, None], mean)
        log_up = self._log_up + np.cumsum(up, axis=0)
        log_down = self._log_down + np.cumsum(down, axis=0)
        accepted = (_hedged(log_up, log_down) <= self._bound) & ~ruled_out
        found = accepted.any(axis=1)
        first = self._grid[accepted.argmax(axis=1)]
        last = self._grid[len(self._grid) - 1 - accepted[:, ::-1].argmax(axis=1)]
        lower = np.maximum(0, np.where(found, first, 0.0) - self._step)
        upper = np.minimum(1, np.where(found, last, 1.0) + self._step)
        if self.population is not None:
            lower = np.maximum(lower, sums / self.population)
            upper = np.minimum(upper, (sums + (self.population - t)) / self.population)  # 1 − (t − S_t)/N, exact at t = N
        running_lower = np.maximum(self._running[0], np.maximum.accumulate(lower))
        running_upper = np.minimum(self._running[1], np.minimum.accumulate(upper))
        self._latest = (float(lower[-1]), float(upper[-1]))
        self._running = (float(running_lower[-1]), float(running_upper[-1]))
        self._log_up, self._log_down, self._ruled_out = log_up[-1], log_down[-1], ruled_out[-1].copy()
        self._count += len(x)
        self._total, self._squares = float(sums[-1]), float(spread[-1])
        return list(zip(running_lower.tolist(), running_upper.tolist()))

    def _scaled(self, interval: Interval) -> Interval:
        width = self.high - self.low
        return self.low + interval[0] * width, self.low + interval[1] * width


def difference_sequence(low: float = 0.0, high: float = 1.0, level: float = 0.95) -> ConfidenceSequence:
    """The sequence for the mean of paired differences of two scores in [low, high] (this run minus a baseline)."""
    return ConfidenceSequence(low - high, high - low, level)


class GroupSequences:
    """One sequence per group, each at level 1 − α/k, so that all k cover their means at once (union bound).

    The groups must be known before the first observation: α is split among them in advance. Each group's
    sequence is valid at any time in its own count, so groups may arrive interleaved in any order.
    """

    def __init__(
        self,
        groups: Sequence[Hashable],
        low: float = 0.0,
        high: float = 1.0,
        level: float = 0.95,
        populations: Mapping[Hashable, int] | None = None,
    ) -> None:
        """``populations``: each group's size, for sampling without replacement (a scenario's instances in a random
        order: each group's own instances come in a random order too); None: draws with replacement."""
        if len(set(groups)) != len(groups) or len(groups) < 2:
            raise MetricInputError(f"need at least two distinct groups, got {list(groups)!r}")
        each = 1 - _alpha(level) / len(groups)
        self.level = level
        sizes = populations or {}
        self.sequences = {group: ConfidenceSequence(low, high, each, sizes.get(group)) for group in groups}

    def update(self, group: Hashable, values: float | Iterable[float]) -> None:
        if group not in self.sequences:
            raise MetricInputError(f"unknown group {group!r}; the groups are {list(self.sequences)!r}")
        self.sequences[group].update(values)

    def difference(self, first: Hashable, second: Hashable) -> Interval:
        """Interval for mean(first) − mean(second)."""
        (low_a, high_a), (low_b, high_b) = self.sequences[first].interval, self.sequences[second].interval
        return low_a - high_b, high_a - low_b

    @property
    def spread(self) -> Interval:
        """Interval for the gap between the best and the worst group mean, max − min (HELM's disparity)."""
        intervals = [sequence.interval for sequence in self.sequences.values()]
        lows, highs = [low for low, _ in intervals], [high for _, high in intervals]
        return max(0.0, max(lows) - min(highs)), max(highs) - min(lows)


_HOLDS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


def decide(interval: Interval, op: str, threshold: float) -> Decision:
    """Whether ``mean OP threshold`` is settled by an interval that holds the mean (``==`` can only fail).

    ``holds`` when every mean in the interval satisfies the comparison, ``fails`` when none does; a wrong
    decision therefore needs the mean outside the interval, which a confidence sequence allows with
    probability at most α over the whole run.
    """
    low, high = interval
    if op == "==":
        return "fails" if threshold < low or threshold > high else "undecided"
    if op not in _HOLDS:
        raise MetricInputError(f"unknown comparison {op!r}; expected one of >=, >, <=, <, ==")
    holds = _HOLDS[op]
    if holds(low, threshold) and holds(high, threshold):
        return "holds"
    if not holds(low, threshold) and not holds(high, threshold):
        return "fails"
    return "undecided"
