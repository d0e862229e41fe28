"""The small model both runners load: ``tests/tiny_model.py``'s GPT-2, with a window long enough for few-shot prompts.

HELM's ``--enable-local-huggingface-models`` names a local model ``huggingface/<folder name>`` and takes its window
from the tokenizer's ``model_max_length``; 4096 positions hold the offline editions' few-shot prompts (about one
token per 2-3 characters with this 320-token vocabulary: about 2,400 for BoolQ with HELM's five passages), so neither
side shortens a prompt. The model trains in a process of its own with ``REPRODUCIBLE_NUMERICS`` (torch's AVX2
kernels, one thread), so its weights come out the same on any x86-64 machine with AVX2, AVX-512 or not (left to
itself, torch trains it with AVX-512 kernels where the CPU has them, and the weights differ). The weights' fingerprint
goes into the golden: a rebuild that still drifts (another torch) says so before any number is compared.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.tiny_model import build_tiny_gpt2

NAME = "tiny-gpt2-runner"
"""The model folder's name; HELM calls the model ``huggingface/tiny-gpt2-runner``."""
HELM_MODEL = f"huggingface/{NAME}"
HELM_SERVED_MODEL = "served/tiny-gpt2-served"
"""The same model behind ``server.py``, declared to HELM in its ``prod_env`` (``generate.write_served_deployment``)."""
WINDOW = 4096


REPEATED = 8
"""How many of the last trained positions are repeated over the untrained ones (see ``build``)."""


def build(parent: Path) -> Path:
    """Build the model in ``parent/NAME`` in a process of its own with the pinned numerics (see the module's notes)."""
    from tests.conformance.envs import REPRODUCIBLE_NUMERICS

    root = Path(__file__).resolve().parents[3]
    code = f"from pathlib import Path; from tests.conformance.runner.model import train; train(Path({str(parent)!r}))"
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=root, env={**os.environ, **REPRODUCIBLE_NUMERICS, "PYTHONPATH": str(root)}
    )
    return parent / NAME


def train(parent: Path) -> Path:
    """Build the model in ``parent/NAME`` on one CPU thread (the same sums in the same order on any machine).

    The model trains on sentences of a few dozen tokens, so the positions past them keep their random start and a
    prompt of 2,000 tokens reads as noise: every answer came out the same (" Tokyo." on BoolQ, " " on MMLU), and
    comparing answers tested little. Each untrained position therefore takes the embedding of one of the last
    ``REPEATED`` trained ones, in turn; the answers then vary with the prompt (BoolQ: " Yes" ended by the end-of-text
    token, "  Yes", " Tokyo.", "   Toky", " green."), some right and some wrong, which exercises stripping and the
    end-of-text cut (MMLU's one-token answer stays a blank, which exercises blank answers).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tests.tiny_model import CORPUS, EOS

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        folder = build_tiny_gpt2(parent / NAME, n_positions=WINDOW, model_max_length=WINDOW)
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        trained = max(len(tokenizer(text + EOS)["input_ids"]) for text in CORPUS)
        model = AutoModelForCausalLM.from_pretrained(str(folder))
        with torch.no_grad():
            table = model.transformer.wpe.weight
            for position in range(trained, WINDOW):
                table[position] = table[trained - REPEATED + (position - trained) % REPEATED]
        model.save_pretrained(folder)
        return folder
    finally:
        torch.set_num_threads(threads)


def fingerprint(folder: Path) -> str:
    """``sha256:`` of the weight file, the one file a drift in training would change."""
    return "sha256:" + hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
