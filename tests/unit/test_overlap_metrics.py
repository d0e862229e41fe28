"""ROUGE, BLEU and fmeval's word-overlap / factual-knowledge metrics: hand-computed values and agreement
with the reference libraries (rouge_score, nltk sentence_bleu) on random inputs."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.metrics import (
    bleu_1,
    bleu_4,
    exact_match,
    f1_over_words,
    f1_score,
    factual_knowledge,
    precision_over_words,
    quasi_exact_match,
    recall_over_words,
    rouge,
    rouge_1,
    rouge_2,
    rouge_l,
)
from pytest_holistic.metrics.bleu import bleu_n
from pytest_holistic.metrics.rouge import MEASURES, ORDERS
from pytest_holistic.metrics.tokenize import word_tokenize
from pytest_holistic.scenarios import Reference

words = st.sampled_from(["the", "cat", "sat", "on", "mat", "dog", "runs", "running", "ran", "a", "fall", "it", "is", "Rain"])
sentences = st.lists(words, min_size=0, max_size=12).map(" ".join)

# -- ROUGE ------------------------------------------------------------------------------------------


def test_rouge_2_of_the_fmeval_example_is_one_half() -> None:
    # "it is autumn" vs "it is fall": bigrams {it is, is autumn} vs {it is, is fall}, 1 shared
    # P = 1/2, R = 1/2, F = 1/2  (fmeval's 0.67 is the unigram overlap, digest §8 C11)
    assert rouge_2("It is autumn.", ["It is fall."]) == pytest.approx(0.5)
    # unigrams {it, is, autumn} vs {it, is, fall}: 2 shared of 3 -> P = R = F = 2/3
    assert rouge_1("It is autumn.", ["It is fall."]) == pytest.approx(2 / 3)


def test_rouge_l_counts_a_subsequence_not_a_substring() -> None:
    # LCS("it rains today", "it rains again today") = 3 (digest §2.1)
    # P = 3/3 = 1, R = 3/4, F = 2 * 1 * 0.75 / 1.75 = 6/7
    assert rouge_l("It rains today", ["It rains again today"]) == pytest.approx(6 / 7)
    assert rouge("l", "precision")("It rains today", ["It rains again today"]) == pytest.approx(1.0)
    assert rouge("l", "recall")("It rains today", ["It rains again today"]) == pytest.approx(0.75)


def test_rouge_precision_and_recall_variants() -> None:
    # prediction unigrams: the, cat, sat, on, the, mat (6); reference: the, cat (2)
    # clipped matches: the -> min(2, 1) = 1, cat -> 1: 2 matches
    # P = 2/6 = 1/3, R = 2/2 = 1, F = 2 * (1/3) * 1 / (4/3) = 1/2
    prediction, refs = "the cat sat on the mat", ["the cat"]
    assert rouge("1", "precision")(prediction, refs) == pytest.approx(1 / 3)
    assert rouge("1", "recall")(prediction, refs) == pytest.approx(1.0)
    assert rouge_1(prediction, refs) == pytest.approx(0.5)
    assert rouge("1", "recall").__name__ == "rouge_1_recall"
    assert rouge("1", "recall")(prediction, refs).metric == "rouge_1_recall"
    assert rouge("1") is rouge_1
    assert rouge("1", "fmeasure") is rouge_1


def test_rouge_stems_and_ignores_case_and_punctuation() -> None:
    # Porter stemming: "raining" and "rained" both become "rain" -> 1
    assert rouge_1("Raining!", ["rained"]) == pytest.approx(1.0)
    assert rouge_1("", ["anything"]) == 0.0


def test_rouge_is_max_over_correct_references() -> None:
    # vs "dog" -> 0; vs "the cat" -> 1/2 (above); vs wrong-tagged "the cat sat on the mat" ignored
    refs = ["dog", "the cat", Reference("the cat sat on the mat", correct=False)]
    assert rouge_1("the cat sat on the mat", refs) == pytest.approx(0.5)


def test_rouge_rejects_unknown_variants() -> None:
    with pytest.raises(ValueError, match="order"):
        rouge("3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="measure"):
        rouge("1", "f1")  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(sentences, st.lists(sentences, min_size=1, max_size=3), st.sampled_from(ORDERS), st.sampled_from(MEASURES))
def test_rouge_agrees_with_rouge_score(prediction: str, golds: list[str], order: str, measure: str) -> None:
    from rouge_score import rouge_scorer

    rouge_type = {"1": "rouge1", "2": "rouge2", "l": "rougeL"}[order]
    scorer = rouge_scorer.RougeScorer([rouge_type], use_stemmer=True)
    expected = max(getattr(scorer.score(gold, prediction)[rouge_type], measure) for gold in golds)
    assert rouge(order, measure)(prediction, golds) == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]


# -- BLEU -------------------------------------------------------------------------------------------


def test_bleu_1_hand_computed() -> None:
    # prediction "the cat sat": 3 unigrams, all in the 6-token reference -> p1 = 3/3 = 1
    # shorter than the reference: BP = exp(1 - 6/3) = exp(-1)
    assert bleu_1("the cat sat", ["the cat sat on the mat"]) == pytest.approx(math.exp(-1))
    # clipping: "the the the the" vs "the cat": matches min(4, 1) = 1 of 4 -> 1/4; c = 4 > r = 2 -> BP = 1
    assert bleu_1("the the the the", ["the cat"]) == pytest.approx(0.25)


def test_bleu_4_is_four_gram_precision_not_cumulative_bleu() -> None:
    # identical 5-token texts: 4-grams 2/2 -> 1
    assert bleu_4("a b c d e", ["a b c d e"]) == pytest.approx(1.0)
    # "a b c d a b c d" vs "a b c d e": prediction 4-grams abcd, bcda, cdab, dabc, abcd (5);
    # reference 4-grams abcd, bcde; clipped matches: abcd -> min(2, 1) = 1 -> p4 = 1/5, c = 8 > r = 5 -> BP 1
    assert bleu_4("a b c d a b c d", ["a b c d e"]) == pytest.approx(0.2)
    # cumulative BLEU-4 would be (p1 p2 p3 p4)^(1/4) = (8/8 * 7/7 * 5/6 * 1/5)^(1/4) != 0.2; HELM uses p4 alone


def test_bleu_zero_matches_are_exactly_zero_and_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bleu_4("the cat sat", ["the cat sat"]) == 0.0  # 3 tokens have no 4-gram
        assert bleu_4("one two three four", ["five six seven eight"]) == 0.0
        assert bleu_1("dog", ["cat"]) == 0.0
        assert bleu_1("", ["cat"]) == 0.0
        assert bleu_1("the cat", ["the dog"]) > 0  # no bigram match: NLTK would warn here


def test_bleu_tokenises_punctuation_as_words() -> None:
    # "Hello, world." -> Hello , world . (4 tokens), reference "Hello world" (2 tokens)
    assert word_tokenize("Hello, world.") == ["Hello", ",", "world", "."]
    # unigram matches 2 of 4 -> 1/2, c = 4 > r = 2 -> BP 1
    assert bleu_1("Hello, world.", ["Hello world"]) == pytest.approx(0.5)
    # Punkt splits the sentences before the word tokenizer, as nltk.word_tokenize does
    assert word_tokenize("She left. He came!") == ["She", "left", ".", "He", "came", "!"]


def test_bleu_n_rejects_order_zero() -> None:
    with pytest.raises(ValueError):
        bleu_n(["a"], ["a"], 0)


token_lists = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=0, max_size=14)


@settings(max_examples=200, deadline=None)
@given(token_lists, token_lists, st.sampled_from([1, 4]))
def test_bleu_agrees_with_nltk_sentence_bleu(gold: list[str], prediction: list[str], n: int) -> None:
    from nltk.translate.bleu_score import sentence_bleu

    weights = (1, 0, 0, 0) if n == 1 else (0, 0, 0, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = sentence_bleu([gold], prediction, weights=weights)
    # where NLTK finds no match it returns BP * 2.2e-308 instead of 0
    assert bleu_n(gold, prediction, n) == pytest.approx(expected, rel=1e-12, abs=1e-300)


# -- fmeval QA accuracy and factual knowledge -------------------------------------------------------


def test_fmeval_antarctic_example_follows_the_code() -> None:
    # digest §2.1 [AMBIGUOUS]: "the Antarctic" vs "Antarctic"; the article is normalised away
    # output words {antarctic}, answer words {antarctic}: P = R = F1 = 1; EM 0, quasi-EM 1
    prediction, refs = "the Antarctic", ["Antarctic"]
    assert precision_over_words(prediction, refs) == 1.0
    assert recall_over_words(prediction, refs) == 1.0
    assert f1_over_words(prediction, refs) == 1.0
    assert exact_match(prediction, refs) == 0.0
    assert quasi_exact_match(prediction, refs) == 1.0


def test_precision_over_words_penalises_verbosity() -> None:
    # output {berlin, is, capital, of, germany} ("the" dropped), answer {berlin}
    # P = 1/5, R = 1/1, F1 = 2 * 0.2 * 1 / 1.2 = 1/3
    prediction, refs = "Berlin is the capital of Germany", ["Berlin"]
    assert precision_over_words(prediction, refs) == pytest.approx(0.2)
    assert recall_over_words(prediction, refs) == pytest.approx(1.0)
    assert f1_over_words(prediction, refs) == pytest.approx(1 / 3)


def test_word_metrics_use_sets_and_zero_when_undefined() -> None:
    # "cat cat dog" -> {cat, dog}; answer "cat" -> P = 1/2, R = 1
    assert precision_over_words("cat cat dog", ["cat"]) == pytest.approx(0.5)
    assert precision_over_words("", ["cat"]) == 0.0  # no output words
    assert recall_over_words("cat", ["the"]) == 0.0  # answer normalises to nothing


def test_or_delimited_answers_take_the_best() -> None:
    # "Paris<OR>City of Light": vs "paris" -> recall 1; the other part -> 0
    assert recall_over_words("Paris, of course", ["London<OR>Paris"]) == 1.0
    # output {paris, of, course}: P vs "paris" = 1/3, vs "london" = 0 -> 1/3
    assert precision_over_words("Paris, of course", ["London<OR>Paris"]) == pytest.approx(1 / 3)


def test_factual_knowledge_is_a_case_insensitive_substring_test() -> None:
    # fmeval's example: "Berlin is the capital of" -> "Germany"
    assert factual_knowledge("Germany, and is also its most populous city", ["Germany"]) == 1.0
    assert factual_knowledge("GERMANY!", ["germany"]) == 1.0
    assert factual_knowledge("France", ["Germany"]) == 0.0
    # several valid answers: Bloemfontein -> South Africa or Free State Province
    assert factual_knowledge("It is in the Free State Province.", ["South Africa<OR>Free State Province"]) == 1.0
    assert factual_knowledge("It is in South Africa.", ["Free State Province", "South Africa"]) == 1.0
    # as in fmeval, an empty answer is a substring of every output (golden/fmeval_metrics.json: "Paris<OR>")
    assert factual_knowledge("anything", [""]) == 1.0
    assert factual_knowledge("anything", ["London<OR>"]) == 1.0
    # a blank but non-empty one is not: "  " is not in "anything"
    assert factual_knowledge("anything", ["  "]) == 0.0


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,."), st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,."))
def test_f1_over_words_equals_helm_f1_on_space_separated_text(prediction: str, gold: str) -> None:
    # with spaces as the only whitespace, fmeval's and HELM's normalisations keep the same words
    assert f1_over_words(prediction, [gold]) == f1_score(prediction, [gold])


def test_f1_over_words_is_not_helm_f1_across_other_whitespace() -> None:
    # fmeval drops an article only between spaces; HELM's \b rule drops it before a newline too
    assert f1_over_words("the\ncat", ["cat"]) == pytest.approx(2 / 3)
    assert f1_score("the\ncat", ["cat"]) == 1.0


@settings(max_examples=150, deadline=None)
@given(sentences, sentences)
def test_f1_over_words_is_harmonic_mean_of_precision_and_recall(prediction: str, gold: str) -> None:
    p, r = precision_over_words(prediction, [gold]), recall_over_words(prediction, [gold])
    expected = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    assert f1_over_words(prediction, [gold]) == pytest.approx(expected)
