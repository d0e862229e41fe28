"""The scoring-only adapters on the tiny GPT-2, each checked against log-probabilities computed here by hand.

The reference runs the model directly (one forward pass per context and continuation, or one per whole document)
with prompts written out literally, so a wrong layout, a lost request or a wrong sum shows up as a difference.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_holistic.adaptation import Adapter, make_spec
from pytest_holistic.errors import UserError
from pytest_holistic.metrics import mean_ndcg, mean_reciprocal_rank
from pytest_holistic.models.hf import HFModel
from pytest_holistic.runspec import check_marker_values
from pytest_holistic.scenarios import Instance, Reference
from pytest_holistic.scoring_adapters import document_pieces


@pytest.fixture(scope="module")
def model(tiny_gpt2: Path) -> HFModel:
    return HFModel.load(str(tiny_gpt2), batch_size=4)


@pytest.fixture(scope="module")
def reference(tiny_gpt2: Path):
    """``(context, continuation) -> (sum of log-probabilities, greedy)`` from a plain forward pass."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    lm = AutoModelForCausalLM.from_pretrained(tiny_gpt2).eval()

    def score(context: str, continuation: str) -> tuple[float, bool]:
        head = tokenizer(context, add_special_tokens=False)["input_ids"] or [tokenizer.eos_token_id]
        tail = tokenizer(continuation, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = lm(torch.tensor([head + tail])).logits[0].double().log_softmax(-1)
        rows = [logits[len(head) - 1 + k] for k in range(len(tail))]
        return sum(float(row[t]) for row, t in zip(rows, tail)), all(int(row.argmax()) == t for row, t in zip(rows, tail))

    score.tokenizer = tokenizer  # type: ignore[attr-defined]
    score.lm = lm  # type: ignore[attr-defined]
    return score


def _answer(adapter: Adapter, model: HFModel, instance: Instance):
    plan = adapter.plan(instance)
    return plan, adapter.interpret(instance, plan, None, model.loglikelihood(list(plan.loglikelihood)))


# -- multiple_choice_calibrated ---------------------------------------------------------------------


def test_calibrated_prompts_scores_and_choice_match_a_hand_computation(model: HFModel, reference) -> None:
    example = Instance.multiple_choice("ex", "Is fire hot?", ["Yes", "No"], 0, split="train")
    spec = make_spec("multiple_choice_calibrated", instructions="Answer briefly.", input_prefix="Question: ")
    adapter = Adapter(spec, [example])
    instance = Instance.multiple_choice("q", "Is ice hot?", ["Yes", "No", "Maybe"], 1)
    plan, completion = _answer(adapter, model, instance)

    original = "Answer briefly.\nQuestion: Is fire hot?\nAnswer: Yes\n\nQuestion: Is ice hot?\nAnswer:"
    calibration = "Answer briefly.\nQuestion: Answer:\nAnswer:"  # no examples, the input replaced by "Answer:"
    assert [(r.context, r.continuation) for r in plan.loglikelihood] == [
        (prompt, " " + option) for option in ("Yes", "No", "Maybe") for prompt in (original, calibration)
    ]
    logprobs = [reference(original, " " + option)[0] for option in ("Yes", "No", "Maybe")]
    scores = [lp - reference(calibration, " " + option)[0] for lp, option in zip(logprobs, ("Yes", "No", "Maybe"))]
    best = scores.index(max(scores))
    assert completion.choice_logprobs == pytest.approx(logprobs, abs=1e-4)
    assert completion.choice_scores == pytest.approx(scores, abs=1e-4)
    assert completion.predicted_index == best and completion.text == ["Yes", "No", "Maybe"][best]
    softmax = [math.exp(s) / sum(math.exp(t) for t in scores) for s in scores]
    assert completion.probability == pytest.approx(max(softmax), abs=1e-4)
    assert completion.correct == (best == 1)
    assert sorted(completion.ranking, key=lambda k: -scores[k]) == list(completion.ranking)


def test_calibrated_takes_the_first_of_tied_scores() -> None:
    from pytest_holistic.models.base import LoglikelihoodResult

    adapter = Adapter(make_spec("multiple_choice_calibrated"), [])
    instance = Instance.multiple_choice("q", "x", ["a", "b"], 1)
    plan = adapter.plan(instance)
    # a: -1 - (-2) = 1; b: -3 - (-4) = 1 -> a tie, the first option wins (HELM's first argmax)
    results = [LoglikelihoodResult(v) for v in (-1.0, -2.0, -3.0, -4.0)]
    completion = adapter.interpret(instance, plan, None, results)
    assert completion.predicted_index == 0 and completion.probability == pytest.approx(0.5)


def test_calibrated_without_options_is_a_one_line_error() -> None:
    adapter = Adapter(make_spec("multiple_choice_calibrated"), [])
    with pytest.raises(UserError, match="has no options; multiple_choice_calibrated needs references"):
        adapter.plan(Instance("q", "x"))


# -- language_modeling ------------------------------------------------------------------------------

DOCUMENT = "The capital of France is Paris. The capital of Japan is Tokyo.\nThe sky is blue.  The grass is green."


def test_pieces_cut_before_the_space_of_every_nth_word() -> None:
    text = "a bb  ccc\ndd e"
    cuts = document_pieces(text, 2)
    assert cuts == (5, 12)  # before the last whitespace ahead of the 3rd and 5th words: it stays with the word
    assert [text[i:j] for i, j in zip((0, *cuts), (*cuts, len(text)))] == ["a bb ", " ccc\ndd", " e"]
    assert document_pieces("x" * 450, 5) == (200, 400)  # a run without whitespace is cut inside


def _by_definition(reference, document: str, pieces: list[str]) -> float:
    """Token by token: a piece's tokens given the start token and every document token before them (HELM's window)."""
    import torch

    tokenizer, lm = reference.tokenizer, reference.lm
    tokens = tokenizer(document, add_special_tokens=False)["input_ids"]
    total, start = 0.0, 0
    for piece in pieces:
        end = start + len(tokenizer(piece, add_special_tokens=False)["input_ids"])
        window = [tokenizer.eos_token_id, *tokens[: end - 1]]
        with torch.no_grad():
            rows = lm(torch.tensor([window])).logits[0].double().log_softmax(-1)
        total += sum(float(rows[t][tokens[t]]) for t in range(start, end))
        start = end
    assert start == len(tokens)
    return total


def test_one_piece_is_one_pass_over_the_document_after_the_start_token(model: HFModel, reference) -> None:
    adapter = Adapter(make_spec("language_modeling", chunk_words=100), [])
    plan, completion = _answer(adapter, model, Instance("doc", DOCUMENT))
    assert [(r.context, r.continuation) for r in plan.loglikelihood] == [("", DOCUMENT)]
    whole, _ = reference("", DOCUMENT)
    assert completion.logprob == pytest.approx(whole, abs=1e-3)
    assert completion.scored_tokens == len(reference.tokenizer(DOCUMENT, add_special_tokens=False)["input_ids"])
    assert completion.num_bytes == len(DOCUMENT.encode())
    from pytest_holistic.metrics import bits_per_byte

    expected = -whole / (len(DOCUMENT.encode()) * math.log(2))
    assert bits_per_byte(completion.logprob, completion.num_bytes) == pytest.approx(expected, abs=1e-4)


def test_pieces_score_each_token_once_given_all_the_text_before_it(model: HFModel, reference) -> None:
    adapter = Adapter(make_spec("language_modeling", chunk_words=3), [])
    plan, completion = _answer(adapter, model, Instance("doc", DOCUMENT))
    pieces = [r.continuation for r in plan.loglikelihood]
    assert len(pieces) == 7 and "".join(pieces) == DOCUMENT  # 21 words in pieces of 3
    assert all(r.context == DOCUMENT[: len(r.context)] for r in plan.loglikelihood)
    assert completion.scored_tokens == len(reference.tokenizer(DOCUMENT, add_special_tokens=False)["input_ids"])
    assert completion.logprob == pytest.approx(_by_definition(reference, DOCUMENT, pieces), abs=1e-3)


def test_a_document_longer_than_the_window_scores_every_token_once_in_rolling_windows(model: HFModel, reference) -> None:
    """Each piece's tokens are predicted from the longest run of what precedes them (the start token, then the
    document) that fits 256 positions."""
    import torch

    document = " ".join(f"The capital of place{k} is city{k}." for k in range(40))
    adapter = Adapter(make_spec("language_modeling", chunk_words=10), [])
    plan, completion = _answer(adapter, model, Instance("long", document))
    tokenizer, lm = reference.tokenizer, reference.lm
    tokens = tokenizer(document, add_special_tokens=False)["input_ids"]
    assert len(tokens) > 256 and completion.scored_tokens == len(tokens)
    total, start = 0.0, 0
    for request in plan.loglikelihood:
        count = len(tokenizer(request.continuation, add_special_tokens=False)["input_ids"])
        end = start + count
        prefix = document[: len(request.context) + len(request.continuation)]
        assert tokenizer(prefix, add_special_tokens=False)["input_ids"] == tokens[:end]
        # The context is the start token and the document before the piece, cut from the left (start token first)
        # so that it and all but the last piece token fill the window's 256 positions.
        full = [tokenizer.eos_token_id, *tokens]
        low = max(0, end - 256)
        window, first = full[low:end], start - low
        with torch.no_grad():
            rows = lm(torch.tensor([window])).logits[0].double().log_softmax(-1)
        total += sum(float(rows[first + k][tokens[start + k]]) for k in range(count))
        start = end
    assert start == len(tokens)
    assert completion.logprob == pytest.approx(total, abs=1e-3)
    assert completion.truncated_tokens > 0


def test_language_modeling_refuses_an_empty_document_and_wrong_marker_values() -> None:
    adapter = Adapter(make_spec("language_modeling"), [])
    with pytest.raises(UserError, match="empty document"):
        adapter.plan(Instance("blank", "  \n"))
    with pytest.raises(UserError, match=r"holistic\(chunk_words='64'\): must be a whole number >= 1"):
        check_marker_values("t.py::test_lm", {"chunk_words": "64"}, "language_modeling")
    with pytest.raises(UserError, match="chunk_words applies only to adapter='language_modeling'"):
        check_marker_values("t.py::test_mc", {"chunk_words": 64}, "multiple_choice_separate")
    with pytest.raises(UserError, match="language_modeling scores documents without few-shot examples"):
        check_marker_values("t.py::test_lm", {"max_train_instances": 2}, "language_modeling")
    with pytest.raises(UserError, match="scores the document exactly as it is"):
        check_marker_values("t.py::test_lm", {"input_prefix": "Text: "}, "language_modeling")


# -- ranking ----------------------------------------------------------------------------------------

PASSAGES = (
    Reference("The capital of France is Paris.", True, 3),
    Reference("The sky is blue.", False, 0),
    Reference("The capital of Japan is Tokyo.", False, 1),
    Reference("Paris is the capital of France.", True, 2),
)


def _helm_key(yes: tuple[float, bool], no: tuple[float, bool]) -> tuple[int, float]:
    """HELM's ranking_metrics order, written from its description: Yes by logprob, then No by -logprob, then the rest."""
    if yes[1]:
        return (2, yes[0])
    if no[1]:
        return (1, -no[0])
    return (0, -no[0])


def test_ranking_prompts_order_and_metrics_match_a_hand_computation(model: HFModel, reference) -> None:
    train = Instance(
        "t1", "Is fire hot?", (Reference("Fire is hot.", True, 1), Reference("Ice is cold.", False, 0)), split="train"
    )
    adapter = Adapter(make_spec("ranking", max_train_instances=2), [train])
    instance = Instance("q1", "What is the capital of France?", PASSAGES)
    plan, completion = _answer(adapter, model, instance)

    shots = {
        "Passage: Fire is hot.\nQuery: Is fire hot?\nDoes the passage answer the query?\nAnswer: Yes\n\n",
        "Passage: Ice is cold.\nQuery: Is fire hot?\nDoes the passage answer the query?\nAnswer: No\n\n",
    }
    prompts = [r.context for r in plan.loglikelihood[0::2]]
    for passage, prompt in zip(PASSAGES, prompts):
        tail = f"Passage: {passage.text}\nQuery: What is the capital of France?\nDoes the passage answer the query?\nAnswer:"
        assert prompt.endswith(tail)
        head = prompt[: -len(tail)]
        assert len(head) == sum(map(len, shots)) and all(shot in head for shot in shots)
    assert [r.continuation for r in plan.loglikelihood] == [" Yes", " No"] * 4

    keys = [_helm_key(reference(p, " Yes"), reference(p, " No")) for p in prompts]
    expected = sorted(range(4), key=lambda k: (keys[k][0], keys[k][1]), reverse=True)  # stable among equal keys
    assert list(completion.ranking) == expected
    assert completion.predicted_index == expected[0]
    yes, no = reference(prompts[expected[0]], " Yes")[0], reference(prompts[expected[0]], " No")[0]
    assert completion.probability == pytest.approx(math.exp(yes) / (math.exp(yes) + math.exp(no)), abs=1e-4)

    grades = [PASSAGES[k].relevance for k in expected]
    gold = [1.0 if PASSAGES[k].correct else 0.0 for k in expected]
    rr = next((1 / (rank + 1) for rank, g in enumerate(gold) if g), 0.0)
    dcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(grades))
    ideal = sum(g / math.log2(rank + 2) for rank, g in enumerate(sorted(grades, reverse=True)))
    assert mean_reciprocal_rank([gold]) == pytest.approx(rr)
    assert mean_ndcg([grades]) == pytest.approx(dcg / ideal)


def test_ranking_columns_read_gold_flags_for_rr_and_grades_for_ndcg() -> None:
    from pytest_holistic.metrics.base import Column
    from pytest_holistic.plans import Completion
    from pytest_holistic.records import ItemRecord
    from pytest_holistic.report.columns import column_values

    instance = Instance("q", "query", PASSAGES)
    completion = Completion(text="", prompt="p", gold=(), choices=instance.choices, ranking=(2, 1, 3, 0))
    record = ItemRecord.from_data(
        {
            "nodeid": "t.py::test[q]",
            "run": "t.py::test",
            "instance": instance.to_record(),
            "prompt": "p",
            "completion": {k: v for k, v in completion.to_record().items() if k != "prompt"},
            "scores": {},
            "outcome": "passed",
            "execution": {"worker": "main"},
        }
    )
    assert record.instance.references[0].relevance == 3  # the grade survives the trip through the record's data
    gold, grades = column_values((Column.RANKED_GOLD, Column.RANKED_RELEVANCES), [record])
    assert gold == [[0.0, 0.0, 1.0, 1.0]] and grades == [[1.0, 0.0, 2.0, 3.0]]
    # HELM: RR@10 on binarised judgments (the grade-1 passage ranked first does not count), NDCG@10 on the grades.
    assert mean_reciprocal_rank(gold) == pytest.approx(1 / 3)


def test_ranking_bad_input_is_a_one_line_error() -> None:
    adapter = Adapter(make_spec("ranking"), [])
    with pytest.raises(UserError, match="has no passages; ranking needs the candidate passages as references"):
        adapter.plan(Instance("q", "query"))
    with pytest.raises(UserError, match="an even whole number"):
        check_marker_values("t.py::test_rank", {"max_train_instances": 3}, "ranking")
    with pytest.raises(UserError, match="relevance -1 must be a number >= 0"):
        Reference("p", True, -1)


def test_relevance_is_recorded_only_when_set() -> None:
    assert Instance("a", "x", ("y",)).to_record()["references"] == [{"text": "y", "correct": True}]
    assert Instance("a", "x", (Reference("y", True, 2),)).to_record()["references"] == [
        {"text": "y", "correct": True, "relevance": 2}
    ]


def test_logprob_per_byte_is_the_runs_total_over_its_bytes() -> None:
    from pytest_holistic.metrics import logprob_per_byte

    assert logprob_per_byte([-3.0, -5.0], [2, 2]) == pytest.approx(-2.0)
    assert logprob_per_byte(-8.0, 4) == pytest.approx(-2.0)
