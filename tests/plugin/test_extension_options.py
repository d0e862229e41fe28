"""A model-scored metric with its own option, added by a test plugin (a conftest) and nothing else.

The conftest declares the metric ``answer_length`` and its option ``--holistic-length-unit`` (ini
``holistic_length_unit``) and registers it through the ``pytest_holistic_register`` hook, the way the built-in
metrics are registered. What is checked, each through a real pytest run in a temporary project:

* ``--help`` lists the option and its ini key;
* a bad value, on the command line or in the ini file, is one usage-error line (exit status 4), no traceback;
* a good value reaches the metric's scorer: the per-answer scores in report.json count what the option says, and a
  gate on the metric is decided on them.
"""

from __future__ import annotations

import json
from typing import Any

# The report's bootstrap imports numpy. Import it here, not first inside an in-process run: pytester unloads the
# modules a run imported, and numpy's C core cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest

PLUGIN = '''
from pytest_holistic import Given, Option
from pytest_holistic.metrics import Column, MetricInfo, ScoredMetric


def _unit(given: Given) -> str:
    if given.text not in ("chars", "words"):
        raise given.error("use chars or words")
    return given.text


UNIT = Option(
    "--holistic-length-unit",
    "what answer_length counts in each answer: chars (default) or words",
    _unit,
    default="chars",
    ini="holistic_length_unit",
    metavar="UNIT",
)


class LengthScorer:
    version = "1"

    def __init__(self, unit):
        self.unit = unit
        self.name = f"length in {unit}"

    def score(self, texts):
        return [float(len(text.split()) if self.unit == "words" else len(text)) for text in texts]


ANSWER_LENGTH = ScoredMetric(
    info=MetricInfo(
        "answer_length", "lower", (0.0, float("inf")), "a test", lambda texts: texts, kind="scored",
        inputs=(Column.TEXT,), family="custom",
    ),
    make_scorer=LengthScorer,
    option=UNIT,
)


def pytest_holistic_register(extensions):
    extensions.add_metric(ANSWER_LENGTH)
'''

SUITE = '''
import pytest
from pytest_holistic import Instance, scenario

@scenario
def capitals():
    yield Instance(id="fr", input="The capital of France is", references=("Paris",))
    yield Instance(id="jp", input="The capital of Japan is", references=("Tokyo",))
    yield Instance(id="it", input="The capital of Italy is", references=("Rome",))
    yield Instance(id="eg", input="The capital of Egypt is", references=("Cairo",))

@pytest.mark.holistic(capitals, max_train_instances=0, metrics=("exact_match", "answer_length"))
def test_capitals(completion):
    pass
'''
RULES = 'generate: {"France": " Paris is big", "Japan": " Tokyo", "Italy": " Rome, of course", "Egypt": " Cairo"}\n'
ANSWERS = {"fr": "Paris is big", "jp": "Tokyo", "it": "Rome, of course", "eg": "Cairo"}


def _project(pytester: pytest.Pytester, ini: str = "") -> None:
    pytester.makeconftest(PLUGIN)
    pytester.makepyfile(test_caps=SUITE)
    pytester.path.joinpath("rules.yaml").write_text(RULES)
    if ini:
        pytester.makefile(".ini", tox=f"[pytest]\n{ini}\n")


def _report(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "reports" / "scripted_rules.yaml" / "latest" / "report.json").read_text())


def test_help_lists_the_metric_option_and_its_ini_key(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest_subprocess("--help")
    assert result.ret == pytest.ExitCode.OK
    for declared in ("  --holistic-length-unit=UNIT", "  holistic_length_unit (string):"):
        result.stdout.fnmatch_lines([declared, "  * what answer_length counts in each answer: chars"], consecutive=True)


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--holistic-length-unit", "lines"], "", "pytest-holistic: --holistic-length-unit = 'lines': use chars or words"),
        ([], "holistic_length_unit = lines", "pytest-holistic: holistic_length_unit in tox.ini = 'lines': use chars or words"),
    ],
    ids=["command-line", "ini"],
)
def test_a_bad_value_is_one_usage_error_line(pytester: pytest.Pytester, args: list[str], ini: str, message: str) -> None:
    _project(pytester, ini)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "scripted:rules.yaml", *args)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert "Traceback" not in output
    assert [line for line in output.splitlines() if "length-unit" in line or "length_unit" in line] == [f"ERROR: {message}"]


@pytest.mark.parametrize(
    ("args", "ini", "unit"),
    [([], "", "chars"), (["--holistic-length-unit", "words"], "", "words"), ([], "holistic_length_unit = words", "words")],
    ids=["default", "command-line", "ini"],
)
def test_the_value_reaches_the_scorer(pytester: pytest.Pytester, args: list[str], ini: str, unit: str) -> None:
    _project(pytester, ini)
    result = pytester.runpytest("--model", "scripted:rules.yaml", "--holistic-gate", "answer_length <= 2", *args)
    (run,) = _report(pytester)["runs"]
    texts = {record["instance_id"]: record["completion"]["text"] for record in run["instances"]}
    assert texts == ANSWERS
    expected = {key: float(len(text.split()) if unit == "words" else len(text)) for key, text in ANSWERS.items()}
    assert {record["instance_id"]: record["scores"]["answer_length"] for record in run["instances"]} == expected
    assert run["scorers"]["answer_length"] == {"name": f"length in {unit}", "version": "1"}
    assert run["metrics"]["answer_length"]["value"] == pytest.approx(sum(expected.values()) / 4)
    assert run["metrics"]["answer_length"]["direction"] == "lower"  # as the metric declared, not a recorded score's default
    # the gate is decided on the scores the option chose: a mean of 2.0 words passes, of 9.25 characters fails
    result.assert_outcomes(passed=5 if unit == "words" else 4, failed=0 if unit == "words" else 1)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_metric_registered_by_a_sub_folder_conftest_is_one_collection_error_line(
    pytester: pytest.Pytester, workers: str
) -> None:
    """A conftest.py below the root is loaded while pytest collects, after the options were read: its metric
    cannot get them, so that folder's collection fails with one line that says where to register it instead."""
    sub = pytester.mkpydir("evals")
    (sub / "conftest.py").write_text(PLUGIN)
    (sub / "test_caps.py").write_text(SUITE)
    pytester.path.joinpath("rules.yaml").write_text(RULES)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "scripted:rules.yaml", "-n", workers)
    # A collection error's own status: 2, and 1 under xdist, which reports any collection error so.
    assert result.ret == (pytest.ExitCode.INTERRUPTED if workers == "0" else pytest.ExitCode.TESTS_FAILED)
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "raise " not in output and "INTERNALERROR" not in output, output
    result.stdout.fnmatch_lines(
        [
            (
                "pytest-holistic: model-scored metric 'answer_length' was registered after pytest-holistic read its"
                " options (by a conftest.py below the root folder?); register it in the root conftest.py or in a plugin"
            )
        ]
    )
