"""The hand-written best loops that pytest-holistic is measured against (run as its own process).

Multiple choice, three ways of scoring every choice of a context (all give the same numbers):
  * ``mc`` (shared): each context is encoded once, ``K`` contexts per left-padded batch, and every choice
    is scored from the context's cached keys/values, reordered to one row per choice (the fastest
    variant measured on CPU);
  * ``mc-full``: one right-padded row per (context, choice), and the LM head applied only to the
    hidden states of the scored positions;
  * ``mc-packed``: one row per context holding the context once and every choice after it, with a 4-D
    block attention mask (a choice sees the context and itself, causally; its positions restart at
    the context's end), so the context is encoded once without copying a cache.
``check`` runs all three on DATA in float32 and writes their largest differences.
Generation (``gen``): greedy, left-padded batches sorted by prompt length, ``model.generate``.
Rendered requests (``requests``): rows ``{"prompt", "max_tokens", "stop"}`` (a report's prompts), fed as the
plugin feeds them (no special tokens, cut from the left to leave room for the answer), grouped by
``(max_tokens, stop)`` and generated greedily like ``gen``, each prompt computed whole (no prefix shared);
the text is cut at the end-of-text token and at the first stop sequence.
The unique-token limit (``limit``): the same rows' tokens put through a token prefix tree (its nodes are the
tokens a perfect prefix cache computes), and this machine's rate for them: dense forward passes without
padding over full batches of ``BATCH`` prompts of similar length, each cropped to the shortest.

usage: python bare_loop.py mc|mc-full|mc-packed|gen|requests|limit|check MODEL_DIR DATA.jsonl BATCH OUT.json
                           [--device cpu|cuda] [--dtype float32|bfloat16] [--max-new-tokens 20]
                           [--rate-batches 6]
OUT.json holds compute_s (model work, synchronised), load_s, startup_s, tokens and the result.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

started = time.perf_counter()
import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

Item = tuple[list[int], list[list[int]]]
"""One instance as tokens: (context, [choice continuation, ...])."""


def encode(tokenizer: Any, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work, so a wall-clock reading covers it (a no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def pad_id(tokenizer: Any) -> int:
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id


def mc_items(tokenizer: Any, rows: list[dict]) -> list[Item]:
    """Context and choices as the plugin's multiple_choice_separate adapter sends them (choice after a space)."""
    return [
        (encode(tokenizer, row["query"]) or [tokenizer.bos_token_id], [encode(tokenizer, " " + c) for c in row["choices"]])
        for row in rows
    ]


def by_context_length(items: list[Item], k: int) -> list[list[int]]:
    """Batches of ``k`` instance indices, longest context first, so padding stays small."""
    order = sorted(range(len(items)), key=lambda i: -len(items[i][0]))
    return [order[start : start + k] for start in range(0, len(order), k)]


def score_shared(model: Any, tokenizer: Any, items: list[Item], k: int) -> list[list[float]]:
    """(a) Encode each context once, reorder its KV cache to one row per choice, then feed the choices."""
    device = model.device
    pad = pad_id(tokenizer)
    scores: list[list[float]] = [[] for _ in items]
    with torch.inference_mode():
        for batch in by_context_length(items, k):
            width = max(len(items[i][0]) for i in batch)
            ids = torch.full((len(batch), width), pad)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, i in enumerate(batch):
                ctx = items[i][0]
                ids[r, width - len(ctx) :] = torch.tensor(ctx)
                mask[r, width - len(ctx) :] = 1
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            out = model(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                position_ids=positions.to(device),
                use_cache=True,
                logits_to_keep=1,
            )
            rows_of = [r for r, i in enumerate(batch) for _ in items[i][1]]
            conts = [c for i in batch for c in items[i][1]]
            index = torch.tensor(rows_of)
            first_tokens = torch.tensor([c[0] for c in conts])
            first = torch.log_softmax(out.logits[:, -1].float(), -1)[index.to(device), first_tokens.to(device)]
            totals = first.double()  # sums in float64, so the three loops differ only by their per-token rounding
            longest = max(len(c) for c in conts)
            if longest > 1:
                cache = out.past_key_values
                cache.reorder_cache(index.to(device))
                tail = torch.full((len(conts), longest - 1), pad)
                targets = torch.zeros((len(conts), longest - 1), dtype=torch.long)
                tail_mask = torch.zeros((len(conts), longest - 1), dtype=torch.long)
                for r, c in enumerate(conts):
                    tail[r, : len(c) - 1] = torch.tensor(c[:-1])
                    targets[r, : len(c) - 1] = torch.tensor(c[1:])
                    tail_mask[r, : len(c) - 1] = 1
                pos = mask.sum(-1)[index][:, None] + torch.arange(longest - 1)[None, :]
                second = model(
                    input_ids=tail.to(device),
                    attention_mask=torch.cat([mask[index], tail_mask], -1).to(device),
                    position_ids=pos.to(device),
                    past_key_values=cache,
                )
                rest = torch.log_softmax(second.logits.float(), -1).gather(-1, targets.to(device)[..., None])[..., 0]
                totals = totals + (rest.double() * tail_mask.to(device)).sum(-1)
            for r, value in enumerate(totals.tolist()):
                scores[batch[rows_of[r]]].append(value)
    return scores


def scored_logprobs(model: Any, hidden: Any, rows: list[int], cols: list[int], targets: list[int]) -> Any:
    """Log-probabilities of ``targets``, applying the LM head only to the hidden states that predict them."""
    device = hidden.device
    picked = hidden[torch.tensor(rows, device=device), torch.tensor(cols, device=device)]
    logits = model.get_output_embeddings()(picked).float()
    return torch.log_softmax(logits, -1).gather(-1, torch.tensor(targets, device=device)[:, None])[:, 0]


def sum_by(values: Any, owners: list[int], count: int) -> list[float]:
    """Per-owner sums of ``values`` (one owner index per value), in float64, in one transfer from the device."""
    totals = torch.zeros(count, dtype=torch.float64, device=values.device)
    totals.index_add_(0, torch.tensor(owners, device=values.device), values.double())
    return totals.tolist()


def score_full(model: Any, tokenizer: Any, items: list[Item], k: int) -> list[list[float]]:
    """(b) One right-padded row per (context, choice); the LM head runs only on the scored positions."""
    device = model.device
    pad = pad_id(tokenizer)
    decoder = model.get_decoder()
    scores: list[list[float]] = [[] for _ in items]
    with torch.inference_mode():
        for batch in by_context_length(items, k):
            pairs = [(i, items[i][0], c) for i in batch for c in items[i][1]]
            width = max(len(ctx) + len(c) - 1 for _, ctx, c in pairs)
            ids = torch.full((len(pairs), width), pad)
            mask = torch.zeros((len(pairs), width), dtype=torch.long)
            rows, cols, targets, owners = [], [], [], []
            for r, (_, ctx, c) in enumerate(pairs):
                seq = ctx + c[:-1]
                ids[r, : len(seq)] = torch.tensor(seq)
                mask[r, : len(seq)] = 1
                for j, token in enumerate(c):
                    rows.append(r)
                    cols.append(len(ctx) - 1 + j)
                    targets.append(token)
                    owners.append(r)
            hidden = decoder(input_ids=ids.to(device), attention_mask=mask.to(device), use_cache=False).last_hidden_state
            totals = sum_by(scored_logprobs(model, hidden, rows, cols, targets), owners, len(pairs))
            for r, (i, _, _) in enumerate(pairs):
                scores[i].append(totals[r])
    return scores


def packed_row(ctx: list[int], conts: list[list[int]]) -> tuple[list[int], list[int], list[int]]:
    """(tokens, positions, segment) of one packed row: segment 0 is the context, k+1 the k-th choice."""
    tokens, positions, segment = list(ctx), list(range(len(ctx))), [0] * len(ctx)
    for k, c in enumerate(conts):
        tokens += c[:-1]
        positions += range(len(ctx), len(ctx) + len(c) - 1)
        segment += [k + 1] * (len(c) - 1)
    return tokens, positions, segment


def block_mask(segments: Any, dtype: torch.dtype) -> Any:
    """Additive (batch, 1, q, k) mask: 0 where a query may look, the dtype's minimum elsewhere.

    A query sees earlier keys of the context (segment 0) and of its own segment. Right padding has
    segment -1: pad queries see the context (never an empty row, so no NaN), and nothing sees pads.
    """
    q, k = segments[:, :, None], segments[:, None, :]
    width = segments.shape[1]
    causal = torch.ones((width, width), dtype=torch.bool, device=segments.device).tril()
    allowed = causal[None] & ((k == 0) | ((k == q) & (k > 0)))
    return torch.zeros(allowed.shape, dtype=dtype, device=segments.device).masked_fill(~allowed, torch.finfo(dtype).min)[:, None]


def score_packed(model: Any, tokenizer: Any, items: list[Item], k: int) -> list[list[float]]:
    """(c) One row per context with every choice packed after it, a 4-D block mask and restarted positions."""
    device = model.device
    dtype = next(model.parameters()).dtype
    pad = pad_id(tokenizer)
    decoder = model.get_decoder()
    scores: list[list[float]] = [[] for _ in items]
    with torch.inference_mode():
        for batch in by_context_length(items, k):
            packed = [packed_row(*items[i]) for i in batch]
            width = max(len(tokens) for tokens, _, _ in packed)
            ids = torch.full((len(batch), width), pad)
            positions = torch.zeros((len(batch), width), dtype=torch.long)
            segments = torch.full((len(batch), width), -1, dtype=torch.long)
            rows, cols, targets, owners = [], [], [], []
            owner_of: list[tuple[int, int]] = []
            for r, (i, (tokens, pos, seg)) in enumerate(zip(batch, packed)):
                ids[r, : len(tokens)] = torch.tensor(tokens)
                positions[r, : len(tokens)] = torch.tensor(pos)
                segments[r, : len(tokens)] = torch.tensor(seg)
                ctx, conts = items[i]
                start = len(ctx)
                for c in conts:
                    owner = len(owner_of)
                    owner_of.append((i, owner))
                    # The first token is predicted by the last context token, the others inside the segment.
                    for j, token in enumerate(c):
                        rows.append(r)
                        cols.append(len(ctx) - 1 if j == 0 else start + j - 1)
                        targets.append(token)
                        owners.append(owner)
                    start += len(c) - 1
            mask = block_mask(segments.to(device), dtype)
            hidden = decoder(
                input_ids=ids.to(device), attention_mask=mask, position_ids=positions.to(device), use_cache=False
            ).last_hidden_state
            totals = sum_by(scored_logprobs(model, hidden, rows, cols, targets), owners, len(owner_of))
            for i, owner in owner_of:
                scores[i].append(totals[owner])
    return scores


SCORERS = {"mc": score_shared, "mc-full": score_full, "mc-packed": score_packed}


def generate(model: Any, tokenizer: Any, rows: list[dict], batch_size: int, max_new_tokens: int) -> tuple[list[str], int]:
    """Greedy texts, and how many tokens were generated in all (before any end-of-text cut)."""
    device = model.device
    pad = pad_id(tokenizer)
    prompts = [encode(tokenizer, row["query"]) for row in rows]
    order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
    texts = [""] * len(prompts)
    generated = 0
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = max(len(prompts[i]) for i in batch)
            ids = torch.full((len(batch), width), pad)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, i in enumerate(batch):
                ids[r, width - len(prompts[i]) :] = torch.tensor(prompts[i])
                mask[r, width - len(prompts[i]) :] = 1
            out = model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=pad,
            )
            for r, i in enumerate(batch):
                new = out[r, width:].tolist()
                if tokenizer.eos_token_id in new:
                    new = new[: new.index(tokenizer.eos_token_id)]
                generated += len(new)
                texts[i] = tokenizer.decode(new, skip_special_tokens=True)
    return texts, generated


def window(model: Any) -> int:
    """The model's context length, read as the plugin reads it (2048 when the config names none)."""
    limits = [getattr(model.config, key, None) for key in ("max_position_embeddings", "n_positions", "n_ctx")]
    return min([int(v) for v in limits if isinstance(v, int) and v > 0] or [2048])


def fed_tokens(model: Any, tokenizer: Any, row: dict) -> list[int]:
    """A rendered prompt's tokens as the plugin feeds them: no special tokens, cut from the left for the answer."""
    budget = min(int(row["max_tokens"]), window(model) - 1)
    tokens = encode(tokenizer, row["prompt"]) or [tokenizer.bos_token_id if tokenizer.bos_token_id is not None else pad_id(tokenizer)]
    return tokens[-(window(model) - budget) :]


def cut_at_stop(text: str, stop: list[str]) -> str:
    cuts = [text.index(s) for s in stop if s and s in text]
    return text[: min(cuts)] if cuts else text


def generate_requests(model: Any, tokenizer: Any, rows: list[dict], batch_size: int) -> tuple[list[str], int]:
    """Greedy texts of rendered requests, batched per (max_tokens, stop) group by prompt length, nothing shared."""
    device = model.device
    pad = pad_id(tokenizer)
    groups: dict[tuple[int, tuple[str, ...]], list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault((int(row["max_tokens"]), tuple(row["stop"])), []).append(i)
    prompts = [fed_tokens(model, tokenizer, row) for row in rows]
    texts = [""] * len(rows)
    generated = 0
    with torch.inference_mode():
        for (max_tokens, stop), indices in groups.items():
            order = sorted(indices, key=lambda i: (-len(prompts[i]), i))
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                width = max(len(prompts[i]) for i in batch)
                ids = torch.full((len(batch), width), pad)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for r, i in enumerate(batch):
                    ids[r, width - len(prompts[i]) :] = torch.tensor(prompts[i])
                    mask[r, width - len(prompts[i]) :] = 1
                out = model.generate(
                    input_ids=ids.to(device),
                    attention_mask=mask.to(device),
                    max_new_tokens=min(max_tokens, window(model) - 1),
                    do_sample=False,
                    pad_token_id=pad,
                    eos_token_id=tokenizer.eos_token_id,
                    stop_strings=[s for s in stop if s] or None,
                    tokenizer=tokenizer,
                )
                for r, i in enumerate(batch):
                    new = out[r, width:].tolist()
                    if tokenizer.eos_token_id in new:
                        new = new[: new.index(tokenizer.eos_token_id)]
                    generated += len(new)
                    texts[i] = cut_at_stop(tokenizer.decode(new, skip_special_tokens=True), list(stop))
    return texts, generated


def prefix_tree_size(prompts: list[list[int]]) -> int:
    """Nodes of a token prefix tree over ``prompts``: the tokens left to compute when every shared prefix is computed once."""
    root: dict[int, dict] = {}
    nodes = 0
    for tokens in prompts:
        node = root
        for token in tokens:
            child = node.get(token)
            if child is None:
                child = node[token] = {}
                nodes += 1
            node = child
    return nodes


def spread(items: list[Any], count: int) -> list[Any]:
    """``count`` items evenly spaced over ``items`` (all of them when there are no more)."""
    if len(items) <= count:
        return list(items)
    return [items[round(k * (len(items) - 1) / (count - 1))] for k in range(count)] if count > 1 else [items[len(items) // 2]]


def token_rate(model: Any, prompts: list[list[int]], batch_size: int, batches: int) -> dict[str, Any]:
    """Tokens per second of dense forward passes without padding: full batches of similar length, cropped to the shortest.

    The batches are spread over the prompts' length range, so the rate holds for the workload's lengths; one warm-up
    pass comes first. Only the last position's logits are computed, as in a prefill.
    """
    device = model.device
    batch_size = max(1, min(batch_size, len(prompts)))
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    full = [order[start : start + batch_size] for start in range(0, len(order) - batch_size + 1, batch_size)]
    picked = spread(full, batches)

    def run(batch: list[int]) -> int:
        width = min(len(prompts[i]) for i in batch)
        ids = torch.tensor([prompts[i][:width] for i in batch], device=device)
        model(input_ids=ids, use_cache=False, logits_to_keep=1)
        return ids.numel()

    with torch.inference_mode():
        run(picked[0])
        synchronize(device)
        started = time.perf_counter()
        tokens = sum(run(batch) for batch in picked)
        synchronize(device)
        seconds = time.perf_counter() - started
    return {"tokens_per_s": tokens / seconds, "tokens": tokens, "seconds": seconds, "batches": len(picked), "batch_size": batch_size}


def limit(model: Any, tokenizer: Any, rows: list[dict], batch_size: int, batches: int) -> dict[str, Any]:
    """Total and unique (prefix-tree) prompt tokens of ``rows``, the measured rate, and the seconds the unique ones take."""
    prompts = [fed_tokens(model, tokenizer, row) for row in rows]
    rate = token_rate(model, prompts, batch_size, batches)
    unique = prefix_tree_size(prompts)
    return {
        "prompts": len(prompts),
        "total_tokens": sum(len(p) for p in prompts),
        "unique_tokens": unique,
        "rate": rate,
        "unique_seconds": unique / rate["tokens_per_s"],
    }


def load(model_dir: str, device: str, dtype: str) -> tuple[Any, Any]:
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, dtype)).to(device).eval()
    synchronize(model.device)
    return model, tokenizer


def check(model: Any, tokenizer: Any, items: list[Item], k: int) -> dict[str, Any]:
    """The three scorers on the same items: the largest |difference| of each from the shared one."""
    results = {mode: scorer(model, tokenizer, items, k) for mode, scorer in SCORERS.items()}
    base = results["mc"]
    worst = {
        mode: max(abs(a - b) for got, want in zip(scores, base) for a, b in zip(got, want))
        for mode, scores in results.items()
        if mode != "mc"
    }
    return {"max_abs_diff": worst, "instances": len(items)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=[*SCORERS, "gen", "requests", "limit", "check"])
    parser.add_argument("model_dir")
    parser.add_argument("data")
    parser.add_argument("batch", type=int)
    parser.add_argument("out")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--max-new-tokens", type=int, default=20)
    parser.add_argument("--rate-batches", type=int, default=6, help="limit: how many full batches the rate is measured on")
    args = parser.parse_args()
    with open(args.data, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    imported = time.perf_counter()
    model, tokenizer = load(args.model_dir, args.device, "float32" if args.mode == "check" else args.dtype)
    loaded = time.perf_counter()
    if args.mode == "gen":
        result, generated = generate(model, tokenizer, rows, args.batch, args.max_new_tokens)
    elif args.mode == "requests":
        result, generated = generate_requests(model, tokenizer, rows, args.batch)
    elif args.mode == "limit":
        result = limit(model, tokenizer, rows, args.batch, args.rate_batches)
    else:
        items = mc_items(tokenizer, rows)
        result = (
            check(model, tokenizer, items, args.batch)
            if args.mode == "check"
            else SCORERS[args.mode](model, tokenizer, items, args.batch)
        )
    synchronize(model.device)
    done = time.perf_counter()
    if args.mode == "gen":
        tokens = {"prompt": sum(len(encode(tokenizer, row["query"])) for row in rows), "generated": generated}
    elif args.mode in ("requests", "limit"):
        tokens = {"prompt": sum(len(fed_tokens(model, tokenizer, row)) for row in rows)}
        if args.mode == "requests":
            tokens["generated"] = generated
    else:
        tokens = {"context": sum(len(c) for c, _ in items), "continuation": sum(len(x) for _, cs in items for x in cs)}
    summary = {
        "compute_s": done - loaded,
        "load_s": loaded - imported,
        "startup_s": loaded - started,
        "device": str(model.device),
        "device_name": torch.cuda.get_device_name(model.device) if model.device.type == "cuda" else None,
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "tokens": tokens,
        "result": result,
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(summary, handle)


if __name__ == "__main__":
    main()
