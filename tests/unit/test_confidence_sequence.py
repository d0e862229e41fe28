"""Confidence sequences decide gates honestly: at the threshold they are wrong at most α of the time, far from it early.

The simulation draws many seeded runs of 1,000 items whose true mean sits exactly on a gate's threshold. A wrong
decision there (the gate said to hold when it fails, or the reverse) needs the sequence to exclude the true mean
at some n; the sequence's interval excludes a mean τ only when the hedged capital at τ has risen above 1/α
(the set of accepted means is an interval and the grid reading contains it). So counting runs in which the
capital at τ ever crosses 1/α counts every run the full sequence could decide wrongly, and more: the rate it
measures bounds the wrong-decision rate from above. That count is cheap (one candidate mean, all runs at once);
a few runs through the full grid sequence check the inclusion. The bound asserted is the upper end of the
count's exact (Clopper–Pearson) 95% interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from pytest_holistic.metrics.base import MetricInputError
from pytest_holistic.metrics.confidence_sequence import (
    ConfidenceSequence,
    GroupSequences,
    decide,
    difference_sequence,
    log_boundary,
    log_capital,
)
from pytest_holistic.metrics.paired import clopper_pearson_interval

ITEMS = 1000
RUNS = 4000
CHUNKS = 4
"""Runs are simulated a quarter at a time, to keep the arrays (runs × items) near 8 MB each."""
LEVEL = 0.95
Draw = Callable[[np.random.Generator, tuple[int, int]], np.ndarray]


def bernoulli(p: float) -> Draw:
    return lambda rng, shape: (rng.random(shape) < p).astype(float)


def beta(a: float, b: float) -> Draw:
    return lambda rng, shape: rng.beta(a, b, shape)


def three_point(p0: float, p_half: float, p1: float) -> Draw:
    return lambda rng, shape: rng.choice([0.0, 0.5, 1.0], size=shape, p=[p0, p_half, p1])


def rejected(x: np.ndarray, mean: float, level: float = LEVEL, population: int | None = None) -> np.ndarray:
    """Which runs (rows) reject ``mean`` at some n: the hedged capital at it ever exceeds 1/α."""
    return np.asarray((log_capital(x, mean, level, population) > log_boundary(level)).any(axis=1))


def upper_bound(hits: int, runs: int) -> float:
    return clopper_pearson_interval(hits, runs, 0.95)[1]


def ever_excludes(steps: list[tuple[float, float]], mean: float) -> bool:
    return any(low > mean or high < mean for low, high in steps)


AT_THRESHOLD = [
    ("bernoulli", bernoulli(0.1), 0.1),
    ("bernoulli", bernoulli(0.5), 0.5),
    ("bernoulli", bernoulli(0.9), 0.9),
    ("beta(1,9)", beta(1, 9), 0.1),
    ("beta(5,5)", beta(5, 5), 0.5),
    ("three-point", three_point(0.05, 0.1, 0.85), 0.9),
]


@pytest.mark.parametrize(
    ("seed", "name", "draw", "mean"),
    [(seed, *case) for seed, case in enumerate(AT_THRESHOLD)],
    ids=[f"{name}-{mean}" for name, _, mean in AT_THRESHOLD],
)
def test_at_the_threshold_wrong_decisions_stay_within_the_level(seed: int, name: str, draw: Draw, mean: float) -> None:
    rng = np.random.default_rng(seed)
    hits = sum(int(rejected(draw(rng, (RUNS // CHUNKS, ITEMS)), mean).sum()) for _ in range(CHUNKS))
    high = upper_bound(hits, RUNS)
    print(f"{name} mean {mean}: wrongly decided in {hits}/{RUNS} runs, rate {hits / RUNS:.4f}, 95% upper {high:.4f}")
    assert high <= 1 - LEVEL


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_the_grid_sequence_decides_only_where_the_capital_at_the_threshold_rejects(p: float) -> None:
    """The full sequence's interval leaves τ out only in runs the cheap count has counted (and mostly in all of them)."""
    x = bernoulli(p)(np.random.default_rng(int(p * 10)), (400, ITEMS))
    counted = rejected(x, p)
    runs = list(np.flatnonzero(counted)[:4]) + list(np.flatnonzero(~counted)[:2])
    assert len(runs) == 6
    decided = [ever_excludes(ConfidenceSequence(level=LEVEL).update(x[run]), p) for run in runs]
    assert decided[4:] == [False, False]
    assert sum(decided[:4]) >= 2  # the grid widens by one step, so it may miss a run the exact capital rejects


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_without_replacement_wrong_decisions_stay_within_the_level(p: float) -> None:
    """A scenario of 1,000 items read in a random order: the target is their own mean, reached exactly at the end."""
    rng = np.random.default_rng(100 + int(p * 10))
    population = np.zeros(ITEMS)
    population[: round(p * ITEMS)] = 1.0
    hits = 0
    for _ in range(CHUNKS):
        orders = rng.permuted(np.broadcast_to(population, (RUNS // CHUNKS, ITEMS)), axis=1)
        hits += int(rejected(orders, population.mean(), population=ITEMS).sum())
    print(f"without replacement, p {p}: wrongly decided in {hits}/{RUNS} runs, 95% upper {upper_bound(hits, RUNS):.4f}")
    assert upper_bound(hits, RUNS) <= 1 - LEVEL
    sequence, order = ConfidenceSequence(population=ITEMS), rng.permutation(population)
    steps = sequence.update(order)
    assert ever_excludes(steps, p) <= bool(rejected(order[None, :], p, population=ITEMS)[0])
    assert sequence.interval == (p, p)  # all drawn: the mean is known, to the last bit


def test_a_paired_difference_of_mean_zero_is_rarely_decided() -> None:
    """Per-instance differences in [-1, 1] (this run minus a baseline), equally often better and worse."""
    rng = np.random.default_rng(5)
    draw = three_point(0.15, 0.7, 0.15)  # on the rescaled [0, 1] scale: differences -1, 0, 1
    hits = sum(int(rejected(draw(rng, (RUNS // CHUNKS, ITEMS)), 0.5).sum()) for _ in range(CHUNKS))
    print(f"paired difference 0: wrongly decided in {hits}/{RUNS} runs, 95% upper {upper_bound(hits, RUNS):.4f}")
    assert upper_bound(hits, RUNS) <= 1 - LEVEL
    for seed in range(3):
        differences = 2 * draw(np.random.default_rng(50 + seed), (1, ITEMS))[0] - 1
        sequence = difference_sequence()
        steps = sequence.update(differences)
        assert ever_excludes(steps, 0.0) <= bool(rejected(((differences + 1) / 2)[None, :], 0.5)[0])
        assert sequence.interval[0] >= -1 and sequence.interval[1] <= 1


def test_a_gap_between_two_groups_of_equal_means_is_rarely_decided() -> None:
    """Two groups, 500 items each, each sequence at level 1 − α/2: the difference excludes 0 only if one misses."""
    rng = np.random.default_rng(6)
    each = 1 - (1 - LEVEL) / 2
    hits = 0
    for _ in range(CHUNKS):
        first, second = bernoulli(0.3)(rng, (RUNS // CHUNKS, 500)), beta(3, 7)(rng, (RUNS // CHUNKS, 500))
        hits += int((rejected(first, 0.3, each) | rejected(second, 0.3, each)).sum())
    print(f"group difference 0: wrongly decided in {hits}/{RUNS} runs, 95% upper {upper_bound(hits, RUNS):.4f}")
    assert upper_bound(hits, RUNS) <= 1 - LEVEL
    groups = GroupSequences(["a", "b"], level=LEVEL)
    first, second = bernoulli(0.3)(rng, (1, 500))[0], beta(3, 7)(rng, (1, 500))[0]
    for start in range(0, 500, 100):  # interleaved arrivals
        groups.update("a", first[start : start + 100])
        groups.update("b", second[start : start + 100])
        low, high = groups.difference("a", "b")
        excluded = low > 0 or high < 0
        assert not excluded or bool(rejected(first[None, :], 0.3, each)[0] | rejected(second[None, :], 0.3, each)[0])
    assert groups.sequences["a"].level == pytest.approx(each)


def stopping_n(sequence: ConfidenceSequence, values: np.ndarray, op: str, threshold: float, batch: int = 50) -> int:
    """The first n at which ``mean OP threshold`` is settled (records arrive in batches; the n is still exact)."""
    for start in range(0, len(values), batch):
        steps = sequence.update(values[start : start + batch])
        settled = [i for i, step in enumerate(steps) if decide(step, op, threshold) != "undecided"]
        if settled:
            return start + settled[0] + 1
    return len(values)


FAR = [
    ("bernoulli", bernoulli(0.9), 0.6),
    ("bernoulli", bernoulli(0.8), 0.5),
    ("bernoulli", bernoulli(0.4), 0.1),
    ("beta(8,2)", beta(8, 2), 0.5),
    ("three-point", three_point(0.05, 0.1, 0.85), 0.6),
]


@pytest.mark.parametrize(
    ("seed", "name", "draw", "threshold"),
    [(20 + seed, *case) for seed, case in enumerate(FAR)],
    ids=[f"{name}-{t}" for name, _, t in FAR],
)
def test_a_mean_far_above_the_threshold_is_decided_early(seed: int, name: str, draw: Draw, threshold: float) -> None:
    """True mean 0.3 above the threshold: the gate ``>= threshold`` holds within 15% of a 1,000-item scenario."""
    rng = np.random.default_rng(seed)
    runs = 40
    stops = []
    for _ in range(runs):
        sequence = ConfidenceSequence(level=LEVEL)
        stops.append(stopping_n(sequence, draw(rng, (1, ITEMS))[0], ">=", threshold))
        assert sequence.decide(">=", threshold) == "holds"
    mean_stop = sum(stops) / runs
    saved = 1 - mean_stop / ITEMS
    print(f"{name} vs {threshold}: decided after {mean_stop:.1f} items on average (max {max(stops)}), {saved:.1%} saved")
    assert mean_stop <= 0.15 * ITEMS


def test_a_paired_improvement_is_decided_early() -> None:
    """Differences with mean 0.3 on [-1, 1] (a 0.15 shift on the rescaled scale) settle ``> 0`` well before the end."""
    rng = np.random.default_rng(8)
    stops = [
        stopping_n(difference_sequence(), 2 * three_point(0.1, 0.5, 0.4)(rng, (1, ITEMS))[0] - 1, ">", 0.0) for _ in range(20)
    ]
    print(f"paired improvement 0.3: decided after {sum(stops) / len(stops):.1f} items on average")
    assert sum(stops) / len(stops) <= 0.15 * ITEMS


def test_decide_reads_the_interval_for_each_comparison() -> None:
    assert [decide((0.6, 0.8), op, 0.6) for op in (">=", ">", "<=", "<", "==")] == [
        "holds",
        "undecided",
        "undecided",
        "fails",
        "undecided",
    ]
    assert [decide((0.2, 0.5), op, 0.6) for op in (">=", ">", "<=", "<", "==")] == ["fails", "fails", "holds", "holds", "fails"]
    assert [decide((0.5, 0.7), op, 0.6) for op in (">=", ">", "<=", "<", "==")] == ["undecided"] * 5
    with pytest.raises(MetricInputError, match="unknown comparison"):
        decide((0.0, 1.0), "!=", 0.5)


def test_the_running_interval_only_narrows_and_each_step_is_reported() -> None:
    sequence = ConfidenceSequence()
    assert (sequence.n, sequence.interval, sequence.decide(">=", 0.5)) == (0, (0.0, 1.0), "undecided")
    values = bernoulli(0.7)(np.random.default_rng(9), (1, 200))[0]
    steps = sequence.update(values[:120]) + sequence.update(values[120:].tolist()) + sequence.update([])
    assert sequence.n == 200 and len(steps) == 200 and steps[-1] == sequence.interval
    lows, highs = [low for low, _ in steps], [high for _, high in steps]
    assert lows == sorted(lows) and highs == sorted(highs, reverse=True)
    assert sequence.interval[0] >= sequence.latest[0] and sequence.interval[1] <= sequence.latest[1]
    assert sequence.interval[1] - sequence.interval[0] < 0.25


def test_observations_are_rescaled_from_their_bounds() -> None:
    """A score in [2, 6] gives the [0, 1] sequence of (x − 2) / 4, mapped back."""
    values = beta(2, 3)(np.random.default_rng(10), (1, 150))[0]
    unit, scaled = ConfidenceSequence(), ConfidenceSequence(2.0, 6.0)
    unit.update(values)
    scaled.update(2 + 4 * values)
    assert scaled.interval == pytest.approx((2 + 4 * unit.interval[0], 2 + 4 * unit.interval[1]), abs=1e-9)


def test_bad_input_is_refused_before_anything_is_added() -> None:
    sequence = ConfidenceSequence()
    for bad in ([0.5, 1.5], [math.nan], [-0.1]):
        with pytest.raises(MetricInputError, match=r"must lie in \[0, 1\]"):
            sequence.update(bad)
    assert sequence.n == 0
    with pytest.raises(MetricInputError, match="population of 3"):
        ConfidenceSequence(population=3).update([0.0, 1.0, 1.0, 0.0])
    with pytest.raises(MetricInputError, match="level"):
        ConfidenceSequence(level=1.0)
    with pytest.raises(MetricInputError, match="low < high"):
        ConfidenceSequence(1.0, 1.0)
    with pytest.raises(MetricInputError, match="two distinct groups"):
        GroupSequences(["a", "a"])
    with pytest.raises(MetricInputError, match="unknown group"):
        GroupSequences(["a", "b"]).update("c", 0.5)
    with pytest.raises(MetricInputError, match="rescaled"):
        log_capital(np.array([0.2, 1.5]), 0.5)


def test_the_spread_of_group_means_holds_the_max_minus_min() -> None:
    groups = GroupSequences(["a", "b", "c"])
    rng = np.random.default_rng(12)
    for group, p in (("a", 0.9), ("b", 0.5), ("c", 0.2)):
        groups.update(group, bernoulli(p)(rng, (1, 400))[0])
    low, high = groups.spread
    assert 0.0 < low < 0.7 < high
    assert groups.difference("a", "c")[0] > 0  # a is clearly better than c
    assert all(sequence.level == pytest.approx(1 - 0.05 / 3) for sequence in groups.sequences.values())
