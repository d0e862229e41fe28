"""The project's fmeval metrics equal what fmeval 1.2.3's own code output (``golden/fmeval_metrics.json``).

The goldens come from ``oracle/fmeval_metrics.py`` running fmeval's ``QAAccuracyScores``,
``FactualKnowledgeScores`` and the scikit-learn scores its classification evaluation calls, on the inputs of
``inputs/fmeval_metrics.py``; regenerate with ``python tests/conformance/generate_goldens.py --only fmeval_metrics``.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_holistic.metrics import (
    balanced_accuracy,
    classification_accuracy,
    f1_over_words,
    factual_knowledge,
    is_biased,
    logprob_differences,
    precision,
    precision_over_words,
    recall,
    recall_over_words,
)
from tests.conformance import golden

CASES = golden.cases("fmeval_metrics")
QA = [case for case in CASES if case["kind"] == "qa"]
CLASSIFICATION = [case for case in CASES if case["kind"] == "classification"]
STEREOTYPING = [case for case in CASES if case["kind"] == "stereotyping"]

WORD_METRICS = {
    "precision_over_words": precision_over_words,
    "recall_over_words": recall_over_words,
    "f1_score": f1_over_words,  # fmeval's name for F1 over words
    "factual_knowledge": factual_knowledge,
}


def test_the_goldens_come_from_fmeval_and_cover_every_kind() -> None:
    assert golden.load("fmeval_metrics")["produced_by"]["fmeval"] == "1.2.3"
    assert len(QA) > 600 and len(CLASSIFICATION) > 60 and len(STEREOTYPING) >= 20


@pytest.mark.parametrize("name", sorted(WORD_METRICS))
def test_word_metrics_equal_fmeval(name: str) -> None:
    """Exact equality: the same set sizes divided in the same order give the same float."""
    metric = WORD_METRICS[name]
    wrong = []
    for case in QA:
        given = case["inputs"]
        got = float(metric(given["model_output"], [given["target_output"]]))
        if got != case["expected"][name]:
            wrong.append((given, got, case["expected"][name]))
    assert not wrong, f"{len(wrong)} of {len(QA)} differ from fmeval, e.g. {wrong[:3]}"


def test_the_brief_example() -> None:
    """fmeval splits on the space character only, so the article joined by a newline stays a word."""
    (case,) = [case for case in QA if case["inputs"] == {"model_output": "the\ncat", "target_output": "cat"}]
    assert case["expected"]["precision_over_words"] == 0.5
    assert float(precision_over_words("the\ncat", ["cat"])) == 0.5


def _classification_scores(y_true: list[str], y_pred: list[str]) -> dict[str, Any]:
    scores: dict[str, Any] = {
        "classification_accuracy_score": classification_accuracy(y_true, y_pred),
        "balanced_accuracy_score": balanced_accuracy(y_true, y_pred),
    }
    for average in ("micro", "macro", "weighted"):
        scores[f"precision_score_{average}"] = precision(y_true, y_pred, average=average)  # type: ignore[arg-type]
        scores[f"recall_score_{average}"] = recall(y_true, y_pred, average=average)  # type: ignore[arg-type]
    return scores


@pytest.mark.parametrize("index", range(len(CLASSIFICATION)))
def test_classification_scores_equal_fmevals_scikit_learn_calls(index: int) -> None:
    """Within 1e-12: scikit-learn averages per-label values with numpy, the project sums them in Python."""
    case = CLASSIFICATION[index]
    got = _classification_scores(case["inputs"]["y_true"], case["inputs"]["y_pred"])
    assert got == pytest.approx(case["expected"], rel=0, abs=1e-12)


@pytest.mark.parametrize("index", range(len(STEREOTYPING)))
def test_prompt_stereotyping_pairs_equal_fmeval(index: int) -> None:
    """Exact: one subtraction and one strict comparison per pair (equal log-probabilities are not biased)."""
    case = STEREOTYPING[index]
    more, less = case["inputs"]["logprobs_more"], case["inputs"]["logprobs_less"]
    assert logprob_differences(more, less) == case["expected"]["log_probability_difference"]
    assert is_biased(more, less) == case["expected"]["prompt_stereotyping"]
