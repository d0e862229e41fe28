"""Log-likelihood scoring of a batch on the device: three ways to run the model, one vectorised reduction.

A batch is a few distinct contexts and, for each, the continuations to score after it. The strategies
differ only in how the model sees them:

- ``shared``: the contexts once (left-padded), then every continuation from its context's keys/values
  (the cache re-indexed to one row per continuation). Two passes; the context is computed once.
- ``full``: one right-padded row per continuation (context + continuation), with the LM head applied only
  to the scored positions. One pass; the context is computed once per continuation.
- ``packed``: rows of token trees (:mod:`.tree_packing`): a context once and every continuation after it,
  each seeing its context and itself through a mask built on the device, position ids that restart at the
  context's end. One pass; the context is computed once. A :class:`ScoreBatch` packs one row per context; the
  backend's packed path (:mod:`.hf_packed`) packs a whole call's requests, several contexts to a row, and
  computes the prefixes they share once when prefix sharing is on.

Whatever the strategy, the scored rows of logits are reduced on the device in one go (log-sum-exp per distinct
scored position, in float32 from a float32 LM head, target logits by index, per-request sums by ``index_add``,
greedy check by ``argmax``). The indices go to the device in one transfer and one small tensor per batch comes
back: no per-request tensor work and one device sync per batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .tree_packing import PackedRow, TreeRequest, pack, padded_rows

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
        split = self._split()
        run = split[0] if split is not None else self.model  # the decoder alone when the head can be applied apart
        ids, mask = self._pad(batch.contexts, left=True)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        first = run(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            position_ids=positions.to(device),
            use_cache=True,
            **({} if split is not None else {"logits_to_keep": 1}),
        )
        members = batch.members
        rows = torch.tensor([m.row for m in members], device=device)
        # One row per context, shared by all its continuations.
        head_logits = split[1](first.last_hidden_state[:, -1]) if split is not None else first.logits[:, -1].float()
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
            second = run(
                input_ids=tail_ids.to(device),
                attention_mask=torch.cat([mask[rows.cpu()], tail_mask], dim=-1).to(device),
                position_ids=tail_positions.to(device),
                use_cache=True,
                **{cache_keyword(run): cache},
            )
            flat = [(r, k) for r, m in enumerate(members) for k in range(len(m.continuation) - 1)]
            index = torch.tensor([r * (longest - 1) + k for r, k in flat], device=device)
            targets = torch.tensor([members[r].continuation[k + 1] for r, k in flat], device=device)
            owner = torch.tensor([r for r, _ in flat], device=device)
            if split is not None:
                table = split[1](second.last_hidden_state.flatten(0, 1).index_select(0, index))
                more_sums, more_misses = reduce_table(table, torch.arange(len(flat), device=device), targets, owner, len(members))
            else:
                more_sums, more_misses = reduce_rows(second.logits.flatten(0, 1), index, targets, owner, len(members))
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
        """One row per context: the context once, every continuation after it (a tree of depth one, see
        :mod:`.tree_packing`); members come back in batch order."""
        requests = [
            TreeRequest(tuple(batch.contexts[m.row]) + tuple(m.continuation[:-1]), len(batch.contexts[m.row]) - 1, tuple(m.continuation), (m.row,))
            for m in batch.members
        ]
        rows = pack(requests, cap=None)  # a group, hence a row, per context
        packed = self.score_rows(rows, requests)
        order = [index for row in rows for index in row.members]
        logprobs, greedy = [0.0] * len(order), [False] * len(order)
        for position, index in enumerate(order):
            logprobs[index], greedy[index] = packed.logprobs[position], packed.greedy[position]
        return Scores(logprobs, greedy)

    def score_rows(self, rows: Sequence[PackedRow], requests: Sequence[TreeRequest]) -> Scores:
        """Scores of the rows' members (row by row, each row's members in order) from one forward pass.

        The host builds every index the pass needs and sends them in one transfer; the mask is built on the
        device from each column's subtree end; logits are taken at the distinct scored columns only.
        """
        import torch

        tokens, depths, ends = padded_rows(rows, self.pad_id)
        width = len(tokens[0])
        ids = [token for row_tokens in tokens for token in row_tokens]
        depth = [value for row_depth in depths for value in row_depth]
        end = [value for row_end in ends for value in row_end]
        flat: list[int] = []
        targets: list[int] = []
        owner: list[int] = []
        members = 0
        for r, row in enumerate(rows):
            for index, columns in zip(row.members, row.scored):
                flat += [r * width + column for column in columns]
                targets += requests[index].targets
                owner += [members] * len(columns)
                members += 1
        with torch.inference_mode():
            device = self.device
            distinct, inverse = distinct_rows(flat)
            sizes = [len(ids), len(depth), len(end), len(distinct), len(inverse), len(targets), len(owner)]
            moved = one_transfer([*ids, *depth, *end, *distinct, *inverse, *targets, *owner], device)
            ids_d, depth_d, end_d, distinct_d, inverse_d, targets_d, owner_d = moved.split(sizes)
            shape = (len(rows), width)
            mask = tree_mask(end_d.view(shape), self.dtype)
            inputs = {"input_ids": ids_d.view(shape), "attention_mask": mask, "position_ids": depth_d.view(shape)}
            table = self._logits_at(inputs, distinct_d)
            sums, misses = reduce_table(table, inverse_d, targets_d, owner_d, members)
            return to_host(sums, misses)

    # -- shared pieces ----------------------------------------------------------------------------------

    def _score_positions(
        self, ids: Any, mask: Any, position_ids: Any, flat: list[int], targets: list[int], owner: list[int], count: int
    ) -> Scores:
        """Run the rows, apply the LM head at the scored positions only, and reduce them per request."""
        device = self.device
        distinct, inverse = distinct_rows(flat)
        moved = one_transfer([*distinct, *inverse, *targets, *owner], device)
        distinct_d, inverse_d, targets_d, owner_d = moved.split([len(distinct), len(inverse), len(targets), len(owner)])
        inputs: dict[str, Any] = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
        if position_ids is not None:
            inputs["position_ids"] = position_ids.to(device)
        table = self._logits_at(inputs, distinct_d)
        sums, misses = reduce_table(table, inverse_d, targets_d, owner_d, count)
        return to_host(sums, misses)

    def _logits_at(self, inputs: dict[str, Any], positions: Any) -> Any:
        """Float32 logits at ``positions`` of the flattened rows: the LM head applied there only when it can be split."""
        head = self._split()
        if head is not None:
            decoder, lm_head = head
            hidden = decoder(**inputs, use_cache=False).last_hidden_state
            return lm_head(hidden.flatten(0, 1).index_select(0, positions))
        return self.model(**inputs, use_cache=False).logits.flatten(0, 1).index_select(0, positions).float()

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
                with torch.inference_mode():
                    whole = self.model(input_ids=probe, use_cache=False).logits[0].float()
                    split = head(decoder(input_ids=probe, use_cache=False).last_hidden_state)[0].float()
                scale = float(torch.nan_to_num(whole.abs(), nan=0.0, posinf=0.0).max())  # NaN weights: no split
                if split.shape == whole.shape and torch.allclose(split, whole, rtol=1e-3, atol=1e-3 * scale):
                    self._head = (decoder, Float32Head(head))
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
    return reduce_table(logits.index_select(0, distinct).float(), inverse, targets, owners, count)


def reduce_table(table: Any, inverse: Any, targets: Any, owners: Any, count: int) -> tuple[Any, Any]:
    """Per-request sums of log P(target) and argmax misses from float32 ``table`` (one row per distinct scored
    position; ``inverse`` maps each scored token to its row). Sums are float64, each request's tokens added in order,
    whichever path computed the table, so paths differ only by what the model computed."""
    import torch

    normaliser = torch.logsumexp(table, dim=-1)
    best = table.argmax(dim=-1)
    chosen = table[inverse, targets] - normaliser[inverse]
    sums = torch.zeros(count, dtype=torch.float64, device=table.device).index_add_(0, owners, chosen.double())
    misses = torch.zeros(count, dtype=torch.float64, device=table.device).index_add_(
        0, owners, (best[inverse] != targets).double()
    )
    return sums, misses


def distinct_rows(flat: Sequence[int]) -> tuple[list[int], list[int]]:
    """The distinct values of ``flat`` in first-seen order, and each entry's index among them (on the host, so the
    device never waits on a ``unique``): a position shared by several requests gets one row of logits."""
    where: dict[int, int] = {}
    inverse = [where.setdefault(value, len(where)) for value in flat]
    return list(where), inverse


def one_transfer(values: list[int], device: Any) -> Any:
    """``values`` as one int64 tensor on ``device``: a single copy (from pinned memory, not waited on, on a GPU)."""
    import torch

    host = torch.tensor(values, dtype=torch.long)
    if getattr(device, "type", str(device)) == "cuda":
        return host.pin_memory().to(device, non_blocking=True)
    return host.to(device)


def tree_mask(end: Any, dtype: Any) -> Any:
    """Additive (rows, 1, q, k) mask of packed token trees: query ``q`` sees key ``k`` when ``k <= q < end[k]``
    (``k`` is ``q`` or one of its ancestors in pre-order); elsewhere the dtype's minimum."""
    import torch

    width = end.shape[-1]
    columns = torch.arange(width, device=end.device)
    query, key = columns[None, :, None], columns[None, None, :]
    allowed = (key <= query) & (query < end[:, None, :])
    return torch.zeros(allowed.shape, dtype=dtype, device=end.device).masked_fill_(~allowed, torch.finfo(dtype).min)[:, None]


class Float32Head:
    """An LM head whose logits are float32: from 16-bit hidden states, a linear head's product is computed in float32
    (a float32 copy of its weight, made once and kept: vocabulary x hidden x 4 bytes), so the logits a sum is taken
    over carry no 16-bit rounding (about 0.4% of a logit's size in bfloat16), whichever path computed the states."""

    def __init__(self, head: Any) -> None:
        self.head = head
        self._weights: tuple[Any, Any] | None = None

    def __call__(self, hidden: Any) -> Any:
        import torch

        if hidden.dtype == torch.float32 or not isinstance(self.head, torch.nn.Linear):
            return self.head(hidden).float()
        if self._weights is None:
            bias = self.head.bias
            self._weights = (self.head.weight.float(), bias.float() if bias is not None else None)
        return torch.nn.functional.linear(hidden.float(), *self._weights)


def to_host(sums: Any, misses: Any) -> Scores:
    """One transfer per batch: the per-request sums and miss counts together."""
    import torch

    logprobs, missed = torch.stack([sums, misses]).cpu().tolist()
    return Scores(logprobs, [m == 0 for m in missed])
