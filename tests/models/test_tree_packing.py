"""Packed token trees: the layout against brute force (hypothesis), and the numbers against a plain per-request loop.

Every request in a packed row must see exactly its own tokens at its own positions; then a tiny GPT-2 (learned
positions) and a tiny random Llama (rotary positions) score few-shot requests that share long prefixes, sharing on
and off, at batch sizes 1, 7 and 64 and under a token budget, equal to one forward pass per request written here
(float32, within ``tests/float32.py``'s drift per token; the same greedy flags).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.models import LoglikelihoodRequest, ModelInfo
from pytest_holistic.models.hf import HFModel
from pytest_holistic.models.hf_packed import measured_budget, tree_requests, unshared_tokens
from pytest_holistic.models.tree_packing import PackedRow, TreeRequest, fed_tokens, pack, row_cap, subtree_ends
from tests.float32 import TOKEN_DRIFT, sum_tolerance

# -- the layout ------------------------------------------------------------------------------------------

token_lists = st.lists(st.integers(0, 3), min_size=1, max_size=9)


@st.composite
def requests(draw: st.DrawFn) -> list[TreeRequest]:
    """Requests over a 4-token alphabet (so prefixes are shared often), some in other groups."""
    made = []
    for _ in range(draw(st.integers(1, 12))):
        context, continuation = draw(token_lists), draw(token_lists)
        group = draw(st.sampled_from([(), (1,), (2,)]))
        made.append(TreeRequest((*context, *continuation[:-1]), len(context) - 1, tuple(continuation), group))
    return made


def ancestors(row: PackedRow, column: int) -> list[int]:
    """The columns ``column`` may attend to under the mask the scorer builds (``key <= query < end[key]``)."""
    return [key for key in range(row.width) if key <= column < row.end[key]]


@settings(max_examples=300, deadline=None)
@given(requests(), st.sampled_from([None, 1, 5, 12, 40]))
def test_every_request_sees_exactly_its_own_tokens_at_its_own_positions(made: list[TreeRequest], cap: int | None) -> None:
    rows = pack(made, cap)
    placed = sorted(member for row in rows for member in row.members)
    assert placed == list(range(len(made)))  # every request once
    for row in rows:
        assert row.end == tuple(subtree_ends(row.depth))
        if cap is not None and len(row.members) > 1:
            assert row.width <= cap
        if cap is None:
            assert len({made[m].group for m in row.members}) == 1
        for member, scored in zip(row.members, row.scored):
            request = made[member]
            assert len(scored) == len(request.targets)
            last = scored[-1]
            path = ancestors(row, last)  # the whole sequence up to the last fed token, nothing else
            assert [row.tokens[c] for c in path] == list(request.fed)
            assert [row.depth[c] for c in path] == list(range(len(request.fed)))
            for k, column in enumerate(scored):  # column k predicts target k: it ends fed[: first + k + 1]
                assert ancestors(row, column) == path[: request.first + k + 1]
        groups_of = {}
        for member, scored in zip(row.members, row.scored):  # no column is shared across groups
            for column in ancestors(row, scored[-1]):
                groups_of.setdefault(column, set()).add(made[member].group)
        assert all(len(groups) == 1 for groups in groups_of.values())


@settings(max_examples=200, deadline=None)
@given(st.lists(token_lists, min_size=1, max_size=12))
def test_one_unbounded_row_holds_each_distinct_prefix_once(sequences: list[list[int]]) -> None:
    made = [TreeRequest(tuple(s), 0, (7,)) for s in sequences]
    (row,) = pack(made, cap=10_000)
    distinct_prefixes = {tuple(s[: k + 1]) for s in sequences for k in range(len(s))}
    assert fed_tokens([row]) == row.width == len(distinct_prefixes)


def test_rows_are_at_least_twice_the_longest_request() -> None:
    made = [TreeRequest(tuple(range(700)), 0, (1,)), TreeRequest((1, 2), 0, (1,))]
    assert row_cap(made) == 1400
    assert row_cap(made[1:]) == 1024


def test_the_budget_measured_fills_the_share_and_never_drops_below_the_widest_row() -> None:
    assert measured_budget(10_000_000, 1000.0, 512) == 8000
    assert measured_budget(10_000, 1000.0, 512) == 512


def test_unshared_tokens_count_each_context_once_and_every_tail() -> None:
    pairs = [([1, 2, 3], [4, 5], 0), ([1, 2, 3], [6], 0), ([1, 2, 9], [4], 0)]
    made = tree_requests(pairs, [0, 1, 2], share=True)
    assert unshared_tokens(made) == 3 + 3 + 1  # two contexts, one continuation token fed after the first
    assert fed_tokens(pack(made, 100)) == 2 + 1 + 1 + 1  # [1, 2] shared, then 3 (and its 4), and 9


# -- the numbers -----------------------------------------------------------------------------------------

SHOTS = "Question: Is fire hot?\nAnswer: Yes\n\nQuestion: Is ice hot?\nAnswer: No\n\n"
QUESTIONS = ["Is the sky blue?", "Is grass green?", "Is Rome in Italy?", "Is Paris big?", "Is fire cold?", "Is ice cold?"]
CHOICES = [" Yes", " No", " Paris", " blue sky"]


def few_shot_requests() -> list[LoglikelihoodRequest]:
    """Two instructions, each over six questions with four choices, and two unrelated contexts: prefixes shared
    across contexts, contexts shared across choices, and requests that share nothing."""
    made = [
        LoglikelihoodRequest(f"{head}{SHOTS}Question: {q}\nAnswer:", choice)
        for head in ("Answer with yes or no.\n\n", "Answer the question.\n\n")
        for q in QUESTIONS
        for choice in CHOICES
    ]
    made += [LoglikelihoodRequest("The capital of France is", " Paris"), LoglikelihoodRequest("", " The sky", text_start=True)]
    return made


def plain_loop(model: HFModel, request: LoglikelihoodRequest) -> tuple[float, bool]:
    """One forward pass of the whole request, in float64 log-softmax: what every layout must give."""
    import torch

    context = model.tokenizer(request.context, add_special_tokens=False)["input_ids"]
    if request.text_start or not context:
        context = [model.start_id, *context]
    continuation = model.tokenizer(request.continuation, add_special_tokens=False)["input_ids"]
    ids = context + continuation
    with torch.inference_mode():
        logits = model.model(torch.tensor([ids])).logits[0].double()
    logprobs = torch.log_softmax(logits, -1)
    total = sum(float(logprobs[p - 1, ids[p]]) for p in range(len(context), len(ids)))
    greedy = all(int(logits[p - 1].argmax()) == ids[p] for p in range(len(context), len(ids)))
    return total, greedy


@pytest.fixture(scope="module")
def gpt2(tiny_gpt2: Path) -> HFModel:
    return HFModel.load(str(tiny_gpt2), device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def llama(tiny_gpt2: Path) -> HFModel:
    """A random-weight Llama (rotary positions, grouped-query attention) over the tiny GPT-2's tokenizer."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    return HFModel(model, tokenizer, ModelInfo("tiny-llama", "transformers", "random"))


@pytest.mark.parametrize("which", ["gpt2", "llama"])
@pytest.mark.parametrize("sharing", ["on", "off"])
def test_packed_trees_equal_a_plain_loop_at_batch_sizes_1_7_and_64(
    request: pytest.FixtureRequest, which: str, sharing: str
) -> None:
    model: HFModel = request.getfixturevalue(which)
    made = few_shot_requests()
    expected = [plain_loop(model, r) for r in made]
    model.use_strategy("packed")
    model.use_prefix_sharing(sharing)
    for size in (1, 7, 64):
        model.batch_size = size
        model.info = model.info.with_details(drop=("prefix_shared_tokens",))
        results = model.loglikelihood(made)
        assert model.strategy == "packed", model.info.details.get("scoring_fallback")
        for r, result, (logprob, greedy) in zip(made, results, expected, strict=True):
            assert result.logprob == pytest.approx(logprob, abs=sum_tolerance(result.tokens_scored)), (size, r)
            assert result.is_greedy == greedy
    shared = model.info.details.get("prefix_shared_tokens", 0)
    assert shared > 100 if sharing == "on" else shared == 0  # the instructions and shots, once per instruction


def test_sharing_feeds_each_distinct_prefix_once_and_a_budget_bounds_every_batch(
    gpt2: HFModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = few_shot_requests()
    gpt2.use_strategy("packed")
    gpt2.use_prefix_sharing("on")
    gpt2.batch_size = 64
    seen: list[list[PackedRow]] = []
    real = gpt2._scorer.score_rows

    def spy(rows, requests):  # type: ignore[no-untyped-def]
        seen.append(list(rows))
        return real(rows, requests)

    monkeypatch.setattr(gpt2._scorer, "score_rows", spy)
    unbounded = gpt2.loglikelihood(made)
    fed = [tuple(pair[0]) + tuple(pair[1][:-1]) for pair in map(gpt2._pair, made)]
    distinct_prefixes = {f[: k + 1] for f in fed for k in range(len(f))}
    assert sum(row.width for batch in seen for row in batch) == len(distinct_prefixes)
    seen.clear()
    from pytest_holistic.models import tree_packing

    monkeypatch.setattr(tree_packing, "ROW_TOKENS", 64)  # narrow rows, so the budget has several to cut
    trees = tree_requests([gpt2._pair(r) for r in made], range(len(made)), True)
    widths = sorted(row.width for row in pack(trees, row_cap(trees)))
    assert len(widths) > 3
    gpt2.token_budget = 2 * widths[-1]
    try:
        gpt2.batch_size = 64
        gpt2.info = gpt2.info.with_details(drop=("prefix_shared_tokens",))
        bounded = gpt2.loglikelihood(made)
    finally:
        gpt2.token_budget = None
    assert len(seen) > 1
    assert all(len(batch) * max(row.width for row in batch) <= 2 * widths[-1] for batch in seen if len(batch) > 1)
    for a, b in zip(bounded, unbounded, strict=True):
        assert a.logprob == pytest.approx(b.logprob, abs=sum_tolerance(b.tokens_scored))


def test_a_model_that_ignores_a_4d_mask_falls_back_to_full_sequences(gpt2: HFModel, monkeypatch: pytest.MonkeyPatch) -> None:
    made = few_shot_requests()
    expected = [plain_loop(gpt2, r) for r in made]
    gpt2.use_strategy("packed")
    gpt2.use_prefix_sharing("on")
    gpt2.batch_size = 7
    decoder, head = gpt2._scorer.head_split()

    def forgetful(**inputs):  # type: ignore[no-untyped-def]  # an architecture that builds its own causal mask
        inputs.pop("attention_mask")
        return type(decoder).forward(decoder, **inputs)

    monkeypatch.setattr(gpt2._scorer, "_head", (forgetful, head))
    results = gpt2.loglikelihood(made)
    assert gpt2.strategy == "full"
    assert (
        gpt2.info.details["scoring_fallback"]
        == "packed scoring unavailable: it does not honour a tree attention mask and position ids"
    )
    for result, (logprob, _) in zip(results, expected, strict=True):
        assert result.logprob == pytest.approx(logprob, abs=sum_tolerance(result.tokens_scored))


def test_a_sliding_window_model_is_scored_with_full_sequences(gpt2: HFModel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpt2.model.config, "sliding_window", 64, raising=False)
    gpt2.use_strategy("packed")
    (result,) = gpt2.loglikelihood([LoglikelihoodRequest("The capital of France is", " Paris")])
    assert gpt2.strategy == "full"
    assert gpt2.info.details["scoring_fallback"] == "packed scoring unavailable: it uses sliding-window attention"
    assert result.logprob == pytest.approx(
        plain_loop(gpt2, LoglikelihoodRequest("The capital of France is", " Paris"))[0], abs=sum_tolerance(result.tokens_scored)
    )


# -- generation ------------------------------------------------------------------------------------------


def generation_requests() -> list:
    from pytest_holistic.models import GenerationRequest

    heads = ("Answer with yes or no.\n\n", "Answer the question.\n\n")
    made = [
        GenerationRequest(f"{head}{SHOTS}Question: {q}\nAnswer:", max_tokens=6, stop=("\n",)) for head in heads for q in QUESTIONS
    ]
    made += [GenerationRequest(f"{heads[0]}{SHOTS}Question: {q}\nAnswer:", max_tokens=3, stop=()) for q in QUESTIONS[:3]]
    made += [GenerationRequest("The capital of France is", max_tokens=5, stop=(".",)), GenerationRequest("The", 2, ())]
    return made


def whole_generations(model: HFModel, made: list) -> list:
    """The requests through transformers' ``generate``, each prompt whole: what packed rows must reproduce."""
    model.use_strategy("full")
    model.use_prefix_sharing("off")
    return model.generate(made)


@pytest.mark.parametrize("which", ["gpt2", "llama"])
def test_greedy_generation_in_packed_rows_equals_generate_at_batch_sizes_1_7_and_64(
    request: pytest.FixtureRequest, which: str
) -> None:
    model: HFModel = request.getfixturevalue(which)
    made = generation_requests()
    model.generation_batch_size = 1
    expected = whole_generations(model, made)  # transformers' generate, one prompt at a time
    model.use_strategy("packed")
    model.use_prefix_sharing("on")
    assert model.info.details["prefix_sharing_method"] == "log-likelihood and greedy generation inside packed passes"
    for size in (1, 7, 64):
        model.generation_batch_size = size
        results = model.generate(made)
        assert model.strategy == "packed", model.info.details.get("scoring_fallback")
        for r, mine, theirs in zip(made, results, expected, strict=True):
            assert mine.text == theirs.text, (size, r)
            assert mine.token_logprobs == pytest.approx(theirs.token_logprobs, abs=TOKEN_DRIFT)
            assert (mine.tokens_in, mine.tokens_out) == (theirs.tokens_in, theirs.tokens_out)
    if which == "gpt2":
        assert results[-2].text == " Paris"  # the trained model's answer, cut at the stop sequence


def test_generation_that_disagrees_with_generate_falls_back_to_whole_prompts(
    gpt2: HFModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_holistic.models import tree_generation

    made = generation_requests()
    expected = whole_generations(gpt2, made)
    gpt2.use_strategy("packed")
    gpt2.use_prefix_sharing("on")
    real = tree_generation.generate_rows

    def skewed(*args, **kwargs):  # type: ignore[no-untyped-def]  # a mask the architecture does not honour
        return [(tokens, [value - 0.5 for value in values]) for tokens, values in real(*args, **kwargs)]

    monkeypatch.setattr(tree_generation, "generate_rows", skewed)
    results = gpt2.generate(made)
    assert [r.text for r in results] == [r.text for r in expected]
    assert gpt2.strategy == "full"
    assert (
        gpt2.info.details["scoring_fallback"]
        == "packed scoring unavailable: its greedy answers in packed rows differ from generate()'s"
    )


def test_a_model_whose_head_does_not_split_off_generates_from_a_spliced_cache(
    gpt2: HFModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Logits changed after the head (a logit scale, soft-capping) cannot be decoded from the decoder's states: such a
    model's prompts share their prefixes through a spliced cache instead (the whole model's logits), and nothing fails."""
    made = generation_requests()
    expected = whole_generations(gpt2, made)
    gpt2.use_strategy("packed")
    gpt2.use_prefix_sharing("on")
    monkeypatch.setattr(gpt2._scorer, "_head", None)
    results = gpt2.generate(made)
    assert [r.text for r in results] == [r.text for r in expected]
    for mine, theirs in zip(results, expected):
        assert mine.token_logprobs == pytest.approx(theirs.token_logprobs, abs=TOKEN_DRIFT)
