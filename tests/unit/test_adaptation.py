"""Adapter specs, few-shot selection, prompts and reading answers back, with prompts written out by hand."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pytest

from pytest_holistic.adaptation import Adapter, make_spec, select_examples
from pytest_holistic.answer_methods import option_labels
from pytest_holistic.errors import InternalError, UserError
from pytest_holistic.methods import METHODS
from pytest_holistic.metrics import exact_match, quasi_exact_match
from pytest_holistic.models import ScriptedModel
from pytest_holistic.models.base import GenerationRequest, GenerationResult, LoglikelihoodRequest, LoglikelihoodResult
from pytest_holistic.plans import AdapterSpec, Completion
from pytest_holistic.scenarios import Instance, Reference

# -- make_spec --------------------------------------------------------------------------------------


def test_the_marker_reference_lists_every_method_and_only_those() -> None:
    """The ``adapter`` row of the marker's reference (written by hand) names what ``METHODS`` accepts, no more."""
    page = Path(__file__).resolve().parents[2] / "docs" / "reference" / "marker.md"
    (row,) = [line for line in page.read_text().splitlines() if line.startswith("| `adapter` |")]
    listed = [name for name in re.findall(r"`(\w+)`", row.split("|")[2]) if name != "adapter"]
    assert sorted(listed) == sorted(METHODS)
    assert all(make_spec(method).method == method for method in METHODS)


def test_generation_defaults() -> None:
    spec = make_spec("generation")
    assert spec == AdapterSpec()
    assert spec.method == "generation"
    assert spec.instructions == ""
    assert spec.input_prefix == ""
    assert spec.input_suffix == "\n"
    assert spec.output_prefix == "Answer: "
    assert spec.output_suffix == "\n"
    assert spec.instance_prefix == "\n"
    assert (spec.global_prefix, spec.global_suffix, spec.reference_prefix, spec.reference_suffix) == ("", "", "A. ", "\n")
    assert (spec.sample_train, spec.multi_label, spec.per_group) == (True, False, False)
    assert spec.max_train_instances == 5
    assert spec.max_tokens == 32
    assert spec.stop == ("\n",)
    assert spec.seed == 0


def test_multiple_choice_defaults() -> None:
    joint = make_spec("multiple_choice_joint")
    assert joint.method == "multiple_choice_joint"
    assert joint.input_prefix == "Question: "
    assert joint.max_tokens == 1
    assert joint.stop == ("\n",)
    separate = make_spec("multiple_choice_separate")
    assert separate.output_prefix == "Answer: "
    assert separate.max_tokens == 0
    assert separate.stop == ()


def test_overrides_win_over_method_defaults() -> None:
    spec = make_spec("multiple_choice_joint", max_tokens=3, input_prefix="Q: ", seed=7)
    assert (spec.max_tokens, spec.input_prefix, spec.seed) == (3, "Q: ", 7)
    assert make_spec("generation", stop="###").stop == ("###",)
    assert make_spec("generation", stop=["a", "b"]).stop == ("a", "b")
    assert make_spec("generation", stop=None).stop == ()
    assert make_spec("generation", stop=["a"]).to_dict()["stop"] == ["a"]


def test_unknown_adapter() -> None:
    with pytest.raises(UserError) as raised:
        make_spec("multiple_choice")
    message = str(raised.value)
    assert "'multiple_choice'" in message
    for method in METHODS:
        assert method in message


# -- select_examples --------------------------------------------------------------------------------


def yes_no_train(yes: int, no: int) -> list[Instance]:
    return [Instance(f"y{k}", f"yes question {k}", ["Yes"], split="train") for k in range(yes)] + [
        Instance(f"n{k}", f"no question {k}", ["No"], split="train") for k in range(no)
    ]


def test_select_examples_is_deterministic() -> None:
    train = yes_no_train(6, 6)
    first = select_examples(train, 4, seed=0)
    assert first == select_examples(train, 4, seed=0)
    assert len(first) == 4
    assert len({i.id for i in first}) == 4
    # the input list is left untouched
    assert train == yes_no_train(6, 6)


def test_select_examples_depends_on_seed_and_on_the_datasets_order_as_helms() -> None:
    train = yes_no_train(6, 6)
    by_seed = {tuple(i.id for i in select_examples(train, 4, seed=seed)) for seed in range(6)}
    assert len(by_seed) > 1
    # HELM draws positions in the training list, so the dataset's order matters (every worker reads the same order)
    orders = {
        tuple(i.id for i in select_examples(list(reversed(train)), 4, seed=0)),
        tuple(i.id for i in select_examples(train, 4, seed=0)),
    }
    assert len(orders) == 2


def test_select_examples_without_sampling_takes_consecutive_runs() -> None:
    train = yes_no_train(3, 3)
    assert [i.id for i in select_examples(train, 2, seed=0, sample_train=False)] == ["y0", "y1"]
    assert [i.id for i in select_examples(train, 2, seed=1, sample_train=False)] == ["y2", "n0"]


def test_select_examples_balances_labels() -> None:
    # 6 Yes + 6 No, 4 examples: round-robin over the two groups -> 2 of each
    for seed in range(5):
        chosen = select_examples(yes_no_train(6, 6), 4, seed=seed)
        assert Counter(i.correct_references[0] for i in chosen) == {"Yes": 2, "No": 2}


def test_select_examples_with_unbalanced_labels() -> None:
    # 8 Yes + 2 No, 6 examples: rounds give (Yes, No), (Yes, No), (Yes), (Yes) -> 4 Yes, 2 No
    chosen = select_examples(yes_no_train(8, 2), 6, seed=1)
    assert Counter(i.correct_references[0] for i in chosen) == {"Yes": 4, "No": 2}


def test_select_examples_edge_counts() -> None:
    train = yes_no_train(2, 1)
    assert select_examples(train, 0, seed=0) == ()
    assert select_examples([], 5, seed=0) == ()
    # asking for more than there are gives all of them, once each
    assert sorted(i.id for i in select_examples(train, 10, seed=0)) == ["n0", "y0", "y1"]
    # instances without a correct reference fill what the labelled ones leave (HELM's rule)
    unlabelled = [Instance("u0", "?", [Reference("x", False)], split="train")]
    assert sorted(i.id for i in select_examples(train + unlabelled, 4, seed=0)) == ["n0", "u0", "y0", "y1"]


# -- Adapter.plan -----------------------------------------------------------------------------------

ADD_2 = Instance("e1", "2+2?", ["4"], split="train")
ADD_3 = Instance("e2", "3+3?", ["6"], split="train")


def test_generation_prompt_with_examples() -> None:
    adapter = Adapter(make_spec("generation"), [ADD_2, ADD_3])
    plan = adapter.plan(Instance("q", "1+1?", ["2"]))
    # blocks joined by the instance prefix "\n"; each example: input + "\n" + "Answer: " + answer + "\n" (output suffix)
    assert plan.prompt == "2+2?\nAnswer: 4\n\n3+3?\nAnswer: 6\n\n1+1?\nAnswer:"
    assert plan.prompt.endswith("Answer:")
    assert plan.generation == GenerationRequest(plan.prompt, 32, ("\n",), 0.0, 0)
    assert plan.loglikelihood == ()


def test_generation_prompt_with_instructions_and_no_examples() -> None:
    adapter = Adapter(make_spec("generation", instructions="Do the sum.", seed=3, max_tokens=4), [])
    plan = adapter.plan(Instance("q", "1+1?", ["2"]))
    # the instance prefix follows the instructions as it follows every block
    assert plan.prompt == "Do the sum.\n1+1?\nAnswer:"
    assert plan.generation == GenerationRequest("Do the sum.\n1+1?\nAnswer:", 4, ("\n",), 0.0, 3)
    # HELM's run specs end their instructions with a newline: a blank line before the first instance
    helm_style = Adapter(make_spec("generation", instructions="Do the sum.\n"), [])
    assert helm_style.plan(Instance("q", "1+1?", ["2"])).prompt == "Do the sum.\n\n1+1?\nAnswer:"


def test_output_prefix_is_right_stripped_where_the_model_answers() -> None:
    spec = make_spec("generation", output_prefix="Summarize the above article in 1 sentence.\n", max_train_instances=1)
    plan = Adapter(spec, [ADD_2]).plan(Instance("q", "1+1?", ["2"]))
    assert (
        plan.prompt == "2+2?\nSummarize the above article in 1 sentence.\n4\n\n1+1?\nSummarize the above article in 1 sentence."
    )


def test_global_prefix_suffix_and_instance_prefix() -> None:
    spec = make_spec("generation", global_prefix="<s>", global_suffix="</s>", instance_prefix="---\n", instructions="Add.\n")
    plan = Adapter(spec, [ADD_2]).plan(Instance("q", "1+1?", ["2"]))
    assert plan.prompt == "<s>Add.\n---\n2+2?\nAnswer: 4\n---\n1+1?\nAnswer:</s>"


SKY = Instance.multiple_choice("e1", "Sky colour?", ["green", "blue"], 1, split="train")
SUM = Instance.multiple_choice("q", "2+2?", ["3", "4", "5", "6"], "4")


def test_joint_prompt_letters_the_options() -> None:
    adapter = Adapter(make_spec("multiple_choice_joint"), [SKY])
    plan = adapter.plan(SUM)
    # the example's answer is its letter, B
    assert plan.prompt == "Question: Sky colour?\nA. green\nB. blue\nAnswer: B\n\nQuestion: 2+2?\nA. 3\nB. 4\nC. 5\nD. 6\nAnswer:"
    assert plan.generation is not None
    assert plan.generation.max_tokens == 1


def test_joint_labels_count_up_from_the_reference_prefix() -> None:
    adapter = Adapter(make_spec("multiple_choice_joint"), [])
    plan = adapter.plan(Instance.multiple_choice("one", "Q", [" spaced ", "x"], 0))
    assert plan.prompt == "Question: Q\nA.  spaced \nB. x\nAnswer:"  # options as given: no strip, no added space
    # past Z the character code goes on, as HELM's does
    plan = adapter.plan(Instance.multiple_choice("many", "Q", [f"o{k}" for k in range(27)], 0))
    assert plan.prompt.endswith("Z. o25\n[. o26\nAnswer:")
    numbered = Adapter(make_spec("multiple_choice_joint", reference_prefix="(1) "), [SKY]).plan(SUM)
    assert numbered.prompt.startswith("Question: Sky colour?\n(1) green\n(2) blue\nAnswer: 2\n\n")
    assert option_labels("Option A. ", 2) == ("O", "P")  # the first letter or digit, whatever it is


def test_joint_needs_options_and_a_prefix_that_can_number_them() -> None:
    with pytest.raises(UserError, match="no options"):
        Adapter(make_spec("multiple_choice_joint"), []).plan(Instance("none", "Q"))
    with pytest.raises(UserError, match="no letter or digit"):
        Adapter(make_spec("multiple_choice_joint", reference_prefix="- "), [])


def test_separate_prompt_scores_each_option() -> None:
    question = Instance.multiple_choice("q", "Is the sky blue?", ["Yes", " No "], 0)
    plan = Adapter(make_spec("multiple_choice_separate"), []).plan(question)
    assert plan.prompt == "Is the sky blue?\nAnswer:"
    assert plan.generation is None
    # one request per option, written where HELM writes it: after the output prefix, as given; its space moves along
    assert plan.loglikelihood == (
        LoglikelihoodRequest("Is the sky blue?\nAnswer:", " Yes"),
        LoglikelihoodRequest("Is the sky blue?\nAnswer:", "  No "),
    )


def test_separate_without_space_after_a_newline() -> None:
    question = Instance.multiple_choice("q", "Is the sky blue?", ["Yes", "No"], 0)
    plan = Adapter(make_spec("multiple_choice_separate", output_prefix="Answer:\n"), []).plan(question)
    assert plan.prompt == "Is the sky blue?\nAnswer:\n"
    assert [r.continuation for r in plan.loglikelihood] == ["Yes", "No"]


def test_separate_examples_use_the_answer_text() -> None:
    example = Instance.multiple_choice("e", "Is grass green?", ["Yes", "No"], 0, split="train")
    question = Instance.multiple_choice("q", "Is the sky blue?", ["Yes", "No"], 0)
    plan = Adapter(make_spec("multiple_choice_separate"), [example]).plan(question)
    assert plan.prompt == "Is grass green?\nAnswer: Yes\n\nIs the sky blue?\nAnswer:"


def test_separate_takes_the_best_log_probability_per_token() -> None:
    # HELM's "original" method: -3 over 3 tokens beats -2 over 1 token
    adapter = Adapter(make_spec("multiple_choice_separate"), [])
    plan = adapter.plan(YES_NO)
    scored = [LoglikelihoodResult(-3.0, tokens_scored=3), LoglikelihoodResult(-2.0, tokens_scored=1)]
    completion = adapter.interpret(YES_NO, plan, None, scored)
    assert completion.predicted_index == 0
    assert completion.choice_scores == (-1.0, -2.0)
    assert completion.logprob == -3.0
    # the softmax of the per-token scores at the chosen option: 1 / (1 + e^-1) = 0.731059
    assert completion.probability == pytest.approx(0.731059, abs=1e-6)


def test_separate_needs_options() -> None:
    with pytest.raises(UserError, match="no options"):
        Adapter(make_spec("multiple_choice_separate"), []).plan(Instance("q", "x"))


# -- Adapter.interpret ------------------------------------------------------------------------------

YES_NO = Instance.multiple_choice("q", "Is the sky blue?", ["Yes", "No"], 0)


def interpret_separate(instance: Instance, logprobs: list[float]) -> Completion:
    adapter = Adapter(make_spec("multiple_choice_separate"), [])
    plan = adapter.plan(instance)
    scored = [LoglikelihoodResult(value, tokens_in=10, seconds=0.5) for value in logprobs]
    return adapter.interpret(instance, plan, None, scored)


def test_separate_picks_highest_logprob_with_softmax_probability() -> None:
    completion = interpret_separate(YES_NO, [-1.0, -2.0])
    assert completion.predicted_index == 0
    assert completion.text == "Yes"
    assert completion.gold == ("Yes",)
    assert completion.choices == ("Yes", "No")
    assert completion.correct is True
    # e^-1 / (e^-1 + e^-2) = 1 / (1 + e^-1) = 0.731059
    assert completion.probability == pytest.approx(0.731059, abs=1e-6)
    assert completion.logprob == -1.0
    assert completion.choice_logprobs == (-1.0, -2.0)
    assert completion.tokens_in == 20
    assert completion.seconds == 1.0
    assert exact_match(completion.text, completion.gold) == 1.0


def test_separate_highest_last_option_is_wrong_answer() -> None:
    instance = Instance.multiple_choice("q", "2+2?", ["3", "4", "5"], 1)
    completion = interpret_separate(instance, [-3.0, -2.0, -0.5])
    assert completion.predicted_index == 2
    assert completion.text == "5"
    assert completion.correct is False
    # e^-0.5 / (e^-3 + e^-2 + e^-0.5) = 0.606531 / (0.049787 + 0.135335 + 0.606531) = 0.606531 / 0.791653 = 0.76616
    assert completion.probability == pytest.approx(0.76616, abs=1e-5)


def test_separate_ties_go_to_the_lowest_index() -> None:
    instance = Instance.multiple_choice("q", "?", ["a", "b", "c"], 2)
    completion = interpret_separate(instance, [-3.0, -1.5, -1.5])
    assert completion.predicted_index == 1
    # e^-1.5 / (e^-3 + 2 e^-1.5) = 1 / (e^-1.5 + 2) = 1 / 2.223130 = 0.449817
    assert completion.probability == pytest.approx(0.449817, abs=1e-5)


def test_separate_probability_survives_very_negative_logprobs() -> None:
    completion = interpret_separate(YES_NO, [-1000.0, -1001.0])
    # the shift by the maximum keeps it finite: same share as for (-1, -2)
    assert completion.probability == pytest.approx(1 / (1 + math.exp(-1)))


def test_separate_reports_the_most_truncation_and_cached_only_when_every_option_was() -> None:
    adapter = Adapter(make_spec("multiple_choice_separate"), [])
    plan = adapter.plan(YES_NO)
    scored = [LoglikelihoodResult(-1.0, truncated_tokens=7, cached=True), LoglikelihoodResult(-2.0, truncated_tokens=9)]
    completion = adapter.interpret(YES_NO, plan, None, scored)
    assert (completion.truncated_tokens, completion.cached) == (9, False)
    replayed = [LoglikelihoodResult(-1.0, cached=True), LoglikelihoodResult(-2.0, cached=True)]
    assert adapter.interpret(YES_NO, plan, None, replayed).cached is True
    generation = Adapter(make_spec("generation"), [])
    generated = GenerationResult(" Yes", (-0.1,), 5, truncated_tokens=3, cached=True)
    completion = generation.interpret(YES_NO, generation.plan(YES_NO), generated)
    assert (completion.truncated_tokens, completion.cached) == (3, True)
    assert completion.to_record()["truncated_tokens"] == 3


def joint(text: str, token_logprobs: tuple[float, ...] = (-0.5,)) -> Completion:
    adapter = Adapter(make_spec("multiple_choice_joint"), [])
    plan = adapter.plan(SUM)
    return adapter.interpret(SUM, plan, GenerationResult(text, token_logprobs, tokens_in=12))


def test_joint_reads_the_letter() -> None:
    completion = joint(" B")
    assert completion.text == "B"
    assert completion.predicted_index == 1
    assert completion.gold == ("B",)
    assert completion.choices == ("A", "B", "C", "D")
    assert completion.correct is True
    # probability of what was generated (one token): e^-0.5 = 0.606531
    assert completion.probability == pytest.approx(0.606531, abs=1e-6)
    assert completion.tokens_in == 12
    assert completion.tokens_out == 1
    assert exact_match(completion.text, completion.gold) == 1.0


@pytest.mark.parametrize(
    ("text", "index"),
    # HELM maps the stripped answer through {label: option}: only a label itself is an option
    [("A", 0), (" D\n", 3), ("(C)", None), ("D.", None), ("B) 4", None), ("E", None), ("Because", None), ("b", None), ("", None)],
)
def test_joint_letter_parsing(text: str, index: int | None) -> None:
    completion = joint(text)
    assert completion.predicted_index == index
    assert completion.correct is (index == 1)


def test_joint_without_logprobs_has_no_probability() -> None:
    assert joint("B", ()).probability is None


def test_generation_strips_the_text() -> None:
    adapter = Adapter(make_spec("generation"), [])
    instance = Instance("q", "Capital of France?", ["Paris", Reference("Lyon", False)])
    plan = adapter.plan(instance)
    completion = adapter.interpret(instance, plan, GenerationResult("  Paris \n", (-0.1, -0.2), tokens_in=5))
    assert completion.text == "Paris"
    assert completion.gold == ("Paris",)
    assert completion.choices == ()
    assert completion.correct is None
    assert completion.prompt == plan.prompt
    # probability of the whole output: e^(-0.1 - 0.2) = e^-0.3 = 0.740818
    assert completion.probability == pytest.approx(0.740818, abs=1e-6)
    assert completion.logprob == pytest.approx(-0.3)
    assert completion.tokens_out == 2
    no_scores = adapter.interpret(instance, plan, GenerationResult("Paris"))
    assert no_scores.probability is None


def test_completion_to_record() -> None:
    record = interpret_separate(YES_NO, [-1.0, -2.0]).to_record()
    assert record["correct"] is True
    assert record["gold"] == ["Yes"]
    assert record["choices"] == ["Yes", "No"]
    assert record["choice_logprobs"] == [-1.0, -2.0]
    assert record["correct_indices"] == [0]


# -- with the scripted model ------------------------------------------------------------------------


def test_generation_end_to_end_with_scripted_model() -> None:
    model = ScriptedModel(generate={"capital of France": " Paris\nThe end"}, default=" no idea")
    adapter = Adapter(make_spec("generation"), [])
    instances = [Instance("fr", "What is the capital of France?", ["Paris"]), Instance("it", "Capital of Italy?", ["Rome"])]
    plans = [adapter.plan(i) for i in instances]
    results = model.generate([p.generation for p in plans])
    completions = [adapter.interpret(i, p, r) for i, p, r in zip(instances, plans, results)]
    # the stop sequence "\n" cuts " Paris\nThe end" to " Paris", stripped to "Paris"
    assert [c.text for c in completions] == ["Paris", "no idea"]
    assert [quasi_exact_match(c.text, c.gold) for c in completions] == [1.0, 0.0]
    assert model.batches == [("generate", 2)]


def test_separate_end_to_end_with_scripted_model() -> None:
    # " Yes" scores -0.5 by rule; " No" has no rule: -len(" No") = -3 -> Yes wins
    model = ScriptedModel(loglikelihood={"Yes": -0.5})
    adapter = Adapter(make_spec("multiple_choice_separate"), [])
    plan = adapter.plan(YES_NO)
    completion = adapter.interpret(YES_NO, plan, None, model.loglikelihood(plan.loglikelihood))
    assert completion.choice_logprobs == (-0.5, -3.0)
    assert completion.text == "Yes"
    # e^-0.5 / (e^-0.5 + e^-3) = 1 / (1 + e^-2.5) = 0.924142
    assert completion.probability == pytest.approx(0.924142, abs=1e-5)


def test_a_generation_plan_answered_without_a_generation_is_an_internal_error_not_an_assert() -> None:
    # An invariant of ours, not the user's input: a distinct error type that survives python -O.
    adapter = Adapter(make_spec("generation", max_train_instances=0), ())
    instance = Instance("q", "The capital of France is", ("Paris",))
    plan = adapter.plan(instance)
    with pytest.raises(InternalError, match="planned a generation request for 'q' but got no generation back"):
        adapter.interpret(instance, plan, None)
