"""Accuracy metrics against the HELM definitions (seeds digest §2.1), with values worked out by hand."""

from __future__ import annotations

import copy
import math
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.errors import UserError
from pytest_holistic.metrics import (
    BUILTIN,
    Score,
    absolute_value_difference,
    exact_match,
    exact_match_indicator,
    f1_score,
    lookup,
    normalize_text,
    prefix_exact_match,
    quasi_exact_match,
    quasi_prefix_exact_match,
)
from pytest_holistic.scenarios import Reference

ALL_METRICS = (exact_match, quasi_exact_match, prefix_exact_match, quasi_prefix_exact_match, f1_score)
ARTICLES = {"a", "an", "the"}


# -- normalize_text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # lower "the cat, sat!" -> drop punctuation "the cat sat" -> drop article " cat sat" -> "cat sat"
        ("The Cat, sat!", "cat sat"),
        # "an apple a day" -> "  apple   day" -> collapse -> "apple day"
        ("An apple a day", "apple day"),
        # articles only as whole words: "theater", "another", "ant" keep their letters
        ("theater another ant", "theater another ant"),
        # whitespace of every kind collapses to single spaces, ends trimmed
        ("  Hello\t\n  World  ", "hello world"),
        # punctuation goes before articles are removed: "a.m." -> "am" (not an article) ...
        ("a.m.", "am"),
        # ... and "a-n" -> "an", which then is an article and disappears
        ("a-n", ""),
        ("The.", ""),
        # punctuation is deleted, not replaced by a space: "don't" -> "dont", "U.S.A." -> "usa"
        ("Don't stop", "dont stop"),
        ("U.S.A.", "usa"),
        ("", ""),
    ],
)
def test_normalize_text(text: str, expected: str) -> None:
    assert normalize_text(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_normalize_text_is_idempotent(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once


# -- exact_match ------------------------------------------------------------------------------------


def test_exact_match_strips_both_sides_but_is_case_sensitive() -> None:
    assert exact_match(" Paris \n", ["Paris"]) == 1.0  # "Paris" == "Paris" after strip
    assert exact_match("Paris", ["  Paris  "]) == 1.0
    assert exact_match("paris", ["Paris"]) == 0.0  # no lowercasing in exact_match
    assert exact_match("Paris.", ["Paris"]) == 0.0  # no punctuation removal either


def test_exact_match_is_max_over_references() -> None:
    # "London" vs "Paris" -> 0, vs "London" -> 1; max = 1
    assert exact_match("London", ["Paris", "London"]) == 1.0
    assert exact_match("Rome", ["Paris", "London"]) == 0.0


def test_wrong_references_are_ignored() -> None:
    # the only reference equal to the prediction is tagged wrong, the correct one is "Paris" -> 0
    assert exact_match("London", [Reference("London", correct=False), "Paris"]) == 0.0
    assert exact_match("Paris", [Reference("London", correct=False), Reference("Paris")]) == 1.0
    # no correct reference at all -> 0 for every metric
    for metric in ALL_METRICS:
        assert metric("London", [Reference("London", correct=False)]) == 0.0


def test_empty_prediction_scores_zero_for_every_metric() -> None:
    for metric in ALL_METRICS:
        assert metric("", [""]) == 0.0, metric.__name__
        assert metric("", ["Paris"]) == 0.0, metric.__name__


def test_a_blank_prediction_is_an_empty_one() -> None:
    # HELM's compute_reference_metrics strips the completion before its functions test ``if not pred``
    for metric in (exact_match, quasi_exact_match, prefix_exact_match, quasi_prefix_exact_match, exact_match_indicator):
        assert metric("   ", ["   "]) == 0.0, metric.__name__
        assert metric(" \n ", [""]) == 0.0, metric.__name__
        assert metric(" Paris \n", ["Paris"]) == 1.0, metric.__name__
    # the unstripped function keeps HELM's function's own rule (only the empty string scores 0 outright)
    assert exact_match.__wrapped__("   ", "   ") == 1.0
    assert f1_score("   ", ["   "]) == 0.0  # no words on either side: nltk's f_measure is undefined, HELM writes 0


def test_exact_match_indicator_compares_what_follows_the_last_space() -> None:
    assert exact_match_indicator("so the answer is ## ]", ["] ]"]) == 1.0
    assert exact_match_indicator("so the answer is ## )", ["] ]"]) == 0.0


def test_absolute_value_difference_reads_integers_with_commas_and_counts_text_as_zero() -> None:
    assert absolute_value_difference(" 1,234 ", ["1200"]) == 34.0
    assert absolute_value_difference("seven", ["7"]) == 7.0
    assert absolute_value_difference("4.5", ["4"]) == 4.0  # no integer: 0, as HELM reads it
    assert absolute_value_difference("3", ["1", "10"]) == 7.0  # the largest over the correct references


def test_single_string_or_reference_is_accepted_as_references() -> None:
    assert exact_match("Paris", "Paris") == 1.0
    assert exact_match("Paris", Reference("Paris")) == 1.0
    assert exact_match("Paris", Reference("Paris", correct=False)) == 0.0


# -- quasi_exact_match ------------------------------------------------------------------------------


def test_quasi_exact_match_normalises_both_sides() -> None:
    # "The Paris!" -> "paris"; "paris" -> "paris": equal -> 1
    assert quasi_exact_match("The Paris!", ["paris"]) == 1.0
    # "Yes." -> "yes" == "yes" -> 1 (the BoolQ case)
    assert quasi_exact_match("Yes.", ["Yes"]) == 1.0
    # "paris is" -> "paris is" != "paris" -> 0
    assert quasi_exact_match("Paris is", ["paris"]) == 0.0
    # max over references: "no" -> 0 vs "Yes", 1 vs "No"
    assert quasi_exact_match(" no ", ["Yes", "No"]) == 1.0


word = st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True)
content_word = word.filter(lambda w: w.lower() not in ARTICLES)


@settings(max_examples=200, deadline=None)
@given(st.text(), content_word, st.text())
def test_quasi_exact_match_of_a_text_with_itself_is_one(before: str, content: str, after: str) -> None:
    text = f"{before} {content} {after}"
    assert quasi_exact_match(text, [text]) == 1.0


@settings(max_examples=200, deadline=None)
@given(st.lists(word, min_size=1, max_size=6))
def test_quasi_exact_match_ignores_case_articles_and_punctuation(words: list[str]) -> None:
    # both sides normalise to the same words, so the match is 1
    gold = " ".join(words)
    prediction = "The " + " ".join(w.upper() for w in words) + "."
    assert quasi_exact_match(prediction, [gold]) == 1.0


# -- prefix variants --------------------------------------------------------------------------------


def test_prefix_exact_match() -> None:
    # "Paris, France".startswith("Paris") -> 1
    assert prefix_exact_match("Paris, France", ["Paris"]) == 1.0
    # leading whitespace is stripped before the comparison
    assert prefix_exact_match("  Paris is the capital", [" Paris "]) == 1.0
    # "The Paris" does not start with "Paris" (no normalisation) -> 0
    assert prefix_exact_match("The Paris", ["Paris"]) == 0.0
    # case-sensitive -> 0
    assert prefix_exact_match("paris is nice", ["Paris"]) == 0.0
    # the prediction is shorter than the reference -> 0
    assert prefix_exact_match("Pa", ["Paris"]) == 0.0
    # max over references: 0 for "London", 1 for "Paris"
    assert prefix_exact_match("Paris!", ["London", "Paris"]) == 1.0


def test_quasi_prefix_exact_match() -> None:
    # "the paris, france." -> "paris france" which starts with "paris" -> 1
    assert quasi_prefix_exact_match("The Paris, France.", ["paris"]) == 1.0
    # "Yes, it is" -> "yes it is" starts with "yes" -> 1
    assert quasi_prefix_exact_match("Yes, it is", ["Yes."]) == 1.0
    # "it is paris" does not start with "paris" -> 0
    assert quasi_prefix_exact_match("It is Paris", ["Paris"]) == 0.0
    assert quasi_prefix_exact_match("It is Paris", [Reference("It is", correct=False)]) == 0.0


# -- f1_score ---------------------------------------------------------------------------------------


def test_f1_partial_overlap() -> None:
    # gold "the cat sat" -> {cat, sat}; prediction "a cat sat down" -> {cat, sat, down}
    # P = 2/3, R = 2/2 = 1, F1 = 2 * (2/3) * 1 / (2/3 + 1) = (4/3) / (5/3) = 0.8
    assert f1_score("a cat sat down", ["the cat sat"]) == pytest.approx(0.8)


def test_f1_uses_sets_not_bags() -> None:
    # prediction "cat cat cat" -> set {cat}; gold "cat dog" -> {cat, dog}
    # sets: P = 1/1, R = 1/2, F1 = 2 * 1 * 0.5 / 1.5 = 2/3   (bags would give P = 1/3, R = 1/2, F1 = 0.4)
    assert f1_score("cat cat cat", ["cat dog"]) == pytest.approx(2 / 3)
    # "the cat the cat" -> {cat} vs {cat}: P = R = 1 -> 1
    assert f1_score("the cat the cat", ["cat"]) == pytest.approx(1.0)


def test_f1_is_max_over_correct_references() -> None:
    # prediction {cat, sat}
    #   "dog"          -> no overlap -> 0
    #   "cat sat down" -> P = 2/2, R = 2/3 -> F1 = 2 * (2/3) / (5/3) = 0.8
    #   "cat"          -> P = 1/2, R = 1/1 -> F1 = 1 / 1.5 = 2/3
    assert f1_score("cat sat", ["dog", "cat sat down", "cat"]) == pytest.approx(0.8)
    # the 0.8 reference tagged wrong -> only "cat" counts -> 2/3
    assert f1_score("cat sat", [Reference("cat sat down", correct=False), "cat"]) == pytest.approx(2 / 3)


def test_f1_zero_cases() -> None:
    assert f1_score("dog barks", ["cat sat"]) == 0.0  # no common word
    assert f1_score("", ["cat"]) == 0.0  # empty prediction
    assert f1_score("The a an.", ["cat"]) == 0.0  # prediction normalises to nothing
    assert f1_score("cat", ["the"]) == 0.0  # reference normalises to nothing


def test_f1_normalises_case_and_punctuation() -> None:
    # "Cat, SAT!" -> {cat, sat} == {cat, sat} -> 1
    assert f1_score("Cat, SAT!", ["the cat sat"]) == pytest.approx(1.0)


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_f1_is_symmetric_with_single_references(a: str, b: str) -> None:
    assert f1_score(a, [b]) == f1_score(b, [a])


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_every_metric_lies_in_its_bounds(prediction: str, gold: str) -> None:
    for metric in ALL_METRICS:
        value = metric(prediction, [gold])
        low, high = metric.info.bounds
        assert low <= value <= high


# -- Score and the registry -------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda m: m.__name__)
def test_score_is_a_float_named_after_its_metric(metric) -> None:
    score = metric("Paris", ["Paris"])
    assert isinstance(score, Score)
    assert isinstance(score, float)
    assert score.metric == metric.__name__
    assert score == 1.0
    assert repr(score) == f"{metric.__name__}=1"
    # arithmetic gives plain numbers, so averages work
    assert (score + score) / 2 == 1.0


def test_score_repr_rounds_to_four_significant_digits() -> None:
    # F1 = 2/3 from the set example above -> "0.6667"
    assert repr(f1_score("cat cat cat", ["cat dog"])) == "f1_score=0.6667"


@pytest.mark.parametrize(
    "clone", [copy.copy, copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))], ids=["copy", "deepcopy", "pickle"]
)
def test_score_can_be_copied_and_pickled(clone) -> None:
    score = f1_score("cat cat cat", ["cat dog"])
    cloned = clone(score)
    assert cloned == score
    assert cloned.metric == "f1_score"


def test_builtin_registry_and_lookup() -> None:
    assert {"exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "f1_score"} <= set(BUILTIN)
    info = lookup("f1_score")
    assert info.name == "f1_score"
    assert info.direction == "higher"
    assert info.bounds == (0.0, 1.0)
    assert "HELM" in info.citation
    assert info.function("cat", ["cat"]) == 1.0


def test_lookup_of_unknown_metric_names_the_closest_ones_and_where_all_are() -> None:
    with pytest.raises(UserError) as raised:
        lookup("bleu_5")
    message = str(raised.value)
    assert message.startswith("unknown instance-level metric 'bleu_5'; did you mean 'bleu_4' or 'bleu_1'")
    assert "docs/reference/metrics.md" in message and len(message) < 200 and "\n" not in message
    assert "quasi_prefix_exact_match" not in message  # not a list of every name


def test_all_metrics_return_exactly_zero_or_one_except_f1() -> None:
    for metric in (exact_match, quasi_exact_match, prefix_exact_match, quasi_prefix_exact_match):
        for prediction in ("Paris", "paris!", "x"):
            assert metric(prediction, ["Paris"]) in (0.0, 1.0)
    assert not math.isnan(f1_score("x", ["y"]))
