"""A pytest run with no eval in it stays what it was without pytest-holistic installed.

Whole sessions in a subprocess: the package modules each process imported (a probe conftest writes them at the end),
the files left behind, what was printed, and xdist's own scheduling. Then the same project with an eval and no option
of ours: the session wakes at the first marked function (under xdist, when the workers' collections are in) and runs
as it always did, by shards.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.plugin.suites import capitals

MOST_MODULES = 10

PROBE = """
import json
import sys
from pathlib import Path


def pytest_unconfigure(config):
    role = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    own = sorted(m for m in sys.modules if m == "pytest_holistic" or m.startswith("pytest_holistic."))
    Path(__file__).with_name(f"modules-{role}.json").write_text(json.dumps(own))
"""

PLAIN = """
import pytest


def test_one():
    assert 1 + 1 == 2


@pytest.mark.parametrize("k", range(20))
def test_many(k):
    assert k >= 0
"""

ECHO = """
from pytest_holistic import GenerationResult, ModelInfo
from pytest_holistic.models import BatchStreaming

ANSWERS = {"France": " Paris", "Japan": " Tokyo", "Italy": " Rome", "Egypt": " Cairo"}


class EchoModel(BatchStreaming):
    info = ModelInfo("echo:v1", "echo", "rev-1", {"device": "cpu", "batch_size": 4})

    def generate_batches(self, requests):
        yield [
            (index, GenerationResult(next((a for k, a in ANSWERS.items() if k in r.prompt), " nowhere"), (-0.5,), 3))
            for index, r in enumerate(requests)
        ]

    def loglikelihood_batches(self, requests):
        yield []


class EchoBackend:
    def identify(self):
        return ModelInfo("echo:v1", "echo", "rev-1")

    def load(self):
        return EchoModel()


def pytest_holistic_make_model(config, name):
    return EchoBackend()  # the default model's name too: the session is given no option of ours
"""


def _modules(pytester: pytest.Pytester) -> dict[str, list[str]]:
    return {path.stem.removeprefix("modules-"): json.loads(path.read_text()) for path in pytester.path.glob("modules-*.json")}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_session_without_evals_loads_few_modules_writes_nothing_and_prints_nothing(
    pytester: pytest.Pytester, workers: str
) -> None:
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest_subprocess("-n", workers, "-v")
    result.assert_outcomes(passed=21)
    modules = _modules(pytester)
    assert set(modules) == ({"controller", "gw0", "gw1"} if workers == "2" else {"controller"})
    for role, own in modules.items():
        assert len(own) <= MOST_MODULES, f"{role}: {len(own)} modules: {', '.join(own)}"
        assert not any(name.startswith(("pytest_holistic.report", "pytest_holistic.models")) for name in own), role
    assert not (pytester.path / "reports").exists()
    assert not (pytester.path / ".pytest_cache" / "v" / "holistic").exists()
    ours = [line for line in result.outlines + result.errlines if "holistic" in line.lower() and not line.startswith("plugins:")]
    assert ours == []
    if workers == "2":  # xdist's own load scheduling: the parametrized items are spread, not kept as one shard
        runners = {match.group(1) for line in result.outlines if (match := re.match(r"\[(gw\d)\] .*PASSED test_plain", line))}
        assert runners == {"gw0", "gw1"}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_eval_wakes_the_session_without_any_option_given(pytester: pytest.Pytester, workers: str) -> None:
    pytester.makeconftest(ECHO)
    pytester.makepyfile(test_caps=capitals(", gates=('quasi_exact_match>=0.5',)"), test_plain=PLAIN)
    result = pytester.runpytest_subprocess("-n", workers, "-v")
    result.assert_outcomes(passed=26)  # 4 items, 21 plain tests and the gate
    result.stdout.fnmatch_lines(["*= holistic summary: echo:v1 =*"])
    report = json.loads((pytester.path / "reports" / "smollm2-135m" / "latest" / "report.json").read_text())
    (run,) = report["runs"]
    assert sorted(record["instance_id"] for record in run["instances"]) == ["eg", "fr", "it", "jp"]
    assert [(gate["gate"], gate["status"], gate["observed"]) for gate in report["gates"]] == [("quasi_exact_match>=0.5", "passed", 0.75)]
    assert (pytester.path / ".pytest_cache" / "v" / "holistic" / "item-seconds").exists()
    if workers == "2":  # woken when the collections came in: the four items are one shard, computed by one worker
        runners = {match.group(1) for line in result.outlines if (match := re.match(r"\[(gw\d)\] .*PASSED test_caps", line))}
        assert len(runners) == 1


def test_a_setting_that_fails_when_an_eval_wakes_the_session_is_one_line_and_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(ECHO)
    pytester.makepyfile(test_caps=capitals())
    (pytester.path / "reports").write_text("a file where the report folder goes")
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["pytest-holistic: the report folder (--holistic-report-dir): *reports is a file, not a folder*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_an_option_of_ours_wakes_the_session_at_configure(pytester: pytest.Pytester) -> None:
    """A bad value is a usage error before collection, also in a project with no eval."""
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest_subprocess("--holistic-max-instances", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "holistic-max-instances" in result.stderr.str()
