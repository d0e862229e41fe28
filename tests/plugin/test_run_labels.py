"""Two test functions on one scenario (other settings, maybe other files) are named apart in every output: gate lines,
report.json, the JUnit file and the HTML page, all in the same words (``report.labels``)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

# The report's bootstrap imports numpy: imported here, before pytester's subprocess runs (see test_junit.py).
import numpy  # noqa: F401
import pytest

from pytest_holistic.report.schema import validate_report

SCRIPT = '{"generate": {"capital of France": " Paris", "capital of Japan": " Tokyo"}, "default": " no"}'

SHARED = '''
from pytest_holistic import Instance, scenario

@scenario
def capitals():
    """Two of four answered right by the script: exact_match 0.5."""
    yield Instance(id="fr", input="The capital of France is", references=(" Paris",))
    yield Instance(id="jp", input="The capital of Japan is", references=(" Tokyo",))
    yield Instance(id="it", input="The capital of Italy is", references=(" Rome",))
    yield Instance(id="eg", input="The capital of Egypt is", references=(" Cairo",))
'''

TEST = """
import pytest
from shared_capitals import capitals

@pytest.mark.holistic(capitals, adapter="generation", input_suffix="", output_prefix="", max_tokens={tokens},
                      max_train_instances=0, metrics=("exact_match",), gates=("exact_match>=0.4",))
def {name}(completion):
    pass
"""


def _test(name: str, tokens: int) -> str:
    return TEST.format(name=name, tokens=tokens)


LABELS = {
    "test_capitals_a.py::test_short": "capitals (test_capitals_a.py::test_short)",
    "test_capitals_a.py::test_long": "capitals (test_long)",
    "test_capitals_b.py::test_short": "capitals (test_capitals_b.py::test_short)",
}
"""Each run's label: its function, or its node id where another file has a function of the same name."""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_two_runs_of_one_scenario_are_named_apart_everywhere(pytester: pytest.Pytester, workers: str) -> None:
    (pytester.path / "rules.json").write_text(SCRIPT)
    pytester.makepyfile(
        shared_capitals=SHARED,
        test_capitals_a=_test("test_short", 3) + _test("test_long", 8),
        test_capitals_b=_test("test_short", 5),
    )
    result = pytester.runpytest_subprocess(
        "--model", "scripted:rules.json", "-p", "no:cacheprovider", "-n", workers, "--holistic-junit", "out.xml", timeout=300
    )
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()

    gate_lines = [line for line in out.splitlines() if line.startswith("gate PASSED: ")]
    assert sorted(line.split(" exact_match = ")[0].removeprefix("gate PASSED: ") for line in gate_lines) == sorted(
        LABELS.values()
    )
    for label in LABELS.values():  # each run's progress line, and its block of the terminal summary, start with its label
        assert re.search(rf"^computing intervals: {re.escape(label)} \(\d/3\)$", out, re.MULTILINE), label
        assert re.search(rf"^{re.escape(label)} \(generation, ", out, re.MULTILINE), label

    report = json.loads((pytester.path / "reports" / "scripted_rules.json" / "latest" / "report.json").read_text())
    assert validate_report(report) == []
    assert {run["key"]: run["label"] for run in report["runs"]} == LABELS
    assert {gate["run"]: gate["message"].split(" exact_match = ")[0] for gate in report["gates"]} == LABELS
    assert {gate["scenario"] for gate in report["gates"]} == {"capitals"}  # the field itself still names the scenario

    suites = ET.parse(pytester.path / "out.xml").getroot().findall("testsuite")
    names = [suite.get("name") for suite in suites]
    assert sorted(name for name in names if name != "holistic gates") == sorted(LABELS.values())
    assert len(names) == len(set(names))

    page = (pytester.path / "reports" / "scripted_rules.json" / "latest" / "report.html").read_text()
    headings = re.findall(r'<section class="scenario" id="scenario-\d+"><h3>([^<]*)</h3>', page)
    assert sorted(headings) == sorted(LABELS.values())
    columns = re.findall(r'data-scenario="([^"]*)"', page) or headings  # the Dynascore's tables, when drawn
    assert len(set(columns)) == len(columns)


def test_regression_checks_and_the_comparison_use_the_same_labels(pytester: pytest.Pytester) -> None:
    """Against a baseline of the same suite, each run's comparison and regression check carry its label."""
    (pytester.path / "rules.json").write_text(SCRIPT)
    pytester.makepyfile(
        shared_capitals=SHARED,
        test_capitals_a=_test("test_short", 3) + _test("test_long", 8),
        test_capitals_b=_test("test_short", 5),
    )
    args = ("--model", "scripted:rules.json", "-p", "no:cacheprovider")
    assert pytester.runpytest_subprocess(*args, timeout=300).ret == 0
    baseline = pytester.path / "baseline.json"
    latest = pytester.path / "reports" / "scripted_rules.json" / "latest" / "report.json"
    baseline.write_text(latest.read_text())
    result = pytester.runpytest_subprocess(
        *args, "--holistic-baseline", str(baseline), "--holistic-fail-on-regression", "exact_match:0.5", timeout=300
    )
    assert result.ret == 0, result.stdout.str()
    report = json.loads(latest.read_text())
    assert validate_report(report) == []
    assert {entry["key"]: entry["label"] for entry in report["comparison"]["scenarios"]} == LABELS
    checks = [line for line in result.stdout.str().splitlines() if line.startswith("regression PASSED: ")]
    assert sorted(line.split(":exact_match (margin 0.5)")[0].removeprefix("regression PASSED: ") for line in checks) == sorted(
        LABELS.values()
    ), checks
