"""``--holistic-prefix-sharing`` end to end: a few-shot suite on the tiny GPT-2 gives the same report either way, and
the report's model details say what was shared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.float32 import sum_tolerance

FEW_SHOT = """
import pytest
from pytest_holistic import Fields, Scenario, jsonl

qa = Scenario("qa", local=jsonl("qa.jsonl", Fields(input="question", answer="answer", labels={True: "Yes", False: "No"})))

@pytest.mark.holistic(qa, adapter="generation", instructions="Answer each question with Yes or No.", input_prefix="Question: ",
                      output_prefix="Answer:", max_train_instances=3, max_tokens=4, metrics=("exact_match",))
def test_generate(completion):
    pass

@pytest.mark.holistic(qa, adapter="multiple_choice_separate", instructions="Answer each question with Yes or No.",
                      input_prefix="Question: ", max_train_instances=3, metrics=("exact_match",))
def test_choose(completion):
    pass
"""
QUESTIONS = ["Is fire hot?", "Is ice hot?", "Is the sky blue?", "Is grass green?", "Is Rome in Italy?", "Is Paris in Japan?"]
TOLERANCE = sum_tolerance(4)
"""No log-probability here sums more than 4 tokens: the generated answers stop at max_tokens=4, the options are one."""


def _suite(pytester: pytest.Pytester) -> None:
    rows = [{"id": f"t{k}", "question": q, "answer": k % 2 == 0, "split": "train"} for k, q in enumerate(QUESTIONS[:3])]
    rows += [
        {"id": f"q{k}", "question": f"The capital of France is Paris. {q}", "answer": k % 2 == 0, "split": "test"}
        for k, q in enumerate(QUESTIONS)
    ]
    pytester.path.joinpath("qa.jsonl").write_text("\n".join(json.dumps(row) for row in rows))
    pytester.makepyfile(test_qa=FEW_SHOT)


def _run(pytester: pytest.Pytester, model: Path, sharing: str, *more: str) -> dict:
    folder = f"reports-{sharing}{'-'.join(('', *more))}"
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--model",
        str(model),
        "--holistic-prefix-sharing",
        sharing,
        "--holistic-no-cache",
        "--holistic-report-dir",
        folder,
        *more,
    )
    result.assert_outcomes(passed=12)
    return json.loads((pytester.path / folder / model.name / "latest" / "report.json").read_text())


def test_sharing_on_and_off_give_the_same_report(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    _suite(pytester)
    reports = {sharing: _run(pytester, tiny_gpt2, sharing) for sharing in ("off", "on")}
    assert reports["off"]["model"]["details"]["prefix_sharing"] == "off"
    assert "prefix_shared_tokens" not in reports["off"]["model"]["details"]
    assert reports["on"]["model"]["details"]["prefix_sharing"] == "on"
    assert reports["on"]["model"]["details"]["prefix_shared_tokens"] > 0
    for whole, shared in zip(reports["off"]["runs"], reports["on"]["runs"], strict=True):
        assert [r["completion"]["text"] for r in whole["instances"]] == [r["completion"]["text"] for r in shared["instances"]]
        for mine, theirs in zip(shared["instances"], whole["instances"]):
            assert mine["completion"]["choice_logprobs"] == pytest.approx(theirs["completion"]["choice_logprobs"], abs=TOLERANCE)
        assert shared["metrics"]["exact_match"]["value"] == whole["metrics"]["exact_match"]["value"]


def test_packed_token_trees_with_sharing_on_give_the_unshared_report(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    """``--holistic-scoring packed --holistic-prefix-sharing on``: scoring and greedy generation both in packed rows,
    the shots computed once, and every answer, log-probability and metric the whole computation's."""
    _suite(pytester)
    whole = _run(pytester, tiny_gpt2, "off", "--holistic-scoring", "full")
    packed = _run(pytester, tiny_gpt2, "on", "--holistic-scoring", "packed")
    details = packed["model"]["details"]
    assert details["scoring"] == "packed" and "scoring_fallback" not in details
    assert details["prefix_sharing_method"] == "log-likelihood and greedy generation inside packed passes"
    assert details["prefix_shared_tokens"] > 0
    for theirs, mine in zip(whole["runs"], packed["runs"], strict=True):
        assert [r["completion"]["text"] for r in mine["instances"]] == [r["completion"]["text"] for r in theirs["instances"]]
        for a, b in zip(mine["instances"], theirs["instances"]):
            assert a["completion"]["choice_logprobs"] == pytest.approx(b["completion"]["choice_logprobs"], abs=TOLERANCE)
            assert a["completion"]["logprob"] == pytest.approx(b["completion"]["logprob"], abs=TOLERANCE)
        assert mine["metrics"]["exact_match"]["value"] == theirs["metrics"]["exact_match"]["value"]


def test_an_unknown_mode_is_a_usage_error(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "gpt2", "--holistic-prefix-sharing", "always")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--holistic-prefix-sharing: invalid choice: 'always' (choose from 'auto', 'on', 'off')" in result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
