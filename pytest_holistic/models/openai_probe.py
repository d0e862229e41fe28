"""What a served model can do, found out once at start: its name, its endpoint, and whether its echoed
prompt log-probabilities can be trusted.

Engines differ. Some serve ``/v1/completions`` (vLLM, SGLang, llama.cpp), some only chat; some return prompt
log-probabilities with ``echo`` (vLLM), some refuse ``echo`` (llama.cpp's C++ server), and some return them shifted
by one token (llama-cpp-python reads each prompt token's value from the next position's distribution). So the
alignment is verified, not assumed: the probe lets the server generate a few tokens greedily after a known context,
then asks it to score that same text as a prompt. A correct engine gives the continuation's tokens the same
log-probabilities both ways. The probe tries shifts of -1, 0 and +1 token and keeps the one that agrees; when
none does, log-likelihood scoring is a missing capability with the measured numbers in its reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelLoadError, ModelOutputError
from . import openai_answers as answers
from .openai_http import JsonClient, RequestRejected

PROBE_CONTEXT = "The capital of France is"
PROBE_TOKENS = 6
NEUTRAL_SAMPLING: Mapping[str, Any] = {"repeat_penalty": 1.0}
"""Sent with every completion when the server accepts it: llama-cpp-python penalises repeats by default, which
makes temperature 0 stop being greedy. Servers that do not know the field ignore it; one that rejects it is probed
again without."""
ALIGNMENT_TOLERANCE = 0.05
"""Mean absolute difference (nats per token) allowed between a token's generated and echoed log-probability:
batched prompt evaluation and one-token decoding round differently, by far less than a token's shift."""
SHIFTS = (0, -1, 1)
PROBE_BYTES = answers.body_bound(len(PROBE_CONTEXT), PROBE_TOKENS)


@dataclass(frozen=True)
class EchoedTokens:
    """A ``logprobs`` block of a completion with ``echo``: token strings, their values and character offsets."""

    tokens: tuple[str, ...]
    values: tuple[float | None, ...]
    offsets: tuple[int, ...]
    top: tuple[Mapping[str, float] | None, ...]

    @classmethod
    def from_choice(cls, choice: Mapping[str, Any], where: str) -> EchoedTokens:
        """The block of ``choice``, every field checked: strings, possible log-probabilities, whole offsets."""
        block = choice.get("logprobs")
        if not isinstance(block, Mapping):
            kind = answers.json_type(block)
            raise ModelOutputError(f"{where}: the server returned no log-probabilities (its 'logprobs' is {kind})")
        tokens = answers.strings(answers.listed(block, "tokens"), where, "'tokens'")
        values = answers.listed(block, "token_logprobs")
        if not isinstance(values, list):
            raise answers.bad(where, "its 'token_logprobs' is not a list")
        offsets = answers.whole_numbers(answers.listed(block, "text_offset"), where, "'text_offset'")
        top = answers.listed(block, "top_logprobs") or [None] * len(tokens)
        if not isinstance(top, list):
            raise answers.bad(where, "its 'top_logprobs' is not a list")
        if not (len(tokens) == len(values) == len(offsets)) or not tokens:
            raise ModelOutputError(
                f"{where}: the server's log-probabilities are incomplete ({len(tokens)} tokens, {len(values)} values, "
                f"{len(offsets)} offsets)"
            )
        return cls(
            tuple(tokens),
            tuple(answers.logprob(v, where, optional=True) for v in values),
            tuple(offsets),
            tuple(_alternatives(t, where) for t in top[: len(tokens)]) + (None,) * max(0, len(tokens) - len(top)),
        )

    def span(self, start: int, end: int) -> list[int]:
        """Indices of the tokens that overlap characters ``[start, end)`` of the echoed text (by the server's offsets).

        A token that straddles ``start`` (its text begins in the context) counts as the continuation's: the
        continuation is never scored short of a character.
        """
        return [
            i
            for i, (offset, token) in enumerate(zip(self.offsets, self.tokens))
            if offset < end and offset + max(len(token), 1) > start
        ]

    def value(self, index: int, shift: int) -> float | None:
        """The log-probability of token ``index``, read where this engine puts it."""
        where = index + shift
        return self.values[where] if 0 <= where < len(self.values) else None

    def is_greedy(self, index: int, shift: int) -> bool:
        """Whether token ``index`` was the most likely one at its position (from the top-1 alternatives)."""
        where = index + shift
        top = self.top[where] if 0 <= where < len(self.top) else None
        if not top:
            return False
        return max(top.items(), key=lambda pair: pair[1])[0] == self.tokens[index]


def generated_tokens(block: Any, where: str = "the server's answer") -> tuple[list[str], list[float | None]]:
    """Generated tokens and their log-probabilities from a ``logprobs`` block, in either format engines use.

    The completions API's (``tokens`` and ``token_logprobs``), or the chat API's (``content``: a list of
    ``{token, logprob}``), which llama.cpp's server also returns from ``/v1/completions``. No block is no tokens;
    a block with wrong types or impossible values is an error.
    """
    if block is None:
        return [], []
    if not isinstance(block, Mapping):
        raise answers.bad(where, f"its 'logprobs' is not an object (got {answers.json_type(block)})")
    content = block.get("content")
    if content is not None:
        if not isinstance(content, list) or not all(isinstance(entry, Mapping) for entry in content):
            raise answers.bad(where, "its 'logprobs.content' is not a list of objects")
        tokens = answers.strings([entry.get("token", "") for entry in content], where, "tokens")
        return tokens, [answers.logprob(entry.get("logprob"), where, optional=True) for entry in content]
    tokens = answers.strings(answers.listed(block, "tokens"), where, "'tokens'")
    values = answers.listed(block, "token_logprobs")
    if not isinstance(values, list) or len(values) != len(tokens):
        raise answers.bad(where, f"its 'token_logprobs' is not a list of one value per token ({len(tokens)} tokens)")
    return tokens, [answers.logprob(value, where, optional=True) for value in values]


def _alternatives(top: Any, where: str) -> Mapping[str, float] | None:
    """One position's top alternatives (token -> log-probability), checked; None when the server gave none."""
    if top is None:
        return None
    if not isinstance(top, Mapping) or not all(isinstance(token, str) for token in top):
        raise answers.bad(where, "its 'top_logprobs' holds something other than objects of token: log-probability")
    return {token: answers.logprob(value, where) for token, value in top.items()}


def best_shift(generated: Sequence[float], echoed: EchoedTokens, span: Sequence[int]) -> tuple[int | None, dict[int, float]]:
    """The shift under which the echoed values of ``span`` equal the generated ones, and each shift's mean gap."""
    gaps: dict[int, float] = {}
    for shift in SHIFTS:
        pairs = [(g, echoed.value(i, shift)) for g, i in zip(generated, span)]
        usable = [(g, v) for g, v in pairs if v is not None and math.isfinite(v)]
        if len(usable) == len(pairs) and usable:
            gaps[shift] = sum(abs(g - v) for g, v in usable) / len(usable)
    agreeing = [shift for shift, gap in gaps.items() if gap <= ALIGNMENT_TOLERANCE]
    return (min(agreeing, key=lambda s: gaps[s]) if agreeing else None), gaps


@dataclass(frozen=True)
class Capabilities:
    """What the probe found. ``loglikelihood`` is None when scoring works, else the one-line reason it does not."""

    endpoint: str
    model: str
    served: tuple[str, ...] = ()
    shift: int = 0
    loglikelihood: str | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)
    chat_logprobs: bool = True

    def details(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "served_models": list(self.served),
            "loglikelihood": "echo" + (f" (shifted {self.shift:+d} token)" if self.shift else "")
            if self.loglikelihood is None
            else f"unavailable: {self.loglikelihood}",
        }


def served_models(client: JsonClient) -> tuple[str, ...]:
    """The ids ``GET /models`` lists (empty when the server does not list them); a malformed listing is an error."""
    try:
        listing = client.get("/models")
    except RequestRejected:
        return ()
    where = f"server {client.shown_url} (GET /models)"
    if not isinstance(listing, Mapping):
        raise answers.bad(where, f"the answer is not an object (got {answers.json_type(listing)})")
    data = answers.listed(listing, "data")
    if not isinstance(data, list):
        raise answers.bad(where, f"its 'data' is not a list of models (got {answers.json_type(data)})")
    ids = []
    for entry in data:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
            raise answers.bad(where, "its 'data' holds something other than models with a string 'id'")
        if entry["id"]:
            ids.append(entry["id"])
    return tuple(ids)


def pick_model(asked: str | None, served: Sequence[str], shown_url: str, redact: Callable[[str], str] = str) -> str:
    """The model to ask for: the one named after ``#``, or the server's only one.

    Served names are shown through ``redact``; a name that would not survive it is never taken unasked.
    """
    listed = ", ".join(repr(redact(s)) for s in served)
    if asked:
        if served and asked not in served:
            raise ModelLoadError(
                f"server {shown_url} serves {listed}, not {asked!r}; name one of them after '#' in --model openai:{shown_url}#NAME"
            )
        return asked
    if len(served) == 1:
        if redact(served[0]) != served[0]:
            raise ModelLoadError(
                f"server {shown_url} serves one model whose name looks like a secret; name it after '#': "
                f"--model openai:{shown_url}#NAME"
            )
        return served[0]
    raise ModelLoadError(
        f"server {shown_url} serves {listed or 'nothing it lists'}; name the model after '#': --model openai:{shown_url}#NAME"
    )


def _completion(client: JsonClient, payload: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, Any]]:
    """POST a probe completion with the neutral sampling fields, or without them if the server rejects them."""
    try:
        return dict(NEUTRAL_SAMPLING), client.post("/completions", {**payload, **NEUTRAL_SAMPLING}, max_bytes=PROBE_BYTES)
    except RequestRejected as error:
        if error.status not in (400, 422):
            raise
    return {}, client.post("/completions", payload, max_bytes=PROBE_BYTES)


def _hint(status: int) -> str:
    if status in (401, 403):
        return "check the API key in the variable --holistic-api-key-env names (default OPENAI_API_KEY)"
    return "check the model name, or use --holistic-api-endpoint chat"


def probe(client: JsonClient, asked: str | None, endpoint: str) -> Capabilities:
    """Ask the server what it can do (a handful of tiny requests); ``endpoint`` is auto, completions or chat."""
    served = served_models(client)
    model = pick_model(asked, served, client.shown_url, client.redact)
    shown = tuple(client.redact(name) for name in served)
    if endpoint != "chat":
        try:
            extras, generated = _completion(
                client,
                {"model": model, "prompt": PROBE_CONTEXT, "max_tokens": PROBE_TOKENS, "temperature": 0, "logprobs": 1},
            )
        except RequestRejected as error:
            if endpoint == "completions" or error.status not in (404, 405, 501):
                raise ModelLoadError(f"{error}; {_hint(error.status)}") from None
        else:
            reason, shift = _echo_alignment(client, model, extras, generated)
            return Capabilities("completions", model, shown, shift, reason, extras)
    request = {"model": model, "messages": [{"role": "user", "content": "Say yes."}], "max_tokens": 1, "temperature": 0}
    attempts: tuple[tuple[dict[str, object], dict[str, object]], ...] = (
        ({"logprobs": True, "top_logprobs": 1}, dict(NEUTRAL_SAMPLING)),
        ({"logprobs": True, "top_logprobs": 1}, {}),
        ({}, {}),
    )
    for index, (logprobs, extras) in enumerate(attempts):  # the richest request the server accepts
        try:
            client.post("/chat/completions", {**request, **logprobs, **extras}, max_bytes=PROBE_BYTES)
            break
        except RequestRejected as error:
            if error.status not in (400, 422) or index == len(attempts) - 1:
                neither = "the server serves neither /completions nor /chat/completions here"
                raise ModelLoadError(f"{error}; {_hint(error.status) if error.status in (401, 403) else neither}") from None
    chat_logprobs = bool(logprobs)
    return Capabilities(
        "chat",
        model,
        shown,
        loglikelihood="the chat endpoint returns no prompt log-probabilities (serve /v1/completions with echo, as vLLM does)",
        extras=extras,
        chat_logprobs=chat_logprobs,
    )


def _echo_alignment(
    client: JsonClient, model: str, extras: Mapping[str, Any], generated: Mapping[str, Any]
) -> tuple[str | None, int]:
    """(None, shift) when echoed prompt log-probabilities agree with generated ones under ``shift``, else (reason, 0)."""
    where = f"server {client.shown_url} (probe completion)"
    choice = answers.first_choice(generated, where)
    text = answers.text(choice.get("text"), where, answers.text_bound(PROBE_TOKENS))
    try:
        tokens, found = generated_tokens(choice.get("logprobs"), where)
    except ModelOutputError as error:
        return f"its log-probabilities cannot be used ({error})", 0
    values = [v for v in found if v is not None]
    if not text or not values or len(values) != len(tokens):
        return "the server returns no log-probabilities for generated tokens", 0
    payload = {
        "model": model,
        "prompt": PROBE_CONTEXT + text,
        "max_tokens": 1,  # some engines read 0 as 'no limit'; the generated token is past the prompt and ignored
        "temperature": 0,
        "logprobs": 1,
        "echo": True,
        **extras,
    }
    try:
        echoed_answer = client.post("/completions", payload, max_bytes=answers.body_bound(len(PROBE_CONTEXT + text), 1))
        echoed = EchoedTokens.from_choice(answers.first_choice(echoed_answer, "echo probe"), "echo probe")
    except (RequestRejected, ModelOutputError) as error:
        detail = error.detail if isinstance(error, RequestRejected) else str(error)
        return f"it does not return prompt log-probabilities with echo ({detail})", 0
    span = echoed.span(len(PROBE_CONTEXT), len(PROBE_CONTEXT) + len(text))
    # Tokenising the text again may merge the last tokens differently (two newlines into one token): compare the
    # tokens both sides agree on, which is every token but the last few.
    agreed = 0
    while agreed < min(len(span), len(tokens)) and echoed.tokens[span[agreed]] == str(tokens[agreed]):
        agreed += 1
    if agreed == 0:
        return (
            (
                f"its echoed tokens {[echoed.tokens[i] for i in span]} for the probe's continuation differ from the "
                f"generated tokens {list(tokens)}"
            ),
            0,
        )
    shift, gaps = best_shift([float(v) for v in values[:agreed]], echoed, span[:agreed])
    if shift is None:
        measured = ", ".join(f"shift {s:+d}: {gap:.2f}" for s, gap in sorted(gaps.items())) or "no comparable values"
        return (
            (
                "its echoed prompt log-probabilities disagree with its own generation's for the same tokens "
                f"(mean gap in nats per token, {measured}; tolerance {ALIGNMENT_TOLERANCE})"
            ),
            0,
        )
    return None, shift
