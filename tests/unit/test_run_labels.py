"""Run labels: a scenario run once keeps its name; runs of one scenario are told apart by their test function, or by
their node id when two files hold functions of one name; and the leaderboard's columns follow the same labels."""

from __future__ import annotations

import itertools
from typing import Any

from pytest_holistic.report.labels import function_of, run_labels
from pytest_holistic.report.leaderboard import build_leaderboard, run_columns


def test_a_scenario_run_once_keeps_its_bare_name() -> None:
    labels = run_labels([("suites/test_boolq.py::test_boolq", "boolq"), ("suites/test_mmlu.py::test_mmlu", "mmlu")])
    assert labels.of("suites/test_boolq.py::test_boolq", "boolq") == "boolq"
    assert labels.of("suites/test_mmlu.py::test_mmlu", "mmlu", "mmlu [offline]") == "mmlu [offline]"
    assert labels.qualifier("suites/test_boolq.py::test_boolq", "boolq") is None


def test_two_runs_of_one_scenario_are_qualified_by_their_test_function() -> None:
    runs = [("suites/test_boolq.py::test_boolq_zero_shot", "boolq"), ("suites/test_boolq.py::test_boolq_five_shot", "boolq")]
    labels = run_labels(runs)
    assert [labels.of(key, "boolq") for key, _ in runs] == ["boolq (test_boolq_zero_shot)", "boolq (test_boolq_five_shot)"]
    assert labels.of(runs[0][0], "boolq", "boolq [offline]") == "boolq [offline] (test_boolq_zero_shot)"  # the name kept


def test_functions_of_one_name_in_two_files_are_qualified_by_node_id_and_the_others_by_function() -> None:
    runs = [("a/test_qa.py::test_boolq", "boolq"), ("b/test_qa.py::test_boolq", "boolq"), ("b/test_qa.py::test_other", "boolq")]
    labels = run_labels(runs)
    assert [labels.of(key, scenario) for key, scenario in runs] == [
        "boolq (a/test_qa.py::test_boolq)",
        "boolq (b/test_qa.py::test_boolq)",
        "boolq (test_other)",
    ]


def test_labels_are_unique_and_do_not_depend_on_order_or_repeats() -> None:
    runs = [("x.py::test_a", "s"), ("y.py::test_a", "s"), ("x.py::TestS::test_b", "s"), ("z.py::test_c", "t")]
    expected = run_labels(runs).qualifiers
    for order in itertools.permutations(runs):
        assert run_labels([*order, order[0]]).qualifiers == expected
    labels = run_labels(runs)
    assert len({labels.of(key, scenario) for key, scenario in runs}) == len(runs)
    assert labels.of("x.py::TestS::test_b", "s") == "s (TestS::test_b)"
    assert function_of("x.py::TestS::test_b") == "TestS::test_b" and function_of("plain") == "plain"


def _run(key: str, scenario: str, value: float) -> dict[str, Any]:
    metric = {"value": value, "ci95": [value, value], "n": 4, "family": "accuracy", "direction": "higher"}
    return {
        "key": key,
        "scenario": scenario,
        "name": scenario,
        "requested_metrics": ["exact_match"],
        "metrics": {"exact_match": metric},
    }


def _report(model: str, *runs: dict[str, Any]) -> dict[str, Any]:
    return {"model": {"name": model}, "run_id": model, "runs": list(runs), "workers": {}}


ZERO, FIVE = "suites/test_boolq.py::test_boolq_zero_shot", "suites/test_boolq.py::test_boolq_five_shot"


def test_two_runs_of_one_scenario_in_one_report_get_two_columns() -> None:
    board = build_leaderboard([_report("m", _run(ZERO, "boolq", 0.5), _run(FIVE, "boolq", 0.7))])
    assert [column["key"] for column in board["columns"]] == [
        "boolq (test_boolq_zero_shot)/exact_match",
        "boolq (test_boolq_five_shot)/exact_match",
    ]
    assert board["cells"]["m"]["boolq (test_boolq_five_shot)/exact_match"]["value"] == 0.7


def test_the_same_runs_of_two_models_line_up_and_a_single_run_joins_its_own_function() -> None:
    reports = [
        _report("a", _run(ZERO, "boolq", 0.5), _run(FIVE, "boolq", 0.7)),
        _report("b", _run(FIVE, "boolq", 0.6), _run(ZERO, "boolq", 0.4)),
        _report("c", _run(ZERO, "boolq", 0.3)),  # ran one of them only: still the zero-shot column
    ]
    assert run_columns(reports) == [
        ["boolq (test_boolq_zero_shot)", "boolq (test_boolq_five_shot)"],
        ["boolq (test_boolq_five_shot)", "boolq (test_boolq_zero_shot)"],
        ["boolq (test_boolq_zero_shot)"],
    ]
    board = build_leaderboard(reports)
    assert len(board["columns"]) == 2
    zero = "boolq (test_boolq_zero_shot)/exact_match"
    assert [board["cells"][model][zero]["value"] for model in "abc"] == [0.5, 0.4, 0.3]


def test_a_scenario_each_report_ran_once_shares_one_column_whatever_its_function() -> None:
    reports = [_report("a", _run("a/test_qa.py::test_qa", "qa", 0.5)), _report("b", _run("b/test_mine.py::test_it", "qa", 0.6))]
    assert run_columns(reports) == [["qa"], ["qa"]]
    assert [column["key"] for column in build_leaderboard(reports)["columns"]] == ["qa/exact_match"]
