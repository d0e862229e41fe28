"""The small model both runners load: ``tests/tiny_model.py``'s GPT-2, with a window long enough for few-shot prompts.

HELM's ``--enable-local-huggingface-models`` names a local model ``huggingface/<folder name>`` and takes its window
from the tokenizer's ``model_max_length``; 4096 positions hold the offline editions' few-shot prompts (about one
token per 2-3 characters with this 320-token vocabulary: about 2,400 for BoolQ with HELM's five passages), so neither
side shortens a prompt.

**The model is committed, not trained by the tests** (``model_files/``: its tokenizer, its config and its trained
weights, 294 kB). Training it again gives other bits on another CPU: torch's training kernels follow the machine's
vector unit (AVX2, AVX-512, none) and its BLAS the vendor, and pinning them (``REPRODUCIBLE_NUMERICS``) was not
enough on every x86-64 machine; a golden made from one model's answers cannot be compared with another's. Building
the folder the runners load (``build``) takes copies only, no arithmetic: the committed tensors as they are, and each
position past the trained ones a copy of one of the last ``REPEATED`` trained rows (``train`` says why), so the
folder's ``model.safetensors`` is the same bytes on any machine. ``fingerprint`` hashes the tensors themselves;
the golden keeps it, and the test checks it before comparing any number.

``python tests/conformance/runner/model.py --write`` retrains the model and rewrites ``model_files/`` (then
regenerate the golden with ``generate.py``): the one step that depends on the machine, needed only to change the
model. On the machine that made the committed files (x86-64, AVX-512, with the pins) it rewrites them unchanged.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FILES = HERE / "model_files"
"""The committed model: ``TEXT_FILES`` as saved by transformers, and ``WEIGHTS`` (the trained position rows only)."""
WEIGHTS = "trained.safetensors"
TEXT_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json")
POSITIONS = "transformer.wpe.weight"

NAME = "tiny-gpt2-runner"
"""The model folder's name; HELM calls the model ``huggingface/tiny-gpt2-runner``."""
HELM_MODEL = f"huggingface/{NAME}"
HELM_SERVED_MODEL = "served/tiny-gpt2-served"
"""The same model behind ``server.py``, declared to HELM in its ``prod_env`` (``generate.write_served_deployment``)."""
WINDOW = 4096

REPEATED = 8
"""How many of the last trained positions are repeated over the untrained ones (see ``train``)."""


def build(parent: Path, files: Path = FILES) -> Path:
    """The loadable model folder ``parent/NAME`` made from the committed ``files`` by copies alone (see the notes)."""
    import torch
    from safetensors.torch import load_file, save_file

    folder = parent / NAME
    folder.mkdir(parents=True, exist_ok=True)
    for name in TEXT_FILES:
        shutil.copyfile(files / name, folder / name)
    tensors = load_file(str(files / WEIGHTS))
    trained = tensors[POSITIONS]
    order = torch.arange(WINDOW)
    untrained = order >= len(trained)
    order[untrained] = len(trained) - REPEATED + (order[untrained] - len(trained)) % REPEATED
    tensors[POSITIONS] = trained.index_select(0, order).contiguous()  # copies of rows: the same bits everywhere
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


def fingerprint(folder: Path) -> str:
    """``sha256:`` of a model folder's tensors (names, dtypes, shapes and bytes, in name order): the weights HELM and
    pytest ran, whatever the file's layout."""
    from safetensors import safe_open

    digest = hashlib.sha256()
    with safe_open(str(folder / "model.safetensors"), framework="numpy") as weights:
        for name in sorted(weights.keys()):
            array = weights.get_tensor(name)
            digest.update(f"{name}:{array.dtype.str}:{list(array.shape)}\n".encode())
            digest.update(array.tobytes())
    return "sha256:" + digest.hexdigest()


def train(parent: Path) -> Path:
    """Train the model in ``parent/NAME`` on one CPU thread (only ``write`` calls this; the tests never train it).

    The model trains on sentences of a few dozen tokens, so the positions past them keep their random start and a
    prompt of 2,000 tokens reads as noise: every answer came out the same (" Tokyo." on BoolQ, " " on MMLU), and
    comparing answers tested little. Each untrained position therefore takes the embedding of one of the last
    ``REPEATED`` trained ones, in turn; the answers then vary with the prompt (BoolQ: " Yes" ended by the end-of-text
    token, "  Yes", " Tokyo.", "   Toky", " green."), some right and some wrong, which exercises stripping and the
    end-of-text cut (MMLU's one-token answer stays a blank, which exercises blank answers).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tests.tiny_model import CORPUS, EOS, build_tiny_gpt2

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        folder = build_tiny_gpt2(parent / NAME, n_positions=WINDOW, model_max_length=WINDOW)
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        trained = trained_positions(tokenizer, CORPUS, EOS)
        model = AutoModelForCausalLM.from_pretrained(str(folder))
        with torch.no_grad():
            table = model.transformer.wpe.weight
            for position in range(trained, WINDOW):
                table[position] = table[trained - REPEATED + (position - trained) % REPEATED]
        model.save_pretrained(folder)
        return folder
    finally:
        torch.set_num_threads(threads)


def trained_positions(tokenizer: Any, corpus: list[str], eos: str) -> int:
    """How many positions training reached: the longest corpus sentence with its end-of-text token."""
    return max(len(tokenizer(text + eos)["input_ids"]) for text in corpus)


def write(files: Path = FILES) -> Path:
    """Retrain the model with the goldens' pinned numerics, in a process of its own, and write it to ``files``."""
    import tempfile

    from safetensors.torch import load_file, save_file
    from transformers import AutoTokenizer

    from tests.conformance.envs import REPRODUCIBLE_NUMERICS
    from tests.tiny_model import CORPUS, EOS

    root = HERE.parents[2]
    with tempfile.TemporaryDirectory() as scratch:
        code = f"from pathlib import Path; from tests.conformance.runner.model import train; train(Path({scratch!r}))"
        env = {**os.environ, **REPRODUCIBLE_NUMERICS, "PYTHONPATH": str(root)}
        subprocess.run([sys.executable, "-c", code], check=True, cwd=root, env=env)
        folder = Path(scratch) / NAME
        files.mkdir(parents=True, exist_ok=True)
        for name in TEXT_FILES:
            shutil.copyfile(folder / name, files / name)
        tensors = load_file(str(folder / "model.safetensors"))
        trained = trained_positions(AutoTokenizer.from_pretrained(str(folder)), CORPUS, EOS)
        tensors[POSITIONS] = tensors[POSITIONS][:trained].contiguous()
        save_file(tensors, str(files / WEIGHTS), metadata={"format": "pt"})
    return files


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[2]))  # run as a script: the project's tests package
    parser = argparse.ArgumentParser(description="The runner golden's tiny model (see the module's notes).")
    parser.add_argument(
        "--write", action="store_true", help=f"retrain the model and rewrite {FILES.relative_to(HERE.parents[2])}/"
    )
    if parser.parse_args().write:
        print(write())
    else:
        parser.print_help()
