"""The tiny models the tests train learn their facts by margins that no machine's rounding closes.

Other tests assert what these models answer (" Paris." after "The capital of France is", " Yes" then the end of text
after "Is fire hot?", 3 of 4 capitals right): facts of training, not numbers of one machine. The weights follow the
CPU's kernels in their last bits (torch's seeded initialisation and every training step go through them), so those
assertions hold on any machine only while each answer wins every step by far more than the kernels move it. Here the
greedy answer and the gap between the best token and the next at each step, measured on this machine. Trained under
torch's default, AVX2 and AVX-512 kernels the answers were the same and the gaps moved by 0.2 nats at most (T5; the
others by 1e-4), so ``MARGIN`` (0.01) is far under every gap but BART's first step after "France"/"Italy" (0.05).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

MARGIN = 0.01
"""The least gap, in nats, between the greedy token and the next, at every step of an answer a test relies on."""

GPT2_FACTS = {
    "The capital of France is": " Paris.",
    "The capital of Japan is": " Tokyo",
    "The capital of Italy is": " Rome.",
    "The capital of Egypt is": " Cairo.",
    "The sky is": " blue.",
    "Question: Is fire hot?\nAnswer:": " Yes<|endoftext|>",
    "Question: Is ice hot?\nAnswer:": " No<|endoftext|>",
}
"""What the tiny GPT-2 continues each prompt with (4 tokens at most, or up to the end-of-text token)."""
SEQ2SEQ_FACTS = {"The capital of France is": " Paris", "The capital of Japan is": " Tokyo", "The sky is": " blue"}
"""What the tiny encoder-decoders answer (to their end token)."""


def greedy_with_gaps(model: Any, tokenizer: Any, prompt: str, encoder_decoder: bool) -> tuple[str, list[float]]:
    """The greedy answer to ``prompt`` (4 tokens at most) and, per step, the best token's lead over the next in nats."""
    import torch

    encoded = tokenizer(prompt, return_tensors="pt")
    with torch.no_grad():
        out = model.generate(
            **encoded, max_new_tokens=4, do_sample=False, output_scores=True, return_dict_in_generate=True,
            pad_token_id=tokenizer.pad_token_id,
        )  # fmt: skip
    tokens = out.sequences[0] if encoder_decoder else out.sequences[0, encoded["input_ids"].shape[1] :]
    gaps = []
    for scores in out.scores:
        best, second = torch.topk(torch.log_softmax(scores[0].double(), dim=-1), 2).values.tolist()
        gaps.append(best - second)
    # an encoder-decoder's answer without its start and end tokens; a decoder's with its end-of-text token, if any
    text = tokenizer.decode(tokens, skip_special_tokens=encoder_decoder)
    return text, gaps


def test_the_tiny_gpt2_learns_its_facts_by_a_wide_margin(tiny_gpt2: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(str(tiny_gpt2)), AutoModelForCausalLM.from_pretrained(str(tiny_gpt2))
    for prompt, answer in GPT2_FACTS.items():
        text, gaps = greedy_with_gaps(model.eval(), tokenizer, prompt, encoder_decoder=False)
        assert text.startswith(answer), (prompt, text)
        assert min(gaps[: len(tokenizer(answer)["input_ids"])]) > MARGIN, (prompt, gaps)


@pytest.mark.parametrize("kind", ["t5", "bart"])
def test_the_tiny_encoder_decoders_learn_their_facts_by_a_margin(kind: str, request: pytest.FixtureRequest) -> None:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    folder = Path(request.getfixturevalue(f"tiny_{kind}"))
    tokenizer, model = AutoTokenizer.from_pretrained(str(folder)), AutoModelForSeq2SeqLM.from_pretrained(str(folder))
    for prompt, answer in SEQ2SEQ_FACTS.items():
        text, gaps = greedy_with_gaps(model.eval(), tokenizer, prompt, encoder_decoder=True)
        assert text == answer, (prompt, text)
        assert min(gaps) > MARGIN, (prompt, gaps)
