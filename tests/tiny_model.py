"""Build a tiny GPT-2 and its byte-level BPE tokenizer from scratch, so tests need no download.

The model is trained for a few dozen steps on a handful of sentences, enough that it completes
"The capital of France is" with " Paris" and so exercises real generation and scoring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CORPUS = [
    "The capital of France is Paris.",
    "The capital of Japan is Tokyo.",
    "The capital of Italy is Rome.",
    "The capital of Egypt is Cairo.",
    "The sky is blue. The grass is green.",
    "Question: Is fire hot?\nAnswer: Yes",
    "Question: Is ice hot?\nAnswer: No",
]
EOS = "<|endoftext|>"


def build_tiny_gpt2(
    folder: Path, steps: int = 120, seed: int = 0, n_positions: int = 256, model_max_length: int | None = None
) -> Path:
    """Train and save the model and tokenizer in ``folder``.

    ``n_positions`` sizes the position table (the model's window); ``model_max_length``, when given, is written into
    the tokenizer's config, which HELM's ``--enable-local-huggingface-models`` reads as the model's window.
    """
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 4, vocab_size=320, min_frequency=1, special_tokens=[EOS], show_progress=False)
    window = {} if model_max_length is None else {"model_max_length": model_max_length}
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token=EOS, eos_token=EOS, pad_token=EOS, **window
    )
    eos_id = tokenizer.convert_tokens_to_ids(EOS)
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=n_positions, n_embd=48, n_layer=2, n_head=2, bos_token_id=eos_id, eos_token_id=eos_id
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    batch = tokenizer([text + EOS for text in CORPUS], padding=True, return_tensors="pt")
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    return _train_and_save(model, tokenizer, dict(batch), labels, steps, folder)


def _train_and_save(model: Any, tokenizer: Any, batch: dict[str, Any], labels: Any, steps: int, folder: Path) -> Path:
    """A few AdamW steps on one batch (enough for the answers to be the likeliest), then model and tokenizer saved.

    One thread, so the weights do not depend on how many cores this process was given (an xdist worker gets its
    share). They still follow the CPU's kernels in their last bits, so a test asserts only what the model learned by a
    wide margin (``test_tiny_models.py`` measures it), never a number copied from one machine's training.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
        model.train()
        for _ in range(steps):
            loss = model(**batch, labels=labels).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    finally:
        torch.set_num_threads(threads)
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


PAIRS = [
    ("The capital of France is", " Paris"),
    ("The capital of Japan is", " Tokyo"),
    ("The capital of Italy is", " Rome"),
    ("The sky is", " blue"),
    ("Question: Is fire hot?\nAnswer:", " Yes"),
    ("Question: Is ice hot?\nAnswer:", " No"),
]
"""What the tiny encoder-decoders learn: the encoder reads the first text, the decoder writes the second."""


def build_tiny_seq2seq(folder: Path, kind: str = "t5", steps: int = 80, seed: int = 0) -> Path:
    """Train and save a tiny T5 (``kind="t5"``: relative positions, ``</s>`` appended to the encoder input, the pad
    token starts the decoder) or BART (``"bart"``: learned positions, ``<s> ... </s>`` around it, ``</s>`` starts the
    decoder) with a byte-level BPE tokenizer, in ``folder``.
    """
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import BartConfig, BartForConditionalGeneration, PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    specials = ["<pad>", "</s>", "<s>", "<unk>"]
    bpe = ByteLevelBPETokenizer()
    texts = [a + b for a, b in PAIRS] + CORPUS
    bpe.train_from_iterator(texts * 4, vocab_size=320, min_frequency=1, special_tokens=specials, show_progress=False)
    pad, eos, bos = (bpe.token_to_id(token) for token in specials[:3])
    single = "$A </s>" if kind == "t5" else "<s> $A </s>"
    bpe._tokenizer.post_processor = TemplateProcessing(single=single, special_tokens=[("</s>", eos), ("<s>", bos)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="</s>", pad_token="<pad>", unk_token="<unk>", bos_token="<s>"
    )
    torch.manual_seed(seed)
    if kind == "t5":
        config: Any = T5Config(
            vocab_size=len(tokenizer), d_model=48, d_ff=96, d_kv=24, num_layers=2, num_heads=2,
            pad_token_id=pad, eos_token_id=eos, decoder_start_token_id=pad,
        )
        model: Any = T5ForConditionalGeneration(config)
    elif kind == "bart":
        config = BartConfig(
            vocab_size=len(tokenizer), d_model=48, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
            decoder_attention_heads=2, encoder_ffn_dim=96, decoder_ffn_dim=96, max_position_embeddings=256,
            pad_token_id=pad, eos_token_id=eos, bos_token_id=bos, decoder_start_token_id=eos, forced_eos_token_id=None,
        )
        model = BartForConditionalGeneration(config)
    else:
        raise ValueError(f"unknown kind {kind!r}; use t5 or bart")
    inputs = tokenizer([a for a, _ in PAIRS], padding=True, return_tensors="pt")
    answers = tokenizer([b for _, b in PAIRS], padding=True, return_tensors="pt", add_special_tokens=False)
    labels = torch.cat([answers["input_ids"], torch.full((len(PAIRS), 1), pad)], dim=1)
    lengths = answers["attention_mask"].sum(dim=1)
    labels[torch.arange(len(PAIRS)), lengths] = eos  # each answer ends with the end token
    labels = labels.masked_fill(torch.arange(labels.shape[1])[None] > lengths[:, None], -100)
    return _train_and_save(model, tokenizer, dict(inputs), labels, steps, folder)
