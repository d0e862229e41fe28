"""Build a tiny GPT-2 and its byte-level BPE tokenizer from scratch, so tests need no download.

The model is trained for a few dozen steps on a handful of sentences, enough that it completes
"The capital of France is" with " Paris" and so exercises real generation and scoring.
"""

from __future__ import annotations

from pathlib import Path

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
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    batch = tokenizer([text + EOS for text in CORPUS], padding=True, return_tensors="pt")
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    model.train()
    for _ in range(steps):
        loss = model(**batch, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
