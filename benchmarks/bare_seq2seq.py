"""The hand-written best loop for an encoder-decoder's multiple choice, which pytest-holistic is measured against.

Each context goes through the encoder once (``K`` contexts per right-padded batch); every choice of those contexts
is then scored by the decoder in one right-padded batch from its context's encoder output, repeated to one row per
choice. The convention is the plugin's and lm-evaluation-harness's: the context with the tokenizer's special tokens
to the encoder, each choice (after a space, no special tokens) to the decoder from its start token. Run as its own
process.

usage: python bare_seq2seq.py MODEL_DIR DATA.jsonl BATCH OUT.json [--device cpu|cuda] [--dtype float32|bfloat16]
OUT.json holds compute_s (model work, synchronised), load_s, startup_s and the result (each choice's log-probability).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

started = time.perf_counter()
import torch  # noqa: E402
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer  # noqa: E402
from transformers.modeling_outputs import BaseModelOutput  # noqa: E402

Item = tuple[list[int], list[list[int]]]
"""One instance as tokens: (encoder input, [choice continuation, ...])."""


def pad_rows(rows: list[list[int]], pad: int) -> tuple[Any, Any]:
    """Right-padded ids and attention mask."""
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        ids[r, : len(row)] = torch.tensor(row)
        mask[r, : len(row)] = 1
    return ids, mask


def start_token(model: Any) -> int:
    for source in (model.config, model.generation_config):
        value = getattr(source, "decoder_start_token_id", None)
        if isinstance(value, int):
            return value
    return int(model.config.pad_token_id)


def score(model: Any, tokenizer: Any, items: list[Item], k: int) -> list[list[float]]:
    """Every choice's summed log-probability: the encoder once per context, the decoder once per choice."""
    device = model.device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    start = start_token(model)
    order = sorted(range(len(items)), key=lambda i: -len(items[i][0]))
    scores: list[list[float]] = [[] for _ in items]
    with torch.inference_mode():
        for first in range(0, len(order), k):
            batch = order[first : first + k]
            ids, mask = pad_rows([items[i][0] for i in batch], pad)
            ids, mask = ids.to(device), mask.to(device)
            hidden = model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
            rows = [r for r, i in enumerate(batch) for _ in items[i][1]]
            choices = [c for i in batch for c in items[i][1]]
            decoder_ids, decoder_mask = pad_rows([[start, *c[:-1]] for c in choices], pad)
            index = torch.tensor(rows, device=device)
            logits = model(
                encoder_outputs=BaseModelOutput(last_hidden_state=hidden.index_select(0, index)),
                attention_mask=mask.index_select(0, index),
                decoder_input_ids=decoder_ids.to(device),
                decoder_attention_mask=decoder_mask.to(device),
                use_cache=False,
            ).logits.float()
            targets = torch.zeros_like(decoder_ids)
            for r, c in enumerate(choices):
                targets[r, : len(c)] = torch.tensor(c)
            picked = torch.log_softmax(logits, -1).gather(-1, targets.to(device)[..., None])[..., 0]
            totals = (picked.double() * decoder_mask.to(device)).sum(-1).tolist()
            for r, value in enumerate(totals):
                scores[batch[rows[r]]].append(value)
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("data")
    parser.add_argument("batch", type=int)
    parser.add_argument("out")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()
    loading = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model, dtype=getattr(torch, args.dtype)).to(args.device).eval()
    load_s = time.perf_counter() - loading
    rows = [json.loads(line) for line in open(args.data, encoding="utf-8") if line.strip()]
    items = [
        (tokenizer(row["query"])["input_ids"], [tokenizer(" " + c, add_special_tokens=False)["input_ids"] for c in row["choices"]])
        for row in rows
    ]
    computing = time.perf_counter()
    result = score(model, tokenizer, items, args.batch)
    if model.device.type == "cuda":
        torch.cuda.synchronize(model.device)
    compute_s = time.perf_counter() - computing
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump({"compute_s": compute_s, "load_s": load_s, "startup_s": loading - started, "result": result}, out)


if __name__ == "__main__":
    main()
