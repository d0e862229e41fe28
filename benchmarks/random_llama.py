"""Build a random-weight Llama of a stated shape and save it with a tokenizer (run as its own process).

The GPU benchmark needs a model of a real size without a download: only the shape matters for speed,
so the weights are drawn at random (seeded) and saved with ``save_pretrained`` in bfloat16, next to a
tokenizer whose vocabulary matches the shape's (SmolLM2's, or a byte-level BPE trained here).

usage: python random_llama.py SHAPE TOKENIZER_DIR OUT_DIR [--device cpu|cuda] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

SHAPES: dict[str, dict[str, Any]] = {
    # SmolLM2-1.7B's shape: the workload the speed targets are stated for.
    "1.7b": {
        "hidden_size": 2048,
        "num_hidden_layers": 24,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "intermediate_size": 8192,
        "vocab_size": 49152,
        "max_position_embeddings": 2048,
        "rope_theta": 130000.0,
    },
    # SmolLM2-135M's shape (grouped-query attention, 3 key/value heads).
    "135m": {
        "hidden_size": 576,
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "intermediate_size": 1536,
        "vocab_size": 49152,
        "max_position_embeddings": 2048,
        "rope_theta": 100000.0,
    },
    # Small enough for 2 shared CPU cores, still with grouped-query attention and the real vocabulary.
    "tiny": {
        "hidden_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 512,
        "vocab_size": 49152,
        "max_position_embeddings": 2048,
        "rope_theta": 10000.0,
    },
}

SPECIAL_FILE = "special_tokens.json"
"""Beside ``tokenizer.json`` in the tokenizer folder: bos/eos/pad/unk token strings."""


def parameter_count(shape: dict[str, Any]) -> int:
    """Parameters of a Llama with tied embeddings, from its shape alone (for FLOP estimates before loading)."""
    hidden, inter, layers = shape["hidden_size"], shape["intermediate_size"], shape["num_hidden_layers"]
    head_dim = hidden // shape["num_attention_heads"]
    kv = shape["num_key_value_heads"] * head_dim
    per_layer = hidden * hidden * 2 + hidden * kv * 2 + 3 * hidden * inter + 2 * hidden
    return shape["vocab_size"] * hidden + layers * per_layer + hidden


def load_tokenizer(tokenizer_dir: Path) -> Any:
    """A fast tokenizer from ``tokenizer.json`` and its special tokens, built by this transformers version.

    Only the raw ``tokenizer.json`` travels between machines, so the saved ``tokenizer_config.json`` is
    always written by the transformers that will read it (versions differ between here and the GPU machine).
    """
    from transformers import PreTrainedTokenizerFast

    special = json.loads((tokenizer_dir / SPECIAL_FILE).read_text())
    return PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_dir / "tokenizer.json"), **special)


def build(shape_name: str, tokenizer_dir: Path, out: Path, device: str, seed: int) -> dict[str, Any]:
    """Draw the weights on ``device`` (much faster on a GPU for 1.7B), save bfloat16 weights and the tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = load_tokenizer(tokenizer_dir)
    shape = dict(SHAPES[shape_name])
    rope_theta = shape.pop("rope_theta")
    config = LlamaConfig(
        **shape,
        tie_word_embeddings=True,
        rms_norm_eps=1e-5,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        rope_parameters={"rope_type": "default", "rope_theta": rope_theta},
    )
    torch.manual_seed(seed)
    use_cuda = device.startswith("cuda") and torch.cuda.is_available()
    started = time.perf_counter()
    with torch.device(device if use_cuda else "cpu"):
        model = LlamaForCausalLM(config)
    model = model.to(torch.bfloat16).eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    info = {
        "shape": shape_name,
        "parameters": sum(p.numel() for p in model.parameters()),
        "seed": seed,
        "built_on": "cuda" if use_cuda else "cpu",
        "seconds": round(time.perf_counter() - started, 1),
    }
    (out / "bench_model.json").write_text(json.dumps(info, indent=1))
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("tokenizer_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps(build(args.shape, args.tokenizer_dir, args.out, args.device, args.seed)))


if __name__ == "__main__":
    main()
