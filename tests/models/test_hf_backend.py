"""The transformers backend on a real (tiny) GPT-2: batching must not change results; bad weights are errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_holistic.errors import ModelLoadError, ModelOutputError
from pytest_holistic.models import GenerationRequest, LoglikelihoodRequest, ModelOptions, load_model
from pytest_holistic.models.hf import HFModel

CONTEXTS = ["The capital of France is", "The capital of Japan is", "Question: Is fire hot?\nAnswer:", "The sky is", ""]
CONTINUATIONS = [" Paris", " Tokyo", " Yes", " blue", " No", " Rome."]


@pytest.fixture(scope="module")
def model(tiny_gpt2: Path) -> HFModel:
    return HFModel.load(str(tiny_gpt2), batch_size=16)


def test_loglikelihood_does_not_depend_on_batch_size(model: HFModel) -> None:
    requests = [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS]
    model.batch_size = 16
    batched = model.loglikelihood(requests)
    model.batch_size = 1
    single = model.loglikelihood(requests)
    assert len(batched) == len(single) == len(requests)
    for a, b in zip(batched, single):
        assert a.logprob == pytest.approx(b.logprob, abs=1e-4)
        assert a.is_greedy == b.is_greedy


def test_loglikelihood_matches_a_plain_forward_pass(model: HFModel) -> None:
    import torch

    context, continuation = "The capital of France is", " Paris"
    ids = model.tokenizer(context + continuation, add_special_tokens=False)["input_ids"]
    n_context = len(model.tokenizer(context, add_special_tokens=False)["input_ids"])
    with torch.inference_mode():
        logits = model.model(torch.tensor([ids])).logits[0]
    logprobs = torch.log_softmax(logits.float(), -1)
    expected = sum(float(logprobs[p - 1, ids[p]]) for p in range(n_context, len(ids)))
    (result,) = model.loglikelihood([LoglikelihoodRequest(context, continuation)])
    assert result.logprob == pytest.approx(expected, abs=1e-4)
    assert result.tokens_scored == len(ids) - n_context


def test_trained_answer_is_greedy_and_most_likely(model: HFModel) -> None:
    results = model.loglikelihood([LoglikelihoodRequest("The capital of France is", c) for c in (" Paris", " Tokyo", " Cairo")])
    assert results[0].is_greedy
    assert results[0].logprob > max(results[1].logprob, results[2].logprob)


def test_generation_does_not_depend_on_batch_size(model: HFModel) -> None:
    requests = [GenerationRequest(c, max_tokens=6, stop=(".",)) for c in CONTEXTS[:4]] + [GenerationRequest("The", 3, ())]
    model.generation_batch_size = 16
    batched = model.generate(requests)
    model.generation_batch_size = 1
    single = model.generate(requests)
    assert [r.text for r in batched] == [r.text for r in single]
    for a, b in zip(batched, single):
        assert a.token_logprobs == pytest.approx(b.token_logprobs, abs=1e-4)
    assert batched[0].text == " Paris"
    assert batched[2].text == " Yes"


def test_generation_stops_at_stop_sequence(model: HFModel) -> None:
    (unstopped,) = model.generate([GenerationRequest("The capital of France is", 4, ())])
    (stopped,) = model.generate([GenerationRequest("The capital of France is", 4, (".",))])
    assert "." in unstopped.text
    assert stopped.text == unstopped.text[: unstopped.text.index(".")]
    assert 1 <= stopped.tokens_out <= unstopped.tokens_out


def test_nan_weights_give_a_clear_error(tiny_gpt2: Path, tmp_path: Path) -> None:
    import torch

    broken = HFModel.load(str(tiny_gpt2))
    with torch.no_grad():
        broken.model.transformer.ln_f.weight.fill_(math.nan)
    with pytest.raises(ModelOutputError, match="NaN log-probability.*--holistic-dtype float32"):
        broken.loglikelihood([LoglikelihoodRequest("The sky is", " blue")])
    with pytest.raises(ModelOutputError, match="NaN log-probabilities while generating"):
        broken.generate([GenerationRequest("The sky is", 2, ())])


def test_missing_folder_is_a_load_error() -> None:
    with pytest.raises(ModelLoadError, match="model folder './no/such/model' does not exist"):
        load_model("./no/such/model", ModelOptions())


def test_shared_context_scoring_equals_one_sequence_per_request(model: HFModel) -> None:
    requests = [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS]
    model.batch_size, model.shared_context = 4, True
    shared = model.loglikelihood(requests)
    assert model.shared_context, "the GPT-2 cache should support re-indexing; the shared path must not fall back"
    model.shared_context = False
    plain = model.loglikelihood(requests)
    model.shared_context = True
    for a, b in zip(shared, plain):
        assert a.logprob == pytest.approx(b.logprob, abs=1e-4)
        assert a.is_greedy == b.is_greedy
        assert (a.tokens_in, a.tokens_scored) == (b.tokens_in, b.tokens_scored)


def test_batches_arrive_one_at_a_time(model: HFModel) -> None:
    requests = [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS]
    model.batch_size = 2
    batches = list(model.loglikelihood_batches(requests))
    # 5 distinct contexts, 2 per batch -> 3 batches, each holding all continuations of its contexts.
    assert [len(batch) for batch in batches] == [12, 12, 6]
    assert sorted(index for batch in batches for index, _ in batch) == list(range(len(requests)))
