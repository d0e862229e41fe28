"""Encoder-decoder models (T5, Flan-T5, mT5, UL2, BART) through transformers, on the causal backend's core.

The convention is lm-evaluation-harness's seq2seq backend's, the one HELM's T5 and UL2 runs follow: the prompt (or a
scoring request's context) goes to the encoder with the special tokens its tokenizer adds (T5's closing ``</s>``,
BART's ``<s>`` and ``</s>``); the answer is produced or scored by the decoder from the model's decoder start token,
a continuation's tokens without special tokens. A continuation's log-probability is the decoder's, given the
encoder's reading of the context.

:class:`.hf.Seq2SeqModel` is :class:`.hf.HFModel` with the methods of :class:`EncoderDecoderPaths` in front (this module
does not import :mod:`.hf`): everything but one batch's computation is :class:`.hf.HFModel`'s: length-sorted batches under a row limit and a
token budget, out-of-memory halving, stop cutting, chat templates, the NaN checks, the details. What differs:

- **The encoder runs once per distinct context in a batch** and every continuation of it reuses its output (the
  encoder-decoder counterpart of prefix sharing: one encoder pass per multiple-choice instance, not one per
  option); ``--holistic-prefix-sharing off`` runs it once per request instead. Decoder prefixes are not shared:
  continuations are short, and the decoder sees only them.
- **Language modelling**: a text's piece is scored by the decoder given the text before it in the encoder (the
  first piece given an empty encoder input, its special tokens only), so bits-per-byte measure the decoder's
  conditional likelihood; they do not compare with a decoder-only model's.
- ``--holistic-scoring`` (the causal strategies) does not apply; the details say so when one was asked for.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ..builtin_options import STRATEGIES
from ..errors import ModelLoadError
from . import hf_batching, scoring
from .base import GenerationRequest, GenerationResult, LoglikelihoodRequest, LoglikelihoodResult, ModelInfo
from .hf_shared import TokenPair

Unit = tuple[tuple[int, ...], list[int]]
"""One encoder row of a scoring batch: the context's tokens and the requests (indices) whose continuations follow it."""


def decoder_start(model: Any, name: str) -> int:
    """The token the decoder starts from: the config's, else the generation config's, else the pad token (T5's).

    ``name`` (the ``--model`` spec) names the model in the error when its config names none of them.
    """
    for source in (model.config, getattr(model, "generation_config", None)):
        value = getattr(source, "decoder_start_token_id", None) if source is not None else None
        if isinstance(value, int):
            return value
    pad = getattr(model.config, "pad_token_id", None)
    if isinstance(pad, int):
        return pad
    raise ModelLoadError(
        f"model {name!r} ({type(model).__name__}) is an encoder-decoder whose config names no decoder_start_token_id "
        "or pad_token_id; set decoder_start_token_id in its config.json"
    )


class EncoderDecoderOwner(Protocol):
    """What :class:`EncoderDecoderPaths` uses of the model it is part of (:class:`.hf.Seq2SeqModel`): its settings and
    the parts of :class:`.hf.HFModel` it shares."""

    model: Any
    tokenizer: Any
    info: ModelInfo
    device: Any
    eos_id: int | None
    start_id: int
    decoder_start_id: int
    max_length: int
    batch_size: int
    token_budget: int | None
    prefix_sharing: str
    chat_template: Any

    def _record(self, changes: Mapping[str, Any], drop: Iterable[str] = ()) -> None: ...

    def _pad(self, rows: Sequence[Sequence[int]], *, left: bool, width: int | None = None) -> tuple[Any, Any]: ...

    def _encoder_tokens(self: EncoderDecoderOwner, text: str, *, templated: bool = False) -> list[int]: ...

    def _continuation_tokens(self, request: LoglikelihoodRequest, encoded: Mapping[str, list[int]] | None = None) -> list[int]: ...

    def _pair(
        self: EncoderDecoderOwner, request: LoglikelihoodRequest, encoded: Mapping[str, list[int]] | None = None
    ) -> tuple[list[int], list[int], int]: ...

    def _shrink(self, size: int, error: BaseException) -> None: ...

    def _score_units(self: EncoderDecoderOwner, units: list[Unit], pairs: list[TokenPair]) -> tuple[scoring.Scores, list[int]]: ...

    def _loglikelihood_results(
        self,
        requests: Sequence[LoglikelihoodRequest],
        pairs: list[TokenPair],
        members: Sequence[int],
        scores: scoring.Scores,
        elapsed: float,
    ) -> list[tuple[int, LoglikelihoodResult]]: ...

    def prompt_text(self, prompt: str) -> str: ...

    def _plain_generation(
        self,
        indices: Sequence[int],
        prompts: dict[int, list[int]],
        encoded: dict[int, list[int]],
        budget: int,
        stop: tuple[str, ...],
        temperature: float,
        seed: int,
    ) -> Iterator[list[tuple[int, GenerationResult]]]: ...


class EncoderDecoderPaths:
    """The methods an encoder-decoder model runs instead of a decoder-only one's: put before :class:`.hf.HFModel` in
    :class:`.hf.Seq2SeqModel`'s bases, so they take precedence and the rest is shared."""

    # -- options that mean something else here ------------------------------------------------------------------

    def use_strategy(self: EncoderDecoderOwner, asked: str) -> None:
        """Accept any strategy (a run's options hold for every model) and say that it does not apply."""
        if asked not in STRATEGIES:
            raise ModelLoadError(f"unknown scoring strategy {asked!r}; use one of {', '.join(STRATEGIES)}")
        note = {"scoring_note": f"--holistic-scoring {asked} applies to decoder-only models"} if asked != "auto" else {}
        self._record({"scoring": "encoder once per context", **note}, drop=("scoring_note",))

    def use_prefix_sharing(self: EncoderDecoderOwner, mode: str) -> None:
        """``auto``/``on``: one encoder pass per distinct context in a batch; ``off``: one per request."""
        if mode not in ("auto", "on", "off"):
            raise ModelLoadError(f"unknown prefix sharing mode {mode!r}; use auto, on or off")
        self.prefix_sharing = mode
        scope = "one encoder pass per request" if mode == "off" else "one encoder pass per distinct context"
        self._record({"prefix_sharing": mode, "prefix_sharing_scope": scope}, drop=("prefix_sharing_fallback",))

    # -- tokens -----------------------------------------------------------------------------------------------

    def _encoder_tokens(self: EncoderDecoderOwner, text: str, *, templated: bool = False) -> list[int]:
        """The encoder's input: ``text`` with the tokenizer's special tokens (a rendered chat template holds its own).

        Never empty: a text with no tokens and a tokenizer that adds none reads as the end token alone.
        """
        tokens = list(self.tokenizer(text, add_special_tokens=not templated)["input_ids"])
        return tokens or [self.eos_id if self.eos_id is not None else self.start_id]

    def _pair(
        self: EncoderDecoderOwner, request: LoglikelihoodRequest, encoded: Mapping[str, list[int]] | None = None
    ) -> tuple[list[int], list[int], int]:
        """(encoder input, continuation, encoder tokens dropped): the encoder input is cut from the left to the window.

        ``text_start`` changes nothing: the encoder input carries the tokenizer's special tokens in every case.
        ``encoded`` (continuations already encoded, as the causal backend's) is read for the continuation only.
        """
        context = self._encoder_tokens(request.context)
        continuation = self._continuation_tokens(request, encoded)
        return context[-self.max_length :], continuation, max(0, len(context) - self.max_length)

    # -- log-likelihood ---------------------------------------------------------------------------------------

    def loglikelihood_batches(self: EncoderDecoderOwner, requests: Sequence[LoglikelihoodRequest]) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        """Results one batch at a time: encoder rows longest first, at most ``batch_size`` of them and ``token_budget``
        padded tokens (encoder and decoder together) per batch, halved after running out of device memory."""
        pairs = [self._pair(request) for request in requests]
        groups, contexts = hf_batching.contexts_longest_first(pairs, range(len(requests)))
        if self.prefix_sharing == "off":
            units: list[Unit] = [(context, [index]) for context in contexts for index in groups[context]]
        else:
            units = [(context, groups[context]) for context in contexts]

        def size(chosen: Sequence[Unit]) -> int:
            decoder_rows = [len(pairs[i][1]) for _, members in chosen for i in members]
            return len(chosen) * max(len(c) for c, _ in chosen) + len(decoder_rows) * max(decoder_rows)

        def score(batch: list[Unit]) -> tuple[scoring.Scores, list[int], float]:
            started = time.perf_counter()
            scores, members = self._score_units(batch, pairs)
            return scores, members, (time.perf_counter() - started) / len(members)

        batches = hf_batching.halving_batches(
            len(units),
            lambda start: hf_batching.next_batch(units, start, self.batch_size, self.token_budget, size),
            score,
            self._shrink,
        )
        for _, (scores, members, elapsed) in batches:
            yield self._loglikelihood_results(requests, pairs, members, scores, elapsed)

    def _score_units(self: EncoderDecoderOwner, units: list[Unit], pairs: list[TokenPair]) -> tuple[scoring.Scores, list[int]]:
        """The encoder over the batch's distinct contexts, then the decoder over every continuation, reduced on the device."""
        import torch
        from transformers.modeling_outputs import BaseModelOutput

        device = self.device
        members = [(row, index) for row, (_, indices) in enumerate(units) for index in indices]
        ids, mask = self._pad([context for context, _ in units], left=False)
        ids, mask = ids.to(device), mask.to(device)
        continuations = [pairs[index][1] for _, index in members]
        decoder_ids, decoder_mask = self._pad([[self.decoder_start_id, *c[:-1]] for c in continuations], left=False)
        width = decoder_ids.shape[1]
        flat = [r * width + k for r, c in enumerate(continuations) for k in range(len(c))]
        targets = [token for c in continuations for token in c]
        owners = [r for r, c in enumerate(continuations) for _ in c]
        with torch.inference_mode():
            encoded = self.model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
            rows = torch.tensor([row for row, _ in members], device=device)
            logits = self.model(
                encoder_outputs=BaseModelOutput(last_hidden_state=encoded.index_select(0, rows)),
                attention_mask=mask.index_select(0, rows),
                decoder_input_ids=decoder_ids.to(device),
                decoder_attention_mask=decoder_mask.to(device),
                use_cache=False,
            ).logits.flatten(0, 1)
            sums, misses = scoring.reduce_rows(
                logits,
                torch.tensor(flat, device=device),
                torch.tensor(targets, device=device),
                torch.tensor(owners, device=device),
                len(members),
            )
        return scoring.to_host(sums, misses), [index for _, index in members]

    # -- generation -------------------------------------------------------------------------------------------

    def generate_batches(self: EncoderDecoderOwner, requests: Sequence[GenerationRequest]) -> Iterator[list[tuple[int, GenerationResult]]]:
        """Greedy generation in batches of similar prompt length: the prompt (through the chat template when one
        applies) to the encoder, cut from the left to the window; the answer from the decoder, at most
        ``max_tokens`` (capped at one less than the window)."""
        templated = self.chat_template is not None
        for (max_tokens, stop, temperature, seed), indices in hf_batching.generation_groups(requests).items():
            budget = min(max_tokens, self.max_length - 1)
            encoded = {i: self._encoder_tokens(self.prompt_text(requests[i].prompt), templated=templated) for i in indices}
            prompts = {i: tokens[-self.max_length :] for i, tokens in encoded.items()}
            yield from self._plain_generation(indices, prompts, encoded, budget, stop, temperature, seed)

    def _prompt_batch(self: EncoderDecoderOwner, prompts: list[list[int]]) -> tuple[Any, Any, int]:
        """Encoder inputs right-padded (their positions start at 0, as when each runs alone); ``generate`` returns the
        decoder's tokens, the first of which is the start token."""
        ids, mask = self._pad(prompts, left=False)
        return ids, mask, 1

    def _generation_settings(self: EncoderDecoderOwner) -> dict[str, Any]:
        """The decoder's start token, whatever the model's own generation config says."""
        return {"decoder_start_token_id": self.decoder_start_id}

