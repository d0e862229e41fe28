"""The hand-written best loop that pytest-holistic is measured against (run as its own process).

Multiple choice: each context is encoded once, ``K`` contexts per left-padded batch, and every choice
is scored from the context's cached keys/values (the fastest variant measured on this CPU).
Generation: greedy, left-padded batches sorted by prompt length.

usage: python bare_loop.py mc|gen MODEL_DIR DATA.jsonl BATCH OUT.json
"""

from __future__ import annotations

import json
import sys
import time

started = time.perf_counter()
import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def score_mc(model, tokenizer, rows: list[dict], k: int) -> list[list[float]]:
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    items = [(encode(tokenizer, row["query"]), [encode(tokenizer, " " + c) for c in row["choices"]]) for row in rows]
    order = sorted(range(len(items)), key=lambda i: -len(items[i][0]))
    scores: list[list[float]] = [[] for _ in items]
    with torch.inference_mode():
        for start in range(0, len(order), k):
            batch = order[start : start + k]
            width = max(len(items[i][0]) for i in batch)
            ids = torch.full((len(batch), width), pad)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, i in enumerate(batch):
                ctx = items[i][0]
                ids[r, width - len(ctx) :] = torch.tensor(ctx)
                mask[r, width - len(ctx) :] = 1
            out = model(input_ids=ids, attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0), use_cache=True, logits_to_keep=1)
            first = torch.log_softmax(out.logits[:, -1].float(), -1)
            rows_of = [r for r, i in enumerate(batch) for _ in items[i][1]]
            conts = [c for i in batch for c in items[i][1]]
            longest = max(len(c) for c in conts)
            cache = out.past_key_values
            index = torch.tensor(rows_of)
            cache.reorder_cache(index)
            tail = torch.full((len(conts), longest - 1), pad)
            tail_mask = torch.zeros((len(conts), longest - 1), dtype=torch.long)
            for r, c in enumerate(conts):
                tail[r, : len(c) - 1] = torch.tensor(c[:-1])
                tail_mask[r, : len(c) - 1] = 1
            pos = mask.sum(-1)[index][:, None] + torch.arange(longest - 1)[None, :]
            second = model(input_ids=tail, attention_mask=torch.cat([mask[index], tail_mask], -1), position_ids=pos, past_key_values=cache)
            rest = torch.log_softmax(second.logits.float(), -1)
            for r, c in enumerate(conts):
                total = float(first[rows_of[r], c[0]]) + sum(float(rest[r, j - 1, c[j]]) for j in range(1, len(c)))
                scores[batch[rows_of[r]]].append(total)
    return scores


def generate(model, tokenizer, rows: list[dict], batch_size: int) -> list[str]:
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    prompts = [encode(tokenizer, row["query"]) for row in rows]
    order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
    texts = [""] * len(prompts)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = max(len(prompts[i]) for i in batch)
            ids = torch.full((len(batch), width), pad)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, i in enumerate(batch):
                ids[r, width - len(prompts[i]) :] = torch.tensor(prompts[i])
                mask[r, width - len(prompts[i]) :] = 1
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=20, do_sample=False, pad_token_id=pad)
            for r, i in enumerate(batch):
                new = out[r, width:].tolist()
                if tokenizer.eos_token_id in new:
                    new = new[: new.index(tokenizer.eos_token_id)]
                texts[i] = tokenizer.decode(new, skip_special_tokens=True)
    return texts


def main() -> None:
    mode, model_dir, data, batch, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    rows = [json.loads(line) for line in open(data, encoding="utf-8")]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    loaded = time.perf_counter()
    result = score_mc(model, tokenizer, rows, batch) if mode == "mc" else generate(model, tokenizer, rows, batch)
    done = time.perf_counter()
    json.dump({"compute_s": done - loaded, "startup_s": loaded - started, "result": result}, open(out, "w"))


if __name__ == "__main__":
    main()
