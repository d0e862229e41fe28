"""Log-likelihood scoring of a batch on the device: three ways to run the model, one vectorised reduction.

A batch is a few distinct contexts and, for each, the continuations to score after it. The strategies
differ only in how the model sees them:

- ``shared``: the contexts once (left-padded), then every continuation from its context's keys/values
  (the cache re-indexed to one row per continuation). Two passes; the context is computed once.
- ``full``: one right-padded row per continuation (context + continuation), with the LM head applied only
  to the scored positions. One pass; the context is computed once per continuation.
- ``packed``: one row per context holding the context once and every continuation after it, with a block
  attention mask (each continuation sees the context and itself) and position ids that restart at the
  context's end. One pass; the context is computed once.

Whatever the strategy, the scored rows of logits are reduced on the device in one go (log-sum-exp per row,
target logits by index, per-request sums by ``index_add``, greedy check by ``argmax``) and one small tensor
per batch goes to the host: no per-request tensor work and one device sync per batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Strategy = Literal["shared", "full", "packed"]


@dataclass(frozen=True)
class Member:
    """One request of a batch: which context row it continues, and its continuation's tokens."""

    row: int
    continuation: Sequence[int]


@dataclass(frozen=True)
class ScoreBatch:
    """Distinct contexts (token tuples) and the requests that continue them, in the order results are wanted."""

    contexts: Sequence[Sequence[int]]
    members: Sequence[Member]

    def padded_tokens(self, strategy: Strategy) -> int:
        """Tokens the strategy feeds the model, padding included: what a token budget limits."""
        return padded_tokens(strategy, [len(c) for c in self.contexts], [(m.row, len(m.continuation)) for m in self.members])


def padded_tokens(strategy: Strategy, context_lengths: Sequence[int], members: Sequence[tuple[int, int]]) -> int:
    """The padded size of a batch under ``strategy``, from lengths alone (batches are planned before encoding)."""
    if not members:
        return 0
    if strategy == "full":
        return len(members) * max(context_lengths[row] + length - 1 for row, length in members)
    if strategy == "packed":
        rows = list(context_lengths)
        for row, length in members:
            rows[row] += length - 1
        return len(rows) * max(rows)
    tail = max(length for _, length in members) - 1
    return len(context_lengths) * max(context_lengths) + len(members) * (max(context_lengths) + tail) * (tail > 0)


@dataclass(frozen=True)
class Scores:
    """Per request (in batch order): summed log-probability and whether every token was the argmax."""

    logprobs: list[float]
    greedy: list[bool]


class Scorer:
    """Runs one strategy on a causal LM; ``pad_id`` fills padding, which is always masked out."""

    def __init__(self, model: Any, pad_id: int) -> None:
        self.model = model
        self.pad_id = pad_id
        # (decoder, LM head); None: no usable split; False: not checked yet
        self._head: tuple[Any, Any] | None | Literal[False] = False

    # -- the three strategies ------------------------------------------------------------------------

    def score(self, strategy: Strategy, batch: ScoreBatch) -> Scores:
        import torch

        with torch.inference_mode():
            if strategy == "shared":
                return self._shared(batch)
            if strategy == "packed":
                return self._packed(batch)
            return self._full(batch)

    def _shared(self, batch: ScoreBatch) -> Scores:
        import torch

        device = self.device
        ids, mask = self._pad(batch.contexts, left=True)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        first = self.model(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            position_ids=positions.to(device),
            use_cache=True,
            logits_to_keep=1,
        )
        members = batch.members
        rows = torch.tensor([m.row for m in members], device=device)
        head_logits = first.logits[:, -1]  # one row per context, shared by all its continuations
        heads = torch.tensor([m.continuation[0] for m in members], device=device)
        owners = torch.arange(len(members), device=device)
        sums, misses = reduce_rows(head_logits, rows, heads, owners, len(members))
        longest = max(len(m.continuation) for m in members)
        if longest > 1:
            cache = returned_cache(first)
            cache.reorder_cache(rows)
            tails = [m.continuation[:-1] for m in members]
            tail_ids, tail_mask = self._pad(tails, left=False, width=longest - 1)
            context_lengths = mask.sum(-1)[rows.cpu()]
            # Padding after a shorter continuation would run past the window (learned positions raise): park it at 0.
            tail_positions = (context_lengths[:, None] + torch.arange(longest - 1)[None, :]).masked_fill(tail_mask == 0, 0)
            second = self.model(
                input_ids=tail_ids.to(device),
                attention_mask=torch.cat([mask[rows.cpu()], tail_mask], dim=-1).to(device),
                position_ids=tail_positions.to(device),
                use_cache=True,
                **{cache_keyword(self.model): cache},
            )
            flat = [(r, k) for r, m in enumerate(members) for k in range(len(m.continuation) - 1)]
            index = torch.tensor([r * (longest - 1) + k for r, k in flat], device=device)
            targets = torch.tensor([members[r].continuation[k + 1] for r, k in flat], device=device)
            owner = torch.tensor([r for r, _ in flat], device=device)
            logits = second.logits.flatten(0, 1)
            more_sums, more_misses = reduce_rows(logits, index, targets, owner, len(members))
            sums, misses = sums + more_sums, misses + more_misses
        return to_host(sums, misses)

    def _full(self, batch: ScoreBatch) -> Scores:

        members = batch.members
        rows = [list(batch.contexts[m.row]) + list(m.continuation[:-1]) for m in members]
        ids, mask = self._pad(rows, left=False)
        width = ids.shape[1]
        flat, targets, owner = [], [], []
        for r, m in enumerate(members):
            start = len(batch.contexts[m.row]) - 1
            for k, token in enumerate(m.continuation):
                flat.append(r * width + start + k)
                targets.append(token)
                owner.append(r)
        return self._score_positions(ids, mask, None, flat, targets, owner, len(members))

    def _packed(self, batch: ScoreBatch) -> Scores:
        import torch

        members = batch.members
        layout: list[list[int]] = [list(context) for context in batch.contexts]
        positions: list[list[int]] = [list(range(len(context))) for context in batch.contexts]
        spans: list[tuple[int, int, int]] = []  # (row, first column, length) of each continuation's fed tokens
        for m in members:
            fed = list(m.continuation[:-1])
            spans.append((m.row, len(layout[m.row]), len(fed)))
            end = len(batch.contexts[m.row])
            layout[m.row] += fed
            positions[m.row] += range(end, end + len(fed))
        width = max(len(row) for row in layout)
        ids, _ = self._pad(layout, left=False, width=width)
        position_ids = torch.zeros((len(layout), width), dtype=torch.long)
        for r, placed in enumerate(positions):
            position_ids[r, : len(placed)] = torch.tensor(placed)
        # Segment of each column: 0 the context, i + 1 the i-th continuation of the row, -1 padding.
        segment = torch.full((len(layout), width), -1, dtype=torch.long)
        for r, context in enumerate(batch.contexts):
            segment[r, : len(context)] = 0
        for number, (row, first, length) in enumerate(spans, start=1):
            segment[row, first : first + length] = number
        query, key = segment[:, :, None], segment[:, None, :]
        causal = torch.ones(width, width, dtype=torch.bool).tril()[None]
        allowed = causal & ((key == 0) | (key == query)) & (query >= 0) & (key >= 0)
        allowed |= torch.eye(width, dtype=torch.bool)[None]  # a padding row attends to itself, so softmax stays finite
        dtype = self.dtype
        mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)[:, None]
        flat, targets, owner = [], [], []
        for r, (m, (row, first, length)) in enumerate(zip(members, spans)):
            scored = [len(batch.contexts[row]) - 1, *range(first, first + length)]
            for column, token in zip(scored, m.continuation):
                flat.append(row * width + column)
                targets.append(token)
                owner.append(r)
        return self._score_positions(ids, mask, position_ids, flat, targets, owner, len(members))

    # -- shared pieces ----------------------------------------------------------------------------------

    def _score_positions(
        self, ids: Any, mask: Any, position_ids: Any, flat: list[int], targets: list[int], owner: list[int], count: int
    ) -> Scores:
        """Run the rows, apply the LM head at the scored positions only, and reduce them per request."""
        import torch

        device = self.device
        index = torch.tensor(flat, device=device)
        inputs: dict[str, Any] = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
        if position_ids is not None:
            inputs["position_ids"] = position_ids.to(device)
        head = self._split()
        if head is not None:
            decoder, lm_head = head
            hidden = decoder(**inputs, use_cache=False).last_hidden_state
            logits = lm_head(hidden.flatten(0, 1).index_select(0, index))
            picked = torch.arange(len(flat), device=device)
        else:
            logits = self.model(**inputs, use_cache=False).logits.flatten(0, 1)
            picked = index
        target = torch.tensor(targets, device=device)
        sums, misses = reduce_rows(logits, picked, target, torch.tensor(owner, device=device), count)
        return to_host(sums, misses)

    def head_split(self) -> tuple[Any, Any] | None:
        """(decoder, LM head) when the head may be applied to chosen positions only, else None (checked once)."""
        return self._split()

    def _split(self) -> tuple[Any, Any] | None:
        """(decoder, LM head) when logits are exactly ``lm_head(decoder(...).last_hidden_state)``.

        Checked once on a short probe against the whole model, so architectures that scale, soft-cap or
        otherwise transform their logits after the head are run whole instead (full logits, then selected).
        """
        if self._head is False:
            self._head = None
            head = self.model.get_output_embeddings() if hasattr(self.model, "get_output_embeddings") else None
            decoder = getattr(self.model, "base_model", None)
            if head is not None and decoder is not None and decoder is not self.model:
                import torch

                vocab = int(getattr(self.model.config, "vocab_size", 2) or 2)
                probe = (torch.arange(8) * 7919 % vocab)[None].to(self.device)
                whole = self.model(input_ids=probe, use_cache=False).logits[0].float()
                split = head(decoder(input_ids=probe, use_cache=False).last_hidden_state)[0].float()
                if split.shape == whole.shape and torch.allclose(split, whole, rtol=1e-3, atol=1e-3 * float(whole.abs().max())):
                    self._head = (decoder, head)
        return self._head

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    @property
    def dtype(self) -> Any:
        return next(self.model.parameters()).dtype

    def _pad(self, rows: Sequence[Sequence[int]], *, left: bool, width: int | None = None) -> tuple[Any, Any]:
        return pad(rows, self.pad_id, left=left, width=width)


def cache_keyword(model: Any) -> str:
    """The forward argument that takes a key/value cache: ``cache`` in newer transformers, ``past_key_values`` before.

    Read from the first ``forward`` in the model's class hierarchy that names either: a subclass whose ``forward``
    takes ``*args, **kwargs`` (a wrapper that rescales the logits, say) passes them on to its base's, whose
    signature is the one that counts; guessing ``past_key_values`` there draws transformers' deprecation warning.
    """
    import inspect

    for klass in type(model).__mro__:
        forward = vars(klass).get("forward")
        if forward is None:
            continue
        try:
            parameters = inspect.signature(forward).parameters
        except (TypeError, ValueError):
            continue
        for name in ("cache", "past_key_values"):
            if name in parameters:
                return name
    return "past_key_values"


def returned_cache(output: Any) -> Any:
    """The key/value cache a forward pass returned, under either of its names."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def pad(rows: Sequence[Sequence[int]], pad_id: int, *, left: bool, width: int | None = None) -> tuple[Any, Any]:
    """Token rows as (ids, attention mask) on the host: left-padded for prompts and contexts, right-padded otherwise."""
    import torch

    width = width if width is not None else max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        if row:
            span = slice(width - len(row), width) if left else slice(0, len(row))
            ids[r, span] = torch.tensor(list(row))
            mask[r, span] = 1
    return ids, mask


def reduce_rows(logits: Any, rows: Any, targets: Any, owners: Any, count: int) -> tuple[Any, Any]:
    """Per-request sums of log P(target) over the given rows of ``logits``, and how many were not the argmax.

    Log-sum-exp is taken once per distinct row, in float32 whatever the model's dtype; sums are float64.
    """
    import torch

    distinct, inverse = torch.unique(rows, return_inverse=True)
    table = logits.index_select(0, distinct).float()
    normaliser = torch.logsumexp(table, dim=-1)
    best = table.argmax(dim=-1)
    chosen = table[inverse, targets] - normaliser[inverse]
    sums = torch.zeros(count, dtype=torch.float64, device=logits.device).index_add_(0, owners, chosen.double())
    misses = torch.zeros(count, dtype=torch.float64, device=logits.device).index_add_(
        0, owners, (best[inverse] != targets).double()
    )
    return sums, misses


def to_host(sums: Any, misses: Any) -> Scores:
    """One transfer per batch: the per-request sums and miss counts together."""
    import torch

    logprobs, missed = torch.stack([sums, misses]).cpu().tolist()
    return Scores(logprobs, [m == 0 for m in missed])
