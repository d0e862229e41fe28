"""Generated targeted scenarios end to end: the memorisation probe on the tiny model, BBQ on a scripted model.

The tiny GPT-2 writes nothing useful for BBQ's lettered options, so BBQ runs on scripted answers (a letter per
question kind), which gives its bias scores values to check against a recomputation from the records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_holistic import metrics
from pytest_holistic.scenarios.bbq_tags import read_bbq_tags

BBQ_SUITE = """
import pytest
from pytest_holistic.scenarios.synthetic import bbq

@pytest.mark.holistic(bbq(train=6, test=16), adapter="multiple_choice_joint", max_train_instances=2, perturbations=False,
                      instructions="The following are multiple choice questions (with answers).", input_prefix="Passage: ",
                      metrics=("exact_match", "bbq_metric_ambiguous_bias", "bbq_metric_unambiguous_bias"))
def test_bbq(completion):
    pass
"""

MEMORISATION_SUITE = """
import pytest
from pytest_holistic.scenarios.synthetic import memorisation

@pytest.mark.holistic(memorisation(), max_train_instances=0, max_tokens=6, stop=(), input_suffix="", output_prefix="",
                      perturbations=False, metrics=("longest_common_prefix_length", "edit_distance", "edit_similarity"))
def test_memorisation(completion):
    pass
"""


def test_memorisation_probe_runs_on_the_tiny_model(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    pytester.makepyfile(test_probe=MEMORISATION_SUITE)
    result = pytester.runpytest("--model", str(tiny_gpt2))
    result.assert_outcomes(passed=10)
    result.stdout.fnmatch_lines(["memorisation (generation, local; 10 passed)", "  accuracy    edit_distance ↓*n=10"])
    (memo,) = read_report(pytester.path, "tiny-gpt2")["runs"]
    for name in ("longest_common_prefix_length", "edit_distance", "edit_similarity"):
        scores = [record["scores"][name] for record in memo["instances"]]
        assert memo["metrics"][name]["value"] == pytest.approx(sum(scores) / len(scores))
    for record in memo["instances"]:
        completion = record["completion"]
        assert record["scores"]["edit_distance"] == metrics.edit_distance(completion["text"], completion["gold"])


def test_bbq_bias_scores_reach_the_report(pytester: pytest.Pytester, read_report) -> None:
    script = {"default": " A", "generate": {"Question: Who was good": " B", "Question: Who was a good": " C"}}
    pytester.path.joinpath("script.json").write_text(json.dumps(script))
    pytester.makepyfile(test_questions=BBQ_SUITE)
    result = pytester.runpytest("--model", "scripted:script.json")
    result.assert_outcomes(passed=16)
    result.stdout.fnmatch_lines(["bbq (multiple_choice_joint, local; 16 passed)", "  bias *bbq_metric_ambiguous_bias →0*"])
    (run,) = read_report(pytester.path, "scripted_script.json")["runs"]
    answers, correct = [], []
    for record in run["instances"]:
        tags = read_bbq_tags(record["instance"]["tags"])
        completion = record["completion"]
        answers.append((tags.ambiguous, tags.negative, tags.role(completion["predicted_index"]), tags.non_target is not None))
        correct.append(completion["correct"])
    assert {role for _, _, role, _ in answers} >= {"target", "unknown"}
    for name in ("bbq_metric_ambiguous_bias", "bbq_metric_unambiguous_bias"):
        reported, expected = run["metrics"][name], getattr(metrics, name)(answers, correct)
        assert expected is not None and reported["value"] == pytest.approx(expected)
        assert (reported["family"], reported["n"]) == ("bias", 16)
