"""The determinism canary (``--holistic-check-determinism``) and the deterministic mode's settings.

A backend whose answers depend on how many requests share its batch is caught, naming each item; the
tiny GPT-2 in float32 passes the same check; bad values are one-line usage errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.suites import YES_NO, YES_NO_ROWS

# A model that prefers the longer option when it shares a batch and the shorter one alone: the kind of
# batch dependence bfloat16 GPUs show near ties, made large enough to flip every answer.
BATCH_DEPENDENT = """
from pytest_holistic import LoglikelihoodResult, ModelInfo
from pytest_holistic.models import BatchStreaming


class BatchDependent(BatchStreaming):
    info = ModelInfo("batchy", "batchy", "rev-1", {"device": "cpu"})

    def loglikelihood_batches(self, requests):
        sign = 1.0 if len(requests) > 1 else -1.0
        yield [(i, LoglikelihoodResult(sign * len(r.continuation))) for i, r in enumerate(requests)]

    def generate_batches(self, requests):
        raise NotImplementedError


class Backend:
    def identify(self):
        return ModelInfo("batchy", "batchy", "rev-1")

    def load(self):
        return BatchDependent()


def pytest_holistic_make_model(config, name):
    return Backend() if name == "batchy" else None
"""


def _yes_no(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("yes_no.jsonl").write_text("\n".join(json.dumps(row) for row in YES_NO_ROWS))
    pytester.makepyfile(test_yes_no=YES_NO)


def test_answers_that_change_when_scored_alone_fail_their_items(pytester: pytest.Pytester) -> None:
    _yes_no(pytester)
    pytester.makeconftest(BATCH_DEPENDENT)
    unchecked = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "batchy")
    unchecked.assert_outcomes(passed=2)
    checked = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "batchy", "--holistic-check-determinism", "1")
    checked.assert_outcomes(errors=2)  # like any model error: the item cannot be evaluated
    output = checked.stdout.str()
    for instance in ("fire", "ice"):
        assert f"instance {instance!r}: determinism check: the answer is 'Yes' in its batch but 'No' when scored alone" in output
    assert "--holistic-deterministic" in output
    assert "Traceback" not in output


def test_a_float32_model_passes_the_check_with_every_item_rescored(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    _yes_no(pytester)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--model", str(tiny_gpt2), "--holistic-check-determinism", "1", "--holistic-batch-size", "7"
    )
    result.assert_outcomes(passed=2)
    report = json.loads((pytester.path / "reports" / "tiny-gpt2" / "latest" / "report.json").read_text())
    details = report["model"]["details"]
    # What decides whether scores depend on batching is in the report.
    assert details["dtype"] == "float32"
    assert details["device"] == "cpu"
    assert details["batch_size"] == 7
    assert details["scoring"] == "shared"
    assert details["deterministic"] is False


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--holistic-check-determinism", "0"), "--holistic-check-determinism = 0.0: give the fraction of items"),
        (("--holistic-check-determinism", "1.5"), "--holistic-check-determinism = 1.5: give the fraction of items"),
        (("--holistic-check-determinism", "nan"), "--holistic-check-determinism = nan: give the fraction of items"),
        (("--holistic-scoring", "fastest"), "--holistic-scoring = 'fastest': use one of auto, shared, full, packed"),
        (
            ("--holistic-deterministic", "--holistic-dtype", "bfloat16"),
            "--holistic-deterministic needs float32 weights, but --holistic-dtype = 'bfloat16'",
        ),
    ],
)
def test_bad_determinism_and_scoring_options_are_one_line_usage_errors(
    pytester: pytest.Pytester, arguments: tuple[str, ...], message: str
) -> None:
    _yes_no(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "gpt2", *arguments)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = "\n".join(result.outlines + result.errlines)
    assert [line for line in output.splitlines() if message in line], output
    assert "Traceback" not in output


# A backend that logs which thread asked for each batch (and how many requests it held).
THREAD_LOGGING = """
import threading
from pathlib import Path

from pytest_holistic import LoglikelihoodResult, ModelInfo
from pytest_holistic.models import BatchStreaming

LOG = Path(__file__).with_name("threads.txt")


class Logged(BatchStreaming):
    info = ModelInfo("logged", "logged", "rev-1", {"device": "cpu"})

    def loglikelihood_batches(self, requests):
        with LOG.open("a") as log:
            log.write(f"{threading.current_thread().name} {len(requests)}\\n")
        yield [(i, LoglikelihoodResult(-float(len(r.continuation)))) for i, r in enumerate(requests)]

    def generate_batches(self, requests):
        raise NotImplementedError


class Backend:
    def identify(self):
        return ModelInfo("logged", "logged", "rev-1")

    def load(self):
        return Logged()


def pytest_holistic_make_model(config, name):
    return Backend() if name == "logged" else None
"""

MANY = """
import pytest
from pytest_holistic import Instance, Reference, scenario

@scenario
def many():
    for n in range(12):
        yield Instance(id=f"q{n}", input=f"Question {n}: is it even?",
                       references=(Reference("Yes", n % 2 == 0), Reference("No", n % 2 == 1)))

@pytest.mark.holistic(many, adapter="multiple_choice_separate", max_train_instances=0)
def test_many(completion, record):
    record(correct=float(completion.correct))
"""


@pytest.mark.parametrize("overlap", ["on", "off"])
def test_computing_the_next_shard_ahead_changes_no_answer(pytester: pytest.Pytester, overlap: str) -> None:
    pytester.makeconftest(THREAD_LOGGING)
    pytester.makepyfile(test_many=MANY)
    arguments = ("-p", "no:cacheprovider", "--model", "logged", "--holistic-shard-size", "4", "--holistic-no-cache")
    result = pytester.runpytest_subprocess(*arguments, "--holistic-overlap", overlap)
    result.assert_outcomes(passed=12)
    calls = [line.split() for line in (pytester.path / "threads.txt").read_text().splitlines()]
    # Three shards of four items, two options each: one call of 8 requests per shard, nothing computed twice.
    assert [int(size) for _, size in calls] == [8, 8, 8]
    threads = [name for name, _ in calls]
    if overlap == "on":
        assert threads == ["MainThread", "holistic-compute-ahead", "holistic-compute-ahead"]
    else:
        assert threads == ["MainThread"] * 3
    report = json.loads((pytester.path / "reports" / "logged" / "latest" / "report.json").read_text())
    values = {record["instance_id"]: record["completion"]["text"] for record in report["runs"][0]["instances"]}
    assert values == {f"q{n}": "No" for n in range(12)}  # " No" is the shorter option: the higher score here


def test_deterministic_mode_is_float32_and_says_so_in_the_report(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    _yes_no(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", str(tiny_gpt2), "--holistic-deterministic")
    result.assert_outcomes(passed=2)
    details = json.loads((pytester.path / "reports" / "tiny-gpt2" / "latest" / "report.json").read_text())["model"]["details"]
    assert (details["deterministic"], details["dtype"]) == (True, "float32")
