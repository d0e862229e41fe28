"""The transformers backend on a real (tiny) GPT-2: batching must not change results; bad weights are errors."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest

from pytest_holistic.errors import ModelLoadError, ModelOutputError
from pytest_holistic.models import GenerationRequest, LoglikelihoodRequest, ModelOptions, load_model
from pytest_holistic.models.hf import HFBackend, HFModel, expected_variant
from pytest_holistic.models.hf_options import HFOptions
from tests.float32 import TOKEN_DRIFT, sum_tolerance

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
        assert a.logprob == pytest.approx(b.logprob, abs=sum_tolerance(b.tokens_scored))
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
    assert result.logprob == pytest.approx(expected, abs=sum_tolerance(result.tokens_scored))
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
        assert a.token_logprobs == pytest.approx(b.token_logprobs, abs=TOKEN_DRIFT)
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


@pytest.mark.parametrize("strategy", ["shared", "packed"])
def test_every_scoring_strategy_equals_one_sequence_per_request(model: HFModel, strategy: str) -> None:
    requests = [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS]
    model.batch_size = 4
    model.use_strategy(strategy)
    tested = model.loglikelihood(requests)
    assert model.strategy == strategy, model.info.details.get("scoring_fallback")
    model.use_strategy("full")
    plain = model.loglikelihood(requests)
    for a, b in zip(tested, plain):
        assert a.logprob == pytest.approx(b.logprob, abs=sum_tolerance(b.tokens_scored))
        assert a.is_greedy == b.is_greedy
        assert (a.tokens_in, a.tokens_scored) == (b.tokens_in, b.tokens_scored)


@pytest.mark.parametrize("strategy", ["shared", "full", "packed"])
def test_scores_at_batch_size_1_7_and_64_agree_within_float32_drift(model: HFModel, strategy: str) -> None:
    contexts = CONTEXTS + [f"{c} and then" for c in CONTEXTS[:4]] + ["Question: Is ice hot?\nAnswer:"]
    requests = [LoglikelihoodRequest(c, x) for c in contexts for x in CONTINUATIONS]
    model.use_strategy(strategy)
    by_size = {}
    for size in (1, 7, 64):
        model.batch_size = size
        by_size[size] = model.loglikelihood(requests)
    assert model.strategy == strategy
    for size in (7, 64):
        for a, b in zip(by_size[size], by_size[1]):
            assert a.logprob == pytest.approx(b.logprob, abs=sum_tolerance(b.tokens_scored))
            assert a.is_greedy == b.is_greedy
    # Scores against a plain forward pass of the whole text, computed here without the backend's code.
    import torch

    for request, result in zip(requests[:8], by_size[64][:8]):
        context = model.tokenizer(request.context, add_special_tokens=False)["input_ids"] or [model.start_id]
        continuation = model.tokenizer(request.continuation, add_special_tokens=False)["input_ids"]
        ids = context + continuation
        with torch.inference_mode():
            logprobs = torch.log_softmax(model.model(torch.tensor([ids])).logits[0].double(), -1)
        expected = sum(float(logprobs[p - 1, ids[p]]) for p in range(len(context), len(ids)))
        assert result.logprob == pytest.approx(expected, abs=sum_tolerance(result.tokens_scored))


@pytest.mark.parametrize("strategy", ["shared", "full", "packed"])
def test_a_context_that_opens_a_text_is_scored_after_the_start_token(model: HFModel, strategy: str) -> None:
    """Language modelling's pieces: HELM's window conditions the whole document on the start token, so each piece's
    context starts with it, in every strategy and mixed in one batch with prompts that do not."""
    import torch

    requests = [LoglikelihoodRequest(c, x, text_start=start) for c in CONTEXTS[:3] for x in CONTINUATIONS for start in (True, False)]
    model.use_strategy(strategy)
    model.batch_size = 7
    results = model.loglikelihood(requests)
    for request, result in zip(requests, results):
        context = model.tokenizer(request.context, add_special_tokens=False)["input_ids"]
        context = [model.start_id, *context] if request.text_start else context
        continuation = model.tokenizer(request.continuation, add_special_tokens=False)["input_ids"]
        ids = context + continuation
        with torch.inference_mode():
            logprobs = torch.log_softmax(model.model(torch.tensor([ids])).logits[0].double(), -1)
        expected = sum(float(logprobs[p - 1, ids[p]]) for p in range(len(context), len(ids)))
        assert result.logprob == pytest.approx(expected, abs=sum_tolerance(result.tokens_scored)), request
    opened, plain = results[0], results[1]
    assert opened.logprob != pytest.approx(plain.logprob, abs=1e-6)  # the start token changes what the model sees


def test_an_out_of_memory_batch_is_retried_smaller_and_no_request_is_lost(
    model: HFModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    requests = [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS]
    model.use_strategy("shared")
    model.batch_size = 16
    expected = model.loglikelihood(requests)
    decoder_class = type(model._scorer.head_split()[0])  # what a pass runs: the decoder, the head applied apart
    real_forward = decoder_class.forward
    seen_rows: list[int] = []

    @functools.wraps(real_forward)  # the real signature, which names the cache argument the backend passes
    def forward(self, *args, **kwargs):
        rows = kwargs["input_ids"].shape[0]
        if kwargs.get("cache", kwargs.get("past_key_values")) is None:  # the contexts' pass (either name of the cache)
            seen_rows.append(rows)
            if rows > 2:  # a device that holds at most two contexts at once
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real_forward(self, *args, **kwargs)

    monkeypatch.setattr(decoder_class, "forward", forward)
    model.batch_size = 16
    retried = model.loglikelihood(requests)
    monkeypatch.undo()
    # The first batch held all 5 contexts and failed; it was retried at 2, which is kept for the rest of the session.
    assert seen_rows == [5, 2, 2, 1]
    assert model.batch_size == 2
    assert model.info.details["out_of_memory_retries"] == 1
    assert len(retried) == len(requests)
    for a, b in zip(retried, expected):
        assert a.logprob == pytest.approx(b.logprob, abs=sum_tolerance(b.tokens_scored))
    # A single context that does not fit is the request's one-line error, not a crash.
    monkeypatch.setattr(
        decoder_class, "forward", lambda self, *a, **k: (_ for _ in ()).throw(torch.OutOfMemoryError("CUDA out of memory"))
    )
    with pytest.raises(ModelOutputError, match="ran out of device memory on a single context"):
        model.loglikelihood(requests[:1])


def test_batches_arrive_one_at_a_time(model: HFModel) -> None:
    requests = [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS]
    model.batch_size = 2
    batches = list(model.loglikelihood_batches(requests))
    # 5 distinct contexts, 2 per batch -> 3 batches, each holding all continuations of its contexts.
    assert [len(batch) for batch in batches] == [12, 12, 6]
    assert sorted(index for batch in batches for index, _ in batch) == list(range(len(requests)))


LONG_CONTEXT = "sky blue grass green " * 300 + "Question: Is fire hot?\nAnswer:"
LONG_CHOICE = " The sky is blue. The grass is green." * 8


def test_long_contexts_are_cut_from_the_left_and_shared_scoring_equals_plain(model: HFModel) -> None:
    # Choices of very different token lengths in one batch: each context is cut to fit its own choice.
    choices = [" Yes", " No", " blue grass green sky", LONG_CHOICE]
    requests = [LoglikelihoodRequest(LONG_CONTEXT, c) for c in choices] + [LoglikelihoodRequest("The sky is", c) for c in choices]
    model.batch_size = 8
    model.use_strategy("shared")
    shared = model.loglikelihood(requests)
    assert model.strategy == "shared"
    model.use_strategy("full")
    plain = model.loglikelihood(requests)
    model.use_strategy("shared")
    for a, b in zip(shared, plain):
        assert a.logprob == pytest.approx(b.logprob, abs=sum_tolerance(b.tokens_scored))
        assert (a.tokens_in, a.tokens_scored, a.truncated_tokens) == (b.tokens_in, b.tokens_scored, b.truncated_tokens)
    encoded = len(model.tokenizer(LONG_CONTEXT, add_special_tokens=False)["input_ids"])
    for choice, result in zip(choices, shared[: len(choices)]):
        # Context and continuation fill the window exactly (the last continuation token is scored, never fed).
        assert result.tokens_in == model.max_length + 1
        assert result.truncated_tokens == encoded - (model.max_length + 1 - result.tokens_scored) > 0
    assert all(result.truncated_tokens == 0 for result in shared[len(choices) :])


def test_a_truncated_request_scores_like_a_forward_pass_over_the_last_tokens(model: HFModel) -> None:
    import torch

    context_ids = model.tokenizer(LONG_CONTEXT, add_special_tokens=False)["input_ids"]
    continuation_ids = model.tokenizer(" Yes", add_special_tokens=False)["input_ids"]
    kept = (context_ids + continuation_ids)[-(model.max_length + 1) :]
    with torch.inference_mode():
        logits = model.model(torch.tensor([kept[:-1]])).logits[0]
    logprobs = torch.log_softmax(logits.float(), -1)
    n_context = len(kept) - len(continuation_ids)
    expected = sum(float(logprobs[p - 1, kept[p]]) for p in range(n_context, len(kept)))
    (result,) = model.loglikelihood([LoglikelihoodRequest(LONG_CONTEXT, " Yes")])
    assert result.logprob == pytest.approx(expected, abs=sum_tolerance(result.tokens_scored))


def test_a_continuation_longer_than_the_window_is_a_one_line_error(model: HFModel) -> None:
    with pytest.raises(ModelOutputError, match=r"continuation ' The sky is blue.*' is \d+ tokens.* 256-token window") as raised:
        model.loglikelihood([LoglikelihoodRequest("The sky is", LONG_CHOICE * 4)])
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("max_tokens", [250, 256, 400])
def test_generation_prompts_longer_than_the_window_are_cut_from_the_left(model: HFModel, max_tokens: int) -> None:
    prompt = "sky blue grass green " * 300 + "The capital of France is"
    encoded = len(model.tokenizer(prompt, add_special_tokens=False)["input_ids"])
    requests = [GenerationRequest(prompt, max_tokens, ()), GenerationRequest("The capital of France is", max_tokens, ())]
    long, short = model.generate(requests)
    room = model.max_length - min(max_tokens, model.max_length - 1)  # prompt tokens left once the answer has its room
    assert long.tokens_in == room
    assert long.truncated_tokens == encoded - room > 0
    short_encoded = len(model.tokenizer("The capital of France is", add_special_tokens=False)["input_ids"])
    assert (short.tokens_in, short.truncated_tokens) == (min(short_encoded, room), max(0, short_encoded - room))
    assert long.tokens_out <= model.max_length - long.tokens_in


def test_the_cache_variant_is_predicted_without_loading_and_matches_the_load(tiny_gpt2: Path) -> None:
    assert expected_variant("cuda:1", "auto", "bfloat16") == {"device": "cuda", "dtype": "bfloat16"}
    assert expected_variant("cuda:1", "auto") == {"device": "cuda", "dtype": "float32"}  # a config declaring no dtype
    assert expected_variant("cpu", "auto") == expected_variant("cpu", "float32") == {"device": "cpu", "dtype": "float32"}
    assert expected_variant("cpu", "half") == {"device": "cpu", "dtype": "float16"}
    backend = HFBackend(str(tiny_gpt2), HFOptions())
    identity = backend.identify()
    assert identity is not None and identity.details == {}
    assert backend.load().info.variant == identity.variant == expected_variant("auto", "auto")


@pytest.mark.parametrize("strategy", ["shared", "full"])
def test_a_token_budget_bounds_every_batch_and_changes_no_score(model: HFModel, strategy: str) -> None:
    from pytest_holistic.models import scoring

    requests = [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS]
    model.use_strategy(strategy)
    model.batch_size, model.token_budget = 64, None
    unbounded = model.loglikelihood(requests)
    sizes: list[tuple[int, int]] = []
    real_score = model._scorer.score

    def score(used: str, batch: scoring.ScoreBatch) -> scoring.Scores:
        sizes.append((len(batch.contexts), batch.padded_tokens(used)))
        return real_score(used, batch)

    model._scorer.score = score  # type: ignore[method-assign]
    try:
        model.batch_size = 1
        model.loglikelihood(requests)
        budget = 2 * sorted(size for _, size in sizes)[-2]  # room for two of the smaller contexts, not for everything
        sizes.clear()
        model.batch_size, model.token_budget = 64, budget
        bounded = model.loglikelihood(requests)
    finally:
        del model._scorer.score
        model.token_budget = None
    assert 1 < len(sizes) < len(CONTEXTS), sizes  # several batches, some of them holding more than one context
    # Every batch of two or more contexts fits the budget (a single context always runs, whatever its size).
    assert all(size <= budget for contexts, size in sizes if contexts > 1), sizes
    for a, b in zip(bounded, unbounded):
        assert a.logprob == pytest.approx(b.logprob, abs=sum_tolerance(b.tokens_scored))


def test_logits_changed_after_the_lm_head_are_scored_from_the_whole_model(tiny_gpt2: Path) -> None:
    import torch
    from transformers import AutoTokenizer, GPT2LMHeadModel

    from pytest_holistic.models import ModelInfo

    class Tempered(GPT2LMHeadModel):
        """Divides its logits by 2 after the head, as models with a logit scale or soft-capping do."""

        def forward(self, *args, **kwargs):
            output = super().forward(*args, **kwargs)
            output.logits = output.logits / 2
            return output

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    tempered = HFModel(Tempered.from_pretrained(tiny_gpt2).eval(), tokenizer, ModelInfo("tempered", "transformers", "r"))
    context, continuation = "The capital of France is", " Paris"
    ids = tokenizer(context + continuation, add_special_tokens=False)["input_ids"]
    n_context = len(tokenizer(context, add_special_tokens=False)["input_ids"])
    with torch.inference_mode():
        logprobs = torch.log_softmax(tempered.model(torch.tensor([ids])).logits[0].double(), -1)
    expected = sum(float(logprobs[p - 1, ids[p]]) for p in range(n_context, len(ids)))
    for strategy in ("full", "packed", "shared"):
        tempered.use_strategy(strategy)
        (result,) = tempered.loglikelihood([LoglikelihoodRequest(context, continuation)])
        assert result.logprob == pytest.approx(expected, abs=sum_tolerance(result.tokens_scored)), strategy
    assert tempered._scorer._head is None  # the decoder/head split was probed and refused


def test_the_cache_argument_is_named_from_the_base_forward_under_a_wrapper(tiny_gpt2: Path) -> None:
    """A subclass whose forward takes ``*args, **kwargs`` passes the cache on to its base's forward, whose name for it
    counts (guessing the old ``past_key_values`` there drew transformers' deprecation warning on every batch)."""
    from transformers import GPT2LMHeadModel

    from pytest_holistic.models.scoring import cache_keyword

    class Wrapper(GPT2LMHeadModel):
        def forward(self, *args, **kwargs):
            return super().forward(*args, **kwargs)

    plain = GPT2LMHeadModel.from_pretrained(tiny_gpt2)
    assert cache_keyword(Wrapper.from_pretrained(tiny_gpt2)) == cache_keyword(plain)
    assert cache_keyword(plain) in inspect_parameters(GPT2LMHeadModel.forward)


def inspect_parameters(function: object) -> set[str]:
    import inspect

    return set(inspect.signature(function).parameters)  # type: ignore[arg-type]

