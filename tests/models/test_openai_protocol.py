"""The OpenAI-compatible backend at the protocol level, against a scripted HTTP server on 127.0.0.1.

A real engine cannot be made to answer 429 with ``Retry-After``, 503 three times, a 400 with an OpenAI error body,
or echoed log-probabilities shifted by a token on demand; a small ``ThreadingHTTPServer`` driven by a script can.
``FakeEngine`` is such a script for the happy path: one model ``m``, a regex tokenizer, and log-probabilities that
are a fixed function of each token, so every expected number is computed here from first principles.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pytest_holistic.errors import ModelLoadError, ModelOutputError
from pytest_holistic.models.base import Failed, GenerationRequest, LoglikelihoodRequest
from pytest_holistic.models.openai_options import OpenAIOptions
from pytest_holistic.models.openai_backend import OpenAIBackend, cut_at_stop, parse_spec, shown_url
from pytest_holistic.models.openai_http import JsonClient, RequestRejected, RetryPolicy, ServerUnavailable
from pytest_holistic.models.openai_probe import PROBE_CONTEXT, EchoedTokens, best_shift, pick_model

KEY = "sk-test-0123456789abcdef"
NO_KEY_ENV = "PYTEST_HOLISTIC_TEST_NO_SUCH_KEY"

# -- the scripted server -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One request as the server received it (header names lower-cased, body parsed as JSON)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


@dataclass(frozen=True)
class Reply:
    """What the server answers: a status, a JSON body (or raw bytes), extra headers, after ``delay`` seconds.

    With ``drip``, the answer (status line and headers included) is sent one byte every ``drip`` seconds, from its
    byte ``drip_from`` on (all at once before it).
    """

    status: int = 200
    body: Any = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drip: float = 0.0
    drip_from: int = 0


Script = Callable[[Seen], Reply]


class _Handler(BaseHTTPRequestHandler):
    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw) if raw else None)
        reply = self.server.scripted.handle(seen)  # type: ignore[attr-defined]
        data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        if reply.drip:
            head = [
                f"HTTP/1.1 {reply.status} X",
                f"Content-Length: {len(data)}",
                *(f"{k}: {v}" for k, v in reply.headers.items()),
            ]
            raw = "\r\n".join([*head, "", ""]).encode() + data
            self.wfile.write(raw[: reply.drip_from])
            for byte in raw[reply.drip_from :]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(reply.drip)
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out closed its socket: expected here, not worth a traceback


class ScriptedServer:
    """A ThreadingHTTPServer in a daemon thread answering every request with ``script``; counts requests in flight."""

    def __init__(self, script: Script, port: int = 0) -> None:
        self.script = script
        self.seen: list[Seen] = []
        self.active = 0
        self.most_active = 0
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", port), _Handler)
        self._httpd.scripted = self  # type: ignore[attr-defined]
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        self._stopped = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def handle(self, seen: Seen) -> Reply:
        with self._lock:
            self.seen.append(seen)
            self.active += 1
            self.most_active = max(self.most_active, self.active)
        try:
            reply = self.script(seen)
            time.sleep(reply.delay)
            return reply
        finally:
            with self._lock:
                self.active -= 1

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(2)


@pytest.fixture
def serve() -> Iterator[Callable[..., ScriptedServer]]:
    """Start scripted servers (``serve(script, port=0)``); all are shut down at teardown."""
    started: list[ScriptedServer] = []

    def start(script: Script, port: int = 0) -> ScriptedServer:
        server = ScriptedServer(script, port)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def in_turn(*replies: Reply) -> Script:
    """Each request gets the next reply; the last one repeats."""
    queue = list(replies)

    def script(seen: Seen) -> Reply:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return script


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Sleeps(list[float]):
    """A ``sleep`` for JsonClient that records the delay instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_client(url: str, sleeps: Sleeps, retries: int = 4, key: str | None = None, timeout: float = 5.0) -> JsonClient:
    return JsonClient(url, key, RetryPolicy(retries=retries, timeout=timeout), shown_url(url), sleep=sleeps)


OK = Reply(200, {"ok": True})


# -- a fake engine: deterministic tokens and log-probabilities -----------------------------------------

_TOKEN = re.compile(r"\n| *\w+| *[^\w\s]| +")


def tokenize(text: str) -> list[str]:
    tokens = _TOKEN.findall(text)
    assert "".join(tokens) == text, f"the fake tokenizer cannot cover {text!r}"
    return tokens


def true_value(token: str) -> float:
    """The log-probability the fake engine gives ``token``, wherever it appears."""
    return -round(0.25 + (sum(map(ord, token)) * 7 % 97) / 20, 3)


def offsets(tokens: Sequence[str], start: int = 0) -> list[int]:
    found, at = [], start
    for token in tokens:
        found.append(at)
        at += len(token)
    return found


PROBE_ANSWER = " Paris. It is a big city"
GARBAGE = "garbage"


class FakeEngine:
    """``/v1/models``, ``/v1/completions`` (with ``echo``) and ``/v1/chat/completions`` of a served model ``m``.

    ``echo_shift`` says where echoed values land: the value of prompt token i is reported at position
    ``i + echo_shift`` (0 as vLLM does, -1 and +1 like engines that misalign), or ``GARBAGE`` for constant nonsense.
    """

    def __init__(
        self,
        answers: Mapping[str, str] | None = None,
        echo_shift: int | str = 0,
        completions: bool = True,
        not_greedy: Sequence[str] = (),
    ) -> None:
        self.answers = {PROBE_CONTEXT: PROBE_ANSWER, **(answers or {})}
        self.echo_shift = echo_shift
        self.completions = completions
        self.not_greedy = set(not_greedy)
        self.rejected: set[str] = set()
        self.delay = 0.0

    def __call__(self, seen: Seen) -> Reply:
        if seen.method == "GET" and seen.path == "/v1/models":
            return Reply(body={"object": "list", "data": [{"id": "m", "object": "model"}]})
        if seen.method == "POST" and seen.path == "/v1/completions" and self.completions:
            return self.complete(seen.body)
        if seen.method == "POST" and seen.path == "/v1/chat/completions":
            return self.chat(seen.body)
        return Reply(404, {"error": {"message": f"no route {seen.method} {seen.path}"}})

    def _top(self, token: str, value: float | None) -> dict[str, float] | None:
        if value is None:
            return None
        return {token: value, "<better>": value / 2} if token in self.not_greedy else {token: value}

    def _generate(self, prompt: str, max_tokens: int, stop: Sequence[str]) -> tuple[str, list[str]]:
        """The answer's text and tokens; like vLLM, the text stops before a stop sequence, its token is kept."""
        tokens = tokenize(self.answers.get(prompt, " ok"))[:max_tokens]
        text = "".join(tokens)
        cuts = [text.index(s) for s in stop if s in text]
        if not cuts:
            return text, tokens
        cut, kept, at = min(cuts), [], 0
        for token in tokens:
            kept.append(token)
            at += len(token)
            if at > cut:
                break
        return text[:cut], kept

    def complete(self, body: Mapping[str, Any]) -> Reply:
        prompt = str(body["prompt"])
        if prompt in self.rejected:
            return Reply(400, {"error": {"message": "prompt too long", "type": "invalid_request_error"}}, delay=self.delay)
        text, tokens = self._generate(prompt, int(body["max_tokens"]), body.get("stop") or [])
        usage = {"prompt_tokens": len(tokenize(prompt)), "completion_tokens": len(tokens)}
        if body.get("echo"):
            tokens = tokenize(prompt) + tokens[:1]
            text = "".join(tokens)
            if self.echo_shift == GARBAGE:
                values: list[float | None] = [None] + [-7.0] * (len(tokens) - 1)
                shown = list(tokens)
            else:
                shift = int(self.echo_shift)
                place = [j - shift for j in range(len(tokens))]  # whose value position j reports
                values = [true_value(tokens[i]) if 1 <= i < len(tokens) else None for i in place]
                shown = [tokens[i] if 0 <= i < len(tokens) else "" for i in place]
            block = {
                "tokens": tokens,
                "token_logprobs": values,
                "text_offset": offsets(tokens),
                "top_logprobs": [self._top(t, v) for t, v in zip(shown, values)],
            }
        else:
            values = [true_value(t) for t in tokens]
            block = {
                "tokens": tokens,
                "token_logprobs": values,
                "text_offset": offsets(tokens, len(prompt)),
                "top_logprobs": [self._top(t, v) for t, v in zip(tokens, values)],
            }
        choice = {"index": 0, "text": text, "logprobs": block, "finish_reason": "length"}
        return Reply(body={"object": "text_completion", "model": "m", "choices": [choice], "usage": usage}, delay=self.delay)

    def chat(self, body: Mapping[str, Any]) -> Reply:
        prompt = str(body["messages"][-1]["content"])
        text, tokens = self._generate(prompt, int(body["max_tokens"]), body.get("stop") or [])
        content = [{"token": t, "logprob": true_value(t), "top_logprobs": []} for t in tokens]
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": {"content": content}}
        return Reply(body={"object": "chat.completion", "choices": [choice], "usage": {"prompt_tokens": 3}})


def backend_for(server: ScriptedServer, concurrency: int = 4, name: str = "m") -> OpenAIBackend:
    options = OpenAIOptions(concurrency=concurrency, retries=0, request_timeout=5.0, api_key_env=NO_KEY_ENV)
    return OpenAIBackend(f"openai:{server.url}#{name}", options)


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_KEY_ENV, raising=False)


# -- 1. retries and backoff --------------------------------------------------------------------------


def test_429_waits_retry_after_then_succeeds(serve: Callable[..., ScriptedServer]) -> None:
    """A 429 with Retry-After is tried once more after exactly the server's delay, not the backoff's."""
    server = serve(in_turn(Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "2"}), OK))
    sleeps = Sleeps()
    assert make_client(server.url, sleeps).post("/completions", {"prompt": "x"}) == {"ok": True}
    assert sleeps == [2.0]
    assert [s.path for s in server.seen] == ["/v1/completions", "/v1/completions"]


def test_503_backoff_grows_exponentially_with_jitter(serve: Callable[..., ScriptedServer]) -> None:
    """Three 503s then success with retries=4: three sleeps, each within 25% of 0.5 * 2**k."""
    busy = Reply(503, {"error": {"message": "overloaded"}})
    server = serve(in_turn(busy, busy, busy, OK))
    sleeps = Sleeps()
    assert make_client(server.url, sleeps, retries=4).get("/models") == {"ok": True}
    assert len(server.seen) == 4
    assert len(sleeps) == 3
    for k, slept in enumerate(sleeps):
        assert 0.75 * 0.5 * 2**k <= slept <= 1.25 * 0.5 * 2**k, (k, slept)


def test_503_always_gives_up_naming_url_tries_and_status(serve: Callable[..., ScriptedServer]) -> None:
    """A server that keeps failing costs retries + 1 tries, then one ServerUnavailable that says why."""
    server = serve(in_turn(Reply(503, {"error": {"message": "overloaded"}})))
    sleeps = Sleeps()
    client = make_client(server.url, sleeps, retries=2)
    with pytest.raises(ServerUnavailable) as caught:
        client.post("/completions", {"prompt": "x"})
    message = str(caught.value)
    assert server.url in message and "3 tries" in message and "HTTP 503" in message and "overloaded" in message
    assert "\n" not in message
    assert len(server.seen) == 3 and len(sleeps) == 2
    assert client.down is None  # it answered: failing is not unreachable


# -- 2. rejected requests ----------------------------------------------------------------------------


def test_400_is_rejected_at_once_with_the_servers_message(serve: Callable[..., ScriptedServer]) -> None:
    """A 400 is the request's fault: no retry, and the OpenAI error body's message is in the error."""
    server = serve(in_turn(Reply(400, {"error": {"message": "prompt too long", "type": "invalid_request_error"}})))
    sleeps = Sleeps()
    with pytest.raises(RequestRejected) as caught:
        make_client(server.url, sleeps).post("/completions", {"prompt": "x"})
    assert len(server.seen) == 1 and sleeps == []
    assert caught.value.status == 400 and caught.value.detail == "prompt too long"
    assert "HTTP 400" in str(caught.value) and "prompt too long" in str(caught.value)


def test_non_json_success_is_a_model_output_error(serve: Callable[..., ScriptedServer]) -> None:
    """A 200 whose body is not JSON is an output error naming the server, not a crash in json."""
    server = serve(in_turn(Reply(200, b"<html>proxy login</html>")))
    with pytest.raises(ModelOutputError, match="not JSON"):
        make_client(server.url, Sleeps()).get("/models")


# -- 3. unreachable servers and the circuit breaker ---------------------------------------------------


def test_refused_connection_marks_down_then_one_try_each(serve: Callable[..., ScriptedServer]) -> None:
    """Connection refused: ServerUnavailable 'unreachable' after full backoff, then later requests try once."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    sleeps = Sleeps()
    client = make_client(url, sleeps, retries=2)
    with pytest.raises(ServerUnavailable) as first:
        client.get("/models")
    assert "unreachable" in str(first.value) and "3 tries" in str(first.value)
    assert len(sleeps) == 2
    assert client.down is not None
    sleeps.clear()
    with pytest.raises(ServerUnavailable) as second:
        client.post("/completions", {"prompt": "x"})
    assert "unreachable" in str(second.value) and "1 try" in str(second.value)
    assert sleeps == []


def test_success_after_an_outage_clears_down(serve: Callable[..., ScriptedServer]) -> None:
    """A server reachable, then stopped (marked down), then back on its port: the first success clears the mark."""
    server = serve(in_turn(OK))
    port, sleeps = server.port, Sleeps()
    client = make_client(server.url, sleeps, retries=1)
    assert client.get("/models") == {"ok": True} and client.down is None
    server.stop()
    with pytest.raises(ServerUnavailable, match="unreachable"):
        client.get("/models")
    assert client.down is not None
    back = serve(in_turn(OK), port=port)
    sleeps.clear()
    assert client.get("/models") == {"ok": True}
    assert client.down is None and sleeps == [] and len(back.seen) == 1


def test_an_http_error_also_clears_down(serve: Callable[..., ScriptedServer]) -> None:
    """A server that answers at all, even with a 503, is up: the mark is cleared and retries come back."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    client = make_client(url, Sleeps(), retries=0)
    with pytest.raises(ServerUnavailable):
        client.get("/models")
    assert client.down is not None
    server = serve(in_turn(Reply(503, {"error": {"message": "warming up"}})))
    client.base_url = server.url  # the same client, now pointed at a server that answers
    with pytest.raises(ServerUnavailable, match="kept failing"):
        client.get("/models")
    assert client.down is None


# -- 4. per-request timeout --------------------------------------------------------------------------


def test_slow_request_times_out_quickly(serve: Callable[..., ScriptedServer]) -> None:
    """A handler slower than the policy's timeout fails that request in about the timeout, not the handler's time."""
    server = serve(in_turn(Reply(200, {"ok": True}, delay=1.0)))
    client = JsonClient(server.url, None, RetryPolicy(retries=0, timeout=0.2), server.url, sleep=Sleeps())
    started = time.perf_counter()
    with pytest.raises(ServerUnavailable) as caught:
        client.post("/completions", {"prompt": "x"})
    assert time.perf_counter() - started < 0.9
    assert "timed out" in str(caught.value) and "kept failing" in str(caught.value)
    assert client.down is None  # a slow server is not a dead one: other requests keep their retries


# -- 5. the API key ----------------------------------------------------------------------------------


def test_authorization_header_only_with_a_key(serve: Callable[..., ScriptedServer]) -> None:
    """The key travels as 'Bearer KEY'; without a key there is no Authorization header at all."""
    server = serve(in_turn(OK))
    make_client(server.url, Sleeps(), key=KEY).post("/completions", {"prompt": "x"})
    make_client(server.url, Sleeps(), key=None).post("/completions", {"prompt": "x"})
    assert server.seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert "authorization" not in server.seen[1].headers
    assert server.seen[0].headers["content-type"] == "application/json" and server.seen[0].body == {"prompt": "x"}


@pytest.mark.parametrize("status", [400, 401, 503])
def test_errors_never_contain_the_key(serve: Callable[..., ScriptedServer], status: int) -> None:
    """Whatever the server answers, the error raised to reports does not carry the API key."""
    server = serve(in_turn(Reply(status, {"error": {"message": "nope"}})))
    with pytest.raises(ModelOutputError) as caught:
        make_client(server.url, Sleeps(), retries=1, key=KEY).post("/completions", {"prompt": "x"})
    assert server.seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in str(caught.value) and KEY not in repr(caught.value.args)


def test_unreachable_error_does_not_contain_the_key() -> None:
    """A refused connection's error, which quotes the OS's reason, does not carry the key either."""
    with pytest.raises(ServerUnavailable) as caught:
        make_client(f"http://127.0.0.1:{free_port()}/v1", Sleeps(), retries=0, key=KEY).get("/models")
    assert KEY not in str(caught.value)


# -- 6. pure functions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "url", "name"),
    [
        ("openai:http://127.0.0.1:8000/v1#my-model", "http://127.0.0.1:8000/v1", "my-model"),
        ("openai:http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1", None),
        ("openai:https://host.example/v1/#m", "https://host.example/v1", "m"),
        ("openai:http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1", None),
        ("openai:http://127.0.0.1:8000/v1#", "http://127.0.0.1:8000/v1", None),
    ],
)
def test_parse_spec_good(spec: str, url: str, name: str | None) -> None:
    """A spec gives the base URL without a trailing slash, and the model name after '#' if any."""
    assert parse_spec(spec) == (url, name)


def test_parse_spec_without_scheme_is_one_line() -> None:
    """'openai:localhost:8000' (no http://) is a ModelLoadError of one line that shows a correct example."""
    with pytest.raises(ModelLoadError) as caught:
        parse_spec("openai:localhost:8000")
    message = str(caught.value)
    assert "\n" not in message and "localhost:8000" in message and "openai:http://" in message


def test_parse_spec_error_hides_a_password_after_the_scheme() -> None:
    """A bad spec whose URL has a scheme and user info does not show the password (here: a stray space after the scheme)."""
    with pytest.raises(ModelLoadError) as caught:
        parse_spec("openai:http:// user:hunter2@host:8000/v1")
    assert "hunter2" not in str(caught.value)


def test_parse_spec_error_hides_a_password_without_scheme() -> None:
    """The likeliest bad spec with credentials, the scheme forgotten, must not show the password either."""
    with pytest.raises(ModelLoadError) as caught:
        parse_spec("openai:user:hunter2@localhost:8000/v1")
    assert "hunter2" not in str(caught.value)


def test_shown_url_strips_user_info() -> None:
    """Reports show the URL without 'user:pass@'; URLs without user info are unchanged."""
    assert shown_url("https://user:secret@host.example:8443/v1") == "https://host.example:8443/v1"
    assert shown_url("http://token@127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert shown_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(
    ("text", "tokens", "stop", "expected"),
    [
        (" 4\nQ: next", [" 4", "\n", "Q", ":", " next"], ["\n"], (" 4", 1)),  # stop inside the text
        (" 4", [" 4", "\n"], ["\n"], (" 4", 1)),  # the server dropped the stop text but kept its token
        (" a. b\nc", [" a", ".", " b", "\n", "c"], ["\n", "."], (" a", 1)),  # the earliest of several stops wins
        (" a b", [" a", " b"], ["\n"], (" a b", 2)),  # no stop: everything
        ("abc", [], ["\n"], ("abc", 0)),  # no tokens reported
        ("", [], [], ("", 0)),
        ("\nrest", ["\n", "rest"], ["\n"], ("", 0)),  # an answer ended at once keeps no token
        (" ab", [" a", "b\n"], ["\n"], (" ab", 2)),  # the stop lies inside a token: that token is kept
        (" ab", [" a", "b\n", "x"], ["\n"], (" ab", 3)),  # ... and, as in HELM, what a server sent after it
        (" Paris.", [" Paris", ".", "<|endoftext|>"], ["\n"], (" Paris.", 2)),  # GPT-2's end-of-text token: cut
        (" Paris.", [" Paris", ".", "<|im_end|>"], ["\n"], (" Paris.", 3)),  # another end token counts, as in HELM
    ],
)
def test_cut_at_stop(text: str, tokens: list[str], stop: list[str], expected: tuple[str, int]) -> None:
    """The answer ends before the first stop sequence; its tokens are counted as HELM's OpenAI client counts them
    (``truncate_sequence``): all before the first token that starts with a stop sequence or ``<|endoftext|>``."""
    assert cut_at_stop(text, tokens, stop) == expected


_TOKENS = ("The", " cap", "ital", " is", " Paris", ".", " It")  # a continuation, then one generated token
_TRUE = (-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0)
_SPAN = [4, 5]  # " Paris", "."


def _echo(values: Sequence[float | None], top: Sequence[Mapping[str, float] | None] | None = None) -> EchoedTokens:
    return EchoedTokens(_TOKENS, tuple(values), tuple(offsets(_TOKENS)), tuple(top or [None] * len(_TOKENS)))


def _reported_at(shift: int) -> list[float | None]:
    """The engine reports the value of token i at position i + shift (token 0 has no value)."""
    return [_TRUE[j - shift] if 1 <= j - shift < len(_TRUE) else None for j in range(len(_TRUE))]


@pytest.mark.parametrize("shift", [0, -1, 1])
def test_best_shift_finds_the_engines_alignment(shift: int) -> None:
    """Echoed values placed at i, i-1 or i+1 are found at exactly that shift, with a zero gap."""
    generated = [_TRUE[i] + 0.01 for i in _SPAN]  # rounding noise well under the tolerance
    found, gaps = best_shift(generated, _echo(_reported_at(shift)), _SPAN)
    assert found == shift
    assert gaps[shift] == pytest.approx(0.01)
    assert all(gap > 0.5 for other, gap in gaps.items() if other != shift)


def test_best_shift_garbage_is_none() -> None:
    """Values that agree at no shift give None, with each comparable shift's gap measured."""
    garbage = _echo([None] + [-9.0] * (len(_TOKENS) - 1))
    found, gaps = best_shift([_TRUE[i] for i in _SPAN], garbage, _SPAN)
    assert found is None
    assert gaps == pytest.approx({0: 3.5, -1: 3.5, 1: 3.5})
    last = [5, 6]  # shift +1 reads past the end for the last token: that shift is not comparable at all
    assert best_shift([_TRUE[i] for i in last], garbage, last) == (None, pytest.approx({0: 2.5, -1: 2.5}))


def test_echoed_span_counts_a_straddling_token_in_the_continuation() -> None:
    """' Paris' starts in the context's trailing space: scoring 'Paris' after 'The capital is ' includes it."""
    echoed = _echo(_reported_at(0))
    context = "The capital is "
    assert echoed.span(len(context), len(context) + len("Paris")) == [4]
    assert echoed.span(len("The capital is"), len("The capital is Paris.")) == [4, 5]  # a clean boundary
    assert echoed.span(len("The cap"), len("The capital")) == [2]


def test_echoed_value_reads_at_the_shift() -> None:
    """value(i, shift) reads position i + shift, and None outside the list."""
    echoed = _echo(_reported_at(1))
    assert echoed.value(4, 1) == _TRUE[4]
    assert echoed.value(6, 1) is None
    assert echoed.value(0, -1) is None


def test_is_greedy_from_top_logprobs() -> None:
    """Greedy when the token is the top alternative at its (shifted) position; unknown alternatives are not greedy."""
    top = [None, {" cap": -0.1}, {"ital": -0.5, "itol": -0.2}, {" is": -0.1}, None, {".": -0.3}, None]
    echoed = _echo(_reported_at(0), top)
    assert echoed.is_greedy(1, 0) is True
    assert echoed.is_greedy(2, 0) is False
    assert echoed.is_greedy(4, 0) is False  # no alternatives reported
    assert echoed.is_greedy(3, 0) is True and echoed.is_greedy(3, -1) is False  # read at position 2: 'itol' is top
    later = _echo(_reported_at(1), [None, None, {" cap": -0.1}, {"ital": -0.1}, {" is": -0.1}, {" Paris": -0.1}, None])
    assert all(later.is_greedy(i, 1) for i in (1, 2, 3, 4)) and not later.is_greedy(1, 0)


def test_echoed_tokens_from_incomplete_block() -> None:
    """Mismatched tokens/values/offsets from the server are an output error naming the counts."""
    with pytest.raises(ModelOutputError, match="2 tokens, 1 values, 2 offsets"):
        EchoedTokens.from_choice({"logprobs": {"tokens": ["a", "b"], "token_logprobs": [None], "text_offset": [0, 1]}}, "x")
    with pytest.raises(ModelOutputError, match="no log-probabilities"):
        EchoedTokens.from_choice({"logprobs": None}, "x")


def test_pick_model() -> None:
    """The '#' name must be served if the server lists models; without one, the only served model is taken."""
    assert pick_model("m", ["m", "n"], "http://h/v1") == "m"
    assert pick_model("m", [], "http://h/v1") == "m"
    assert pick_model(None, ["only"], "http://h/v1") == "only"
    with pytest.raises(ModelLoadError, match="not 'x'"):
        pick_model("x", ["m"], "http://h/v1")
    with pytest.raises(ModelLoadError, match="name the model"):
        pick_model(None, ["m", "n"], "http://h/v1")


# -- 7. OpenAIModel end to end -----------------------------------------------------------------------


def test_probe_of_a_correct_engine(serve: Callable[..., ScriptedServer]) -> None:
    """A vLLM-like engine: completions endpoint, echo scoring at shift 0, neutral sampling accepted."""
    server = serve(FakeEngine())
    backend = backend_for(server)
    found = backend.capabilities()
    assert found is not None
    assert (found.endpoint, found.model, found.served, found.shift, found.loglikelihood) == ("completions", "m", ("m",), 0, None)
    assert found.extras == {"repeat_penalty": 1.0}
    assert backend.missing_capability("loglikelihood") is None
    posts = [s.body for s in server.seen if s.method == "POST"]
    assert len(posts) == 2 and posts[1]["echo"] is True and posts[1]["prompt"] == PROBE_CONTEXT + " Paris. It is a big"
    info = backend.identify()
    assert (info.name, info.backend, info.revision, info.variant) == ("m", "openai", "served", {"endpoint": "completions"})


def test_loglikelihood_sums_the_continuations_tokens(serve: Callable[..., ScriptedServer]) -> None:
    """Scoring sums exactly the echoed values of the tokens at the continuation's offsets, greedy from top_logprobs."""
    server = serve(FakeEngine(not_greedy=[" Rome"]))
    model = backend_for(server).load()
    results = model.loglikelihood(
        [
            LoglikelihoodRequest("The capital of France is", " Paris."),
            LoglikelihoodRequest("The capital of Italy is", " Rome"),
            LoglikelihoodRequest("The capital of France is ", "Paris"),  # ' Paris' straddles the boundary
        ]
    )
    paris = results[0]
    assert paris.logprob == true_value(" Paris") + true_value(".")
    assert (paris.is_greedy, paris.tokens_in, paris.tokens_scored) == (True, 5, 2)
    assert (results[1].logprob, results[1].is_greedy) == (true_value(" Rome"), False)
    assert (results[2].logprob, results[2].tokens_scored) == (true_value(" Paris"), 1)
    scoring = [s.body for s in server.seen if s.method == "POST"][2:]
    assert all(b["echo"] is True and b["max_tokens"] == 1 and b["model"] == "m" and b["repeat_penalty"] == 1.0 for b in scoring)


def test_generation_cuts_at_stop_and_keeps_the_answers_logprobs(serve: Callable[..., ScriptedServer]) -> None:
    """Text ends before the stop; logprobs cover the answer's tokens only; >4 stops are applied client-side."""
    question = "Q: What is 2+2?\nA:"
    server = serve(FakeEngine({question: " 4\nQ: What is 3+3?"}))
    model = backend_for(server).load()
    before = len(server.seen)
    four, capped, five_stops, empty = model.generate(
        [
            GenerationRequest(question, max_tokens=8, stop=("\n",)),
            GenerationRequest(PROBE_CONTEXT, max_tokens=3, stop=()),
            GenerationRequest(PROBE_CONTEXT, max_tokens=6, stop=("x1", "x2", "x3", "x4", ".")),
            GenerationRequest(PROBE_CONTEXT, max_tokens=0),
        ]
    )
    assert (four.text, four.token_logprobs, four.tokens_in) == (" 4", (true_value(" 4"),), len(tokenize(question)))
    assert (capped.text, capped.token_logprobs) == (" Paris. It", tuple(true_value(t) for t in [" Paris", ".", " It"]))
    assert (five_stops.text, five_stops.token_logprobs) == (" Paris", (true_value(" Paris"),))
    assert (empty.text, empty.token_logprobs) == ("", ())
    sent = {s.body["prompt"] + repr(s.body.get("stop")): s.body for s in server.seen[before:]}
    assert len(sent) == 3  # max_tokens=0 sends nothing
    assert sent[PROBE_CONTEXT + repr(["x1", "x2", "x3", "x4"])]["temperature"] == 0.0


@pytest.mark.parametrize("concurrency", [4, 1])
def test_requests_in_flight_are_bounded_by_concurrency(serve: Callable[..., ScriptedServer], concurrency: int) -> None:
    """Eight slow requests: the server sees exactly ``concurrency`` at once at most, and all answers come back."""
    engine = FakeEngine()
    server = serve(engine)
    model = backend_for(server, concurrency=concurrency).load()
    engine.delay = 0.2
    server.most_active = 0
    results = model.generate([GenerationRequest(f"prompt {i}", max_tokens=2) for i in range(8)])
    assert [r.text for r in results] == [" ok"] * 8
    assert server.most_active == concurrency


def _collect(batches: Iterator[list[tuple[int, Any]]]) -> dict[int, Any]:
    """Every outcome the stream hands on, by request index (each index once)."""
    got: dict[int, Any] = {}
    for batch in batches:
        assert not set(got) & {index for index, _ in batch}
        got.update(batch)
    return got


def test_one_failed_request_does_not_lose_the_others(serve: Callable[..., ScriptedServer]) -> None:
    """A 400 on one request: the others' results are handed on, the failed one as its own error, sent once."""
    engine = FakeEngine()
    engine.rejected = {"bad"}
    server = serve(engine)
    model = backend_for(server).load()
    got = _collect(model.generate_batches([GenerationRequest(p) for p in ["a", "bad", "c"]]))
    assert sorted(got) == [0, 1, 2] and got[0].text == " ok" and got[2].text == " ok"
    assert isinstance(got[1], Failed) and isinstance(got[1].error, RequestRejected)
    assert "HTTP 400" in str(got[1].error) and "prompt too long" in str(got[1].error)
    assert sum(1 for s in server.seen if s.method == "POST" and s.body.get("prompt") == "bad") == 1
    with pytest.raises(ModelOutputError, match="prompt too long"):
        model.generate([GenerationRequest("bad")])


def test_several_failures_are_each_their_own_requests(serve: Callable[..., ScriptedServer]) -> None:
    """Two of four requests refused: each carries its own error; the list API raises the first one's."""
    engine = FakeEngine()
    engine.rejected = {"bad 1", "bad 2"}
    model = backend_for(serve(engine)).load()
    got = _collect(model.generate_batches([GenerationRequest(p) for p in ["bad 1", "a", "bad 2", "b"]]))
    assert [index for index, outcome in sorted(got.items()) if isinstance(outcome, Failed)] == [0, 2]
    assert got[1].text == got[3].text == " ok"
    with pytest.raises(RequestRejected, match="prompt too long"):
        model.generate([GenerationRequest(p) for p in ["a", "bad 1"]])


# -- 8. what the probe concludes about other engines ---------------------------------------------------


@pytest.mark.parametrize("shift", [-1, 1])
def test_engine_shifted_by_one_token_is_read_at_its_shift(serve: Callable[..., ScriptedServer], shift: int) -> None:
    """An engine that misplaces echoed values by one token is detected, and scoring reads them where they are."""
    server = serve(FakeEngine(echo_shift=shift))
    backend = backend_for(server)
    found = backend.capabilities()
    assert found is not None and found.loglikelihood is None and found.shift == shift
    assert found.details()["loglikelihood"] == f"echo (shifted {shift:+d} token)"
    [paris] = backend.load().loglikelihood([LoglikelihoodRequest("The capital of France is", " Paris.")])
    assert paris.logprob == true_value(" Paris") + true_value(".")


@pytest.mark.parametrize("echo_shift", [GARBAGE, 2])
def test_engine_with_unusable_echo_values_cannot_score(serve: Callable[..., ScriptedServer], echo_shift: int | str) -> None:
    """Echo values that agree at no shift make log-likelihood a missing capability with a one-line reason."""
    backend = backend_for(serve(FakeEngine(echo_shift=echo_shift)))
    found = backend.capabilities()
    assert found is not None and found.endpoint == "completions"
    reason = found.loglikelihood
    assert reason is not None and "disagree" in reason and "\n" not in reason
    assert backend.missing_capability("loglikelihood") == reason
    assert backend.missing_capability("generation") is None
    model = backend.load()
    with pytest.raises(ModelOutputError, match="cannot score"):
        model.loglikelihood([LoglikelihoodRequest("a", " b")])
    assert model.generate([GenerationRequest("x")])[0].text == " ok"  # generation still works


def test_chat_only_server(serve: Callable[..., ScriptedServer]) -> None:
    """404 on /v1/completions: the chat endpoint is used, and scoring is missing because chat echoes nothing."""
    server = serve(FakeEngine({"Say hi.": " hi\nbye"}, completions=False))
    backend = backend_for(server)
    found = backend.capabilities()
    assert found is not None and found.endpoint == "chat" and found.chat_logprobs is True
    reason = backend.missing_capability("loglikelihood")
    assert reason is not None and "chat endpoint" in reason and reason == found.loglikelihood
    assert backend.identify().variant == {"endpoint": "chat"}
    [hi] = backend.load().generate([GenerationRequest("Say hi.", stop=("\n",))])
    assert (hi.text, hi.token_logprobs) == (" hi", (true_value(" hi"),))
    chat = [s for s in server.seen if s.path == "/v1/chat/completions"]
    assert chat[-1].body["messages"] == [{"role": "user", "content": "Say hi."}]


def test_dead_server_still_identifies_from_the_spec() -> None:
    """No server: no capability is reported missing, identify() names the spec's model, load() says why not."""
    backend = OpenAIBackend(
        f"openai:http://127.0.0.1:{free_port()}/v1#served-name",
        OpenAIOptions(retries=0, request_timeout=2.0, api_key_env=NO_KEY_ENV),
    )
    assert backend.capabilities() is None
    assert backend.missing_capability("loglikelihood") is None
    info = backend.identify()
    assert (info.name, info.backend, info.variant) == ("served-name", "openai", {"endpoint": "completions"})
    with pytest.raises(ModelLoadError, match="unreachable"):
        backend.load()


def test_dead_server_without_a_name_cannot_be_identified() -> None:
    """No server and no '#name': identify() is a ModelLoadError telling the user to name the model."""
    backend = OpenAIBackend(f"openai:http://127.0.0.1:{free_port()}/v1", OpenAIOptions(retries=0, api_key_env=NO_KEY_ENV))
    with pytest.raises(ModelLoadError, match="name the model after '#'"):
        backend.identify()


def test_backend_sends_the_key_from_its_environment_variable(
    serve: Callable[..., ScriptedServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is read from the variable ``api_key_env`` names and sent on every request, the probe's included."""
    monkeypatch.setenv(NO_KEY_ENV, KEY)
    server = serve(FakeEngine())
    backend_for(server).load().generate([GenerationRequest("x")])
    assert server.seen and all(s.headers.get("authorization") == f"Bearer {KEY}" for s in server.seen)
