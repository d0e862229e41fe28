"""Stat: mergeable count/sum/sum-of-squares summary, checked against hand-computed statistics."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.metrics.stats import Z_95, Stat

REL = 1e-9
ABS = 1e-9

unit_values = st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), max_size=40)
moderate_values = st.lists(st.floats(min_value=-10.0, max_value=10.0, allow_nan=False), max_size=40)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=ABS)


def test_hand_computed_stat() -> None:
    stat = Stat.of([1, 0, 1, 1])
    # n = 4, mean = 3/4
    assert stat.count == 4
    assert stat.total == 3.0
    # squared deviations: 3 * (1 - 0.75)**2 + (0 - 0.75)**2 = 0.1875 + 0.5625 = 0.75
    assert stat.m2 == pytest.approx(0.75)
    assert (stat.min, stat.max) == (0.0, 1.0)
    assert stat.mean == 0.75
    # sample variance = (3 * 0.25**2 + 0.75**2) / (4 - 1) = (0.1875 + 0.5625) / 3 = 0.25
    assert stat.variance == pytest.approx(0.25)
    # stderr = sqrt(0.25 / 4) = 0.25
    assert stat.stderr == pytest.approx(0.25)
    # 95% interval: 0.75 -/+ 1.959964 * 0.25 = 0.75 -/+ 0.489991 -> (0.260009, 1.239991)
    low, high = stat.interval()
    assert low == pytest.approx(0.260009, abs=1e-6)
    assert high == pytest.approx(1.239991, abs=1e-6)
    # clipped to the metric's bounds [0, 1] -> the upper end becomes 1
    low, high = stat.interval((0.0, 1.0))
    assert low == pytest.approx(0.260009, abs=1e-6)
    assert high == 1.0


def test_z_is_the_two_sided_95_percent_normal_quantile() -> None:
    assert Z_95 == pytest.approx(statistics.NormalDist().inv_cdf(0.975), rel=1e-12)


def test_single_value_has_zero_width_interval() -> None:
    stat = Stat.of([0.4])
    assert stat.variance == 0.0
    assert stat.stderr == 0.0
    assert stat.interval((0.0, 1.0)) == (0.4, 0.4)


def test_empty_stat() -> None:
    stat = Stat.of([])
    assert stat == Stat()
    assert stat.count == 0
    assert math.isnan(stat.mean)
    assert math.isnan(stat.stderr)
    assert stat.variance == 0.0
    low, high = stat.interval((0.0, 1.0))
    assert math.isnan(low) and math.isnan(high)
    record = stat.to_dict((0.0, 1.0))
    assert record["n"] == 0
    assert math.isnan(record["min"]) and math.isnan(record["max"])


def test_to_dict() -> None:
    # values 0, 1: mean 0.5, sample variance ((0.5)^2 * 2) / 1 = 0.5, stderr sqrt(0.5 / 2) = 0.5
    # interval 0.5 -/+ 0.98 -> clipped to [0, 1]
    record = Stat.of([0.0, 1.0]).to_dict((0.0, 1.0))
    assert record["n"] == 2
    assert record["mean"] == 0.5
    assert record["stderr"] == pytest.approx(0.5)
    assert record["ci95"] == [0.0, 1.0]
    assert (record["min"], record["max"]) == (0.0, 1.0)


def test_stat_is_immutable_and_add_returns_a_new_stat() -> None:
    stat = Stat()
    added = stat.add(1)
    assert stat.count == 0
    assert added.count == 1
    with pytest.raises(AttributeError):
        stat.count = 3  # type: ignore[misc]


def test_merge_with_empty_is_identity() -> None:
    stat = Stat.of([0.2, 0.9])
    assert stat.merge(Stat()) == stat
    assert Stat().merge(stat) == stat


@settings(max_examples=300, deadline=None)
@given(unit_values, unit_values)
def test_merge_of_partials_equals_stat_of_all(left: list[float], right: list[float]) -> None:
    merged = Stat.of(left).merge(Stat.of(right))
    whole = Stat.of(left + right)
    assert merged.count == whole.count == len(left) + len(right)
    assert merged.min == whole.min
    assert merged.max == whole.max
    if whole.count:
        assert close(merged.mean, whole.mean)
        assert close(merged.variance, whole.variance)
        # (stderr = sqrt(variance / n) would amplify a 1e-16 rounding difference in the variance to 1e-8)


@settings(max_examples=200, deadline=None)
@given(moderate_values, moderate_values, moderate_values)
def test_merge_is_associative_in_distribution(a: list[float], b: list[float], c: list[float]) -> None:
    one = Stat.of(a).merge(Stat.of(b)).merge(Stat.of(c))
    two = Stat.of(a).merge(Stat.of(b).merge(Stat.of(c)))
    assert one.count == two.count
    assert (one.min, one.max) == (two.min, two.max)
    if one.count:
        assert close(one.mean, two.mean)
        assert math.isclose(one.variance, two.variance, rel_tol=1e-7, abs_tol=1e-7)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=2, max_size=40))
def test_mean_and_variance_match_exact_statistics(values: list[float]) -> None:
    stat = Stat.of(values)
    # statistics computes with exact fractions: a reference independent of the sum-of-squares formula
    assert close(stat.mean, statistics.fmean(values))
    assert close(stat.variance, statistics.variance(values))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1, max_size=40))
def test_interval_contains_the_mean_and_is_clipped_to_bounds(values: list[float]) -> None:
    stat = Stat.of(values)
    low, high = stat.interval((0.0, 1.0))
    assert 0.0 <= low <= stat.mean <= high <= 1.0
    # unclipped, it is symmetric around the mean with half width z * stderr
    raw_low, raw_high = stat.interval()
    assert close(stat.mean - raw_low, Z_95 * stat.stderr)
    assert close(raw_high - stat.mean, Z_95 * stat.stderr)
    assert low == max(raw_low, 0.0)
    assert high == min(raw_high, 1.0)


def test_variance_is_numerically_stable_for_large_offsets() -> None:
    # sample variance of (1e9+1, 1e9+2, 1e9+3) = ((-1)^2 + 0^2 + 1^2) / 2 = 1, whatever the offset
    stat = Stat.of([1e9 + 1, 1e9 + 2, 1e9 + 3])
    assert stat.variance == pytest.approx(1.0, rel=1e-6)
