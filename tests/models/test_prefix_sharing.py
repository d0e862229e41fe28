"""Prefix sharing gives the unshared numbers: every adapter's few-shot requests on the tiny GPT-2, sharing on, off
and auto, at batch sizes 1, 7 and 64 (log-probabilities within ``tests/float32.py``'s drift per token, the same greedy text
and choices)."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_holistic.adaptation import Adapter, make_spec
from pytest_holistic.errors import ModelOutputError
from pytest_holistic.methods import METHODS
from pytest_holistic.models.base import GenerationRequest
from pytest_holistic.models.hf import HFModel
from pytest_holistic.models.prefix_sharing import cheapest_runs
from pytest_holistic.plans import Completion
from pytest_holistic.scenarios import Instance, Reference
from tests.float32 import sum_tolerance

QUESTIONS = ["Is fire hot?", "Is ice hot?", "Is the sky blue?", "Is grass green?", "Is Rome in Italy?", "Is Paris big?"]
OPTIONS = ["Yes", "No", "Paris"]
SCORED_TOKENS = 8
"""More tokens than any option or passage here is scored over (a document's or an answer's count is its own)."""
PASSAGES = (Reference("The capital of France is Paris.", True, 2), Reference("The sky is blue.", False, 0))


def _instances(method: str) -> tuple[list[Instance], list[Instance]]:
    """(in-context examples, evaluated instances) for ``method``, the evaluated ones in variant pairs that share a start."""
    if method == "ranking":
        train = [Instance("t1", "Is fire hot?", PASSAGES, split="train")]
        return train, [Instance(f"q{k}", question, PASSAGES) for k, question in enumerate(QUESTIONS)]
    if method == "language_modeling":
        text = "The capital of France is Paris. The capital of Japan is Tokyo. The sky is blue."
        return [], [Instance(f"d{k}", text + " " + question) for k, question in enumerate(QUESTIONS)]
    if method == "generation":
        train = [
            Instance(f"t{k}", q, (Reference(a, True),), split="train")
            for k, (q, a) in enumerate([("Is fire hot?", "Yes"), ("Is ice hot?", "No")])
        ]
        evaluated = [
            Instance(f"e{k}", f"The capital of Japan is Tokyo. {q}", (Reference("Yes", True),)) for k, q in enumerate(QUESTIONS)
        ]
        return train, evaluated
    train = [Instance.multiple_choice(f"t{k}", q, OPTIONS, k % 2, split="train") for k, q in enumerate(QUESTIONS[:2])]
    evaluated = [Instance.multiple_choice(f"e{k}", f"The sky is blue. {q}", OPTIONS, k % 3) for k, q in enumerate(QUESTIONS)]
    return train, evaluated


def _answers(model: HFModel, method: str) -> tuple[list[Completion], dict]:
    train, evaluated = _instances(method)
    shots = {"language_modeling": 0, "ranking": 1}.get(method, 2)
    spec = make_spec(method, instructions="Answer the question about the world.", max_train_instances=shots)
    adapter = Adapter(spec, train)
    plans = [adapter.plan(instance) for instance in evaluated]
    generated = model.generate([p.generation for p in plans if p.generation is not None])
    scored = model.loglikelihood([r for p in plans for r in p.loglikelihood])
    completions, g, s = [], 0, 0
    for instance, plan in zip(evaluated, plans):
        generation = generated[g] if plan.generation is not None else None
        g += plan.generation is not None
        completions.append(adapter.interpret(instance, plan, generation, scored[s : s + len(plan.loglikelihood)]))
        s += len(plan.loglikelihood)
    return completions, dict(model.info.details)


@pytest.fixture(scope="module")
def loaded(tiny_gpt2: Path) -> HFModel:
    return HFModel.load(str(tiny_gpt2), device="cpu", dtype="float32")


def _with(model: HFModel, batch_size: int, sharing: str, strategy: str = "auto") -> HFModel:
    model.batch_size = model.generation_batch_size = batch_size
    model._shared.rows = batch_size
    model.use_strategy(strategy)
    model.use_prefix_sharing(sharing)
    model.info = model.info.with_details(drop=("prefix_shared_tokens",))
    return model


def _same(shared: list[Completion], whole: list[Completion]) -> None:
    for mine, theirs in zip(shared, whole, strict=True):
        assert mine.text == theirs.text
        assert mine.predicted_index == theirs.predicted_index
        tolerance = sum_tolerance(max(theirs.scored_tokens, theirs.tokens_out, SCORED_TOKENS))
        assert mine.choice_logprobs == pytest.approx(theirs.choice_logprobs, abs=tolerance)
        assert mine.logprob == pytest.approx(theirs.logprob, abs=tolerance)
        mine_fields, their_fields = dataclasses.asdict(mine), dataclasses.asdict(theirs)
        for name in ("ranking", "gold", "choices", "prompt"):
            assert mine_fields.get(name) == their_fields.get(name)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("batch_size", [1, 7, 64])
@pytest.mark.parametrize("strategy", ["shared", "packed"])
def test_every_adapter_gets_the_unshared_answers(loaded: HFModel, method: str, batch_size: int, strategy: str) -> None:
    """Sharing by a spliced cache (the shared strategy) and inside packed rows (token trees) against one whole
    sequence per request."""
    whole, details = _answers(_with(loaded, batch_size, "off", "full"), method)
    assert "prefix_shared_tokens" not in details
    unshared, _ = _answers(_with(loaded, batch_size, "off", strategy), method)
    _same(unshared, whole)
    for sharing in ("on", "auto"):
        shared, details = _answers(_with(loaded, batch_size, sharing, strategy), method)
        _same(shared, whole)
        assert details["prefix_sharing"] == sharing and "prefix_sharing_fallback" not in details
        assert details["scoring"] == strategy and "scoring_fallback" not in details
        if method != "language_modeling":  # the others repeat instructions and examples in every request
            assert details["prefix_shared_tokens"] > 0


def test_the_first_shared_batch_that_disagrees_turns_sharing_off_with_the_reason(
    loaded: HFModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, _ = _answers(_with(loaded, 7, "off"), "multiple_choice_separate")
    model = _with(loaded, 7, "auto")
    original = model._shared.runner.score

    def skewed(*args, **kwargs):  # a cache splice the architecture does not honour: numbers move
        scores = original(*args, **kwargs)
        return dataclasses.replace(scores, logprobs=[value - 0.5 for value in scores.logprobs])

    monkeypatch.setattr(model._shared.runner, "score", skewed)
    answers, details = _answers(model, "multiple_choice_separate")
    _same(answers, whole)  # the check's own whole computation, then the rest unshared
    assert details["prefix_sharing_fallback"] == (
        "prefix sharing unavailable: its log-probabilities over a shared prefix differ from the unshared ones"
    )
    assert model.prefix_sharing == "off"


def test_a_cache_that_cannot_be_spliced_falls_back_to_whole_requests(loaded: HFModel, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, _ = _answers(_with(loaded, 7, "off"), "generation")
    model = _with(loaded, 7, "on")

    def refuse(*args, **kwargs):
        raise NotImplementedError("this cache keeps recurrent state")

    monkeypatch.setattr(model._shared.runner, "compute_nodes", refuse)
    answers, details = _answers(model, "generation")
    _same(answers, whole)
    assert details["prefix_sharing_fallback"] == (
        "prefix sharing unavailable: its cache cannot be shared (NotImplementedError: this cache keeps recurrent state)"
    )


def test_sliding_window_models_are_not_shared(loaded: HFModel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loaded.model.config, "sliding_window", 64, raising=False)
    model = _with(loaded, 7, "on")
    assert model.prefix_sharing == "off"
    assert model.info.details["prefix_sharing_fallback"] == "prefix sharing unavailable: it uses sliding-window attention"
    monkeypatch.setattr(loaded.model.config, "sliding_window", None)
    assert _with(loaded, 7, "on").prefix_sharing == "on" and "prefix_sharing_fallback" not in loaded.info.details


def test_auto_on_a_gpu_shares_inside_packed_rows_and_splices_only_when_on(loaded: HFModel, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(loaded, "device", torch.device("cuda"))  # only the device's kind is read here
    model = _with(loaded, 7, "auto", "packed")
    assert model.prefix_sharing == "auto" and not model._splices()
    assert model.info.details["prefix_sharing_method"] == (
        "log-likelihood inside packed passes; generation whole (auto on a GPU: on shares it inside packed passes too)"
    )
    model = _with(loaded, 7, "on", "packed")
    assert model._splices() and "prefix_sharing_fallback" not in model.info.details
    assert model.info.details["prefix_sharing_method"] == "log-likelihood and greedy generation inside packed passes"
    assert not _with(loaded, 7, "auto", "shared")._splices()
    monkeypatch.setattr(loaded, "device", torch.device("cpu"))
    model = _with(loaded, 7, "auto")
    assert model._splices() and model.info.details["prefix_sharing_method"] == "a spliced key/value cache"


def test_a_nan_while_sharing_is_the_requests_error_not_a_fallback(loaded: HFModel, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _with(loaded, 7, "on")
    original = model._shared.runner.score

    def poisoned(*args, **kwargs):
        scores = original(*args, **kwargs)
        return dataclasses.replace(scores, logprobs=[float("nan")] * len(scores.logprobs))

    monkeypatch.setattr(model._shared.runner, "score", poisoned)
    with pytest.raises(ModelOutputError, match="NaN log-probability"):
        _answers(model, "multiple_choice_separate")
    assert model.prefix_sharing == "on"


def test_sampled_generation_is_never_shared(loaded: HFModel) -> None:
    model = _with(loaded, 7, "on")
    prompt = "Answer the question about the world. " * 4
    requests = [GenerationRequest(prompt + q, max_tokens=4, temperature=0.7, seed=3) for q in QUESTIONS]
    model.generate(requests)
    assert "prefix_shared_tokens" not in model.info.details
    model.generate([dataclasses.replace(r, temperature=0.0) for r in requests])
    assert model.info.details["prefix_shared_tokens"] > 0


def test_unknown_mode_is_refused(loaded: HFModel) -> None:
    from pytest_holistic.errors import ModelLoadError

    with pytest.raises(ModelLoadError, match="unknown prefix sharing mode 'always'; use auto, on or off"):
        loaded.use_prefix_sharing("always")


def _brute_cheapest(widths: list[int], lengths: list[int], rows: int, tokens: int, overhead: int) -> float:
    """The least cost over every cut of the items into consecutive runs (2^(n-1) of them)."""
    count, best = len(lengths), float("inf")
    for cuts in itertools.product([False, True], repeat=max(0, count - 1)):
        bounds = [0, *[k + 1 for k, cut in enumerate(cuts) if cut], count]
        total = 0.0
        for start, end in itertools.pairwise(bounds):
            size, longest, wide = end - start, max(lengths[start:end]), max(widths[start:end])
            if size > rows or (size > 1 and size * (wide + longest) > tokens):
                break
            total += overhead + size * longest
        else:
            best = min(best, total)
    return best


@given(
    items=st.lists(st.tuples(st.integers(0, 300), st.integers(1, 200)), min_size=1, max_size=9),
    rows=st.integers(min_value=1, max_value=6),
    tokens=st.integers(min_value=1, max_value=1500),
    overhead=st.integers(min_value=0, max_value=100),
)
def test_cheapest_runs_are_the_cheapest_cut_within_the_limits(
    items: list[tuple[int, int]], rows: int, tokens: int, overhead: int
) -> None:
    items = sorted(items, key=lambda item: -item[1])
    widths, lengths = [w for w, _ in items], [n for _, n in items]
    runs = cheapest_runs(widths, lengths, rows, tokens, overhead)
    assert [k for start, end in runs for k in range(start, end)] == list(range(len(items)))
    cost = 0
    for start, end in runs:
        size = end - start
        assert 1 <= size <= rows
        assert size == 1 or size * (max(widths[start:end]) + max(lengths[start:end])) <= tokens
        cost += overhead + size * max(lengths[start:end])
    assert cost == _brute_cheapest(widths, lengths, rows, tokens, overhead)
