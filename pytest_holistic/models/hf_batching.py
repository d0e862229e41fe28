"""The batching core of a local transformers model, as plain functions a second transformers backend can reuse.

Only a backend that holds the model knows token lengths and device memory, so batching is its work; these are the
parts that do not depend on how one batch is computed (:class:`.hf.HFModel` passes its own step functions):

- requests are sorted longest first, so the rows of a batch have similar lengths and waste little padding
  (:func:`longest_first`, :func:`contexts_longest_first`), and cut into batches of at most so many rows and
  padded tokens (:func:`next_batch`);
- a batch that runs out of device memory is retried at half the size, and the smaller size is kept for the rest
  of the session, so no request fails for want of memory while one row fits (:func:`halving_batches`,
  :func:`halved`);
- a generation is cut at the end token and at the first stop sequence, and keeps the log-probabilities of the
  tokens it kept (:func:`cut_at_stop`, :func:`generation_results`): ``generate`` stops a batch only once every row
  has stopped, so the other rows run on past their own stop.

Nothing here imports torch at import time: a warm run that answers from the cache never loads it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from ..errors import ModelOutputError, error_line
from .base import GenerationRequest, GenerationResult

T = TypeVar("T")
R = TypeVar("R")

Context = tuple[int, ...]
"""A context's tokens, the key requests that share it are grouped under."""


# -- length-sorted batches ------------------------------------------------------------------------------


def longest_first(indices: Iterable[int], length: Callable[[int], int]) -> list[int]:
    """``indices`` longest first (ties in index order): neighbours of one length waste the least padding."""
    return sorted(indices, key=lambda i: (-length(i), i))


def contexts_longest_first(
    pairs: Sequence[tuple[Sequence[int], Sequence[int], int]], indices: Iterable[int]
) -> tuple[dict[Context, list[int]], list[Context]]:
    """The scoring requests at ``indices`` grouped by context (a context is run once for all its continuations),
    and the contexts longest first, by context plus longest continuation (ties: the first request's order).

    ``pairs`` are the requests in tokens: (context, continuation, context tokens cut from the left).
    """
    groups: dict[Context, list[int]] = defaultdict(list)
    for index in indices:
        groups[tuple(pairs[index][0])].append(index)
    contexts = sorted(groups, key=lambda c: (-(len(c) + max(len(pairs[i][1]) for i in groups[c])), groups[c][0]))
    return groups, contexts


def next_batch(
    items: Sequence[T], start: int, rows: int, token_budget: int | None, padded: Callable[[Sequence[T]], int]
) -> list[T]:
    """The items of the batch from ``start``: at most ``rows`` of them and ``token_budget`` padded tokens (at least one).

    The padded size (``padded`` of a run of items) only grows as items are added, so the longest run that fits is
    found by bisection (a few size computations per batch, not one per item). One item runs whatever its size.
    """
    limit = min(len(items), start + rows)
    if token_budget is None:
        return list(items[start:limit])
    low, high = start + 1, limit  # low always fits; find the last end that does
    while low < high:
        middle = (low + high + 1) // 2
        if padded(items[start:middle]) <= token_budget:
            low = middle
        else:
            high = middle - 1
    return list(items[start:low])


def generation_groups(requests: Sequence[GenerationRequest]) -> dict[tuple[int, tuple[str, ...], float, int], list[int]]:
    """Generation requests' indices by (max tokens, stop sequences, temperature, seed): what one ``generate`` call
    can share, in first-request order."""
    groups: dict[tuple[int, tuple[str, ...], float, int], list[int]] = defaultdict(list)
    for index, request in enumerate(requests):
        groups[(request.max_tokens, request.stop, request.temperature, request.seed)].append(index)
    return groups


# -- out-of-memory halving ----------------------------------------------------------------------------


def is_out_of_memory(error: BaseException) -> bool:
    """CUDA's out-of-memory error, or the RuntimeError other devices raise for it."""
    import torch

    return isinstance(error, torch.OutOfMemoryError) or (isinstance(error, RuntimeError) and "out of memory" in str(error))


def halved(size: int, error: BaseException, *, model: str, unit: str, fix: str) -> int:
    """The batch size to retry with after ``error`` ran a batch of ``size`` out of memory: half of it.

    A batch of one that does not fit is the request's error (a one-line :class:`ModelOutputError` that says
    ``fix``): nothing smaller can be tried. The device's cached blocks are released before the retry, so the
    smaller batch does not meet the failed one's fragments.
    """
    if size <= 1:
        raise ModelOutputError(
            f"model {model!r} ran out of device memory on a single {unit} ({error_line(error)}); "
            f"{fix}, a smaller --holistic-dtype, or a device with more memory"
        )
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return max(1, size // 2)


def halving_batches(
    count: int,
    batch_at: Callable[[int], list[T]],
    run: Callable[[list[T]], R],
    shrink: Callable[[int, BaseException], None],
) -> Iterator[tuple[list[T], R]]:
    """``(batch, run(batch))`` for consecutive batches covering ``count`` items, one batch at a time.

    ``batch_at(start)`` is the batch from item ``start`` under the current limits. A batch whose ``run`` runs out of
    device memory is handed to ``shrink(size, error)``, which lowers the limits (or raises when one item does not
    fit, see :func:`halved`), and the same start is cut again: no item is lost or computed twice. Any other error
    is raised as it is.
    """
    start = 0
    while start < count:
        batch = batch_at(start)
        try:
            output = run(batch)
        except Exception as error:
            if not is_out_of_memory(error):
                raise
            shrink(len(batch), error)
            continue
        start += len(batch)
        yield batch, output


# -- stop cutting -------------------------------------------------------------------------------------


def cut_at_stop(decode: Callable[[list[int]], str], tokens: list[int], stop: Sequence[str]) -> tuple[str, int]:
    """The text up to the first stop sequence, and how many tokens it took (at least one, if any).

    A stop sequence may end inside a token, so the tokens kept are the fewest whose text reaches the cut.
    """
    text = decode(tokens)
    cuts = [text.index(s) for s in stop if s and s in text]
    if not cuts:
        return text, len(tokens)
    text = text[: min(cuts)]
    for kept in range(1, len(tokens) + 1):
        if len(decode(tokens[:kept])) >= len(text):
            return text, kept
    return text, len(tokens)


def generation_results(
    prompt_lengths: Sequence[int],
    new_tokens: Sequence[list[int]],
    step_logprobs: Sequence[list[float]],
    stop: Sequence[str],
    elapsed: float,
    *,
    eos_id: int | None,
    decode: Callable[[list[int]], str],
    model: str,
) -> list[GenerationResult]:
    """Texts cut at the end token and the first stop sequence, with the log-probabilities of the tokens kept.

    A NaN among the log-probabilities kept (or the first, for an empty answer) is the batch's error: the model's
    weights or dtype are broken, and a text chosen from NaNs means nothing.
    """
    results = []
    for r, tokens in enumerate(new_tokens):
        if eos_id is not None and eos_id in tokens:
            tokens = tokens[: tokens.index(eos_id)]
        text, kept = cut_at_stop(decode, tokens, stop)
        logprobs = tuple(step_logprobs[r][:kept])
        if any(math.isnan(value) for value in step_logprobs[r][: max(kept, 1)]):
            raise ModelOutputError(
                f"model {model!r} returned NaN log-probabilities while generating; "
                "its weights or dtype are broken (try --holistic-dtype float32)"
            )
        results.append(GenerationResult(text, logprobs, prompt_lengths[r], elapsed, logprobs_returned=True))
    return results
