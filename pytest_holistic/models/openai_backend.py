"""``--model openai:http://host:port/v1#name``: a model served by vLLM, SGLang, TGI or llama.cpp.

Generation goes through ``/v1/completions`` (the prompt exactly as written), or ``/v1/chat/completions`` on a
chat-only server (the prompt as one user message, the server's own template around it). Log-likelihoods come
from echoed prompt log-probabilities, read at the alignment the start-up probe verified (see
:mod:`.openai_probe`); a server that cannot give them is a missing capability that scenarios needing it report
at collection. Requests run ``concurrency`` at a time in daemon threads, each retried by :mod:`.openai_http`; the
response cache sits in front (``CachedModel``), so xdist workers pointed at one server share answers and an
interrupted run resumes. A request that still fails is its item's error, never a score, and is not sent again.

Answers are cached under the served model's name and ``--holistic-model-revision`` (default ``served``): pass a
revision when the weights behind a name change, or clear the cache. Every answer is checked before it is used
(:mod:`.openai_answers`). A URL's user info (``http://user:pass@host/v1``) is sent as HTTP Basic authentication and
never shown; it cannot be combined with an API key.
"""

from __future__ import annotations

import os
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from ..errors import HolisticError, ModelLoadError, ModelOutputError, error_line
from . import openai_answers as answers
from .base import (
    BatchStreaming,
    Failed,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelInfo,
)
from .openai_http import JsonClient, RetryPolicy, ServerUnavailable
from .openai_options import SCHEME, OpenAIOptions
from .openai_probe import Capabilities, EchoedTokens, generated_tokens, probe
from .request_pool import RequestPool

DEFAULT_REVISION = "served"
MAX_STOP_SEQUENCES = 4  # the OpenAI API's limit; further stop sequences are applied here, after the answer
_USER_INFO = re.compile(r"^([A-Za-z][\w+.-]*://)?[^/@]*@")
R = TypeVar("R")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``openai:http://host:8000/v1#name`` -> (base URL, model name or None); a malformed spec is one line."""
    rest = spec[len(SCHEME) + 1 :] if spec.startswith(f"{SCHEME}:") else spec
    url, _, name = rest.partition("#")
    shown = f"{SCHEME}:{shown_url(url)}" + (f"#{name}" if name else "")
    if not re.match(r"^https?://[^/\s]+", url):
        raise ModelLoadError(f"--model {shown!r}: give the server's base URL, e.g. openai:http://127.0.0.1:8000/v1#model-name")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ModelLoadError(
            f"--model {shown!r}: the port is not a number; e.g. openai:http://127.0.0.1:8000/v1#model-name"
        ) from None
    if not parts.hostname:
        raise ModelLoadError(f"--model {shown!r}: the URL names no host; e.g. openai:http://127.0.0.1:8000/v1#model-name")
    return url.rstrip("/"), (name.strip() or None)


def shown_url(url: str) -> str:
    """The URL without its user info (``https://user:pass@host`` -> ``https://host``), for messages and reports."""
    return _USER_INFO.sub(lambda match: match[1] or "", url)


class OpenAIBackend:
    """Identity and capabilities from a cheap probe of the server; ``load`` connects, nothing is downloaded."""

    concurrent_streams = True  # the loaded model takes several request streams at once (shards side by side)

    def __init__(self, spec: str, options: OpenAIOptions) -> None:
        self.url, self.asked = parse_spec(spec)
        self.options = options
        self._key = os.environ.get(options.api_key_env) or None
        if self._key is not None and "@" in urllib.parse.urlsplit(self.url).netloc:
            raise ModelLoadError(
                f"--model openai:{shown_url(self.url)}: the URL's user info is sent as HTTP Basic authentication, and "
                f"${options.api_key_env} holds an API key too; give one: unset it (or point --holistic-api-key-env at an "
                "unset variable), or drop 'user:password@' from the URL"
            )
        self._capabilities: Capabilities | None = None
        self._probe_failure: str | None = None  # why the last probe failed, in one line
        self._unreachable = False  # whether it failed because the server could not be reached
        self._client: JsonClient | None = None
        self._lock = threading.Lock()

    def client(self) -> JsonClient:
        """One client per backend, so every request of this process shares its down-mark."""
        with self._lock:
            if self._client is None:
                policy = RetryPolicy(retries=self.options.retries, timeout=self.options.request_timeout)
                self._client = JsonClient(self.url, self._key, policy, shown_url(self.url))
            return self._client

    def capabilities(self, again: bool = False) -> Capabilities | None:
        """The probe's findings (probed once per process); None while the server cannot be reached.

        A failed probe is not repeated for every question (collection asks once per scenario) unless ``again``:
        loading tries once more, so a server that came up meanwhile is used.
        """
        client = self.client()
        with self._lock:
            if self._capabilities is None and (self._probe_failure is None or again):
                try:
                    self._capabilities = probe(client, self.asked, self.options.api_endpoint)
                    self._probe_failure = None
                    self._unreachable = False
                except ServerUnavailable as error:
                    self._probe_failure = str(error)
                    self._unreachable = True
                except HolisticError as error:  # a refusal or a malformed answer: said in one line when loading
                    self._probe_failure = error_line(error)
                except (TypeError, ValueError, KeyError, AttributeError, IndexError) as error:
                    self._probe_failure = (
                        f"server {client.shown_url} gave the start-up probe an answer it cannot read "
                        f"({type(error).__name__}: {client.redact(str(error))[:200]})"
                    )
            return self._capabilities

    def cancel(self) -> None:
        """End this backend's requests in flight (the probe's included): the session is ending."""
        self.client().cancel()

    def missing_capability(self, kind: str) -> str | None:
        """Why this server cannot answer requests of ``kind`` (``loglikelihood``), or None (also when it is down)."""
        found = self.capabilities()
        if found is None or kind != "loglikelihood":
            return None
        return found.loglikelihood

    def _endpoint(self, found: Capabilities | None) -> str:
        if found is not None:
            return found.endpoint
        return "chat" if self.options.api_endpoint == "chat" else "completions"

    def identify(self) -> ModelInfo:
        """Name, revision and endpoint: known from the probe, or from the spec alone while the server is down.

        A warm rerun can then answer from the cache with no server (an unnamed model needs the server to be named).
        """
        found = self.capabilities()
        name = found.model if found is not None else self.asked
        if name is None:
            if self._unreachable:
                raise ModelLoadError(f"{self._probe_failure}; name the model after '#' to use cached answers without the server")
            raise ModelLoadError(str(self._probe_failure))
        return ModelInfo(
            name=name,
            backend=SCHEME,
            revision=self.options.revision or DEFAULT_REVISION,
            variant={"endpoint": self._endpoint(found)},
        )

    def load(self) -> OpenAIModel:
        found = self.capabilities(again=True)
        if found is None:
            fix = "; start the server or fix the URL in --model" if self._unreachable else ""
            raise ModelLoadError(f"{self._probe_failure}{fix}")
        return OpenAIModel(self.client(), found, self.identify(), self.options.concurrency)


END_OF_TEXT = "<|endoftext|>"
"""The end-of-text token's text at which HELM's OpenAI client also cuts an answer's tokens (GPT-2's and OpenAI's)."""


def cut_at_stop(text: str, tokens: Sequence[str], stop: Sequence[str]) -> tuple[str, int]:
    """The text up to the first stop sequence, and how many of ``tokens`` make the answer.

    The tokens are counted as HELM's OpenAI client counts them (``truncate_sequence``), so an answer's
    log-probability, and the calibration read from it, are HELM's: every token before the first one whose text starts
    with a stop sequence or with ``<|endoftext|>``. Servers drop the stop sequence from the text but keep its token,
    which is then left out; an answer the model ended at once keeps no token; a stop inside a token keeps that token;
    an end-of-text token of another name (``<|im_end|>``) counts, as it does in HELM.
    """
    cuts = [text.index(s) for s in stop if s and s in text]
    if cuts:
        text = text[: min(cuts)]
    markers = (*(s for s in stop if s), END_OF_TEXT)
    for kept, token in enumerate(tokens):
        if token.startswith(markers):
            return text, kept
    return text, len(tokens)


class OpenAIModel(BatchStreaming):
    """Greedy generation and echo scoring over HTTP, ``concurrency`` requests in flight."""

    concurrent_streams = True  # its requests are independent: several streams may run at once (see RequestPool)

    def __init__(self, client: JsonClient, capabilities: Capabilities, identity: ModelInfo, concurrency: int) -> None:
        self.client = client
        self.capabilities = capabilities
        self.start_text = ""
        """The model's start token as text, put before a context that opens a text (``text_start``) when the server's
        tokenizer adds none itself; empty where unknown (a plain ``openai:`` model: the server adds what it adds)."""
        self.concurrency = max(1, concurrency)
        self._pool = RequestPool(self.concurrency)
        self.info = ModelInfo(
            identity.name,
            identity.backend,
            identity.revision,
            {"url": client.shown_url, "concurrency": self.concurrency, **capabilities.details()},
            dict(identity.variant),
        )

    # -- the stream: all requests in a bounded pool, results handed on as they finish ------------------

    def _stream(self, requests: Sequence[R], answer: Callable[[R], Any]) -> Iterator[list[tuple[int, Any]]]:
        """Every request answered by the model's pool, ``concurrency`` in flight over all open streams.

        Requests are independent: one that fails (after its own retries, within its own deadline) is handed on as
        its :class:`Failed` outcome and the others go on, so it is sent no more often than its retries allow, and a
        stalled one holds a single sender, never the rest nor another stream (a shard computed beside this one).
        """
        return self._pool.stream(requests, answer, self._ended)

    def _ended(self) -> Failed:
        return Failed(ModelOutputError(f"server {self.client.shown_url}: the request ended without an answer"))

    def generate_batches(self, requests: Sequence[GenerationRequest]) -> Iterator[list[tuple[int, GenerationResult]]]:
        return self._stream(requests, self._generate)

    def loglikelihood_batches(self, requests: Sequence[LoglikelihoodRequest]) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        if self.capabilities.loglikelihood is not None:
            raise ModelOutputError(
                f"server {self.client.shown_url} cannot score log-likelihoods: {self.capabilities.loglikelihood}"
            )
        return self._stream(requests, self._score)

    def cancel(self) -> None:
        """End every request in flight at once, and fail every later one at once: the session is ending."""
        self.client.cancel()

    # -- one request each ---------------------------------------------------------------------------

    def _generate(self, request: GenerationRequest) -> GenerationResult:
        """One greedy generation through the probed endpoint; the text is cut at the first stop sequence here too."""
        if request.max_tokens <= 0:
            return GenerationResult("")
        chat = self.capabilities.endpoint == "chat"
        stop = [s for s in request.stop if s]
        payload: dict[str, Any] = {
            "model": self.capabilities.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "seed": request.seed,
            **self.capabilities.extras,
        }
        if chat:
            payload["messages"] = [{"role": "user", "content": request.prompt}]
            if self.capabilities.chat_logprobs:
                payload |= {"logprobs": True, "top_logprobs": 1}
        else:
            payload |= {"prompt": request.prompt, "logprobs": 1}
        if stop:
            payload["stop"] = stop[:MAX_STOP_SEQUENCES]
        where = f"server {self.client.shown_url} ({'chat completion' if chat else 'completion'})"
        bound = answers.body_bound(len(request.prompt), request.max_tokens)
        started = time.perf_counter()
        answer = self.client.post("/chat/completions" if chat else "/completions", payload, max_bytes=bound)
        seconds = time.perf_counter() - started
        choice = answers.first_choice(answer, where)
        if chat:
            message = choice.get("message")
            if message is not None and not isinstance(message, Mapping):
                raise answers.bad(where, f"its 'message' is not an object (got {answers.json_type(message)})")
            written = (message or {}).get("content")
        else:
            written = choice.get("text")
        limit = answers.text_bound(request.max_tokens)
        tokens, values = generated_tokens(choice.get("logprobs"), where)
        text, kept = cut_at_stop(answers.text(written, where, limit), tokens, stop)
        logprobs = tuple(answers.logprob(value, where) for value in values[:kept])
        redacted = self.client.redact.exact(text)
        return GenerationResult(redacted, logprobs, _prompt_tokens(answer), seconds, logprobs_returned=bool(tokens))

    def _score(self, request: LoglikelihoodRequest) -> LoglikelihoodResult:
        opens_text = request.text_start or not request.context
        context = self.start_text + request.context if opens_text else request.context
        text = context + request.continuation
        if not request.continuation:
            raise ModelOutputError("an empty continuation has no log-probability; give each choice some text")
        payload = {
            "model": self.capabilities.model,
            "prompt": text,
            "max_tokens": 1,  # 0 means 'no limit' to some engines; the one generated token lies past the prompt
            "temperature": 0,
            "logprobs": 1,
            "echo": True,
            **self.capabilities.extras,
        }
        where = f"server {self.client.shown_url} (scoring)"
        started = time.perf_counter()
        answer = self.client.post("/completions", payload, max_bytes=answers.body_bound(len(text), 1))
        seconds = time.perf_counter() - started
        echoed = EchoedTokens.from_choice(answers.first_choice(answer, where), where)
        span = echoed.span(len(context), len(text))
        if not span:
            raise answers.bad(where, f"its token offsets place no token in the continuation {request.continuation!r}")
        shift = self.capabilities.shift
        values = [echoed.value(i, shift) for i in span]
        if any(v is None for v in values):
            raise ModelOutputError(
                "the server gave no log-probability for the continuation's first token (it has no context before it); "
                "give the request some context"
            )
        total = sum(answers.logprob(v, where) or 0.0 for v in values)
        greedy = all(echoed.is_greedy(i, shift) for i in span)
        return LoglikelihoodResult(total, greedy, span[0], len(span), seconds)


def _prompt_tokens(answer: Mapping[str, Any]) -> int:
    usage = answer.get("usage") if isinstance(answer, Mapping) else None
    return answers.count(usage.get("prompt_tokens")) if isinstance(usage, Mapping) else 0
