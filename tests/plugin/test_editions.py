"""Runs at HELM's settings and offline editions: fewer in-context examples on the shipped data, said in every report;
and per-group runs, whose prompts name the group and take their examples from it (HELM's MMLU subjects)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_holistic.report.leaderboard import build_leaderboard

ROWS = [
    *({"id": f"t{k}", "group": group, "question": f"{group} question {k}", "answer": "yes" if k % 2 else "no", "split": "train"}
      for k, group in enumerate(("astronomy", "world_history") * 3)),
    *({"id": f"q{k}", "group": group, "question": f"{group} question {k}", "answer": "yes", "split": "test"}
      for k, group in enumerate(("astronomy", "world_history"))),
]  # fmt: skip

SUITE = """
import pytest
from pytest_holistic import Fields, Scenario, jsonl

quiz = Scenario("quiz", local=jsonl("quiz.jsonl", Fields(input="question", references="answer")), split="test")

@pytest.mark.holistic(quiz, input_prefix="Q: ", max_tokens=2, max_train_instances=3, {extra})
def test_quiz(completion):
    pass
"""


def _project(pytester: pytest.Pytester, extra: str) -> None:
    (pytester.path / "quiz.jsonl").write_text("".join(json.dumps({**row, "answer": [row["answer"]]}) + "\n" for row in ROWS))
    pytester.makepyfile(test_quiz=SUITE.replace("{extra}", extra))


def test_an_offline_edition_is_named_as_one_in_every_report(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    _project(pytester, "local_max_train_instances=1")
    result = pytester.runpytest("--model", str(tiny_gpt2), "-p", "no:cacheprovider", "--holistic-junit", "junit.xml")
    result.assert_outcomes(passed=2)
    name = "quiz [offline edition: 1 of HELM's 3 in-context examples]"
    result.stdout.fnmatch_lines([f"{name} (generation, local; 2 passed)"])
    (run,) = read_report(pytester.path, "tiny-gpt2")["runs"]
    assert (run["scenario"], run["name"], run["edition"]) == ("quiz", name, "offline edition: 1 of HELM's 3 in-context examples")
    assert run["adapter"]["max_train_instances"] == 1 and len(run["few_shot_ids"]) == 1
    assert all(record["prompt"].count("Q: ") == 2 for record in run["instances"])  # one example, then the question
    junit = (pytester.path / "junit.xml").read_text()
    assert 'name="edition" value="offline edition: 1 of HELM' in junit


def test_a_run_at_helms_count_has_no_edition(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    _project(pytester, "local_max_train_instances=3")  # the same count as HELM's: nothing to say
    pytester.runpytest("--model", str(tiny_gpt2), "-p", "no:cacheprovider").assert_outcomes(passed=2)
    (run,) = read_report(pytester.path, "tiny-gpt2")["runs"]
    assert (run["name"], run["edition"]) == ("quiz", None)
    assert len(run["few_shot_ids"]) == 3


@pytest.mark.parametrize("how", ["--holistic-helm-shots", "-o holistic_helm_shots=true"])
def test_helm_shots_run_the_offline_edition_at_helms_count(
    pytester: pytest.Pytester, tiny_gpt2: Path, read_report, how: str
) -> None:
    _project(pytester, "local_max_train_instances=1")
    pytester.runpytest("--model", str(tiny_gpt2), "-p", "no:cacheprovider", *how.split()).assert_outcomes(passed=2)
    (run,) = read_report(pytester.path, "tiny-gpt2")["runs"]
    assert (run["name"], run["edition"], run["adapter"]["max_train_instances"]) == ("quiz", None, 3)
    assert all(record["prompt"].count("Q: ") == 4 for record in run["instances"])  # HELM's three examples, then the question


def test_per_group_prompts_name_the_group_and_draw_examples_from_it(
    pytester: pytest.Pytester, tiny_gpt2: Path, read_report
) -> None:
    _project(pytester, 'per_group=True, instructions="Questions about {group}.\\n"')
    pytester.runpytest("--model", str(tiny_gpt2), "-p", "no:cacheprovider").assert_outcomes(passed=2)
    (run,) = read_report(pytester.path, "tiny-gpt2")["runs"]
    for record in run["instances"]:
        group = record["instance"]["group"]
        other = ({"astronomy", "world_history"} - {group}).pop()
        prompt = record["prompt"]
        assert prompt.startswith(f"Questions about {group.replace('_', ' ')}.\n\n"), prompt
        assert prompt.count(f"Q: {group} question") == 4 and other not in prompt  # 3 examples of its own group, then it
    assert len(run["few_shot_ids"]) == 6


def test_an_edition_never_shares_a_leaderboard_column_with_helms_settings() -> None:
    def report(model: str, name: str) -> dict:
        metric = {"value": 0.5, "ci95": [0.4, 0.6], "n": 10, "family": "accuracy", "direction": "higher"}
        run = {"scenario": "quiz", "name": name, "requested_metrics": ["exact_match"], "metrics": {"exact_match": metric}}
        return {"model": {"name": model}, "runs": [run]}

    board = build_leaderboard([report("a", "quiz"), report("b", "quiz [offline edition: 1 of HELM's 3 in-context examples]")])
    scenarios = {column["scenario"] for column in board["columns"]}
    assert scenarios == {"quiz", "quiz [offline edition: 1 of HELM's 3 in-context examples]"}
