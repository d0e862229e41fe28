"""The benchmarks' report comparison (benchmarks/report_diff.py) on hand-made reports: what it must catch and ignore."""

from __future__ import annotations

import copy
import json
import math
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


@pytest.fixture(scope="module")
def diff() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "report_diff.py"
    spec = importlib.util.spec_from_file_location("report_diff", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["report_diff"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _metric(value: float | None, n: int = 2) -> dict[str, Any]:
    return {"family": "accuracy", "kind": "instance", "value": value, "ci95": [0.1, 0.9], "n": n}


def _record(nodeid: str, text: str, logprob: float, choice_logprobs: list[float], seconds: float) -> dict[str, Any]:
    return {
        "nodeid": nodeid,
        "run": "t.py::test_x",
        "instance_id": nodeid[-3:],
        "perturbation": None,
        "prompt": f"Passage: {nodeid}\nAnswer:",
        "completion": {
            "text": text,
            "predicted_index": None,
            "logprob": logprob,
            "choice_logprobs": choice_logprobs,
            "tokens_in": 12,
            "tokens_out": 1,
            "seconds": seconds,
            "cached": False,
        },
        "scores": {"exact_match": 1.0 if text == "Yes" else 0.0},
        "outcome": "passed",
        "error": None,
        "execution": {"worker": "gw0", "seconds": seconds, "tokens_in": 12, "tokens_out": 1, "cached": False},
    }


def _report() -> dict[str, Any]:
    return {
        "runs": [
            {
                "key": "t.py::test_x",
                "scenario": "x",
                "n": 2,
                "metrics": {"exact_match": _metric(0.5), "runtime_s": _metric(0.31), "tokens_per_s": _metric(812.0)},
                "perturbations": {"typos": {"changed": 1, "metrics": {"exact_match": {"after": _metric(0.0)}}}},
                "instances": [
                    _record("t.py::test_x[a01]", "Yes", -0.25, [-0.25, -1.5], 0.7),
                    _record("t.py::test_x[a02]", "No", -0.5, [-2.0, -0.5], 0.8),
                ],
            }
        ],
        "gates": [{"gate": "x:exact_match>=0.4", "value": 0.5, "passed": True}],
        "not_completed": [],
        "runs_without_records": [],
    }


def test_identical_reports_agree_on_every_item(diff: ModuleType) -> None:
    comparison = diff.compare_reports(_report(), _report())
    assert comparison.identical
    assert (comparison.runs, comparison.items, comparison.same_answers) == (1, 2, 2)
    assert comparison.values > 10  # metrics, intervals and perturbation results were all walked


def test_timings_are_left_out(diff: ModuleType) -> None:
    other = _report()
    run = other["runs"][0]
    run["metrics"]["runtime_s"]["value"] = 0.09
    run["metrics"]["tokens_per_s"]["ci95"] = [1.0, 9000.0]
    for record in run["instances"]:
        record["completion"]["seconds"] = record["execution"]["seconds"] = 0.01
        record["execution"]["worker"] = "main"
    assert diff.compare_reports(_report(), other).identical


def test_a_changed_answer_is_listed_with_its_item(diff: ModuleType) -> None:
    other = _report()
    other["runs"][0]["instances"][1]["completion"]["text"] = "Yes"
    comparison = diff.compare_reports(_report(), other)
    assert comparison.same_answers == 1
    assert [(d.where, d.first, d.second) for d in comparison.differences] == [
        ("item t.py::test_x[a02] completion.text", "No", "Yes")
    ]


def test_log_probabilities_within_the_tolerance_pass_and_beyond_it_fail(diff: ModuleType) -> None:
    close, far = _report(), _report()
    close["runs"][0]["instances"][0]["completion"]["choice_logprobs"][1] = -1.5 + 3e-5
    far["runs"][0]["instances"][0]["completion"]["logprob"] = -0.25 - 3e-4
    near = diff.compare_reports(_report(), close)
    assert near.identical and near.worst_logprob == pytest.approx(3e-5)
    apart = diff.compare_reports(_report(), far)
    assert [d.where for d in apart.differences] == ["item t.py::test_x[a01] completion.logprob"]
    assert apart.same_answers == 2  # the answer is the same; only its log-probability moved


def test_metric_perturbation_and_gate_values_are_compared(diff: ModuleType) -> None:
    other = _report()
    other["runs"][0]["metrics"]["exact_match"]["value"] = 0.75
    other["runs"][0]["perturbations"]["typos"]["changed"] = 2
    other["gates"][0]["passed"] = False
    wheres = {d.where for d in diff.compare_reports(_report(), other).differences}
    assert wheres == {
        "run t.py::test_x metrics.exact_match.value",
        "run t.py::test_x perturbations.typos.changed",
        "gates [0].passed",
    }


def test_missing_runs_items_and_values_are_differences(diff: ModuleType) -> None:
    other = _report()
    del other["runs"][0]["instances"][0]
    other["runs"][0]["metrics"]["exact_match"]["value"] = None
    extra = copy.deepcopy(other["runs"][0])
    extra["key"] = "t.py::test_y"
    extra["instances"] = []
    other["runs"].append(extra)
    comparison = diff.compare_reports(_report(), other)
    found = {(d.where, d.first, d.second) for d in comparison.differences}
    assert ("item t.py::test_x[a01]", True, False) in found
    assert ("run t.py::test_y", False, True) in found
    assert ("run t.py::test_x metrics.exact_match.value", 0.5, None) in found
    assert comparison.items == 1


def test_description_lists_the_differences(diff: ModuleType) -> None:
    other = _report()
    other["runs"][0]["instances"][1]["prompt"] = "changed"
    lines = diff.describe(diff.compare_reports(_report(), other), ("on", "off"))
    assert lines[0].startswith("compared 1 runs")
    assert lines[-2:] == [
        "1 differences (on | off):",
        "  item t.py::test_x[a02] prompt: 'Passage: t.py::test_x[a02]\\nAnswer:' | 'changed'",
    ]


def test_the_command_line_exits_0_on_agreement_and_1_on_a_last_bit_difference_at_tolerance_0(
    diff: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    report = _report()
    before.write_text(json.dumps(report))
    after.write_text(json.dumps(report))
    assert diff.main([str(before), str(after), "--tolerance", "0"]) == 0
    changed = copy.deepcopy(report)
    record = changed["runs"][0]["instances"][0]
    record["completion"]["logprob"] = math.nextafter(record["completion"]["logprob"], 0.0)
    after.write_text(json.dumps(changed))
    assert diff.main([str(before), str(after), "--tolerance", "0"]) == 1
    assert "completion.logprob" in capsys.readouterr().out
