"""HELM bias (demographic representation, stereotypical associations) and fmeval/CrowS-Pairs prompt
stereotyping, with values worked out by hand from the definitions in the seeds digest §2.5."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.metrics import (
    POPULATION,
    Column,
    MetricInputError,
    demographic_representation,
    group_counts_to_bias,
    is_biased,
    logprob_differences,
    mean_logprob_difference,
    per_group,
    prompt_stereotyping,
    stereotypical_associations,
)
from pytest_holistic.metrics.bias import demographic_groups, target_words, word_list

# -- word lists -------------------------------------------------------------------------------------


def test_word_list_sizes_match_helm() -> None:
    gender = demographic_groups("gender")
    race = demographic_groups("race")
    assert {group: len(words) for group, words in gender.items()} == {"female": 20, "male": 20}
    assert {group: len(words) for group, words in race.items()} == {"asian": 20, "hispanic": 16, "white": 20}
    assert len(target_words("adjective")) > 400
    assert len(target_words("profession")) > 250
    assert {"she", "her", "hers", "herself", "femen"} <= set(gender["female"])
    assert {"he", "him", "his", "himself", "males"} <= set(gender["male"])
    assert {"cho", "wong", "singh", "hong"} <= set(race["asian"])
    assert {"nurse", "doctor", "engineer"} & set(target_words("profession")) == {"nurse", "doctor"}


@pytest.mark.parametrize("name", ["female", "male", "asian", "hispanic", "white", "adjectives", "professions"])
def test_word_lists_are_clean_lower_case_and_unique(name: str) -> None:
    words = word_list(name)
    assert words and len(set(words)) == len(words)
    assert all(word == word.strip().lower() and " " not in word for word in words)


def test_unknown_categories_are_input_errors() -> None:
    with pytest.raises(MetricInputError, match="demographic category"):
        demographic_groups("age")  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="target category"):
        target_words("verb")  # type: ignore[arg-type]


# -- group_counts_to_bias ---------------------------------------------------------------------------


def test_group_counts_to_bias_hand_computed() -> None:
    # counts 3, 1 over lists of 20, 20 -> p = (0.75, 0.25); TVD = (|0.5-0.75| + |0.5-0.25|)/2 = 0.25
    assert group_counts_to_bias([3, 1], [20, 20]) == pytest.approx(0.25)
    # normalised by list size: 2/20, 2/16, 0/20 = 0.1, 0.125, 0 -> p = (4/9, 5/9, 0)
    # TVD = (|1/3 - 4/9| + |1/3 - 5/9| + |1/3 - 0|) / 2 = (1/9 + 2/9 + 3/9) / 2 = 1/3
    assert group_counts_to_bias([2, 2, 0], [20, 16, 20]) == pytest.approx(1 / 3)
    # equal representation -> 0; all mass on one of K groups -> 1 - 1/K
    assert group_counts_to_bias([5, 5], [20, 20]) == 0.0
    assert group_counts_to_bias([0, 7, 0], [20, 16, 20]) == pytest.approx(2 / 3)
    # nothing counted -> undefined
    assert group_counts_to_bias([0, 0], [20, 20]) is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=50), min_size=2, max_size=5).flatmap(
        lambda counts: st.tuples(st.just(counts), st.lists(st.integers(1, 30), min_size=len(counts), max_size=len(counts)))
    )
)
def test_bias_lies_between_zero_and_one_minus_one_over_k(data) -> None:
    counts, sizes = data
    value = group_counts_to_bias(counts, sizes)
    if sum(counts) == 0:
        assert value is None
    else:
        assert value is not None
        assert -1e-12 <= value <= 1 - 1 / len(counts) + 1e-12


# -- demographic representation ---------------------------------------------------------------------


def test_demographic_representation_gender() -> None:
    # female: she, her (2); male: son, his (2) -> equal -> 0
    assert demographic_representation(["She said her son is his hero."]) == 0.0
    # male: he, his, brother (3); female: her (1) -> p = (1/4, 3/4) -> 0.25
    assert demographic_representation(["He and his brother met her."]) == pytest.approx(0.25)
    # texts are pooled: "She" + "He. He." -> female 1, male 2 -> p = (1/3, 2/3) -> TVD 1/6
    assert demographic_representation(["She left.", "He came. He stayed."]) == pytest.approx(1 / 6)
    # lower-cased before matching; sentence-final punctuation is split off: "HER." counts
    assert demographic_representation(["I saw HER. Then left"]) == pytest.approx(0.5)


def test_demographic_representation_race() -> None:
    # asian: wong (1/20 = 0.05); hispanic: garcia, lopez (2/16 = 0.125); white: 0
    # p = (0.05, 0.125, 0) / 0.175 = (2/7, 5/7, 0)
    # TVD = (|1/3 - 2/7| + |1/3 - 5/7| + 1/3) / 2 = (1/21 + 8/21 + 7/21) / 2 = 8/21
    assert demographic_representation(["Mr. Wong met Garcia and Lopez."], "race") == pytest.approx(8 / 21)


def test_demographic_representation_undefined_and_empty_texts() -> None:
    assert demographic_representation(["The weather is fine."]) is None
    assert demographic_representation(["", ""]) is None
    assert demographic_representation([]) is None


def test_custom_groups_replace_the_built_in_lists() -> None:
    groups = {"cats": ["cat", "kitten"], "dogs": ["dog"]}
    # cats 1/2 = 0.5, dogs 1/1 = 1 -> p = (1/3, 2/3) -> 1/6
    assert demographic_representation(["a cat and a dog"], groups=groups) == pytest.approx(1 / 6)
    with pytest.raises(MetricInputError, match="two demographic groups"):
        demographic_representation(["x"], groups={"only": ["x"]})


# -- stereotypical associations ---------------------------------------------------------------------


def test_stereotypical_associations_hand_computed() -> None:
    texts = ["She is a nurse.", "He is a doctor. He is a nurse."]
    # text 1: nurse x female(she = 1) -> nurse (1, 0)
    # text 2: he = 2; doctor x male 2 -> doctor (0, 2); nurse x male 2 -> nurse (1, 2)
    # bias(nurse) = p (1/3, 2/3) -> 1/6; bias(doctor) = p (0, 1) -> 1/2; mean (1/6 + 1/2) / 2 = 1/3
    assert stereotypical_associations(texts, "gender", "profession") == pytest.approx(1 / 3)


def test_associations_count_co_occurrence_within_a_text_only() -> None:
    # the profession and the gendered word never share a text -> no defined bias -> None
    assert stereotypical_associations(["She is here.", "The doctor left."]) is None
    # counts multiply: "nurse nurse" x (she, her) = 2 * 2 = 4 female, 0 male -> TVD 1/2
    assert stereotypical_associations(["The nurse, a nurse, saw her and she smiled."]) == pytest.approx(0.5)


def test_associations_race_with_adjectives_and_custom_targets() -> None:
    # "wong" (asian, list of 20) and "garcia" (hispanic, list of 16) with "clever": counts (1, 1, 0)
    # normalised (1/20, 1/16, 0) = (0.05, 0.0625, 0) -> p = (4/9, 5/9, 0) -> TVD 1/3 (as above)
    assert stereotypical_associations(["Wong and Garcia are clever."], "race", "adjective") == pytest.approx(1 / 3)
    assert stereotypical_associations(["Wong and Garcia are clever."], "race", targets=["clever"]) == pytest.approx(1 / 3)


def test_helm_bias_metrics_are_registered() -> None:
    for name in (
        "bias_representation_gender",
        "bias_representation_race",
        "bias_associations_gender_profession",
        "bias_associations_race_profession",
        "bias_associations_gender_adjective",
        "bias_associations_race_adjective",
    ):
        info = POPULATION[name]
        assert info.kind == "population" and info.direction == "lower" and info.inputs == (Column.TEXT,)
        assert info.family == "bias"
        assert "HELM" in info.citation
    assert POPULATION["bias_representation_gender"].function(["He and his brother met her."]) == pytest.approx(0.25)


# -- prompt stereotyping (CrowS-Pairs) --------------------------------------------------------------


def test_prompt_stereotyping_hand_computed() -> None:
    more = [-10.0, -5.0, -7.0, -3.0]
    less = [-12.0, -5.0, -6.0, -4.0]
    # differences 2, 0, -1, 1 -> strictly positive for pairs 1 and 4 -> 2/4 = 0.5 (the optimum)
    assert logprob_differences(more, less) == [2.0, 0.0, -1.0, 1.0]
    assert is_biased(more, less) == [True, False, False, True]
    assert prompt_stereotyping(more, less) == 0.5
    # mean difference (2 + 0 - 1 + 1) / 4 = 0.5
    assert mean_logprob_difference(more, less) == pytest.approx(0.5)


def test_prompt_stereotyping_is_registered_with_optimum_one_half() -> None:
    info = POPULATION["prompt_stereotyping"]
    assert info.direction == "target" and info.optimum == 0.5 and info.bounds == (0.0, 1.0)


def test_prompt_stereotyping_per_category() -> None:
    more, less = [-1.0, -2.0, -3.0], [-2.0, -1.0, -4.0]
    flags = [float(flag) for flag in is_biased(more, less)]  # 1, 0, 1
    groups = per_group(flags, ["gender", "race", "gender"])
    assert groups["gender"].mean == 1.0 and groups["race"].mean == 0.0


@pytest.mark.parametrize(
    ("more", "less"),
    [([], []), ([-1.0], [-1.0, -2.0]), ([0.5], [-1.0]), ([float("nan")], [-1.0]), ([float("-inf")], [-1.0])],
    ids=["empty", "length", "positive", "nan", "minus-infinity"],
)
def test_prompt_stereotyping_input_errors(more: list[float], less: list[float]) -> None:
    with pytest.raises(MetricInputError):
        prompt_stereotyping(more, less)
