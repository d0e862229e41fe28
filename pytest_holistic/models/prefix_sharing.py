"""Shared prefixes computed once: keys and values of a shard's common token prefixes, reused by every request.

:mod:`.prefix_tree` decides which spans are shared (a radix tree over the shard's token sequences). This module
runs them: each wave of tree nodes is one forward pass on top of its parents' keys and values, and the nodes'
own keys and values are kept (only their span, so a shared token is stored once). A batch of requests then runs
only its suffixes against a cache built for the batch: every row's prefix, gathered from its nodes and padded on
the left to the longest, with the padding masked and position ids that continue each row's own prefix. That one
primitive scores continuations (log-likelihood) and prefills greedy generation, whose decoding loop is here too
(one token per step for the rows still running, the finished ones dropped from the batch).

The numbers equal the unshared computation up to float rounding (a row attends to exactly the tokens it would
see alone); :class:`~.hf.HFModel` checks that on its first shared batch before trusting it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from . import scoring
from .prefix_tree import PrefixPlan, plan_prefixes, without_short_spans

_P = ParamSpec("_P")
_R = TypeVar("_R")


class SharingUnsupported(Exception):
    """The architecture's cache cannot be built or re-laid out per row (sliding windows, recurrent state)."""


@dataclass(frozen=True)
class Row:
    """One request: its shared node (or None), the tokens it runs itself, and the suffix columns whose logits it wants.

    ``scored`` maps suffix columns to target tokens (log-likelihood); generation wants the last column only.
    """

    node: int | None
    suffix: tuple[int, ...]
    scored: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Limits:
    """How big one forward pass may get: rows, padded tokens (prefix included), and bytes of kept node keys/values."""

    rows: int
    tokens: int
    kept_bytes: int


def kv_bytes_per_token(model: Any) -> int:
    """Bytes of keys and values one token keeps across all layers (from the config; an estimate for odd layouts)."""
    config = model.config
    layers = int(getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", None) or 24)
    heads = int(getattr(config, "num_attention_heads", None) or getattr(config, "n_head", None) or 16)
    hidden = int(getattr(config, "hidden_size", None) or getattr(config, "n_embd", None) or 2048)
    kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
    head_dim = int(getattr(config, "head_dim", None) or hidden // heads)
    element: int = next(model.parameters()).element_size()
    return 2 * layers * kv_heads * head_dim * element


def sharable(model: Any) -> str | None:
    """Why the model's cache cannot be shared this way, or None: sliding-window and non-attention layers keep
    state that a per-row prefix cannot be spliced into."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    kinds = set(getattr(config, "layer_types", None) or ())
    if kinds - {"full_attention"}:
        return f"its layers are not all full attention ({', '.join(sorted(kinds))})"
    if getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True):
        return "it uses sliding-window attention"
    return None


def split_plan(
    sequences: Sequence[Sequence[int]], limits: Sequence[int], budget_tokens: int
) -> list[tuple[list[int], PrefixPlan]]:
    """Plans over chunks of the sequences (in sorted order, so neighbours that share stay together) whose shared
    tokens each fit ``budget_tokens``: the memory bound on the keys and values kept at once."""
    order = sorted(range(len(sequences)), key=lambda i: tuple(sequences[i]))
    chunks = [order]
    done: list[tuple[list[int], PrefixPlan]] = []
    while chunks:
        chunk = chunks.pop()
        plan = without_short_spans(plan_prefixes([sequences[i] for i in chunk], [limits[i] for i in chunk]))
        if plan.shared_tokens <= budget_tokens or len(chunk) == 1:
            done.append((chunk, plan))
        else:
            middle = len(chunk) // 2
            chunks += [chunk[middle:], chunk[:middle]]
    return done


def cheapest_runs(widths: Sequence[int], lengths: Sequence[int], rows: int, tokens: int, overhead: int) -> list[tuple[int, int]]:
    """Cut positions ``0..n`` (items longest first) into consecutive runs ``(start, end)``, one forward pass each, at
    the least cost: a pass costs ``overhead`` (its fixed work, in tokens: reading every weight once) plus its rows
    times its longest item, padding included. A run holds at most ``rows`` items and ``tokens`` padded tokens, its
    prefix ``widths`` counted (a single item always fits). Exact, by dynamic programming over the run ends."""
    count = len(lengths)
    best = [0.0] + [math.inf] * count
    start_of = [0] * (count + 1)
    for end in range(1, count + 1):
        longest = wide = 0
        for start in range(end - 1, max(-1, end - 1 - rows), -1):
            longest, wide = max(longest, lengths[start]), max(wide, widths[start])
            size = end - start
            if size > 1 and size * (wide + longest) > tokens:
                break
            cost = best[start] + overhead + size * longest
            if cost < best[end]:
                best[end], start_of[end] = cost, start
    runs = []
    end = count
    while end > 0:
        runs.append((start_of[end], end))
        end = start_of[end]
    return runs[::-1]


def _inference(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``method`` under ``torch.inference_mode()``: no autograd records, no gradients kept."""

    @functools.wraps(method)
    def wrapped(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        import torch

        with torch.inference_mode():
            return method(*args, **kwargs)

    return wrapped


class PrefixRunner:
    """Runs shared nodes and suffix batches on one causal LM; ``head`` is (decoder, LM head) or None (whole model)."""

    def __init__(self, model: Any, pad_id: int, head: Callable[[], tuple[Any, Any] | None]) -> None:
        self.model = model
        self.pad_id = pad_id
        self._head = head

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    # -- nodes ------------------------------------------------------------------------------------------

    @_inference
    def compute_nodes(self, plan: PrefixPlan, rows: int, tokens: int, overhead: int) -> list[list[tuple[Any, Any]]]:
        """Keys and values of every node's own span, per layer as (keys, values) of shape [heads, span, dim].

        A wave's nodes run longest first, in the cheapest passes (:func:`cheapest_runs`) within ``rows`` and ``tokens``.
        """
        kept: list[list[tuple[Any, Any]]] = [[] for _ in plan.nodes]
        for wave in plan.waves():
            wave = sorted(wave, key=lambda n: -len(plan.nodes[n].tokens))
            widths = [plan.nodes[n].start for n in wave]
            runs = cheapest_runs(widths, [len(plan.nodes[n].tokens) for n in wave], rows, tokens, overhead)
            for first, last in runs:
                members = wave[first:last]
                spans = [Row(plan.nodes[n].parent, plan.nodes[n].tokens) for n in members]
                _, cache, width = self._forward(plan, kept, spans, want_cache=True)
                for r, n in enumerate(members):
                    span = len(plan.nodes[n].tokens)
                    kept[n] = [
                        (keys[r, :, width : width + span].clone(), values[r, :, width : width + span].clone())
                        for keys, values in _layers(cache)
                    ]
        return kept

    # -- log-likelihood --------------------------------------------------------------------------------

    @_inference
    def score(self, plan: PrefixPlan, kept: list[list[tuple[Any, Any]]], rows: Sequence[Row]) -> scoring.Scores:
        """Summed log-probabilities of each row's scored targets, and whether each was the argmax."""
        import torch

        head = self._head()
        hidden_or_logits, _, _ = self._forward(plan, kept, rows, want_cache=False, hidden=head is not None)
        width = hidden_or_logits.shape[1]
        flat = [r * width + column for r, row in enumerate(rows) for column, _ in row.scored]
        targets = [target for row in rows for _, target in row.scored]
        owner = [r for r, row in enumerate(rows) for _ in row.scored]
        device = hidden_or_logits.device
        index = torch.tensor(flat, device=device)
        if head is not None:
            logits = head[1](hidden_or_logits.flatten(0, 1).index_select(0, index))
            picked = torch.arange(len(flat), device=device)
        else:
            logits, picked = hidden_or_logits.flatten(0, 1), index
        sums, misses = scoring.reduce_rows(
            logits, picked, torch.tensor(targets, device=device), torch.tensor(owner, device=device), len(rows)
        )
        return scoring.to_host(sums, misses)

    # -- greedy generation -----------------------------------------------------------------------------

    @_inference
    def prefill(self, plan: PrefixPlan, kept: list[list[tuple[Any, Any]]], rows: Sequence[Row], spare: int = 0) -> Prefilled:
        """Each row's suffix on its prefix: the logits that choose its first token, and the cache to decode on (with
        room for ``spare`` more tokens, so decoding writes in place)."""
        logits, cache, width = self._forward(plan, kept, rows, want_cache=True, last_only=True, spare=spare)
        lengths = [self._prefix_length(plan, row) + len(row.suffix) for row in rows]
        return Prefilled(logits, cache, self._mask(plan, rows, width).to(self.device), lengths)

    @_inference
    def decode(
        self, part: Prefilled, max_tokens: int, eos_id: int | None, stopped: Callable[[list[int]], bool]
    ) -> list[tuple[list[int], list[float]]]:
        """Greedy tokens and their log-probabilities for the rows of ``part``, until each one's end token, ``stopped``
        or ``max_tokens``: each step feeds every running row its last token, and a row that ends leaves the batch
        (its cache rows too), so short answers stop costing at once."""
        import torch

        device = self.device
        logits, cache, mask, lengths = part.logits, part.cache, part.mask, part.lengths
        tokens: list[list[int]] = [[] for _ in lengths]
        logprobs: list[list[float]] = [[] for _ in lengths]
        active = list(range(len(lengths)))
        for step in range(max_tokens):
            table = logits.float()
            chosen = table.argmax(dim=-1)
            values = (table.gather(1, chosen[:, None]).squeeze(1) - torch.logsumexp(table, dim=-1)).tolist()
            picked = chosen.tolist()
            keep = []
            for slot, r in enumerate(active):
                tokens[r].append(picked[slot])
                logprobs[r].append(values[slot])
                if math.isnan(values[slot]):
                    return [(t, p) for t, p in zip(tokens, logprobs)]  # the caller reports the NaN
                ended = (eos_id is not None and picked[slot] == eos_id) or stopped(tokens[r])
                if not ended:
                    keep.append(slot)
            if step + 1 == max_tokens or not keep:
                break
            if len(keep) < len(active):
                selected = torch.tensor(keep, device=device)
                cache.batch_select_indices(selected)
                mask = mask.index_select(0, selected)
                chosen = chosen.index_select(0, selected)
                active = [active[slot] for slot in keep]
            mask = torch.cat([mask, torch.ones((len(active), 1), dtype=mask.dtype, device=device)], dim=1)
            positions = torch.tensor([[lengths[r] + step] for r in active], device=device)
            output = self.model(
                input_ids=chosen[:, None],
                attention_mask=mask,
                position_ids=positions,
                use_cache=True,
                **{scoring.cache_keyword(self.model): cache},
            )
            logits = output.logits[:, -1]
        return [(t, p) for t, p in zip(tokens, logprobs)]

    def generate(
        self,
        plan: PrefixPlan,
        kept: list[list[tuple[Any, Any]]],
        rows: Sequence[Row],
        max_tokens: int,
        eos_id: int | None,
        stopped: Callable[[list[int]], bool],
    ) -> list[tuple[list[int], list[float]]]:
        """Greedy tokens and their log-probabilities per row: one prefill, then :meth:`decode`."""
        return self.decode(self.prefill(plan, kept, rows, max_tokens - 1), max_tokens, eos_id, stopped)

    # -- the one forward pass ----------------------------------------------------------------------------

    def _prefix_length(self, plan: PrefixPlan, row: Row) -> int:
        return plan.nodes[row.node].depth if row.node is not None else 0

    def _mask(self, plan: PrefixPlan, rows: Sequence[Row], width: int) -> Any:
        """Attention mask over [left-padded prefix | right-padded suffix]."""
        import torch

        longest = max(len(row.suffix) for row in rows)
        mask = torch.zeros((len(rows), width + longest), dtype=torch.long)
        for r, row in enumerate(rows):
            mask[r, width - self._prefix_length(plan, row) : width] = 1
            mask[r, width : width + len(row.suffix)] = 1
        return mask

    def _forward(
        self,
        plan: PrefixPlan,
        kept: list[list[tuple[Any, Any]]],
        rows: Sequence[Row],
        *,
        want_cache: bool,
        hidden: bool = False,
        last_only: bool = False,
        spare: int = 0,
    ) -> tuple[Any, Any, int]:
        """Run the rows' suffixes on their prefixes: (hidden states or logits, the cache, the prefix width).

        ``last_only`` returns logits at each row's last suffix token only ([rows, vocab]).
        """
        import torch

        device = self.device
        width = max(self._prefix_length(plan, row) for row in rows)
        room = max(len(row.suffix) for row in rows) + spare  # the suffix and any decoding steps write in place
        cache = self._gathered(plan, kept, rows, width, room) if width else None
        if cache is None and want_cache:
            cache = self._empty_cache()
        ids, _ = scoring.pad([row.suffix for row in rows], self.pad_id, left=False)
        mask = self._mask(plan, rows, width)
        positions = torch.zeros(ids.shape, dtype=torch.long)
        for r, row in enumerate(rows):
            start = self._prefix_length(plan, row)
            positions[r, : len(row.suffix)] = torch.arange(start, start + len(row.suffix))
        inputs: dict[str, Any] = {
            "input_ids": ids.to(device),
            "attention_mask": mask.to(device),
            "position_ids": positions.to(device),
            "use_cache": cache is not None,
        }
        if cache is not None:
            inputs[scoring.cache_keyword(self.model)] = cache
        if hidden:
            head = self._head()
            assert head is not None
            output = head[0](**inputs)
            return output.last_hidden_state, cache, width
        if last_only:
            last = torch.tensor([len(row.suffix) - 1 for row in rows], device=device)
            head = self._head()
            if head is not None:
                states = head[0](**inputs).last_hidden_state
                picked = states[torch.arange(len(rows), device=device), last]
                return head[1](picked), cache, width
            output = self.model(**inputs)
            return output.logits[torch.arange(len(rows), device=device), last], cache, width
        if want_cache:  # nodes: only the keys and values matter
            decoder = self._head()
            runner = decoder[0] if decoder is not None else self.model
            runner(**inputs)
            return None, cache, width
        return self.model(**inputs).logits, cache, width

    def _empty_cache(self) -> Any:
        from transformers import DynamicCache

        return DynamicCache()

    def _gathered(self, plan: PrefixPlan, kept: list[list[tuple[Any, Any]]], rows: Sequence[Row], width: int, room: int) -> Any:
        """A cache with each row's prefix (its nodes' spans, in order), padded on the left to ``width``, and room for
        ``room`` more tokens per row (:func:`reserved_layer`)."""
        from transformers import DynamicCache

        layers = len(next(k for k in kept if k))
        cache = DynamicCache()
        for layer in range(layers):
            sample_keys, sample_values = next(k for k in kept if k)[layer]
            heads, _, key_dim = sample_keys.shape
            value_dim = sample_values.shape[-1]
            keys = sample_keys.new_zeros((len(rows), heads, width + room, key_dim))
            values = sample_values.new_zeros((len(rows), heads, width + room, value_dim))
            for r, row in enumerate(rows):
                if row.node is None:
                    continue
                end = width
                for node in reversed(plan.path(row.node)):
                    node_keys, node_values = kept[node][layer]
                    span = node_keys.shape[1]
                    keys[r, :, end - span : end] = node_keys
                    values[r, :, end - span : end] = node_values
                    end -= span
            cache.layers.append(reserved_layer(keys, values, width))
        if len(cache.layers) != layers:
            raise SharingUnsupported("its cache does not keep one entry per layer")
        return cache


@dataclass
class Prefilled:
    """Rows after their prefill: the logits choosing each one's first token, its cache and mask, its length so far."""

    logits: Any
    cache: Any
    mask: Any
    lengths: list[int]

    @property
    def width(self) -> int:
        return int(self.mask.shape[1])


def reserved_layer(keys: Any, values: Any, filled: int) -> Any:
    """A cache layer over buffers ``[rows, heads, capacity, dim]`` whose first ``filled`` columns hold the keys and
    values so far. A decoding step writes its column in place, where the default layer concatenates, copying the
    whole cache at every step (on a CPU that copy costs as much as the step's own work)."""
    return _reserved_layer_class()(keys, values, filled)


@functools.cache
def _reserved_layer_class() -> type:
    from transformers.cache_utils import DynamicLayer

    class ReservedLayer(DynamicLayer):  # type: ignore[no-untyped-call]  # transformers' __init_subclass__ is untyped
        def __init__(self, keys: Any, values: Any, filled: int) -> None:
            super().__init__()  # type: ignore[no-untyped-call]  # transformers' DynamicLayer.__init__ is untyped
            self._keys, self._values, self._filled = keys, values, filled
            self.device, self.dtype, self.is_initialized = keys.device, keys.dtype, True
            self._expose()

        def _expose(self) -> None:
            self.keys = self._keys[:, :, : self._filled]
            self.values = self._values[:, :, : self._filled]

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            import torch

            end = self._filled + key_states.shape[-2]
            if end > self._keys.shape[-2]:  # out of room: grow, with as much room again
                assert self.keys is not None and self.values is not None  # set by _expose
                more = end - self._filled + self._keys.shape[-2] - self._filled
                self._keys = torch.cat([self.keys, self._keys.new_zeros((*self._keys.shape[:2], more, self._keys.shape[3]))], 2)
                self._values = torch.cat(
                    [self.values, self._values.new_zeros((*self._values.shape[:2], more, self._values.shape[3]))], 2
                )
            self._keys[:, :, self._filled : end] = key_states
            self._values[:, :, self._filled : end] = value_states
            self._filled = end
            self._expose()
            return self.keys, self.values

        def batch_select_indices(self, indices: Any) -> None:
            self._keys, self._values = self._keys[indices], self._values[indices]
            self._expose()

    return ReservedLayer


def _layers(cache: Any) -> Iterator[tuple[Any, Any]]:
    """(keys, values) per layer of a dynamic cache, whatever its version's layout."""
    layers = getattr(cache, "layers", None)
    if layers is None:
        raise SharingUnsupported("its cache has no per-layer keys and values")
    for layer in layers:
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if keys is None or values is None:
            raise SharingUnsupported(f"its cache layers ({type(layer).__name__}) hold no keys and values")
        yield keys, values
