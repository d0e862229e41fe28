"""Scenario statistics: seeded bootstrap intervals, per-group breakdowns and the group gap, and the
merge of per-worker ``Stat`` partials (any number of workers) against the serial answer."""

from __future__ import annotations

import math
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.metrics import (
    Bootstrap,
    MetricInputError,
    Stat,
    balanced_accuracy,
    bootstrap_interval,
    ece_10_bin,
    group_gap,
    per_group,
)


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


# -- bootstrap --------------------------------------------------------------------------------------


def test_bootstrap_of_constant_data_is_a_point() -> None:
    # every resample of (0.7, 0.7, 0.7) has mean 0.7
    result = bootstrap_interval(mean, [0.7, 0.7, 0.7])
    assert result.estimate == pytest.approx(0.7)
    assert result.interval == pytest.approx((0.7, 0.7))
    assert (result.resamples, result.seed, result.confidence) == (1000, 0, 0.95)


def test_bootstrap_of_two_points_spans_all_resample_means() -> None:
    # resamples of (0, 1) have mean 0 (p 1/4), 1/2 (p 1/2) or 1 (p 1/4); the 2.5% and 97.5% quantiles of
    # 1000 draws are then 0 and 1 (P(fewer than 25 zeros in 1000 draws) is negligible)
    result = bootstrap_interval(mean, [0.0, 1.0])
    assert result.estimate == 0.5
    assert result.interval == (0.0, 1.0)


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    data = [0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 1]
    first = bootstrap_interval(mean, data, seed=7)
    assert bootstrap_interval(mean, data, seed=7) == first
    assert bootstrap_interval(mean, data, seed=8) != first
    assert first.to_dict() == {
        "estimate": first.estimate,
        "interval": [first.low, first.high],
        "confidence": 0.95,
        "resamples": 1000,
        "seed": 7,
    }


def test_bootstrap_keeps_columns_paired() -> None:
    # correctness equals "confidence > 0.5" exactly, so every resample is perfectly ordered;
    # if the columns were resampled independently the ECE could not stay at the same small value
    conf = [0.9, 0.8, 0.2, 0.1] * 5
    correct = [1, 1, 0, 0] * 5
    result = bootstrap_interval(ece_10_bin, conf, correct, resamples=200)
    # ECE of the data: bins of equal confidence, each |c - y| = 0.1 or 0.2 -> (0.1 + 0.2 + 0.2 + 0.1) / 4 = 0.15
    assert result.estimate == pytest.approx(0.15)
    assert 0.1 - 1e-12 <= result.low <= result.high <= 0.2 + 1e-12


def test_undefined_resamples_are_dropped() -> None:
    # resamples of (0, 1): {0, 0} -> None (dropped), {0, 1} -> 0.5 (p 1/2), {1, 1} -> 1 (p 1/4)
    def picky(values: list[int]) -> float | None:
        return None if sum(values) == 0 else mean(values)

    result = bootstrap_interval(picky, [0, 1], resamples=400)
    assert result.low == 0.5 and result.high == 1.0
    always_undefined = bootstrap_interval(lambda values: None, [1, 2], resamples=10)
    assert math.isnan(always_undefined.low) and math.isnan(always_undefined.high)
    # a metric's input error in a resample counts as undefined too; the estimate uses all the data:
    # recall of class 0 = 1/1, class 1 = 1/2 -> 0.75
    assert bootstrap_interval(balanced_accuracy, [0, 1, 1], [0, 1, 0], resamples=50).estimate == pytest.approx(0.75)


@pytest.mark.parametrize(
    "call",
    [
        lambda: bootstrap_interval(mean),
        lambda: bootstrap_interval(mean, []),
        lambda: bootstrap_interval(mean, [1, 2], [1]),
        lambda: bootstrap_interval(mean, [1], resamples=0),
        lambda: bootstrap_interval(mean, [1], confidence=1.0),
    ],
    ids=["no-columns", "empty", "length", "resamples", "confidence"],
)
def test_bootstrap_input_errors(call) -> None:
    with pytest.raises(MetricInputError):
        call()


@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=1, max_value=30), st.integers(min_value=1, max_value=30), st.integers(min_value=0, max_value=2**32 - 1)
)
def test_bootstrap_interval_of_binary_data_contains_the_mean(ones: int, zeros: int, seed: int) -> None:
    data = [1.0] * ones + [0.0] * zeros
    result = bootstrap_interval(mean, data, seed=seed)
    assert result.estimate == pytest.approx(ones / (ones + zeros))
    assert 0.0 <= result.low <= result.estimate <= result.high <= 1.0
    assert bootstrap_interval(mean, data, seed=seed) == result


# -- per-group breakdown and gap --------------------------------------------------------------------


def test_per_group_and_gap_hand_computed() -> None:
    # a: 1, 1 -> mean 1; b: 0, 1 -> mean 0.5; gap 1 - 0.5 = 0.5
    groups = per_group([1, 0, 1, 1], ["a", "b", "a", "b"])
    assert list(groups) == ["a", "b"]
    assert groups["a"] == Stat.of([1, 1])
    assert groups["b"].mean == 0.5 and groups["b"].count == 2
    assert group_gap(groups) == 0.5
    assert group_gap({}) != group_gap({})  # NaN
    assert group_gap({"only": Stat.of([0.3])}) == 0.0


def test_per_group_orders_groups_deterministically() -> None:
    assert list(per_group([1, 2, 3], ["white", "black", "asian"])) == ["asian", "black", "white"]
    # unorderable mixtures fall back to ordering by str
    assert list(per_group([1, 2], [2, "a"])) == [2, "a"]
    with pytest.raises(MetricInputError):
        per_group([1, 2], ["a"])


# -- per-worker partials merge to the serial Stat -------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), max_size=60),
    st.lists(st.integers(min_value=0, max_value=60), max_size=7),
)
def test_merging_worker_partials_equals_the_serial_stat(values: list[float], cuts: list[int]) -> None:
    bounds = sorted({0, len(values), *(min(cut, len(values)) for cut in cuts)})
    partials = [Stat.of(values[start:end]) for start, end in pairwise(bounds)]
    merged = Stat()
    for partial in partials:
        merged = merged.merge(partial)
    serial = Stat.of(values)
    assert merged.count == serial.count
    assert merged.min == serial.min and merged.max == serial.max
    if serial.count:
        assert math.isclose(merged.mean, serial.mean, rel_tol=1e-9, abs_tol=1e-6)
        assert math.isclose(merged.variance, serial.variance, rel_tol=1e-7, abs_tol=1e-6)


def test_bootstrap_result_is_a_frozen_record() -> None:
    result = bootstrap_interval(mean, [1.0, 0.0], resamples=10)
    assert isinstance(result, Bootstrap)
    with pytest.raises(AttributeError):
        result.low = 0.3  # type: ignore[misc]


def test_bias_corrected_interval_moves_towards_a_biased_estimate() -> None:
    # |mean| of data symmetric around 0 is 0, but every resample's |mean| is >= 0: the resamples sit
    # above the estimate, so the bias-corrected interval reaches lower than the plain percentiles.
    data = [-3.0, -2.0, -1.0, 1.0, 2.0, 3.0] * 5

    def abs_mean(values):
        return abs(sum(values) / len(values))

    plain = bootstrap_interval(abs_mean, data, resamples=400, seed=1, method="percentile")
    corrected = bootstrap_interval(abs_mean, data, resamples=400, seed=1)
    assert corrected.estimate == plain.estimate == 0.0
    assert corrected.low <= plain.low
    assert corrected.high <= plain.high


def test_bias_correction_is_neutral_for_an_unbiased_statistic() -> None:
    data = [0.0, 1.0] * 50  # mean 0.5, resample means symmetric around it

    def mean(values):
        return sum(values) / len(values)

    plain = bootstrap_interval(mean, data, resamples=500, seed=3, method="percentile")
    corrected = bootstrap_interval(mean, data, resamples=500, seed=3)
    assert corrected.low == pytest.approx(plain.low, abs=0.03)
    assert corrected.high == pytest.approx(plain.high, abs=0.03)
