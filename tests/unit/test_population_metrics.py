"""Population metrics: classification (against scikit-learn; HELM's own rule is checked against HELM in
tests/conformance), ranking (RR@k, NDCG@k), language modelling
(bits per byte, perplexity) and Catwalk's relative improvement, with values worked out by hand."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_holistic.metrics import (
    POPULATION,
    ClassAnswer,
    MetricInputError,
    balanced_accuracy,
    bits_per_byte,
    classification_accuracy,
    classification_f1,
    f1,
    mean_ndcg,
    mean_reciprocal_rank,
    ndcg,
    perplexity,
    precision,
    recall,
    reciprocal_rank,
    relative_improvement,
)
from pytest_holistic.metrics.classification import AVERAGES
from pytest_holistic.metrics.helm_classification import prepare_f1
from pytest_holistic.metrics.ranking import dcg

# -- classification ---------------------------------------------------------------------------------


def test_fmeval_toy_example() -> None:
    # digest §2.1: true (3, 2, 1), predicted (3, 2, 2)
    y_true, y_pred = [3, 2, 1], [3, 2, 2]
    assert classification_accuracy(y_true, y_pred) == pytest.approx(2 / 3)  # 2 of 3 equal
    assert precision(y_true, y_pred) == pytest.approx(2 / 3)  # micro: TP 2 / predicted 3
    assert recall(y_true, y_pred) == pytest.approx(2 / 3)  # micro: TP 2 / true 3
    # recall per class: 1 -> 0/1, 2 -> 1/1, 3 -> 1/1; mean 2/3
    assert balanced_accuracy(y_true, y_pred) == pytest.approx(2 / 3)
    # macro precision: class 1 never predicted -> 0, class 2 -> 1/2, class 3 -> 1/1; mean 1.5/3 = 0.5
    assert precision(y_true, y_pred, average="macro") == pytest.approx(0.5)
    # F1 per class = 2TP / (predicted + true): 1 -> 0, 2 -> 2/3, 3 -> 1; mean (5/3)/3 = 5/9
    assert f1(y_true, y_pred, average="macro") == pytest.approx(5 / 9)


def test_imbalanced_binary_averages_and_balanced_accuracy() -> None:
    # true 0,0,0,1 / predicted 0,0,1,1
    # label 0: TP 2, predicted 2, true 3 -> P 1, R 2/3, F1 4/5; label 1: TP 1, predicted 2, true 1 -> P 1/2, R 1, F1 2/3
    y_true, y_pred = [0, 0, 0, 1], [0, 0, 1, 1]
    assert precision(y_true, y_pred, average="micro") == pytest.approx(3 / 4)
    assert precision(y_true, y_pred, average="macro") == pytest.approx(0.75)  # (1 + 1/2) / 2
    assert precision(y_true, y_pred, average="weighted") == pytest.approx(0.875)  # (3*1 + 1*1/2) / 4
    assert f1(y_true, y_pred, average="weighted") == pytest.approx((3 * 0.8 + 2 / 3) / 4)
    # balanced accuracy (2/3 + 1)/2 = 5/6 differs from accuracy 3/4 (digest §8 C12)
    assert balanced_accuracy(y_true, y_pred) == pytest.approx(5 / 6)
    assert classification_accuracy(y_true, y_pred) == pytest.approx(0.75)


def test_explicit_labels_restrict_the_average() -> None:
    # only label 1 counted: TP 1, predicted 2 -> precision 1/2
    assert precision([0, 0, 0, 1], [0, 0, 1, 1], average="micro", labels=[1]) == pytest.approx(0.5)
    # a label that never occurs contributes 0 to a macro average (zero_division = 0)
    assert recall([0, 1], [0, 1], average="macro", labels=[0, 1, 2]) == pytest.approx(2 / 3)
    # weighted with no true instance of any chosen label -> 0
    assert precision([0, 1], [0, 1], average="weighted", labels=[2]) == 0.0


def test_string_labels_and_an_unknown_prediction() -> None:
    # fmeval maps unparseable output to "unknown", which is simply wrong
    assert classification_accuracy(["pos", "neg"], ["pos", "unknown"]) == 0.5
    assert balanced_accuracy(["pos", "neg"], ["pos", "unknown"]) == 0.5


@pytest.mark.parametrize(
    "call",
    [
        lambda: classification_accuracy([], []),
        lambda: classification_accuracy([1, 2], [1]),
        lambda: precision([1], [1], average="binary"),  # type: ignore[arg-type]
        lambda: precision([1], [1], labels=[]),
    ],
    ids=["empty", "length", "average", "no-labels"],
)
def test_classification_input_errors(call) -> None:
    with pytest.raises(MetricInputError) as raised:
        call()
    assert isinstance(raised.value, ValueError)


labels = st.integers(min_value=0, max_value=4)


@st.composite
def label_pairs(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    n = draw(st.integers(min_value=1, max_value=30))
    return draw(st.lists(labels, min_size=n, max_size=n)), draw(st.lists(labels, min_size=n, max_size=n))


@settings(max_examples=120, deadline=None)
@given(label_pairs(), st.sampled_from(AVERAGES), st.none() | st.lists(labels, min_size=1, max_size=4, unique=True))
def test_precision_recall_f1_agree_with_sklearn(
    pair: tuple[list[int], list[int]], average: str, chosen: list[int] | None
) -> None:
    from sklearn import metrics as sk

    y_true, y_pred = pair
    for ours, theirs in ((precision, sk.precision_score), (recall, sk.recall_score), (f1, sk.f1_score)):
        expected = theirs(y_true, y_pred, average=average, labels=chosen, zero_division=0)
        assert ours(y_true, y_pred, average=average, labels=chosen) == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]


@settings(max_examples=120, deadline=None)
@given(label_pairs())
def test_accuracy_and_balanced_accuracy_agree_with_sklearn(pair: tuple[list[int], list[int]]) -> None:
    from sklearn import metrics as sk

    y_true, y_pred = pair
    assert classification_accuracy(y_true, y_pred) == pytest.approx(sk.accuracy_score(y_true, y_pred))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "y_pred contains classes not in y_true"
        expected = sk.balanced_accuracy_score(y_true, y_pred)
    assert balanced_accuracy(y_true, y_pred) == pytest.approx(expected)


# -- HELM's classification F1: the bootstrap's prepared form ---------------------------------------------

GENERATED = ["Positive", "positive.", "NEGATIVE", "Neutral", "", " ", "maybe", "the positive"]


@st.composite
def class_answers(draw: st.DrawFn) -> list[ClassAnswer]:
    """A run's answers: generated (some runs with one class only) or chosen options, with answers outside the labels."""
    n = draw(st.integers(min_value=1, max_value=20))
    if draw(st.booleans()):
        golds = st.sampled_from(["Positive", "Negative", "Neutral"][: draw(st.integers(min_value=1, max_value=3))])
        rows = st.tuples(golds.map(lambda gold: (gold,)), st.sampled_from(GENERATED))
        return [ClassAnswer(golds, text, False) for golds, text in draw(st.lists(rows, min_size=n, max_size=n))]
    options = st.sampled_from(["Paris", "Rome", "Oslo"])
    rows = st.tuples(options.map(lambda gold: (gold,)), options | st.sampled_from(["E", "", "b"]))
    return [ClassAnswer(golds, text, True) for golds, text in draw(st.lists(rows, min_size=n, max_size=n))]


@settings(max_examples=80, deadline=None)
@given(class_answers(), st.sampled_from(["macro", "micro"]), st.integers(min_value=0, max_value=2**32 - 1))
def test_prepared_classification_f1_equals_the_metric_on_each_resample(
    answers: list[ClassAnswer], average: str, seed: int
) -> None:
    """Every resample's value, weighed from counts prepared once, is the metric of the resampled answers (NaN: None),
    including resamples that drew one class only, which HELM scores as binary labels."""
    import numpy as np

    indices = np.random.default_rng(seed).integers(0, len(answers), size=(25, len(answers)))
    prepared = prepare_f1(average)(answers)(indices)  # type: ignore[arg-type]
    for row, value in zip(indices, prepared, strict=True):
        expected = classification_f1([answers[k] for k in row], average)  # type: ignore[arg-type]
        assert (math.isnan(value) and expected is None) or value == expected


def test_registered_classification_f1_is_prepared_for_the_bootstrap() -> None:
    for name in ("classification_macro_f1", "classification_micro_f1"):
        info = POPULATION[name]
        assert info.prepare is not None and info.family == "accuracy" and info.direction == "higher"


def test_classification_f1_labels_and_delimiter_reach_the_prepared_form() -> None:
    import numpy as np

    answers = [ClassAnswer(("a",), "a, b", False), ClassAnswer(("b",), "c", False)]
    every = np.arange(2)[None, :]
    for average in ("macro", "micro"):
        for labels, delimiter in ((None, None), (["a", "b", "c"], None), (None, ", "), (["A", "b"], ", ")):
            expected = classification_f1(answers, average, labels=labels, delimiter=delimiter)  # type: ignore[arg-type]
            assert prepare_f1(average, labels, delimiter)(answers)(every)[0] == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "call",
    [
        lambda: classification_f1([]),
        lambda: classification_f1([ClassAnswer(("a",), "a", False), ClassAnswer(("a",), "a", True)]),
        lambda: classification_f1([ClassAnswer(("a",), "a", True)], labels=["a"]),
        lambda: classification_f1([ClassAnswer((), "a", True)]),
        lambda: classification_f1([ClassAnswer(("a",), "a", False)], "weighted"),  # type: ignore[arg-type]
        lambda: classification_f1([("a", "a", False)]),  # type: ignore[list-item]
    ],
    ids=["empty", "mixed", "labels-with-options", "no-correct-option", "average", "golds-not-a-tuple"],
)
def test_classification_f1_input_errors(call) -> None:
    with pytest.raises(MetricInputError):
        call()


# -- Catwalk relative improvement -------------------------------------------------------------------


def test_relative_improvement_reproduces_catwalk_numbers() -> None:
    # WinoGrande, 2 choices: acc 0.5535 -> 100 * (0.5535 - 0.5) / 0.5 = 10.7 (digest §2.1 check)
    correct = [1] * 1107 + [0] * 893  # 1107 / 2000 = 0.5535
    assert relative_improvement(correct, 2) == pytest.approx(10.7)
    # CoLA: acc 0.3085 -> 100 * (0.3085 - 0.5) / 0.5 = -38.3
    assert relative_improvement([1] * 617 + [0] * 1383, 2) == pytest.approx(-38.3)
    # chance level is 0, perfect is 100 (k - 1)
    assert relative_improvement([1, 0, 0, 0], 4) == pytest.approx(0.0)
    assert relative_improvement([True, True], 4) == pytest.approx(300.0)


def test_relative_improvement_with_varying_numbers_of_choices() -> None:
    # baseline = mean(1/2, 1/4) = 0.375; accuracy 1/2 -> 100 * 0.125 / 0.375 = 33.33
    assert relative_improvement([1, 0], [2, 4]) == pytest.approx(100 / 3)
    with pytest.raises(MetricInputError):
        relative_improvement([1, 0], [2])
    with pytest.raises(MetricInputError):
        relative_improvement([1, 2], 2)  # correctness must be 0/1


# -- ranking ----------------------------------------------------------------------------------------


def test_reciprocal_rank() -> None:
    assert reciprocal_rank([0, 0, 1, 0]) == pytest.approx(1 / 3)  # first relevant at rank 3
    assert reciprocal_rank([0] * 10 + [1]) == 0.0  # rank 11 is past the cut-off 10
    assert reciprocal_rank([0, 0, 0, 1], k=3) == 0.0
    assert reciprocal_rank([2, 1]) == 1.0  # graded relevance > 0 counts as relevant
    assert reciprocal_rank([]) == 0.0
    # MRR over two queries: (1/3 + 1) / 2 = 2/3
    assert mean_reciprocal_rank([[0, 0, 1], [1]]) == pytest.approx(2 / 3)


def test_ndcg_hand_computed() -> None:
    # ranked relevances 0, 2, 1: DCG = 0/log2(2) + 2/log2(3) + 1/log2(4) = 1.261860 + 0.5 = 1.761860
    # ideal 2, 1, 0: IDCG = 2/1 + 1/log2(3) = 2.630930 -> NDCG = 0.669670
    dcg_value = 2 / math.log2(3) + 0.5
    assert dcg([0, 2, 1]) == pytest.approx(dcg_value)
    assert ndcg([0, 2, 1]) == pytest.approx(dcg_value / (2 + 1 / math.log2(3)))
    # an unretrieved passage of relevance 3 raises the ideal: 3/1 + 2/log2(3) + 1/log2(4) = 4.761860
    assert ndcg([0, 2, 1], ideal=[3, 2, 1, 0]) == pytest.approx(dcg_value / (3 + 2 / math.log2(3) + 0.5))
    # the cut-off applies to both: @1 the model's top item has relevance 0 -> 0
    assert ndcg([0, 2, 1], k=1) == 0.0
    assert ndcg([0, 0]) == 0.0  # nothing relevant: IDCG = 0 -> 0
    assert mean_ndcg([[2, 1], [0, 2, 1]]) == pytest.approx((1 + dcg_value / (2 + 1 / math.log2(3))) / 2)


def test_ranking_input_errors() -> None:
    with pytest.raises(MetricInputError):
        reciprocal_rank([1], k=0)
    with pytest.raises(MetricInputError):
        ndcg([-1, 2])
    with pytest.raises(MetricInputError):
        mean_reciprocal_rank([])
    with pytest.raises(MetricInputError):
        mean_ndcg([[1]], ideals=[[1], [2]])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3), min_size=2, max_size=15), st.integers(min_value=1, max_value=12))
def test_ndcg_agrees_with_sklearn(relevances: list[int], k: int) -> None:
    from sklearn.metrics import ndcg_score

    # scores that rank the items in the given order, without ties
    scores = [float(len(relevances) - i) for i in range(len(relevances))]
    assert ndcg(relevances, k) == pytest.approx(ndcg_score([relevances], [scores], k=k), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3), max_size=15))
def test_ndcg_of_the_ideal_order_is_one_when_anything_is_relevant(relevances: list[int]) -> None:
    assume(any(relevances))
    assert ndcg(sorted(relevances, reverse=True)) == pytest.approx(1.0)


# -- language modelling -----------------------------------------------------------------------------


def test_bits_per_byte_and_perplexity_hand_computed() -> None:
    # log p = -10 ln 2 over 5 bytes: 10 bits / 5 bytes = 2 bits per byte
    assert bits_per_byte(-10 * math.log(2), 5) == pytest.approx(2.0)
    # per-document values are summed: (-4 ln 2 - 6 ln 2) / (2 + 3 bytes) -> 2
    assert bits_per_byte([-4 * math.log(2), -6 * math.log(2)], [2, 3]) == pytest.approx(2.0)
    # perplexity: log p = -3 ln 4 over 3 tokens -> exp(ln 4) = 4
    assert perplexity(-3 * math.log(4), 3) == pytest.approx(4.0)
    # (-ln 2 - ln 8) / 2 tokens = -ln 4 -> 4
    assert perplexity([-math.log(2), -math.log(8)], [1, 1]) == pytest.approx(4.0)
    assert perplexity(0.0, 7) == 1.0  # certain predictions


@pytest.mark.parametrize(
    "call",
    [
        lambda: bits_per_byte(0.5, 3),  # a log-probability cannot be positive
        lambda: bits_per_byte(-1.0, 0),
        lambda: perplexity([-1.0, -2.0], [1]),
        lambda: perplexity(float("nan"), 1),
        lambda: perplexity([], []),
    ],
    ids=["positive-logprob", "zero-bytes", "length", "nan", "empty"],
)
def test_language_modeling_input_errors(call) -> None:
    with pytest.raises(MetricInputError):
        call()
