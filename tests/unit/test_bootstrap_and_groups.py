"""Scenario statistics: seeded bootstrap intervals, per-group breakdowns and the group gap, and the
merge of per-worker ``Stat`` partials (any number of workers) against the serial answer."""

from __future__ import annotations

import math
import random
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.metrics import (
    POPULATION,
    Bootstrap,
    ClassAnswer,
    Column,
    MetricInfo,
    MetricInputError,
    ScoresOf,
    Stat,
    balanced_accuracy,
    bias,
    bootstrap_interval,
    ece_10_bin,
    group_gap,
    per_group,
)
from pytest_holistic.metrics.calibration import platt_ece_10_bin
from pytest_holistic.metrics.stats import group_extremes


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
    corrected = bootstrap_interval(abs_mean, data, resamples=400, seed=1, method="bc")
    assert corrected.estimate == plain.estimate == 0.0
    assert corrected.low <= plain.low
    assert corrected.high <= plain.high


def test_bias_correction_is_neutral_for_an_unbiased_statistic() -> None:
    data = [0.0, 1.0] * 50  # mean 0.5, resample means symmetric around it

    def mean(values):
        return sum(values) / len(values)

    plain = bootstrap_interval(mean, data, resamples=500, seed=3, method="percentile")
    corrected = bootstrap_interval(mean, data, resamples=500, seed=3, method="bc")
    assert corrected.low == pytest.approx(plain.low, abs=0.03)
    assert corrected.high == pytest.approx(plain.high, abs=0.03)


# -- every interval contains its own estimate ---------------------------------------------------------------


def test_default_interval_contains_a_folded_estimate_that_bc_and_percentiles_miss() -> None:
    # |mean| of data symmetric around 0 is (about) 0, while a resample's |mean| is 0 only if it happens to stay
    # symmetric: every resample sits above the estimate, so plain percentiles and BC (whose levels go to the far
    # tail when the estimate is below all resamples) give intervals entirely above it.
    data = [math.sqrt(k) for k in range(1, 16)] + [-math.sqrt(k) for k in range(1, 16)]

    def abs_mean(values):
        return abs(sum(values) / len(values))

    plain = bootstrap_interval(abs_mean, data, resamples=400, seed=1, method="percentile")
    bc = bootstrap_interval(abs_mean, data, resamples=400, seed=1, method="bc")
    centred = bootstrap_interval(abs_mean, data, resamples=400, seed=1)
    assert plain.estimate < 1e-12
    assert plain.low > plain.estimate and bc.low > bc.estimate
    assert centred.low <= centred.estimate <= centred.high
    # the default keeps the resamples' spread, moved as a whole: both ends shift by the same amount
    assert centred.high - centred.low == pytest.approx(plain.high - plain.low)
    assert plain.low - centred.low == pytest.approx(plain.high - centred.high)


def test_default_interval_is_the_percentile_interval_for_an_unbiased_statistic() -> None:
    data = [0.0, 1.0] * 50  # mean 0.5, resample means symmetric around it

    plain = bootstrap_interval(mean, data, resamples=500, seed=3, method="percentile")
    centred = bootstrap_interval(mean, data, resamples=500, seed=3)
    assert centred.low == pytest.approx(plain.low, abs=0.03)
    assert centred.high == pytest.approx(plain.high, abs=0.03)


def test_mmlu_shaped_platt_ece_keeps_its_estimate_inside() -> None:
    # 60 four-way answers with confidence in [0.25, 0.6], right about 60% as often as claimed: in-sample
    # Platt-scaled ECE on a resample (with duplicated instances) runs far above the estimate, the shape of the
    # reported bug (0.085 shown with [0.048, 0.073]).
    rng = random.Random(6)
    conf = [round(rng.uniform(0.25, 0.6), 3) for _ in range(60)]
    correct = [rng.random() < c * 0.6 for c in conf]
    plain = bootstrap_interval(platt_ece_10_bin, conf, correct, resamples=200, method="percentile")
    assert plain.estimate < plain.low  # the precondition: the estimate lies below its resamples' central 95%
    bc = bootstrap_interval(platt_ece_10_bin, conf, correct, resamples=200, method="bc")
    assert bc.high < bc.estimate  # BC overcorrects past it
    result = bootstrap_interval(platt_ece_10_bin, conf, correct, resamples=200, bounds=(0.0, 1.0))
    assert 0.0 <= result.low <= result.estimate <= result.high <= 1.0


def test_bounds_clip_the_interval_but_never_past_the_estimate() -> None:
    data = [0.0] * 9 + [1.0]  # mean 0.1; the centred interval reaches below 0 before clipping
    unclipped = bootstrap_interval(mean, data, resamples=300)
    clipped = bootstrap_interval(mean, data, resamples=300, bounds=(0.0, 1.0))
    assert clipped.low == max(unclipped.low, 0.0) and clipped.high == unclipped.high
    # a range that (wrongly) excludes the estimate cannot push the interval off it
    odd = bootstrap_interval(mean, data, resamples=300, bounds=(0.2, 1.0))
    assert odd.low <= odd.estimate <= odd.high


def test_unknown_method_is_an_input_error() -> None:
    with pytest.raises(MetricInputError, match="method"):
        bootstrap_interval(mean, [1.0, 2.0], method="bca")


WORDS = sorted({*bias.target_words("adjective")[:8], *bias.target_words("profession")[:8]})
GROUP_WORDS = sorted(
    {word for category in ("gender", "race") for words in bias.demographic_groups(category).values() for word in words[:4]}
)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
logprob = st.floats(min_value=-50.0, max_value=0.0, allow_nan=False)


def _column(column: Column | ScoresOf) -> st.SearchStrategy:
    """Values one instance can hold for ``column``, in the domain the metric accepts."""
    if isinstance(column, ScoresOf):
        return st.lists(unit, min_size=1, max_size=3) if column.nested else unit
    return {
        Column.TEXT: st.lists(st.sampled_from(WORDS + GROUP_WORDS + ["the", "a"]), max_size=6).map(" ".join),
        Column.GOLD_LABEL: st.sampled_from(["pos", "neg", "neutral"]),
        Column.PREDICTED_LABEL: st.sampled_from(["pos", "neg", "neutral", "unknown"]),
        Column.CONFIDENCE: unit,
        Column.CORRECT: st.booleans(),
        Column.NUM_CHOICES: st.integers(min_value=2, max_value=5),
        Column.LOGPROB_MORE: logprob,
        Column.LOGPROB_LESS: logprob,
        Column.DOCUMENT_LOGPROB: logprob,
        Column.NUM_BYTES: st.integers(min_value=1, max_value=400),
        Column.NUM_TOKENS: st.integers(min_value=1, max_value=100),
        Column.RANKED_RELEVANCES: st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.0]), min_size=1, max_size=12),
        Column.RANKED_GOLD: st.lists(st.sampled_from([0.0, 0.0, 1.0]), min_size=1, max_size=12),
        Column.CLASS_ANSWER: st.builds(
            ClassAnswer,
            st.lists(st.sampled_from(["Yes", "no.", "Maybe", ""]), min_size=1, max_size=2).map(tuple),
            st.sampled_from(["yes", "No", " maybe!", "", "other"]),
            st.just(False),
        ),
        Column.BBQ_ANSWER: st.tuples(
            st.booleans(), st.booleans(), st.sampled_from(["target", "non_target", "unknown", "other"]), st.booleans()
        ),
    }[column]


@st.composite
def _columns(draw: st.DrawFn, info: MetricInfo) -> list[list[object]]:
    rows = draw(st.lists(st.tuples(*(_column(column) for column in info.inputs)), min_size=1, max_size=25))
    return [list(values) for values in zip(*rows, strict=True)]


@pytest.mark.parametrize("name", sorted(POPULATION))
@settings(max_examples=12, deadline=None)
@given(data=st.data(), seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_every_population_metric_lies_inside_its_interval(name: str, data: st.DataObject, seed: int) -> None:
    info = POPULATION[name]
    columns = data.draw(_columns(info))
    result = bootstrap_interval(info.function, *columns, resamples=40, seed=seed, bounds=info.bounds)
    if math.isnan(result.estimate) or math.isnan(result.low):
        return  # undefined on this sample (no group word in any text): nothing is reported
    assert info.bounds[0] <= result.low <= result.estimate <= result.high <= info.bounds[1]


# -- worst and best group follow the metric's direction ---------------------------------------------------


def test_group_extremes_follow_the_direction() -> None:
    # toxicity-like: "calm" 0.0, 0.1 -> 0.05; "heated" 0.2, 0.4 -> 0.3; "mixed" 0.1 -> 0.1
    stats = per_group([0.0, 0.2, 0.1, 0.4, 0.1], ["calm", "heated", "calm", "heated", "mixed"])
    assert group_extremes(stats, "lower") == ("heated", "calm")  # lower is better: the highest mean is the worst
    assert group_extremes(stats, "higher") == ("calm", "heated")
    assert group_gap(stats, "lower") == pytest.approx(0.3 - 0.05) == group_gap(stats, "higher")
    # best at 0.25: distances calm 0.2, heated 0.05, mixed 0.15 -> worst calm, best heated, gap 0.2 - 0.05
    assert group_extremes(stats, "target", 0.25) == ("calm", "heated")
    assert group_gap(stats, "target", 0.25) == pytest.approx(0.15)
    assert group_extremes({}, "lower") is None


def test_equal_groups_still_name_two_groups() -> None:
    stats = per_group([0.5, 0.5], ["a", "b"])
    assert group_extremes(stats, "higher") == ("a", "b")
    assert group_gap(stats, "higher") == 0.0
