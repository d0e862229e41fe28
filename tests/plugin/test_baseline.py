"""``--holistic-baseline`` and ``--holistic-fail-on-regression`` end to end, with scripted models.

A baseline run answers all 40 questions right. A model wrong on 20 of them fails the regression check with
the difference, its interval, n, the verdict and the MDE in the message; a model that flips one answer in 40
passes as statistically tied; instances added or removed since the baseline are listed; ``-n 2`` gives the
same verdicts; a bad spec or baseline file is a one-line usage error before any model work.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

# The report's bootstrap imports numpy. Import it here, not first inside an in-process run: pytester unloads the
# modules a run imported, and numpy's C core cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest

QUIZ = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def quiz():
    for k in {ids}:
        yield Instance(id=f"q{{k:02d}}", input=f"Question {{k:02d}}: is it?", references=("Yes",))

@pytest.mark.holistic(quiz, adapter="generation", max_train_instances=0, max_tokens=2, metrics=("exact_match",))
def test_quiz(instance, completion):
    pass
"""


def _suite(pytester: pytest.Pytester, ids: str = "range(40)") -> None:
    pytester.makepyfile(test_quiz=QUIZ.format(ids=ids))


def _model(pytester: pytest.Pytester, name: str, wrong: range | list[int]) -> str:
    """A scripted model answering Yes, except No on the questions in ``wrong``."""
    rules = {"default": " Yes", "generate": {f"Question {k:02d}:": " No" for k in wrong}}
    path = pytester.path / f"{name}.json"
    path.write_text(json.dumps(rules))
    return f"scripted:{path}"


def _latest(root: Path, folder: str = "reports") -> Path:
    return next((root / folder).glob("*/latest/report.json"))


@pytest.fixture
def baseline(pytester: pytest.Pytester) -> Path:
    """The report of a run that answers all 40 questions right, kept as baseline.json."""
    _suite(pytester)
    result = pytester.runpytest("--model", _model(pytester, "good", []), "--holistic-report-dir", "base")
    result.assert_outcomes(passed=40)
    saved = pytester.path / "baseline.json"
    shutil.copy(_latest(pytester.path, "base"), saved)
    return saved


def test_a_truly_worse_model_fails_the_regression_check(pytester: pytest.Pytester, baseline: Path) -> None:
    model = _model(pytester, "worse", range(0, 40, 2))  # wrong on 20 of 40
    result = pytester.runpytest(
        "--model", model, "--holistic-baseline", str(baseline), "--holistic-fail-on-regression", "exact_match:0.02"
    )
    result.assert_outcomes(passed=40, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # 1.0 -> 0.5 on every pair: the difference is -0.5; McNemar's 20 discordant pairs all one way: p = 2 / 2**20.
    result.stdout.fnmatch_lines(
        [
            (
                "*regression quiz:exact_match (margin 0.02): 0.5000 vs baseline 1.0000: difference -0.5000 "
                "(95% CI -0.* to -0.*, n=40), worse, McNemar p=1.91e-06; MDE 0.2243 (80% power, alpha 0.05); "
                "dropped by more than 0.02 with confidence*"
            ),
        ]
    )
    result.stdout.fnmatch_lines(["*FAILED holistic::regression[[]quiz:exact_match]*"])
    comparison = json.loads(_latest(pytester.path).read_text())["comparison"]
    (scenario,) = comparison["scenarios"]
    (row,) = [row for row in scenario["metrics"] if row["metric"] == "exact_match"]
    assert row["difference"] == pytest.approx(-0.5)
    assert row["ci95"][1] < -0.02
    assert row["verdict"] == "worse"
    assert row["mcnemar"] == {"this_1_baseline_0": 0, "this_0_baseline_1": 20, "p_value": pytest.approx(2 / 2**20)}
    # d is -1 on 20 pairs and 0 on 20: s_d = sqrt(40 * 0.25 / 39), SE = s_d / sqrt(40), MDE = 2.8016 * SE.
    assert row["mde"] == pytest.approx(2.801585 * (40 * 0.25 / 39) ** 0.5 / 40**0.5, rel=1e-5)
    assert row["clusters"] == {"by": "instance", "count": 40}
    # 40 pairs of a 0/1 metric: each run's mean also gets the three small-sample intervals, named by method.
    assert sorted(row["this"]["intervals"]) == ["clopper_pearson", "jeffreys", "wilson"]
    assert comparison["regressions"][0]["status"] == "failed"


def test_one_flipped_answer_in_forty_is_statistically_tied(pytester: pytest.Pytester, baseline: Path) -> None:
    model = _model(pytester, "noisy", [7])
    result = pytester.runpytest(
        "--model", model, "--holistic-baseline", str(baseline), "--holistic-fail-on-regression", "exact_match:0.02"
    )
    result.assert_outcomes(passed=41)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "compared with baseline *baseline.json*",
            "  quiz: 40 instance(s) matched",
            "    exact_match ↑ 1.000 -> 0.975: -0.025 [[]-0.075, +0.000] n=40, statistically tied (McNemar p=1), MDE *",
            "*regression PASSED: quiz:exact_match (margin 0.02): *statistically tied*no drop beyond 0.02 with confidence*",
        ]
    )


def test_added_and_removed_instances_are_listed(pytester: pytest.Pytester, baseline: Path) -> None:
    _suite(pytester, "[*range(3, 40), 40, 41]")  # q00-q02 removed, q40 and q41 added
    result = pytester.runpytest("--model", _model(pytester, "good2", []), "--holistic-baseline", str(baseline))
    result.assert_outcomes(passed=39)  # no spec: compared and reported, no extra item
    result.stdout.fnmatch_lines(
        ["  quiz: 37 instance(s) matched; 2 only in this run: q40, q41; 3 only in the baseline: q00, q01, q02"]
    )
    instances = json.loads(_latest(pytester.path).read_text())["comparison"]["scenarios"][0]["instances"]
    assert instances == {
        "matched": 37,
        "added_count": 2,
        "removed_count": 3,
        "added": ["q40", "q41"],
        "removed": ["q00", "q01", "q02"],
    }


def test_two_workers_give_the_same_verdicts(pytester: pytest.Pytester, baseline: Path) -> None:
    model = _model(pytester, "worse", range(0, 40, 2))
    args = ["--model", model, "--holistic-baseline", str(baseline), "--holistic-fail-on-regression", "exact_match:0.02"]
    serial = pytester.runpytest_subprocess(*args, "--holistic-report-dir", "serial", timeout=300)
    parallel = pytester.runpytest_subprocess(*args, "-n", "2", "--holistic-report-dir", "parallel", timeout=300)
    serial.assert_outcomes(passed=40, failed=1)
    parallel.assert_outcomes(passed=40, failed=1)
    parallel.stdout.fnmatch_lines(["*FAILED holistic::regression[[]quiz:exact_match]*"])
    one = json.loads(_latest(pytester.path, "serial").read_text())["comparison"]
    two = json.loads(_latest(pytester.path, "parallel").read_text())["comparison"]
    assert one == two


def test_a_lost_metric_fails_and_a_new_scenario_is_not_evaluated(pytester: pytest.Pytester, baseline: Path) -> None:
    pytester.makepyfile(
        test_quiz=QUIZ.format(ids="range(40)").replace('("exact_match",)', '("quasi_exact_match",)'),
        test_extra=QUIZ.format(ids="range(2)").replace("def quiz", "def extra").replace("(quiz,", "(extra,"),
    )
    model = _model(pytester, "good3", [])
    result = pytester.runpytest(
        "--model", model, "--holistic-baseline", str(baseline), "--holistic-fail-on-regression", "exact_match:0.02", "-rs"
    )
    result.assert_outcomes(passed=42, failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*regression quiz:exact_match (margin 0.02): this run recorded no exact_match, the baseline did*",
            "*SKIPPED*regression extra:exact_match*not evaluated: scenario 'extra' (test_extra.py::test_quiz) is not in the baseline*",
        ]
    )
    result.stdout.fnmatch_lines(["*quasi_exact_match ↑: not compared, the baseline did not record it*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--holistic-fail-on-regression", "exact_match:0.02"],
            "*--holistic-fail-on-regression 'exact_match:0.02' needs --holistic-baseline REPORT_JSON*",
        ),
        (
            ["--holistic-baseline", "nowhere.json"],
            "*--holistic-baseline */nowhere.json: no such file; pass the report.json of an earlier run*",
        ),
        (
            ["--holistic-baseline", "rules.json"],
            '*--holistic-baseline */rules.json: not a pytest-holistic report (no "schema"*',
        ),
        (
            ["--holistic-baseline", "test_quiz.py"],
            "*--holistic-baseline */test_quiz.py: not JSON (Expecting value at line 1)*",
        ),
        (
            ["--holistic-baseline", "rules.json", "--holistic-fail-on-regression", "exact_match"],
            "*--holistic-fail-on-regression 'exact_match': write METRIC:MARGIN or SCENARIO:METRIC:MARGIN*",
        ),
        (
            ["--holistic-baseline", "rules.json", "--holistic-fail-on-regression", "exact_match:-0.1"],
            "*--holistic-fail-on-regression 'exact_match:-0.1': write METRIC:MARGIN*MARGIN a number >= 0*",
        ),
        (
            ["--holistic-baseline", "rules.json", "--holistic-fail-on-regression", "exact_mach:0.02"],
            "*--holistic-fail-on-regression 'exact_mach:0.02': no metric 'exact_mach'; did you mean 'exact_match'?",
        ),
        (
            ["--holistic-baseline", "rules.json", "--holistic-fail-on-regression", "ece_10_bin:0.02"],
            "*'ece_10_bin' is a scenario-level metric, with no per-instance values to pair; name a per-instance score*",
        ),
    ],
)
def test_bad_options_are_one_line_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    _suite(pytester)
    model = _model(pytester, "rules", [])
    result = pytester.runpytest("--model", model, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: pytest-holistic: {message}"])
    assert len([line for line in result.stderr.lines if line.strip()]) == 1


def test_an_interrupted_run_is_not_compared(pytester: pytest.Pytester, baseline: Path) -> None:
    pytester.makepyfile(test_quiz=QUIZ.format(ids="range(40)").replace("    pass", "    assert instance.id != 'q03'"))
    model = _model(pytester, "good4", [])
    result = pytester.runpytest(
        "--model", model, "-x", "--holistic-baseline", str(baseline), "--holistic-fail-on-regression", "exact_match:0.02"
    )
    result.assert_outcomes(passed=3, failed=1)  # -x: no regression item is judged on part of the data
    result.stdout.fnmatch_lines(["  not compared: the run was interrupted (stopping after 1 failures)"])
    comparison = json.loads(_latest(pytester.path).read_text())["comparison"]
    assert comparison["not_evaluated"] == "the run was interrupted (stopping after 1 failures)"
    assert comparison["regressions"] == []


def test_a_check_naming_a_scenario_the_baseline_lacks_fails(pytester: pytest.Pytester, baseline: Path) -> None:
    """Asked for by name, a check that cannot be judged must not let the run pass (as a command-line gate)."""
    pytester.makepyfile(
        test_quiz=QUIZ.format(ids="range(40)"),
        test_extra=QUIZ.format(ids="range(2)").replace("def quiz", "def extra").replace("(quiz,", "(extra,"),
    )
    result = pytester.runpytest(
        "--model",
        _model(pytester, "good4", []),
        "--holistic-baseline",
        str(baseline),
        "--holistic-fail-on-regression",
        "extra:exact_match:0.02",
    )
    result.assert_outcomes(passed=42, failed=1)
    result.stdout.fnmatch_lines(
        ["*regression extra:exact_match (margin 0.02): cannot be checked: scenario 'extra' (*) is not in the baseline*"]
    )


def test_regression_checks_are_testcases_in_the_holistic_junit_file(pytester: pytest.Pytester, baseline: Path) -> None:
    import xml.etree.ElementTree as ET

    model = _model(pytester, "worse2", range(0, 40, 2))
    result = pytester.runpytest(
        "--model",
        model,
        "--holistic-baseline",
        str(baseline),
        "--holistic-fail-on-regression",
        "exact_match:0.02",
        "--holistic-junit",
        "junit.xml",
    )
    result.assert_outcomes(passed=40, failed=1)
    root = ET.parse(pytester.path / "junit.xml").getroot()
    (suite,) = [suite for suite in root.iter("testsuite") if suite.get("name") == "holistic regressions"]
    (case,) = suite.iter("testcase")
    assert case.get("name") == "regression[quiz:exact_match]" and suite.get("failures") == "1"
    assert "dropped by more than 0.02 with confidence" in case.find("failure").get("message")
    assert root.get("failures") == str(sum(int(s.get("failures")) for s in root.iter("testsuite")))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[" * 100_000, "not a report (JSON nested deeper than this reader follows)"),
        (
            (
                '{"schema": "pytest-holistic/report", "schema_version": 4, "model": {"name": "m"}, '
                '"runs": [{"key": "k", "scenario": "s", "metrics": {"em": {"ci95": 5}}, "instances": [null, 5]}]}'
            ),
            "not a valid report (runs/0/instances/0: is null, expected object and 2 more)",
        ),
    ],
)
def test_a_pathological_or_malformed_baseline_is_one_line_not_an_internal_error(
    pytester: pytest.Pytester, content: str, message: str
) -> None:
    _suite(pytester)
    (pytester.path / "odd.json").write_text(content)
    result = pytester.runpytest("--model", _model(pytester, "rules", []), "--holistic-baseline", "odd.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: pytest-holistic: --holistic-baseline */odd.json: {message}; pass the report.json*"])
    assert len([line for line in result.stderr.lines if line.strip()]) == 1
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
