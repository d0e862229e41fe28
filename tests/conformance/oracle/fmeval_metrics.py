"""fmeval's own outputs for the inputs of ``inputs/fmeval_metrics.py`` (runs in the oracle venv only).

Calls fmeval 1.2.3's real transforms and functions: ``QAAccuracyScores`` (precision/recall/F1 over words,
exact and quasi-exact match, ``<OR>`` targets), ``FactualKnowledgeScores`` and the scikit-learn scores that
``ClassificationAccuracy`` dispatches to (balanced accuracy; precision and recall with each multiclass
averaging strategy fmeval offers), the per-record classification accuracy, and ``PromptStereotypingScores``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _oracle
import _stubs

# fmeval's modules import these at module level for datasets, AWS model runners and model-based scores; the
# functions called below never touch them (see _stubs). nltk, numpy and scikit-learn are the real packages.
STUBBED = ("functional", "ray", "boto3", "botocore", "pyarrow", "jmespath", "sagemaker", "mypy_boto3_bedrock")
_stubs.install(*STUBBED, "evaluate", "torch", "transformers", "cloudpickle")

from fmeval.eval_algorithms import classification_accuracy, factual_knowledge, prompt_stereotyping, qa_accuracy

warnings.simplefilter("ignore")  # scikit-learn warns, on stderr, about labels with no true or predicted samples

AVERAGES = ("micro", "macro", "weighted")


def _qa(case: dict[str, str]) -> dict[str, Any]:
    record = {"target_output": case["target_output"], "model_output": case["model_output"]}
    scores = qa_accuracy.QAAccuracyScores()(dict(record))
    scores.update(factual_knowledge.FactualKnowledgeScores()(dict(record)))
    names = (*qa_accuracy.QA_ACCURACY_SCORE_NAMES, *factual_knowledge.SCORE_NAMES)
    return {"kind": "qa", "inputs": case, "expected": {name: float(scores[name]) for name in names}}


def _classification(case: dict[str, list[str]]) -> dict[str, Any]:
    y_true, y_pred = case["y_true"], case["y_pred"]
    scorer = classification_accuracy.ClassificationAccuracyScores(valid_labels=sorted(set(y_true)))
    hits = [
        scorer({"target_output": truth, "model_output": predicted})[classification_accuracy.CLASSIFICATION_ACCURACY_SCORE]
        for truth, predicted in zip(y_true, y_pred, strict=True)
    ]
    functions = classification_accuracy.CLASSIFICATION_ACCURACY_SCORES_TO_FUNCS
    expected: dict[str, Any] = {
        "classification_accuracy_score": sum(hits) / len(hits),
        "balanced_accuracy_score": float(functions[classification_accuracy.BALANCED_ACCURACY_SCORE](y_true, y_pred)),
    }
    for average in AVERAGES:
        for name in (classification_accuracy.PRECISION_SCORE, classification_accuracy.RECALL_SCORE):
            expected[f"{name}_{average}"] = float(functions[name](y_true, y_pred, average=average))
    return {"kind": "classification", "inputs": case, "expected": expected}


def _stereotyping(case: dict[str, list[float]]) -> dict[str, Any]:
    """Per pair, fmeval's ``PromptStereotypingScores``: the log-probability difference and whether it is > 0."""
    transform = prompt_stereotyping.PromptStereotypingScores()
    records = [
        transform({transform.sent_more_log_prob_key: more, transform.sent_less_log_prob_key: less})
        for more, less in zip(case["logprobs_more"], case["logprobs_less"], strict=True)
    ]
    expected = {
        "log_probability_difference": [record[prompt_stereotyping.LOG_PROBABILITY_DIFFERENCE] for record in records],
        "prompt_stereotyping": [bool(record[prompt_stereotyping.PROMPT_STEREOTYPING]) for record in records],
    }
    return {"kind": "stereotyping", "inputs": case, "expected": expected}


def main(inputs: dict[str, Any], files: Path) -> dict[str, Any]:
    cases = [_qa(case) for case in inputs["qa"]] + [_classification(case) for case in inputs["classification"]]
    cases += [_stereotyping(case) for case in inputs["stereotyping"]]
    return {"cases": cases}


if __name__ == "__main__":
    _oracle.run(main)
