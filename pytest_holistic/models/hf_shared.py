"""The transformers backend's requests with their shared prefixes computed once (``--holistic-prefix-sharing``).

For a shard's requests, a prefix plan (:mod:`.prefix_tree`) says which token spans are shared; the spans are run
once (:class:`.prefix_sharing.PrefixRunner`) and every request then runs only its own suffix, in batches of rows
grouped by prefix and sorted by suffix length. Under ``auto`` this is used only when it saves at least a tenth
of the tokens, and the first shared batch of each kind is checked against the unshared computation of the same
requests: a model whose numbers differ (an attention variant the cache splice does not honour) falls back to
computing every request whole, and the model details say why. Results stream batch by batch, as the unshared
paths' do, so a cache commits each one the moment it is done.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ..errors import error_line
from . import scoring
from .hf_batching import is_out_of_memory
from .base import GenerationResult, LoglikelihoodRequest, LoglikelihoodResult, ModelInfo
from .prefix_sharing import PrefixRunner, Row, SharingUnsupported, cheapest_runs, kv_bytes_per_token, split_plan
from .prefix_tree import PrefixPlan

TokenPair = tuple[list[int], list[int], int]
"""A log-likelihood request in tokens: context, continuation, and the context tokens cut from the left."""


class SharingOwner(Protocol):
    """What the shared paths use of the model they belong to (:class:`.hf.HFModel`): its settings, its checks and its
    unshared paths, which they fall back to."""

    model: Any
    tokenizer: Any
    info: ModelInfo
    eos_id: int | None
    token_budget: int | None
    prefix_sharing: str
    _scorer: scoring.Scorer
    _sharing_checked: set[str]

    def _sharing_unavailable(self, reason: str) -> None: ...

    def _record(self, changes: Mapping[str, Any], drop: Iterable[str] = ()) -> None: ...

    def _halved(self, size: int, error: BaseException, unit: str, fix: str) -> int: ...

    def _loglikelihood_results(
        self,
        requests: Sequence[LoglikelihoodRequest],
        pairs: list[TokenPair],
        members: Sequence[int],
        scores: scoring.Scores,
        elapsed: float,
    ) -> list[tuple[int, LoglikelihoodResult]]: ...

    def _plain_loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], pairs: list[TokenPair], indices: Sequence[int]
    ) -> Iterator[list[tuple[int, LoglikelihoodResult]]]: ...

    def _plain_generation(
        self,
        indices: Sequence[int],
        prompts: dict[int, list[int]],
        encoded: dict[int, list[int]],
        budget: int,
        stop: tuple[str, ...],
        temperature: float,
        seed: int,
    ) -> Iterator[list[tuple[int, GenerationResult]]]: ...

    def _generate_batch(
        self, prompts: list[list[int]], max_tokens: int, stop: tuple[str, ...], temperature: float, seed: int
    ) -> list[GenerationResult]: ...

    def generation_results(
        self,
        prompt_lengths: Sequence[int],
        new_tokens: Sequence[list[int]],
        step_logprobs: Sequence[list[float]],
        stop: tuple[str, ...],
        elapsed: float,
    ) -> list[GenerationResult]: ...


WORTH_SHARING = 0.1
"""Under ``auto``, the fraction of a call's tokens sharing must save before the prefix path is taken."""
CPU_KEPT_BYTES = 2 << 30
"""Keys and values of shared prefixes kept at once on a CPU (a plan is split to stay under it)."""
CPU_ROWS, CPU_TOKENS = 32, 32768
"""Rows per forward pass and padded tokens (prefix and suffix) per pass on a CPU."""
CPU_PASS_TOKENS, GPU_PASS_TOKENS = 32, 1024
"""A forward pass's fixed cost, in tokens of work: on a CPU, reading every weight once costs about what 25-30 tokens
of a 135M model's work do (measured on the project's 2-core machine); on a GPU, launching a pass's kernels costs
far more tokens (an estimate, not yet measured), so passes there are fewer and wider."""
_FALLBACK_ERRORS = (SharingUnsupported, AttributeError, NotImplementedError, TypeError, ValueError, IndexError)
"""What a model whose cache cannot be spliced raises: the request is computed whole instead."""


class SharedPaths:
    """Log-likelihood and greedy generation with shared prefixes, for one :class:`~.hf.HFModel` (its ``owner``)."""

    def __init__(self, owner: SharingOwner, runner: PrefixRunner) -> None:
        self.owner = owner
        self.runner = runner
        self.rows: int | None = None  # rows per pass once an out-of-memory error has halved them
        self._kv_per_token: int | None = None

    # -- planning ---------------------------------------------------------------------------------------

    def _limits(self) -> tuple[int, int]:
        """(rows, padded tokens) per forward pass: the CPU defaults, or on a GPU the backend's token budget."""
        budget = self.owner.token_budget
        if budget is None:
            return self.rows or CPU_ROWS, CPU_TOKENS
        return self.rows or 1024, budget

    def _kept_tokens(self) -> int:
        """How many prefix tokens' keys and values may be kept at once."""
        if self._kv_per_token is None:
            self._kv_per_token = max(1, kv_bytes_per_token(self.owner.model))
        budget = self.owner.token_budget
        return budget if budget is not None else CPU_KEPT_BYTES // self._kv_per_token

    def _plans(self, sequences: Sequence[Sequence[int]], limits: Sequence[int]) -> list[tuple[list[int], PrefixPlan]] | None:
        """The chunks and their plans, or None when sharing would save too little to be worth it (``auto``)."""
        chunks = split_plan(sequences, limits, self._kept_tokens())
        total = sum(len(sequence) for sequence in sequences)
        computed = sum(
            plan.shared_tokens + sum(len(sequences[i]) - plan.cut[k] for k, i in enumerate(chunk)) for chunk, plan in chunks
        )
        saved = total - computed
        if saved <= 0 or (self.owner.prefix_sharing == "auto" and saved < WORTH_SHARING * total):
            return None
        self.owner._record({"prefix_shared_tokens": int(self.owner.info.details.get("prefix_shared_tokens", 0)) + saved})
        return chunks

    def _overhead(self, generating: bool) -> int:
        """A forward pass's fixed cost in tokens of work; a generating pass also pays about one decoding step."""
        per_pass = GPU_PASS_TOKENS if self.owner.token_budget is not None else CPU_PASS_TOKENS
        return per_pass * (2 if generating else 1)

    def _batches(self, order: Sequence[int], rows: Sequence[Row], plan: PrefixPlan, generating: bool) -> list[list[int]]:
        """``order`` (longest suffix first) cut into the cheapest passes within the row and padded-token limits."""
        row_limit, token_limit = self._limits()
        nodes = [rows[k].node for k in order]
        widths = [plan.nodes[node].depth if node is not None else 0 for node in nodes]
        runs = cheapest_runs(widths, [len(rows[k].suffix) for k in order], row_limit, token_limit, self._overhead(generating))
        return [list(order[start:end]) for start, end in runs]

    def _shrink(self, size: int, error: BaseException) -> None:
        self.rows = self.owner._halved(size, error, "row", "a shorter prompt")

    def _fall_back(self, reason: str) -> None:
        self.owner._sharing_unavailable(reason)

    # -- log-likelihood ---------------------------------------------------------------------------------

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], pairs: list[tuple[list[int], list[int], int]]
    ) -> Iterator[list[tuple[int, LoglikelihoodResult]]] | None:
        """Results batch by batch with shared prefixes, or None when this call is better computed whole."""
        fed = [tuple(context) + tuple(continuation[:-1]) for context, continuation, _ in pairs]
        limits = [len(context) - 1 for context, _, _ in pairs]  # the last context token predicts the first scored one
        chunks = self._plans(fed, limits)
        if chunks is None:
            return None
        return self._loglikelihood(requests, pairs, fed, chunks)

    def _loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        pairs: list[tuple[list[int], list[int], int]],
        fed: list[tuple[int, ...]],
        chunks: list[tuple[list[int], PrefixPlan]],
    ) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        done: set[int] = set()
        try:
            for chunk, plan in chunks:
                started = time.perf_counter()
                kept = self.runner.compute_nodes(plan, *self._limits(), self._overhead(generating=False))
                node_share = (time.perf_counter() - started) / len(chunk)
                rows = []
                for k, i in enumerate(chunk):
                    context, continuation, _ = pairs[i]
                    first = len(context) - 1 - plan.cut[k]
                    rows.append(
                        Row(plan.node_of[k], fed[i][plan.cut[k] :], tuple((first + j, t) for j, t in enumerate(continuation)))
                    )
                order = _by_suffix_length(rows, chunk)

                def run(
                    chosen: list[int], plan: PrefixPlan = plan, kept: list[list[tuple[Any, Any]]] = kept, rows: list[Row] = rows
                ) -> scoring.Scores:
                    return self.runner.score(plan, kept, [rows[k] for k in chosen])

                for batch in self._batches_retrying(order, rows, plan, run):
                    members, scores, seconds = batch
                    indices = [chunk[k] for k in members]
                    checked = self._checked_loglikelihood(requests, pairs, indices, scores)
                    if checked is not None:
                        yield self.owner._loglikelihood_results(requests, pairs, indices, checked, seconds / len(indices))
                        done.update(indices)
                        break  # the rest is computed whole, below
                    yield self.owner._loglikelihood_results(requests, pairs, indices, scores, seconds / len(indices) + node_share)
                    done.update(indices)
                if self.owner.prefix_sharing == "off":
                    break
        except _FALLBACK_ERRORS as error:
            self._fall_back(f"its cache cannot be shared ({type(error).__name__}: {error_line(error)})")
        rest = [i for i in range(len(requests)) if i not in done]
        if rest:
            yield from self.owner._plain_loglikelihood(requests, pairs, rest)

    def _checked_loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        pairs: list[tuple[list[int], list[int], int]],
        indices: list[int],
        shared: scoring.Scores,
    ) -> scoring.Scores | None:
        """Under ``auto``, the first shared batch against the same requests computed whole: None when they agree,
        else the whole computation's scores (and sharing is off from now on)."""
        if self.owner.prefix_sharing != "auto" or "loglikelihood" in self.owner._sharing_checked:
            return None
        contexts = list(dict.fromkeys(tuple(pairs[i][0]) for i in indices))
        row_of = {context: row for row, context in enumerate(contexts)}
        batch = scoring.ScoreBatch(contexts, [scoring.Member(row_of[tuple(pairs[i][0])], pairs[i][1]) for i in indices])
        whole = self.owner._scorer.score("full", batch)
        tolerance = 1e-3 if self.owner._scorer.dtype.itemsize >= 4 else 0.1
        if any(abs(a - b) > tolerance * max(1.0, abs(b)) for a, b in zip(shared.logprobs, whole.logprobs)):
            self._fall_back("its log-probabilities over a shared prefix differ from the unshared ones")
            return whole
        self.owner._sharing_checked.add("loglikelihood")
        return None

    # -- generation -------------------------------------------------------------------------------------

    def generation(
        self, indices: Sequence[int], prompts: dict[int, list[int]], budget: int, stop: tuple[str, ...]
    ) -> Iterator[list[tuple[int, GenerationResult]]] | None:
        """Greedy results batch by batch with shared prefixes, or None when this group is better computed whole."""
        sequences = [tuple(prompts[i]) for i in indices]
        chunks = self._plans(sequences, [len(sequence) - 1 for sequence in sequences])
        if chunks is None:
            return None
        return self._generation(list(indices), sequences, chunks, prompts, budget, stop)

    def _generation(
        self,
        indices: list[int],
        sequences: list[tuple[int, ...]],
        chunks: list[tuple[list[int], PrefixPlan]],
        prompts: dict[int, list[int]],
        budget: int,
        stop: tuple[str, ...],
    ) -> Iterator[list[tuple[int, GenerationResult]]]:
        owner = self.owner
        wanted = [s for s in stop if s]
        decode = owner.tokenizer.decode

        def stopped(tokens: list[int]) -> bool:
            if not wanted:
                return False
            text = decode(tokens, skip_special_tokens=True)
            return any(s in text for s in wanted)

        done: set[int] = set()
        try:
            for chunk, plan in chunks:
                started = time.perf_counter()
                kept = self.runner.compute_nodes(plan, *self._limits(), self._overhead(generating=False))
                node_share = (time.perf_counter() - started) / len(chunk)
                rows = [Row(plan.node_of[k], sequences[i][plan.cut[k] :]) for k, i in enumerate(chunk)]
                order = _by_suffix_length(rows, chunk)

                def run(batch: list[int], plan: PrefixPlan = plan, kept: Any = kept, rows: list[Row] = rows) -> Any:
                    return self.runner.generate(plan, kept, [rows[k] for k in batch], budget, owner.eos_id, stopped)

                for members, produced, seconds in self._batches_retrying(order, rows, plan, run, generating=True):
                    numbers = [indices[chunk[k]] for k in members]
                    lengths = [len(prompts[n]) for n in numbers]
                    results = owner.generation_results(
                        lengths, [t for t, _ in produced], [p for _, p in produced], stop, seconds / len(numbers) + node_share
                    )
                    checked = self._checked_generation(numbers, prompts, budget, stop, results)
                    done.update(numbers)
                    yield list(zip(numbers, checked or results))
                    if checked is not None:
                        break
                if owner.prefix_sharing == "off":
                    break
        except _FALLBACK_ERRORS as error:
            self._fall_back(f"its cache cannot be shared ({type(error).__name__}: {error_line(error)})")
        rest = [i for i in indices if i not in done]
        if rest:
            yield from owner._plain_generation(rest, prompts, prompts, budget, stop, 0.0, 0)

    def _checked_generation(
        self,
        numbers: list[int],
        prompts: dict[int, list[int]],
        budget: int,
        stop: tuple[str, ...],
        shared: list[GenerationResult],
    ) -> list[GenerationResult] | None:
        """Under ``auto``, the first shared batch against ``generate`` on the same prompts (see the log-likelihood check)."""
        owner = self.owner
        if owner.prefix_sharing != "auto" or "generation" in owner._sharing_checked:
            return None
        whole = owner._generate_batch([prompts[n] for n in numbers], budget, stop, 0.0, 0)
        tolerance = 1e-3 if owner._scorer.dtype.itemsize >= 4 else 0.1
        for mine, theirs in zip(shared, whole):
            close = len(mine.token_logprobs) == len(theirs.token_logprobs) and all(
                abs(a - b) <= tolerance * max(1.0, abs(b)) for a, b in zip(mine.token_logprobs, theirs.token_logprobs)
            )
            if mine.text != theirs.text or not close:
                self._fall_back("its greedy answers over a shared prefix differ from generate()'s")
                return whole
        owner._sharing_checked.add("generation")
        return None

    # -- batches, with out-of-memory retries ---------------------------------------------------------------

    def _batches_retrying(
        self,
        order: Sequence[int],
        rows: Sequence[Row],
        plan: PrefixPlan,
        run: Callable[[list[int]], Any],
        generating: bool = False,
    ) -> Iterator[tuple[list[int], Any, float]]:
        """(members, output, seconds) per batch; a batch that runs out of device memory is retried at half the rows
        (and the rest of ``order`` cut again under the smaller limit)."""
        remaining = list(order)
        batches = self._batches(remaining, rows, plan, generating)
        while batches:
            batch = batches[0]
            started = time.perf_counter()
            try:
                output = run(batch)
            except Exception as error:
                if not is_out_of_memory(error):
                    raise
                self._shrink(len(batch), error)
                batches = self._batches(remaining, rows, plan, generating)
                continue
            remaining = remaining[len(batch) :]
            batches = batches[1:]
            yield batch, output, time.perf_counter() - started


def _by_suffix_length(rows: Sequence[Row], chunk: Sequence[int]) -> list[int]:
    """Rows longest suffix first: a pass costs its rows times its longest suffix, so neighbours of one length waste
    the least padding (each row's prefix comes from the kept keys and values, whichever node it hangs from)."""
    return sorted(range(len(chunk)), key=lambda k: (-len(rows[k].suffix), _node_key(rows[k]), chunk[k]))


def _node_key(row: Row) -> int:
    return -1 if row.node is None else row.node
