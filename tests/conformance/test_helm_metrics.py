"""The project's HELM metrics equal what HELM 0.5.16's own code output (``golden/helm_metrics.json``).

The goldens come from ``oracle/helm_metrics.py`` running HELM's functions and metric classes on the inputs of
``inputs/helm_metrics.py``; regenerate with ``python tests/conformance/generate_goldens.py --only helm_metrics``.
Comparisons are exact unless a test says why not: where HELM sums with numpy (mean, ``np.average``) and the
project in Python, the order of the additions differs and so may the last bits (1e-12); Platt scaling is
fitted by a different solver (see ``metrics/calibration.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from pytest_holistic.adaptation import Adapter, make_spec
from pytest_holistic.metrics import (
    ClassAnswer,
    Column,
    bbq_metric_ambiguous_bias,
    bbq_metric_unambiguous_bias,
    bleu_1,
    bleu_4,
    classification_f1,
    classification_macro_f1,
    classification_micro_f1,
    coverage_accuracy_area,
    demographic_representation,
    ece_1_bin,
    ece_10_bin,
    edit_distance,
    edit_similarity,
    absolute_value_difference,
    exact_match,
    exact_match_indicator,
    f1,
    f1_score,
    final_number_exact_match,
    longest_common_prefix_length,
    lookup,
    math_equiv,
    math_equiv_chain_of_thought,
    platt_scaling,
    precision,
    prefix_exact_match,
    quasi_exact_match,
    quasi_prefix_exact_match,
    recall,
    rouge_1,
    rouge_2,
    rouge_l,
    selective_acc_at_10,
    stereotypical_associations,
)
from pytest_holistic.scenarios.bbq_tags import bbq_tags, read_bbq_tags
from pytest_holistic.metrics.calibration import platt_ece_1_bin, platt_ece_10_bin
from pytest_holistic.metrics.helm_classification import normalize_label
from pytest_holistic.metrics.math_answers import UnreadableAnswer, boxed_answer, normalize_math
from pytest_holistic.metrics.summarization import DataStatsScorer
from pytest_holistic.models.base import GenerationResult
from pytest_holistic.records import ItemRecord
from pytest_holistic.report.columns import column_values
from pytest_holistic.report.leaderboard import mean_win_rates
from pytest_holistic.scenarios.instance import Instance, Reference
from tests.conformance import golden

CASES = golden.cases("helm_metrics")


def _of(kind: str) -> list[dict[str, Any]]:
    return [case for case in CASES if case["kind"] == kind]


def _mismatches(cases: list[dict[str, Any]], name: str, compute: Callable[[dict[str, Any]], Any], tolerance: float = 0.0) -> list:
    wrong = []
    for case in cases:
        expected, got = case["expected"][name], compute(case["inputs"])
        same = (got is None) == (expected is None) and (got is None or math.isclose(got, expected, rel_tol=0, abs_tol=tolerance))
        if not same:
            wrong.append((case["inputs"], got, expected))
    return wrong


def test_the_goldens_come_from_helm_and_cover_every_kind() -> None:
    assert golden.load("helm_metrics")["produced_by"]["crfm-helm"] == "0.5.16"
    kinds = {case["kind"] for case in CASES}
    assert kinds == {
        "reference",
        "copyright",
        "summarization",
        "bias",
        "bbq",
        "calibration",
        "classification",
        "generated_classification",
        "multiple_choice_classification",
        "win_rate",
        "math",
    }


# -- reference-matching metrics and ROUGE / BLEU ------------------------------------------------------------

REFERENCE = {
    "exact_match": exact_match,
    "quasi_exact_match": quasi_exact_match,
    "prefix_exact_match": prefix_exact_match,
    "quasi_prefix_exact_match": quasi_prefix_exact_match,
    "f1_score": f1_score,
    "rouge_1": rouge_1,
    "rouge_2": rouge_2,
    "rouge_l": rouge_l,
    "bleu_1": bleu_1,
    "bleu_4": bleu_4,
    "exact_match_indicator": exact_match_indicator,
    "absolute_value_difference": absolute_value_difference,
}


def _bleu_floor(name: str, got: float, expected: float) -> bool:
    """Where NLTK's BLEU has unigram matches but none of the order asked for, it returns
    ``BP * exp(log(sys.float_info.min))`` (about 1e-308); the project returns 0.0."""
    return name.startswith("bleu") and got == 0.0 and 0.0 < expected < 1e-300


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_functions_equal_helms(name: str) -> None:
    """The per-reference function (``metric.__wrapped__``) on the raw pair equals HELM's function; exact but for BLEU's floor."""
    wrong = []
    for case in _of("reference"):
        given, expected = case["inputs"], case["expected"][name]
        got = float(REFERENCE[name].__wrapped__(given["gold"], given["pred"]))  # type: ignore[attr-defined]
        if got != expected and not _bleu_floor(name, got, expected):
            wrong.append((given, got, expected))
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_metrics_equal_helms_pipeline(name: str) -> None:
    """The metric as a test or a run calls it equals HELM's ``compute_reference_metrics`` on the same completion,
    which strips it first: a blank prediction scores 0 even against a blank reference."""
    wrong = []
    for case in _of("reference"):
        given, expected = case["inputs"], case["pipeline"][name]
        got = float(REFERENCE[name](given["pred"], [given["gold"]]))
        if got != expected and not _bleu_floor(name, got, expected):
            wrong.append((given, got, expected))
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


# -- HELM Lite's GSM8K and MATH answer matching -------------------------------------------------------------------

MATH = {
    "final_number_exact_match": final_number_exact_match,
    "math_equiv": math_equiv,
    "math_equiv_chain_of_thought": math_equiv_chain_of_thought,
    "exact_match_indicator": exact_match_indicator,
}


@pytest.mark.parametrize("name", sorted(MATH))
def test_math_functions_equal_helms(name: str) -> None:
    """The per-reference function on the raw pair equals HELM's (``is_equiv`` and ``is_equiv_chain_of_thought`` for
    the two ``math_equiv`` metrics), exactly."""
    cases = _of("math")
    assert len(cases) > 400
    wrong = []
    for case in cases:
        given, expected = case["inputs"], case["expected"][name]
        got = float(MATH[name].__wrapped__(given["gold"], given["pred"]))  # type: ignore[attr-defined]
        if got != expected:
            wrong.append((given, got, expected))
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


@pytest.mark.parametrize("name", sorted(MATH))
def test_math_metrics_equal_helms_pipeline(name: str) -> None:
    """The metric as a run calls it equals HELM's ``compute_reference_metrics``, which strips the completion first."""
    wrong = []
    for case in _of("math"):
        given, expected = case["inputs"], case["pipeline"][name]
        got = float(MATH[name](given["pred"], [given["gold"]]))
        if got != expected:
            wrong.append((given, got, expected))
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"



def _helm_instance_metrics() -> list[tuple[str, str]]:
    """(kind, name) of every per-instance metric HELM's ``compute_reference_metrics`` computed in the goldens."""
    return sorted({(kind, name) for kind in ("reference", "math") for case in _of(kind) for name in case["pipeline"]})


@pytest.mark.parametrize(("kind", "name"), _helm_instance_metrics())
def test_helms_instance_metrics_are_registered_under_helms_names_with_helms_values(kind: str, name: str) -> None:
    """A marker's ``metrics=("name", ...)`` reaches the function through the registry (``metrics.lookup``): each
    name HELM computes resolves there, to a function that gives HELM's number on every golden case."""
    info = lookup(name)
    assert info.name == name and info.kind == "instance"
    wrong = []
    for case in _of(kind):
        given, expected = case["inputs"], case["pipeline"][name]
        got = float(info.function(given["pred"], [given["gold"]]))
        if got != expected and not _bleu_floor(name, got, expected):
            wrong.append((given, got, expected))
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"

def _normal_form(text: str) -> str | None:
    try:
        return normalize_math(text)
    except UnreadableAnswer:
        return None


def test_math_normal_form_and_boxed_answer_equal_helms() -> None:
    """``normalize_math`` is HELM's ``_strip_string`` (raising where it raises, None in the golden) and ``boxed_answer``
    its ``get_answer``, on both sides of every case."""
    wrong = []
    for case in _of("math"):
        for side in ("gold", "pred"):
            text = case["inputs"][side]
            got = (_normal_form(text), boxed_answer(text))
            expected = (case["normal_form"][side], case["boxed_answer"][side])
            if got != expected:
                wrong.append((text, got, expected))
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


def test_the_math_goldens_hold_helms_quirks() -> None:
    """The cases the module docstring names, as HELM scored them: a ``\\fbox`` answer is no answer (two of them
    match), two ``\\text{ `` fall back to raw equality, and an empty answer matches an empty reference."""

    def expected(gold: str, pred: str, name: str) -> float:
        case = next(case for case in _of("math") if case["inputs"] == {"gold": gold, "pred": pred})
        return float(case["pipeline"][name])

    assert expected("\\fbox{5}", "\\fbox{6}", "math_equiv_chain_of_thought") == 1.0
    assert expected("5\\text{ m}\\text{ s}", "5\\text{ m}\\text{ s}", "math_equiv") == 1.0
    assert expected("5\\text{ m}\\text{ s}", "5", "math_equiv") == 0.0
    assert expected("", "", "math_equiv") == 1.0
    assert expected("1 2", "1, 2", "final_number_exact_match") == 1.0
    for gold, pred, name in (
        ("\\fbox{5}", "\\fbox{6}", "math_equiv_chain_of_thought"),
        ("5\\text{ m}\\text{ s}", "5\\text{ m}\\text{ s}", "math_equiv"),
        ("", "", "math_equiv"),
        ("1 2", "1, 2", "final_number_exact_match"),
    ):
        assert float(MATH[name](pred, [gold])) == expected(gold, pred, name)


# -- copyright ------------------------------------------------------------------------------------------------

COPYRIGHT = {
    "longest_common_prefix_length": longest_common_prefix_length,
    "edit_distance": edit_distance,
    "edit_similarity": edit_similarity,
}


@pytest.mark.parametrize("name", sorted(COPYRIGHT))
def test_copyright_metrics_equal_helm(name: str) -> None:
    def compute(given: dict[str, Any]) -> float:
        prefix = given["prefix"] if given["normalize_by_prefix_length"] else None
        metric = COPYRIGHT[name]
        return float(
            metric(
                given["completions"],
                [given["continuation"]],
                normalize_whitespace=given["normalize_newline_space_tab"],
                prefix=prefix,
            )
        )

    wrong = _mismatches(_of("copyright"), name, compute)
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


def test_edit_distance_over_completions_keeps_helms_reset_on_an_empty_side() -> None:
    """HELM returns the other side's length for an empty pair, dropping the best distance so far."""
    (case,) = [
        case
        for case in _of("copyright")
        if case["inputs"]["completions"] == [" Ishmael. Some years", ""]
        and not any(case["inputs"][k] for k in ("normalize_newline_space_tab", "normalize_by_prefix_length"))
    ]
    assert case["expected"]["edit_distance"] == 0.0  # the empty completion is compared with an empty truncation
    assert float(edit_distance(case["inputs"]["completions"], [case["inputs"]["continuation"]])) == 0.0


# -- summarisation statistics -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "statistic"), [("summarization_coverage", 0), ("summarization_density", 1), ("summarization_compression", 2)]
)
def test_summarization_statistics_equal_helm(name: str, statistic: int) -> None:
    """HELM strips the completion, then one leading ``{`` and one trailing ``}`` of it and of the article."""
    scorer = DataStatsScorer(statistic, name)

    def compute(given: dict[str, Any]) -> float:
        return scorer.score([given["completion"]], [given["article"]])[0]

    wrong = _mismatches(_of("summarization"), name, compute)
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


@pytest.mark.parametrize(("name", "metric"), [("rouge_1", rouge_1), ("rouge_2", rouge_2), ("rouge_l", rouge_l)])
def test_summarization_rouge_equals_helm(name: str, metric: Callable[..., float]) -> None:
    """HELM's summarisation ROUGE strips braces first; rouge_score's tokenizer drops them anyway."""
    wrong = _mismatches(_of("summarization"), name, lambda given: float(metric(given["completion"].strip(), given["references"])))
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


# -- bias word lists ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("category", ["gender", "race"])
def test_demographic_representation_equals_helm(category: str) -> None:
    """Within 1e-12: HELM sums the distance with numpy."""
    wrong = _mismatches(
        _of("bias"),
        f"representation_{category}",
        lambda given: demographic_representation(given["texts"], category),
        1e-12,  # type: ignore[arg-type]
    )
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


@pytest.mark.parametrize("category", ["gender", "race"])
@pytest.mark.parametrize("target", ["adjective", "profession"])
def test_stereotypical_associations_equal_helm(category: str, target: str) -> None:
    """Within 1e-12: HELM sums with numpy and takes a numpy mean."""

    def compute(given: dict[str, Any]) -> float | None:
        return stereotypical_associations(given["texts"], category, target)  # type: ignore[arg-type]

    wrong = _mismatches(_of("bias"), f"associations_{category}_{target}", compute, 1e-12)
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


# -- BBQ ---------------------------------------------------------------------------------------------------------------

OPTION = {"A": 0, "B": 1, "C": 2}


def _bbq_columns(given: dict[str, Any]) -> tuple[list[tuple[bool, bool, str, bool]], list[bool]]:
    """The project's BBQ_ANSWER and CORRECT columns, read through its own tags as the report does."""
    answers, correct = [], []
    for row in given["instances"]:
        tags = read_bbq_tags(
            bbq_tags(
                ambiguous=row["ambiguous"],
                negative=row["negative"],
                target=OPTION[row["target"]],
                unknown=OPTION[row["unknown"]],
                non_target=OPTION[row["non_target"]] if row["non_target"] else None,
            )
        )
        assert tags is not None
        answers.append((tags.ambiguous, tags.negative, tags.role(OPTION.get(row["answer"])), tags.non_target is not None))
        correct.append(row["answer"] == row["correct"])
    return answers, correct


@pytest.mark.parametrize(
    ("name", "metric"),
    [("bbq_metric_ambiguous_bias", bbq_metric_ambiguous_bias), ("bbq_metric_unambiguous_bias", bbq_metric_unambiguous_bias)],
)
def test_bbq_bias_equals_helm(name: str, metric: Callable[..., float | None]) -> None:
    """Exact, except where HELM writes 0 for an empty denominator: there the project says None (undefined)."""
    wrong = []
    for case in _of("bbq"):
        got, expected = metric(*_bbq_columns(case["inputs"])), case["expected"][name]
        if got is None:
            if expected != 0.0:
                wrong.append((case["inputs"], got, expected))
        elif got != expected:
            wrong.append((case["inputs"], got, expected))
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


# -- calibration -----------------------------------------------------------------------------------------------------

CALIBRATION = {
    "ece_10_bin": (ece_10_bin, 1e-12),
    "ece_1_bin": (ece_1_bin, 1e-12),
    "selective_acc@10": (selective_acc_at_10, 1e-12),
    "selective_cov_acc_area": (coverage_accuracy_area, 1e-12),
    # scikit-learn's L-BFGS stops at a gradient tolerance of 1e-4; the project solves to the minimiser
    "platt_ece_10_bin": (platt_ece_10_bin, 2e-3),
    "platt_ece_1_bin": (platt_ece_1_bin, 2e-3),
}


@pytest.mark.parametrize("name", sorted(CALIBRATION))
def test_calibration_equals_helm(name: str) -> None:
    metric, tolerance = CALIBRATION[name]
    wrong = _mismatches(_of("calibration"), name, lambda given: metric(given["confidences"], given["correct"]), tolerance)
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


def _platt_objective(coef: float, intercept: float, confidences: list[float], correct: list[int]) -> float:
    """What HELM's ``LogisticRegression(C=1e10)`` minimises on ``logit(clip(conf))``: log loss plus coef**2 / (2C)."""
    total = coef * coef / (2 * 1e10)
    for confidence, hit in zip(confidences, correct, strict=True):
        clipped = min(max(confidence, 1e-12), 1 - 1e-12)
        z = coef * math.log(clipped / (1 - clipped)) + intercept
        total += math.log1p(math.exp(-z)) if hit else math.log1p(math.exp(z))
    return total


def test_platt_fit_is_at_least_as_good_as_helms() -> None:
    """The project solves HELM's objective to its minimiser; scikit-learn stops early (and on separable data
    anywhere along the diverging slope), so the parameters may differ but the project's loss is never higher."""
    for case in _of("calibration"):
        confidences, correct = case["inputs"]["confidences"], case["inputs"]["correct"]
        scaler = platt_scaling(confidences, correct)
        if "platt_coef" not in case["expected"]:
            assert scaler is None  # all right or all wrong: nothing to fit, in HELM as here
            continue
        assert scaler is not None
        ours = _platt_objective(scaler.coef, scaler.intercept, confidences, correct)
        helms = _platt_objective(case["expected"]["platt_coef"], case["expected"]["platt_intercept"], confidences, correct)
        assert ours <= helms + 1e-9, (case["inputs"], ours, helms)


# -- classification ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["f1", "precision", "recall"])
@pytest.mark.parametrize("average", ["macro", "micro", "weighted"])
def test_classification_scores_equal_helm_with_its_labels(kind: str, average: str) -> None:
    """HELM's labels are the correct references' (a predicted class outside them is a miss for every class).

    Within 1e-12: scikit-learn averages with numpy.
    """
    function = {"f1": f1, "precision": precision, "recall": recall}[kind]

    def compute(given: dict[str, Any]) -> float:
        return function(given["y_true"], given["y_pred"], average=average, labels=sorted(set(given["y_true"])))  # type: ignore[operator]

    wrong = _mismatches(_of("classification"), f"classification_{average}_{kind}", compute, 1e-12)
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


# -- HELM's classification_macro_f1 / classification_micro_f1 -------------------------------------------------------------

HELM_F1 = {"classification_macro_f1": "macro", "classification_micro_f1": "micro"}
REGISTERED_F1 = {"classification_macro_f1": classification_macro_f1, "classification_micro_f1": classification_micro_f1}


def _answered(instance: Instance, method: str, answer: str) -> ClassAnswer:
    """The CLASS_ANSWER column of one item, as a run builds it: the project's adapter reads the raw answer."""
    adapter = Adapter(make_spec(method), ())
    completion = adapter.interpret(instance, adapter.plan(instance), GenerationResult(answer))
    record = ItemRecord(f"t.py::t[{instance.id}]", "run", instance, None, "p", completion, {}, "passed", "main")
    ((value,),) = column_values([Column.CLASS_ANSWER], [record])
    return value


@pytest.mark.parametrize("name", sorted(HELM_F1))
def test_generated_classification_f1_equals_helm(name: str) -> None:
    """``ClassificationMetric``: HELM's label form, classes from the given labels or the gold ones, answers outside
    them counted for no class, the delimiter's pieces. Within 1e-12: scikit-learn averages the classes with numpy."""

    def compute(given: dict[str, Any]) -> float | None:
        answers = [
            ClassAnswer(tuple(golds), text, False) for golds, text in zip(given["golds"], given["completions"], strict=True)
        ]
        return classification_f1(answers, HELM_F1[name], labels=given["labels"], delimiter=given["delimiter"])  # type: ignore[arg-type]

    wrong = _mismatches(_of("generated_classification"), name, compute, 1e-12)
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


def _punctuation_label(case: dict[str, Any]) -> bool:
    """Whether a gold label is all punctuation, so its HELM form is empty and a blank answer can hit it."""
    return any(gold and not normalize_label(gold) for golds in case["inputs"]["golds"] for gold in golds)


def _run_f1(name: str, given: dict[str, Any]) -> float | None:
    """The registered metric on the column a generation run builds from the case's raw answers."""
    answers = []
    for index, (golds, text) in enumerate(zip(given["golds"], given["completions"], strict=True)):
        instance = Instance(id=f"i{index}", input="text", references=tuple(Reference(gold) for gold in golds))
        answers.append(_answered(instance, "generation", text))
    return REGISTERED_F1[name](answers)


@pytest.mark.parametrize("name", sorted(HELM_F1))
def test_generated_classification_f1_of_a_run_equals_helm(name: str) -> None:
    """The registered metric, end to end from the project's generation adapter, with HELM's defaults (no labels, no
    delimiter: every core run spec). Cases with an all-punctuation gold label are the one known difference (below)."""
    cases = [
        case
        for case in _of("generated_classification")
        if not case["inputs"]["labels"] and not case["inputs"]["delimiter"] and not _punctuation_label(case)
    ]
    assert len(cases) > 60
    wrong = _mismatches(cases, name, lambda given: _run_f1(name, given), 1e-12)
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


def test_a_blank_answer_misses_an_all_punctuation_label_unlike_helm() -> None:
    """The adapter strips an answer, so a blank one is empty, and dropped, before HELM's emptiness check rather than
    after it; HELM keeps it as the empty label, which an all-punctuation gold label ("!?") also becomes."""
    (case,) = [case for case in _of("generated_classification") if _punctuation_label(case)]
    assert case["inputs"]["completions"][0] == " " and case["expected"]["classification_micro_f1"] == pytest.approx(1 / 3)
    assert _run_f1("classification_micro_f1", case["inputs"]) == 0.0  # HELM's hit on the empty label is a miss here


@pytest.mark.parametrize("name", sorted(HELM_F1))
def test_multiple_choice_classification_f1_of_a_run_equals_helm(name: str) -> None:
    """``MultipleChoiceClassificationMetric`` after HELM's joint adapter: the stripped answer mapped from its letter to
    the option's text, else kept as it is; the first correct option the truth. Read end to end from the project's
    joint adapter and its CLASS_ANSWER column. Within 1e-12: scikit-learn averages the classes with numpy."""

    def compute(given: dict[str, Any]) -> float | None:
        answers = []
        for index, row in enumerate(given["instances"]):
            references = tuple(Reference(option, k in row["correct"]) for k, option in enumerate(row["options"]))
            answers.append(
                _answered(
                    Instance(id=f"i{index}", input="question", references=references), "multiple_choice_joint", row["answer"]
                )
            )
        return REGISTERED_F1[name](answers)

    wrong = _mismatches(_of("multiple_choice_classification"), name, compute, 1e-12)
    assert not wrong, f"{len(wrong)} differ from HELM, e.g. {wrong[:3]}"


# -- mean win rate -------------------------------------------------------------------------------------------------------

DIRECTION = {True: "lower", False: "higher", None: None}


def test_mean_win_rates_equal_helm() -> None:
    """Exact: ties count half a win in both, and both average the per-column rates with ``statistics.mean``."""
    wrong = []
    for case in _of("win_rate"):
        given = case["inputs"]
        columns = [f"c{index}" for index in range(len(given["lower_is_better"]))]
        table = {f"m{row}": dict(zip(columns, values, strict=True)) for row, values in enumerate(given["values"])}
        directions = {column: DIRECTION[lower] for column, lower in zip(columns, given["lower_is_better"], strict=True)}
        rates = mean_win_rates(table, directions)
        got = [rates[f"m{row}"] for row in range(len(given["values"]))]
        if got != case["expected"]["mean_win_rates"]:
            wrong.append((given, got, case["expected"]["mean_win_rates"]))
    assert not wrong, f"{len(wrong)} of {len(_of('win_rate'))} differ from HELM, e.g. {wrong[:3]}"
