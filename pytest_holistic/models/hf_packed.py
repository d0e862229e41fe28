"""The transformers backend's packed scoring (``--holistic-scoring packed``, the default on a GPU), for a whole call.

A call's log-likelihood requests are laid out as token trees in packed rows (:mod:`.tree_packing`): several
contexts to a row, each context once for all its continuations, and with prefix sharing on (``auto`` or ``on``)
every prefix the requests share (instructions, in-context examples) once for the call, inside the same forward
pass as the suffixes that attend to it. Rows are sorted by width and cut into batches of at most so many rows and
padded tokens; a batch that runs out of device memory is retried at half the size.

The first row of the first batch is checked against one full sequence per request: a model that does not honour
a 4-D attention mask or position ids (its numbers differ) is scored with full sequences from then on, and the
details say why.
On a GPU the second batch measures what a token costs in device memory (the peak over the batch, mask and logits
included), and the token budget is set from that measurement instead of the estimate the load made.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from . import hf_batching, scoring, tree_generation
from .base import GenerationResult, LoglikelihoodRequest, LoglikelihoodResult
from .hf_shared import SharingOwner, TokenPair
from .tree_packing import PackedRow, TreeRequest, fed_tokens, pack, row_cap

BUDGET_FILL = 0.8
"""The fraction of a worker's memory share a measured token budget plans to fill (room for fragmentation)."""


class PackedOwner(SharingOwner, Protocol):
    """What the packed paths use of the :class:`.hf.HFModel` they belong to: what the spliced-cache paths use, and
    its batch limits, its memory share, and its switch to full sequences."""

    device: Any
    batch_size: int
    generation_batch_size: int
    _packed_checked: bool

    def _shrink(self, size: int, error: BaseException) -> None: ...

    def _fall_back(self, reason: str) -> None: ...

    def memory_share(self) -> float: ...


def tree_requests(pairs: Sequence[TokenPair], indices: Sequence[int], share: bool) -> list[TreeRequest]:
    """The requests at ``indices`` as trie sequences: all in one group when sharing, else a group per context."""
    requests = []
    for index in indices:
        context, continuation, _ = pairs[index]
        fed = (*context, *continuation[:-1])
        requests.append(TreeRequest(fed, len(context) - 1, tuple(continuation), () if share else tuple(context)))
    return requests


def unshared_tokens(requests: Sequence[TreeRequest]) -> int:
    """Tokens a layout computing each context once (and every prefix shared across contexts again) would hold."""
    contexts: dict[tuple[int, ...], int] = {}
    tails = 0
    for request in requests:
        contexts[request.fed[: request.first + 1]] = request.first + 1
        tails += len(request.fed) - request.first - 1
    return sum(contexts.values()) + tails


def loglikelihood(
    owner: PackedOwner, requests: Sequence[LoglikelihoodRequest], pairs: list[TokenPair], indices: Sequence[int]
) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
    """Results batch by batch, the requests at ``indices`` scored as packed token trees."""
    share = owner.prefix_sharing != "off"
    trees = tree_requests(pairs, indices, share)
    rows = sorted(pack(trees, row_cap(trees)), key=lambda row: -row.width)
    if share:
        saved = unshared_tokens(trees) - fed_tokens(rows)
        owner._record({"prefix_shared_tokens": int(owner.info.details.get("prefix_shared_tokens", 0)) + saved})

    def batch_at(start: int) -> list[PackedRow]:
        return hf_batching.next_batch(rows, start, owner.batch_size, owner.token_budget, padded_size)

    def run(batch: list[PackedRow]) -> tuple[scoring.Scores, float]:
        started = time.perf_counter()
        scores = _measured(owner, batch, lambda: owner._scorer.score_rows(batch, trees))
        return scores, time.perf_counter() - started

    for batch, (scores, seconds) in hf_batching.halving_batches(len(rows), batch_at, run, owner._shrink):
        members = [indices[member] for row in batch for member in row.members]
        if not owner._packed_checked and not _agrees(owner, pairs, members[: len(batch[0].members)], scores):
            # Only ever the first batch of a model: nothing of this call has been yielded yet.
            yield from owner._plain_loglikelihood(requests, pairs, indices)
            return
        yield owner._loglikelihood_results(requests, pairs, members, scores, seconds / len(members))


def padded_size(rows: Sequence[PackedRow]) -> int:
    """Tokens a batch of rows feeds the model, padding included: rows times the widest."""
    return len(rows) * max(row.width for row in rows)


def _agrees(owner: PackedOwner, pairs: list[TokenPair], members: list[int], packed: scoring.Scores) -> bool:
    """Whether the first row of the first batch (its members lead ``packed``) equals one full sequence per request;
    if not, full sequences from now on. One row holds several contexts and the prefixes they share, which is
    what a model that ignores the mask or the position ids gets wrong, and costs a fraction of the batch to check."""
    contexts = list(dict.fromkeys(tuple(pairs[i][0]) for i in members))
    row_of = {context: row for row, context in enumerate(contexts)}
    batch = scoring.ScoreBatch(contexts, [scoring.Member(row_of[tuple(pairs[i][0])], pairs[i][1]) for i in members])
    reference = owner._scorer.score("full", batch)
    owner._packed_checked = True
    tolerance = 1e-3 if owner._scorer.dtype.itemsize >= 4 else 0.1
    if any(abs(a - b) > tolerance * max(1.0, abs(b)) for a, b in zip(packed.logprobs, reference.logprobs)):
        owner._fall_back("it does not honour a tree attention mask and position ids")
        return False
    return True


def _measured(owner: PackedOwner, batch: list[PackedRow], run: Any) -> scoring.Scores:
    """``run()``; on a GPU whose token budget is still the load's estimate, the batch's peak memory per token
    sets the budget (:func:`measured_budget`) and the details record it. Never the model's first packed batch, which
    also pays once-only costs (the head's float32 copy, the split probe) that are no token's."""
    first = not owner._packed_checked
    if first or owner.device.type != "cuda" or owner.token_budget is None or "token_bytes_measured" in owner.info.details:
        return run()  # type: ignore[no-any-return]
    import torch

    torch.cuda.synchronize(owner.device)
    torch.cuda.reset_peak_memory_stats(owner.device)
    before = torch.cuda.memory_allocated(owner.device)
    scores = run()
    peak = torch.cuda.max_memory_allocated(owner.device)
    per_token = max(1.0, (peak - before) / padded_size(batch))
    owner.token_budget = measured_budget(owner.memory_share(), per_token, max(row.width for row in batch))
    owner._record({"token_budget": owner.token_budget, "token_bytes_measured": round(per_token)})
    return scores  # type: ignore[no-any-return]


def measured_budget(share_bytes: float, bytes_per_token: float, widest: int) -> int:
    """Padded tokens per pass that fill ``BUDGET_FILL`` of a worker's memory share at the measured cost per token
    (never less than the widest row, which must run)."""
    return max(widest, int(share_bytes * BUDGET_FILL // bytes_per_token))


def generation(
    owner: PackedOwner, indices: Sequence[int], prompts: dict[int, list[int]], budget: int, stop: tuple[str, ...]
) -> Iterator[list[tuple[int, GenerationResult]]]:
    """Greedy results batch by batch, the prompts at ``indices`` prefilled and decoded as packed token trees
    (:mod:`.tree_generation`). The first row is checked once against ``generate`` on the same prompts: a model whose
    answers differ is scored and generated whole from then on, and the details say why."""
    trees = tree_generation.prompt_requests([prompts[i] for i in indices])
    rows = sorted(pack(trees, row_cap(trees)), key=lambda row: -row.width)
    saved = sum(len(tree.fed) for tree in trees) - fed_tokens(rows)
    owner._record({"prefix_shared_tokens": int(owner.info.details.get("prefix_shared_tokens", 0)) + saved})
    wanted = [s for s in stop if s]

    def stopped(tokens: list[int]) -> bool:
        return bool(wanted) and any(s in owner.tokenizer.decode(tokens, skip_special_tokens=True) for s in wanted)

    def size(run: Sequence[PackedRow]) -> int:  # the cache a batch ends with: prompts' tokens and every step's
        return len(run) * (max(row.width for row in run) + budget * max(len(row.members) for row in run))

    def batch_at(start: int) -> list[PackedRow]:
        fits, prompts_in = 0, 0
        while start + fits < len(rows) and (
            fits == 0 or prompts_in + len(rows[start + fits].members) <= owner.generation_batch_size
        ):
            prompts_in += len(rows[start + fits].members)
            fits += 1
        return hf_batching.next_batch(rows, start, fits, owner.token_budget, size)

    def run(batch: list[PackedRow]) -> tuple[list[tuple[list[int], list[float]]], float]:
        started = time.perf_counter()
        produced = tree_generation.generate_rows(owner._scorer, batch, trees, budget, owner.eos_id, stopped)
        return produced, time.perf_counter() - started

    def shrink(size: int, error: BaseException) -> None:
        owner.generation_batch_size = owner._halved(max(1, owner.generation_batch_size), error, "prompt", "lower max_tokens")
        owner._record({"generation_batch_size": owner.generation_batch_size})

    for batch, (produced, seconds) in hf_batching.halving_batches(len(rows), batch_at, run, shrink):
        numbers = [indices[member] for row in batch for member in row.members]
        results = owner.generation_results(
            [len(prompts[n]) for n in numbers], [t for t, _ in produced], [p for _, p in produced], stop, seconds / len(numbers)
        )
        if "packed generation" not in owner._sharing_checked:
            first = numbers[: len(batch[0].members)]
            whole = owner._generate_batch([prompts[n] for n in first], budget, stop, 0.0, 0)
            owner._sharing_checked.add("packed generation")
            if not _same_generations(results[: len(first)], whole, owner._scorer.dtype.itemsize):
                owner._fall_back("its greedy answers in packed rows differ from generate()'s")
                return  # nothing of this call was yielded: the caller generates it whole
        yield list(zip(numbers, results))


def _same_generations(mine: Sequence[GenerationResult], theirs: Sequence[GenerationResult], itemsize: int) -> bool:
    tolerance = 1e-3 if itemsize >= 4 else 0.1
    return all(
        a.text == b.text
        and len(a.token_logprobs) == len(b.token_logprobs)
        and all(abs(x - y) <= tolerance * max(1.0, abs(y)) for x, y in zip(a.token_logprobs, b.token_logprobs))
        for a, b in zip(mine, theirs)
    )
