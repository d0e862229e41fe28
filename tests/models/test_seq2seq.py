"""Encoder-decoder models (a tiny T5 and a tiny BART the tests train) against a plain transformers loop.

The loop here is the convention written out by hand, one request at a time: the context, with the tokenizer's special
tokens, to the encoder; the decoder from its start token over the continuation (no special tokens); greedy decoding
one argmax at a time. The backend must equal it at every batch size, with and without encoder sharing (texts
exactly, log-probabilities within ``tests/float32.py``'s drift per token).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic.errors import ModelOutputError
from pytest_holistic.models import GenerationRequest, LoglikelihoodRequest
from pytest_holistic.models.hf import HFBackend, HFModel, Seq2SeqModel
from pytest_holistic.models.hf_options import HFOptions
from tests.float32 import TOKEN_DRIFT, sum_tolerance

CONTEXTS = ["The capital of France is", "The capital of Japan is", "Question: Is fire hot?\nAnswer:", "The sky is", ""]
CONTINUATIONS = [" Paris", " Tokyo", " Yes", " blue", " No", " Rome. The sky is blue."]
PROMPTS = [
    "The capital of France is",
    "Question: Is ice hot?\nAnswer:",
    "The sky is",
    "The capital of Italy is",
    "Question: Is fire hot?\nAnswer: Yes\nQuestion: Is ice hot?\nAnswer:",
    "",
]


@pytest.fixture(scope="module", params=["t5", "bart"])
def folder(request: pytest.FixtureRequest) -> Path:
    return Path(request.getfixturevalue(f"tiny_{request.param}"))


@pytest.fixture(scope="module")
def model(folder: Path) -> Seq2SeqModel:
    loaded = HFModel.load(str(folder), device="cpu", dtype="float32")
    assert isinstance(loaded, Seq2SeqModel)
    return loaded


@pytest.fixture(autouse=True)
def settings_restored(request: pytest.FixtureRequest) -> Any:
    """Each test starts from the load's settings, whichever tests ran before it on this worker."""
    yield
    if "model" in request.fixturenames:
        loaded = request.getfixturevalue("model")
        loaded.batch_size, loaded.generation_batch_size = 8, 32
        loaded.use_prefix_sharing("auto")
        loaded.use_strategy("auto")


# -- the plain loop ---------------------------------------------------------------------------------------------


def start_token(model: Any) -> int:
    value = model.generation_config.decoder_start_token_id
    return int(value if value is not None else model.config.pad_token_id)


def plain_loglikelihood(hf: Any, tokenizer: Any, context: str, continuation: str) -> tuple[float, bool]:
    import torch

    encoder = tokenizer(context)["input_ids"]
    tokens = tokenizer(continuation, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logits = hf(input_ids=torch.tensor([encoder]), decoder_input_ids=torch.tensor([[start_token(hf), *tokens[:-1]]])).logits[0]
    table = torch.log_softmax(logits.float(), -1)
    logprob = sum(float(table[k, token]) for k, token in enumerate(tokens))
    greedy = all(int(table[k].argmax()) == token for k, token in enumerate(tokens))
    return logprob, greedy


def plain_generation(hf: Any, tokenizer: Any, prompt: str, max_tokens: int, stop: tuple[str, ...]) -> tuple[str, list[float]]:
    import torch

    encoder = torch.tensor([tokenizer(prompt)["input_ids"]])
    decoded = [start_token(hf)]
    logprobs: list[float] = []
    with torch.inference_mode():
        for _ in range(max_tokens):
            logits = hf(input_ids=encoder, decoder_input_ids=torch.tensor([decoded])).logits[0, -1].float()
            token = int(logits.argmax())
            if token == tokenizer.eos_token_id:
                break
            decoded.append(token)
            logprobs.append(float(torch.log_softmax(logits, -1)[token]))
    tokens = decoded[1:]
    text = tokenizer.decode(tokens, skip_special_tokens=True)
    for kept in range(1, len(tokens) + 1):  # the fewest tokens whose text reaches the first stop sequence
        piece = tokenizer.decode(tokens[:kept], skip_special_tokens=True)
        cuts = [piece.index(s) for s in stop if s in piece]
        if cuts:
            return piece[: min(cuts)], logprobs[:kept]
    return text, logprobs


# -- tests ------------------------------------------------------------------------------------------------------


def test_an_encoder_decoder_folder_loads_as_one_and_its_identity_says_so_without_loading(folder: Path) -> None:
    backend = HFBackend(str(folder), HFOptions(device="cpu"))
    identity = backend.identify()
    assert identity is not None and identity.variant["architecture"] == "encoder-decoder"
    loaded = backend.load()
    assert isinstance(loaded, Seq2SeqModel)
    assert loaded.info.variant == identity.variant
    assert loaded.info.details["model_kind"] == "encoder-decoder"
    assert loaded.info.details["architecture"].endswith("ForConditionalGeneration")


def test_a_decoder_only_identity_keeps_its_old_keys(tiny_gpt2: Path) -> None:
    identity = HFBackend(str(tiny_gpt2), HFOptions(device="cpu")).identify()
    assert identity is not None and "architecture" not in identity.variant
    assert HFModel.load(str(tiny_gpt2), device="cpu").info.details["model_kind"] == "decoder-only"


@pytest.mark.parametrize("sharing", ["auto", "off"])
@pytest.mark.parametrize("batch_size", [1, 7, 64])
def test_loglikelihood_equals_the_plain_loop(model: Seq2SeqModel, batch_size: int, sharing: str) -> None:
    requests = [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS]
    requests.append(LoglikelihoodRequest("", "The capital of France is Paris.", text_start=True))
    model.use_prefix_sharing(sharing)
    model.batch_size = batch_size
    results = model.loglikelihood(requests)
    for request, result in zip(requests, results):
        logprob, greedy = plain_loglikelihood(model.model, model.tokenizer, request.context, request.continuation)
        assert result.logprob == pytest.approx(logprob, abs=sum_tolerance(result.tokens_scored)), request
        assert result.is_greedy == greedy
        encoder = len(model.tokenizer(request.context)["input_ids"])
        scored = len(model.tokenizer(request.continuation, add_special_tokens=False)["input_ids"])
        assert (result.tokens_in, result.tokens_scored) == (encoder + scored, scored)  # encoder and decoder tokens


def test_a_trained_answer_is_greedy_and_most_likely(model: Seq2SeqModel) -> None:
    model.batch_size = 8
    paris, tokyo = model.loglikelihood(
        [LoglikelihoodRequest("The capital of France is", " Paris"), LoglikelihoodRequest("The capital of France is", " Tokyo")]
    )
    assert paris.is_greedy and paris.logprob > tokyo.logprob


@pytest.mark.parametrize(("sharing", "passes"), [("auto", len(CONTEXTS)), ("off", len(CONTEXTS) * len(CONTINUATIONS))])
def test_the_encoder_runs_once_per_context_unless_sharing_is_off(model: Seq2SeqModel, sharing: str, passes: int) -> None:
    rows: list[int] = []
    handle = model.model.get_encoder().register_forward_hook(lambda _m, _a, kwargs, _o: rows.append(kwargs["input_ids"].shape[0]), with_kwargs=True)
    try:
        model.use_prefix_sharing(sharing)
        model.batch_size = 64
        model.loglikelihood([LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS])
    finally:
        handle.remove()
    assert sum(rows) == passes
    assert model.info.details["prefix_sharing"] == sharing


@pytest.mark.parametrize("batch_size", [1, 7, 64])
def test_generation_equals_the_plain_greedy_loop(model: Seq2SeqModel, batch_size: int) -> None:
    requests = [GenerationRequest(p, max_tokens=m, stop=s) for p in PROMPTS for m, s in ((6, ("\n",)), (3, ()), (8, ("is", "\n")))]
    model.generation_batch_size = batch_size
    results = model.generate(requests)
    for request, result in zip(requests, results):
        text, logprobs = plain_generation(model.model, model.tokenizer, request.prompt, request.max_tokens, request.stop)
        assert result.text == text, request
        assert result.token_logprobs == pytest.approx(logprobs, abs=TOKEN_DRIFT)
        assert result.tokens_in == len(model.tokenizer(request.prompt)["input_ids"])
        assert result.logprobs_returned


def test_an_encoder_input_longer_than_the_window_is_cut_from_the_left(model: Seq2SeqModel) -> None:
    long = " ".join(["The capital of Japan is Tokyo."] * 80)
    window = model.max_length
    model.max_length = 64
    try:
        (result,) = model.loglikelihood([LoglikelihoodRequest(long, " Paris")])
        (generated,) = model.generate([GenerationRequest(long, max_tokens=4)])
    finally:
        model.max_length = window
    encoder = model.tokenizer(long)["input_ids"]
    kept = model.tokenizer.decode(encoder[-64:])  # what the encoder saw, as text (the closing special token kept)
    assert result.truncated_tokens == generated.truncated_tokens == len(encoder) - 64
    import torch

    tokens = model.tokenizer(" Paris", add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logits = model.model(
            input_ids=torch.tensor([encoder[-64:]]), decoder_input_ids=torch.tensor([[start_token(model.model), *tokens[:-1]]])
        ).logits[0]
    expected = sum(float(torch.log_softmax(logits, -1)[k, t]) for k, t in enumerate(tokens))
    assert result.logprob == pytest.approx(expected, abs=sum_tolerance(len(tokens))), kept


def test_an_out_of_memory_batch_is_retried_smaller_and_no_request_is_lost(
    model: Seq2SeqModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    requests = [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CONTINUATIONS]
    model.batch_size = 16
    expected = model.loglikelihood(requests)
    encoder = model.model.get_encoder()  # T5's decoder is the same class: patch this instance only
    real_forward = encoder.forward
    seen: list[int] = []

    @functools.wraps(real_forward)
    def forward(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["input_ids"].shape[0])
        if kwargs["input_ids"].shape[0] > 2:  # a device that holds at most two contexts at once
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real_forward(*args, **kwargs)

    monkeypatch.setattr(encoder, "forward", forward)
    retried = model.loglikelihood(requests)
    monkeypatch.undo()
    assert seen == [5, 2, 2, 1]
    assert model.batch_size == 2
    for a, b in zip(retried, expected, strict=True):
        assert a.logprob == pytest.approx(b.logprob, abs=sum_tolerance(b.tokens_scored))
    monkeypatch.setattr(encoder, "forward", lambda *a, **k: (_ for _ in ()).throw(torch.OutOfMemoryError("CUDA out of memory")))
    with pytest.raises(ModelOutputError, match="ran out of device memory on a single context"):
        model.loglikelihood(requests[:1])
    monkeypatch.undo()


def test_a_causal_scoring_strategy_is_accepted_and_said_not_to_apply(model: Seq2SeqModel) -> None:
    model.use_strategy("packed")
    assert "applies to decoder-only models" in model.info.details["scoring_note"]
    model.use_strategy("auto")
    assert "scoring_note" not in model.info.details


def test_a_chat_template_renders_the_encoder_input_without_special_tokens_again(model: Seq2SeqModel, tmp_path: Path) -> None:
    template = tmp_path / "turns.jinja"
    template.write_text("{% for m in messages %}Question: {{ m['content'] }}\n{% endfor %}Answer:</s>")
    model.use_chat_template(str(template))
    try:
        (result,) = model.generate([GenerationRequest("Is fire hot?", max_tokens=4)])
        rendered = model.prompt_text("Is fire hot?")
    finally:
        model.use_chat_template("none")
    assert rendered == "Question: Is fire hot?\nAnswer:</s>"
    encoder = model.tokenizer(rendered, add_special_tokens=False)["input_ids"]
    assert encoder[-1] == model.tokenizer.eos_token_id and encoder.count(model.tokenizer.eos_token_id) == 1
    assert result.tokens_in == len(encoder)
    import torch

    decoded = [start_token(model.model)]
    with torch.inference_mode():
        for _ in range(4):
            token = int(model.model(input_ids=torch.tensor([encoder]), decoder_input_ids=torch.tensor([decoded])).logits[0, -1].argmax())
            if token == model.tokenizer.eos_token_id:
                break
            decoded.append(token)
    assert result.text == model.tokenizer.decode(decoded[1:], skip_special_tokens=True).split("\n")[0]


def test_an_encoder_decoder_without_a_decoder_start_token_is_a_one_line_load_error(tiny_t5: Path, tmp_path: Path) -> None:
    import json
    import shutil

    from pytest_holistic.errors import ModelLoadError

    broken = tmp_path / "no-start"
    shutil.copytree(tiny_t5, broken)
    for name, keys in (("config.json", ("decoder_start_token_id", "pad_token_id")), ("generation_config.json", ("decoder_start_token_id", "pad_token_id"))):
        path = broken / name
        if path.is_file():
            data = json.loads(path.read_text())
            data.update(dict.fromkeys(keys))
            path.write_text(json.dumps(data))
    with pytest.raises(ModelLoadError) as caught:
        HFModel.load(str(broken), device="cpu")
    message = str(caught.value)
    assert "\n" not in message and str(broken) in message and "set decoder_start_token_id in its config.json" in message
