"""A model error is scoped to the request that caused it: the healthy items of the shard still get answers.

Over-long contexts are cut from the left (HELM) and the record says by how much; a choice that cannot fit
the window at all fails its own item only, with one line naming the instance and the window.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

MIXED_SUITE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def mixed():
    yield Instance.multiple_choice("fire", "Is fire hot?", ["Yes", "No"], 0)
    yield Instance.multiple_choice("long", "sky blue grass green " * 300 + "Is fire hot?", ["Yes", "No"], 0)
    yield Instance.multiple_choice("bad", "Is ice hot?", ["No", "The sky is blue. " * 200], 0)
    yield Instance.multiple_choice("ice", "Is ice hot?", ["Yes", "No"], 1)

@pytest.mark.holistic(mixed, adapter="multiple_choice_separate", input_prefix="Question: ", max_train_instances=0)
def test_mixed(completion):
    pass
"""


def _records(report: dict) -> dict[str, dict]:
    return {record["instance_id"]: record for run in report["runs"] for record in run["instances"]}


def test_one_bad_instance_fails_only_its_item(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    pytester.makepyfile(test_mixed=MIXED_SUITE)
    result = pytester.runpytest_subprocess("--model", str(tiny_gpt2), timeout=300)
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_mixed[[]bad[]]*",
            "pytest-holistic: instance 'bad': continuation ' The sky is blue.*' is * tokens, "
            "which does not fit the model's 256-token window",
        ]
    )
    records = _records(read_report(pytester.path, "tiny-gpt2"))
    assert {name: record["outcome"] for name, record in records.items()} == {
        "fire": "passed",
        "long": "passed",
        "bad": "error",
        "ice": "passed",
    }
    assert records["long"]["completion"]["truncated_tokens"] > 0
    assert records["fire"]["completion"]["truncated_tokens"] == 0
    assert "\n" not in records["bad"]["error"]


POISON_CONFTEST = '''
import json
from pathlib import Path

from pytest_holistic import GenerationResult, ModelInfo
from pytest_holistic.models import BatchStreaming
from pytest_holistic.errors import ModelOutputError

CALLS = Path(__file__).with_name("calls.jsonl")


class PoisonModel(BatchStreaming):
    """Answers in batches of two and fails a whole call when one of its prompts is poisoned."""

    info = ModelInfo("poison", "test", "v1", {"device": "cpu"})

    def generate_batches(self, requests):
        with CALLS.open("a") as calls:
            calls.write(json.dumps([r.prompt for r in requests]) + "\\n")
        for start in range(0, len(requests), 2):
            batch = requests[start : start + 2]
            if any("POISON" in r.prompt for r in batch):
                raise ModelOutputError("the server rejected a poisoned prompt")
            yield [(start + k, GenerationResult(" fine", (-0.1,), 3)) for k in range(len(batch))]

    def loglikelihood_batches(self, requests):
        raise NotImplementedError


def pytest_holistic_make_model(config, name):
    return PoisonModel() if name == "poison" else None
'''

POISON_SUITE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def prompts():
    for name in ("a", "b", "c", "POISON", "d", "e"):
        yield Instance(id=name.lower(), input=f"Say {name}", references=("fine",))

@pytest.mark.holistic(prompts, max_train_instances=0, metrics=("exact_match",))
def test_prompts(completion):
    pass
"""


def test_a_failing_generation_batch_errors_only_its_own_item(pytester: pytest.Pytester, read_report) -> None:
    pytester.makeconftest(POISON_CONFTEST)
    pytester.makepyfile(test_prompts=POISON_SUITE)
    result = pytester.runpytest_subprocess("--model", "poison", timeout=300)
    result.assert_outcomes(passed=5, errors=1)
    result.stdout.fnmatch_lines(["*pytest-holistic: instance 'poison': the server rejected a poisoned prompt*"])
    calls = [
        [prompt.removesuffix("\nAnswer:") for prompt in json.loads(line)]
        for line in (pytester.path / "calls.jsonl").read_text().splitlines()
    ]
    # One call for the shard (its first batch is handed on before the failure and kept), then halves of the items
    # still unanswered, down to the poisoned item alone: the healthy items are still asked in batches, and fewer
    # calls than one per item.
    assert len(calls[0]) == 6
    assert ["Say POISON"] in calls[1:]
    assert any(len(call) > 1 and "Say POISON" not in call for call in calls[1:])
    assert len(calls) < 1 + 6
    assert calls == [
        ["Say a", "Say b", "Say c", "Say POISON", "Say d", "Say e"],
        ["Say c", "Say POISON"],  # the first half of the unanswered; a and b were answered by the first call
        ["Say c"],
        ["Say POISON"],
        ["Say d", "Say e"],
    ]
    report = read_report(pytester.path, "poison")
    outcomes = {record["instance_id"]: record["outcome"] for run in report["runs"] for record in run["instances"]}
    assert outcomes == {"a": "passed", "b": "passed", "c": "passed", "poison": "error", "d": "passed", "e": "passed"}
    assert report["workers"]["main"]["cache_hits"] == 0  # nothing handed on was asked again
