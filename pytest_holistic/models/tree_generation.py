"""Greedy generation over packed token trees: prompts that share prefixes prefill and decode side by side in one row.

Prefill runs a row's prompts laid out as a token trie (:mod:`.tree_packing`) in one forward pass, and its keys and
values stay in the row's cache once. Each decoding step then feeds one token per prompt of the row, appended to the
row: a prompt's new token attends to its own prompt's path (the ancestors of the prompt's last column, ``key <= last
< end[key]``) and to its own earlier tokens only, at the position after its own prompt. A shared prefix is thus kept
once per row and read once per step for all the prompts below it, and no cache is copied per prompt (the cascade /
shared-prefix attention idea, for decoding). A finished prompt keeps its slot until the row ends (its tokens are
ignored): slots never move, so the mask of the prefix part is built once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from . import scoring
from .tree_packing import PackedRow, TreeRequest, padded_rows


def prompt_requests(prompts: Sequence[Sequence[int]]) -> list[TreeRequest]:
    """Prompts as trie sequences whose one scored column is their last token (what predicts the first new token)."""
    return [TreeRequest(tuple(prompt), len(prompt) - 1, (0,)) for prompt in prompts]


def generate_rows(
    scorer: scoring.Scorer,
    rows: Sequence[PackedRow],
    requests: Sequence[TreeRequest],
    max_tokens: int,
    eos_id: int | None,
    stopped: Callable[[list[int]], bool],
) -> list[tuple[list[int], list[float]]]:
    """Greedy tokens and their log-probabilities for every member of ``rows`` (row by row, members in order), until
    each one's end token, ``stopped`` or ``max_tokens``."""
    import torch
    from transformers import DynamicCache

    split = scorer.head_split()
    if split is None:
        raise NotImplementedError("its logits are not the LM head of its decoder's states")
    decoder, head = split
    device, dtype = scorer.device, scorer.dtype
    width = max(row.width for row in rows)
    slots = max(len(row.members) for row in rows)
    ids, depth, end = padded_rows(rows, scorer.pad_id)
    last = [[columns[-1] for columns in row.scored] + [-1] * (slots - len(row.members)) for row in rows]
    lengths = [[len(requests[m].fed) for m in row.members] + [0] * (slots - len(row.members)) for row in rows]
    with torch.inference_mode():
        end_d = torch.tensor(end, device=device)
        last_d = torch.tensor(last, device=device)
        cache = DynamicCache()
        keyword = scoring.cache_keyword(decoder)
        states = decoder(
            input_ids=torch.tensor(ids, device=device),
            attention_mask=scoring.tree_mask(end_d, dtype),
            position_ids=torch.tensor(depth, device=device),
            use_cache=True,
            **{keyword: cache},
        ).last_hidden_state
        picked = states[torch.arange(len(rows), device=device)[:, None], last_d.clamp(min=0)]  # (rows, slots, hidden)
        columns = torch.arange(width, device=device)
        # Which prefill columns each slot sees: its prompt's path; a padding slot sees none of them.
        prefix = (columns[None, None, :] <= last_d[:, :, None]) & (last_d[:, :, None] < end_d[:, None, :])
        own = torch.eye(slots, dtype=torch.bool, device=device)[None].expand(len(rows), slots, slots)
        positions = torch.tensor(lengths, device=device)
        outputs: list[tuple[list[int], list[float]]] = [([], []) for _ in range(sum(len(row.members) for row in rows))]
        owners = [(r, slot) for r, row in enumerate(rows) for slot in range(len(row.members))]
        running = set(range(len(owners)))
        seen: list[Any] = []
        for step in range(max_tokens):
            table = head(picked.flatten(0, 1))
            chosen = table.argmax(dim=-1)
            values = (table.gather(1, chosen[:, None]).squeeze(1) - torch.logsumexp(table, dim=-1)).tolist()
            tokens = chosen.tolist()
            for number, (r, slot) in enumerate(owners):
                if number not in running:
                    continue
                flat = r * slots + slot
                outputs[number][0].append(tokens[flat])
                outputs[number][1].append(values[flat])
                if math.isnan(values[flat]):
                    return outputs  # the caller reports the NaN
                if (eos_id is not None and tokens[flat] == eos_id) or stopped(outputs[number][0]):
                    running.discard(number)
            if step + 1 == max_tokens or not running:
                break
            seen.append(own)
            allowed = torch.cat([prefix, *seen], dim=-1)
            mask = torch.zeros(allowed.shape, dtype=dtype, device=device).masked_fill_(~allowed, torch.finfo(dtype).min)
            picked = decoder(
                input_ids=chosen.view(len(rows), slots),
                attention_mask=mask[:, None],
                position_ids=positions + step,
                use_cache=True,
                **{keyword: cache},
            ).last_hidden_state
        return outputs
