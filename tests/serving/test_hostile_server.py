"""A served model behind a server that misbehaves: hangs, drips, stalls with Retry-After, quotes the key, lies.

Each case runs against the scripted HTTP server on 127.0.0.1 (or a loopback listener that never accepts) with
bounds in seconds that are far from what the fault would cost unbounded: a dripping server would hold a request
for 100 s, a hung one for the default 300 s timeout times five tries.
"""

from __future__ import annotations

import base64
import email.utils
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic.errors import ModelLoadError, ModelOutputError
from pytest_holistic.models.base import GenerationRequest, LoglikelihoodRequest
from pytest_holistic.models.openai_options import OpenAIOptions
from pytest_holistic.models.openai_answers import text_bound
from pytest_holistic.models.openai_backend import OpenAIBackend
from pytest_holistic.models.openai_http import (
    MAX_RETRY_AFTER,
    Cancelled,
    JsonClient,
    RequestRejected,
    RetryPolicy,
    ServerUnavailable,
    retry_after_seconds,
)
from pytest_holistic.models.openai_probe import PROBE_CONTEXT
from pytest_holistic.models.redact import Redactor
from tests.models.test_openai_protocol import (
    NO_KEY_ENV,
    OK,
    FakeEngine,
    Reply,
    ScriptedServer,
    Seen,
    Sleeps,
    _Handler,
    _QuietServer,
    in_turn,
    make_client,
    true_value,
)

KEY = "sk-proj-Zq8WmL3vR7tYp2Xc9Nb4Hd6Kf1Js5Ga0"
PIECES = [KEY[i : i + 6] for i in range(len(KEY) - 5)]


def leaks(text: str) -> list[str]:
    """The key, or any 6-character piece of it, found in ``text``."""
    return [piece for piece in [KEY, *PIECES] if piece in text]


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown: every handler held on it returns, so no server thread outlives its test for long."""
    event = threading.Event()
    yield event
    event.set()


def hang(release: threading.Event, then: Reply = OK) -> Callable[[Seen], Reply]:
    """A script that holds every request until ``release`` is set (at most a minute)."""

    def script(seen: Seen) -> Reply:
        release.wait(60)
        return then

    return script


def wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "the server never saw the request"
        time.sleep(0.01)


class Call(threading.Thread):
    """A client call in a thread: its result or error, and when it ended."""

    def __init__(self, call: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.call = call
        self.error: BaseException | None = None
        self.result: Any = None
        self.ended_at: float | None = None
        self.start()

    def run(self) -> None:
        try:
            self.result = self.call()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            self.error = error
        self.ended_at = time.monotonic()


# -- 1. one wall-clock deadline per try ------------------------------------------------------------


@pytest.mark.parametrize("phase", ["headers", "body"])
def test_a_dripping_server_fails_at_the_deadline(serve: Callable[..., ScriptedServer], phase: str) -> None:
    """One byte every 0.5 s, from the status line or from the body on: a 2 s deadline ends the try in about 2 s, not 100 s."""
    head = len("HTTP/1.1 200 X\r\nContent-Length: 215\r\n\r\n")
    server = serve(in_turn(Reply(200, {"padding": "x" * 200}, drip=0.5, drip_from=0 if phase == "headers" else head + 5)))
    client = JsonClient(server.url, None, RetryPolicy(retries=0, timeout=2.0), server.url, sleep=Sleeps())
    started = time.monotonic()
    with pytest.raises(ServerUnavailable) as caught:
        client.get("/models")
    took = time.monotonic() - started
    assert 1.9 <= took < 6.0, took
    assert "timed out" in str(caught.value) and "2 s" in str(caught.value) and "\n" not in str(caught.value)
    assert client.down is None  # slow is not dead


@pytest.fixture
def unaccepting() -> Iterator[str]:
    """The URL of a loopback listener whose backlog is full: a connection attempt to it waits, unanswered."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers: list[socket.socket] = []
    try:
        for _ in range(8):
            filler = socket.socket()
            filler.settimeout(0.3)
            fillers.append(filler)
            try:
                filler.connect(("127.0.0.1", port))
            except TimeoutError:
                break
        else:
            pytest.skip("this system accepts connections beyond a listener's backlog")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_connecting_counts_against_the_deadline(unaccepting: str) -> None:
    """A connection that is never accepted fails at the deadline, as a timeout (slow, not down)."""
    client = JsonClient(unaccepting, None, RetryPolicy(retries=0, timeout=1.0), unaccepting, sleep=Sleeps())
    started = time.monotonic()
    with pytest.raises(ServerUnavailable, match="timed out"):
        client.get("/models")
    assert time.monotonic() - started < 5.0


# -- 2. cancelling -----------------------------------------------------------------------------------


def test_cancel_ends_a_hung_request_at_once(serve: Callable[..., ScriptedServer], release: threading.Event) -> None:
    """At the default timeout and retries, cancel() during a request the server holds returns within a second."""
    server = serve(hang(release))
    client = JsonClient(server.url, None, RetryPolicy(), server.url)
    call = Call(lambda: client.post("/completions", {"prompt": "x"}))
    wait_for(lambda: len(server.seen) == 1)
    cancelled_at = time.monotonic()
    client.cancel()
    call.join(10)
    assert call.ended_at is not None and call.ended_at - cancelled_at < 1.0
    assert isinstance(call.error, Cancelled) and "session is ending" in str(call.error)
    started = time.monotonic()
    with pytest.raises(Cancelled):
        client.get("/models")
    assert time.monotonic() - started < 0.5 and len(server.seen) == 1  # nothing sent after the cancel


def test_cancel_ends_every_request_in_flight(serve: Callable[..., ScriptedServer], release: threading.Event) -> None:
    """Eight requests held by the server: one cancel() ends all of them."""
    server = serve(hang(release))
    client = JsonClient(server.url, None, RetryPolicy(), server.url)
    calls = [Call(lambda: client.post("/completions", {"prompt": "x"})) for _ in range(8)]
    wait_for(lambda: len(server.seen) == 8)
    cancelled_at = time.monotonic()
    client.cancel()
    for call in calls:
        call.join(10)
    assert all(isinstance(call.error, Cancelled) for call in calls)
    assert max(call.ended_at or 1e9 for call in calls) - cancelled_at < 1.0


def test_cancel_ends_the_wait_for_retry_after(serve: Callable[..., ScriptedServer]) -> None:
    """A 503 asking for a 30 s wait: cancel() ends the wait, and no second try is sent."""
    server = serve(in_turn(Reply(503, {"error": {"message": "busy"}}, {"Retry-After": "30"})))
    client = JsonClient(server.url, None, RetryPolicy(), server.url)
    call = Call(lambda: client.get("/models"))
    wait_for(lambda: len(server.seen) == 1)
    time.sleep(0.2)  # into the wait
    cancelled_at = time.monotonic()
    client.cancel()
    call.join(10)
    assert isinstance(call.error, Cancelled)
    assert call.ended_at is not None and call.ended_at - cancelled_at < 1.0
    assert len(server.seen) == 1


def test_cancel_ends_a_connection_attempt(unaccepting: str) -> None:
    """cancel() while the connection is still being made: the call returns within a second."""
    client = JsonClient(unaccepting, None, RetryPolicy(), unaccepting)
    call = Call(lambda: client.get("/models"))
    time.sleep(0.3)
    cancelled_at = time.monotonic()
    client.cancel()
    call.join(10)
    assert isinstance(call.error, Cancelled)
    assert call.ended_at is not None and call.ended_at - cancelled_at < 1.0


def test_model_cancel_cancels_its_client(serve: Callable[..., ScriptedServer], release: threading.Event) -> None:
    """OpenAIModel.cancel() during a generation the server holds: the generation fails at once with Cancelled."""
    engine = FakeEngine()
    held = threading.Event()

    def script(seen: Seen) -> Reply:
        if seen.method == "POST" and seen.body.get("prompt") == "held":
            held.set()
            release.wait(60)
        return engine(seen)

    server = serve(script)
    model = OpenAIBackend(f"openai:{server.url}#m", OpenAIOptions(retries=4, request_timeout=300.0, api_key_env=NO_KEY_ENV)).load()
    call = Call(lambda: model.generate([GenerationRequest("held")]))
    assert held.wait(10)
    cancelled_at = time.monotonic()
    model.cancel()
    call.join(10)
    assert isinstance(call.error, ModelOutputError) and "the session is ending" in str(call.error)
    assert call.ended_at is not None and call.ended_at - cancelled_at < 1.0


# -- 3. retries: Retry-After, and how often one request is sent ---------------------------------------


@pytest.mark.parametrize("retries", [0, 1, 3])
@pytest.mark.parametrize("failure", ["500", "timeout", "refused"])
def test_a_failing_request_is_sent_at_most_retries_plus_one_times(
    serve: Callable[..., ScriptedServer], release: threading.Event, retries: int, failure: str
) -> None:
    """Whatever the failure, the client sends one request retries + 1 times, then gives up."""
    if failure == "500":
        server = serve(in_turn(Reply(500, {"error": {"message": "internal"}})))
    elif failure == "timeout":
        server = serve(hang(release))
    else:
        server = serve(in_turn(OK))
        server.stop()
    client = JsonClient(server.url, None, RetryPolicy(retries=retries, timeout=0.3), server.url, sleep=Sleeps())
    with pytest.raises(ServerUnavailable) as caught:
        client.post("/completions", {"prompt": "x"})
    tries = retries + 1
    assert f"{tries} {'try' if tries == 1 else 'tries'}" in str(caught.value)
    if failure != "refused":
        wait_for(lambda: len(server.seen) == tries)
        time.sleep(0.1)
        assert len(server.seen) == tries


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("100000", MAX_RETRY_AFTER),  # capped: the run is never stalled for a day
        ("3", 3.0),
        ("1.5", 1.5),
        ("0", 0.0),
    ],
)
def test_retry_after_is_obeyed_up_to_the_cap(serve: Callable[..., ScriptedServer], header: str, expected: float) -> None:
    """Delta-seconds are waited exactly, at most MAX_RETRY_AFTER seconds."""
    server = serve(in_turn(Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": header}), OK))
    sleeps = Sleeps()
    assert make_client(server.url, sleeps).get("/models") == {"ok": True}
    assert sleeps == [expected]


@pytest.mark.parametrize("header", ["nan", "NaN", "inf", "-1", "1e400", "soon", "", "3 seconds", "0x10"])
def test_a_nonsensical_retry_after_falls_back_to_the_backoff(serve: Callable[..., ScriptedServer], header: str) -> None:
    """A Retry-After that is no delay (nan, infinity, negative, words) is ignored: the jittered backoff, no error."""
    server = serve(in_turn(Reply(503, {"error": {"message": "busy"}}, {"Retry-After": header}), OK))
    sleeps = Sleeps()
    assert make_client(server.url, sleeps).get("/models") == {"ok": True}
    assert len(sleeps) == 1 and 0.75 * 0.5 <= sleeps[0] <= 1.25 * 0.5


def test_retry_after_as_an_http_date(serve: Callable[..., ScriptedServer]) -> None:
    """An HTTP-date 5 s ahead is a wait of about 5 s (whole seconds on the wire); one in the past is no wait."""
    ahead = email.utils.formatdate(time.time() + 5, usegmt=True)
    past = email.utils.formatdate(time.time() - 3600, usegmt=True)
    busy = Reply(503, {"error": {"message": "busy"}}, {"Retry-After": ahead})
    server = serve(in_turn(busy, Reply(503, {"error": {"message": "busy"}}, {"Retry-After": past}), OK))
    sleeps = Sleeps()
    assert make_client(server.url, sleeps).get("/models") == {"ok": True}
    assert len(sleeps) == 2 and 3.0 <= sleeps[0] <= 5.0 and sleeps[1] == 0.0


def test_retry_after_seconds_parses_only_delays() -> None:
    """Delta-seconds and HTTP-dates are read; everything else is None, never an exception."""
    now = 1_700_000_000.0
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds(email.utils.formatdate(now + 60, usegmt=True), now=now) == 60.0
    assert retry_after_seconds(email.utils.formatdate(now - 60, usegmt=True), now=now) == 0.0
    for value in (None, "nan", "inf", "-inf", "-5", "+5", "1e3", " ", "Wed, 99 Foo 2024", "Tue, 15 Nov 1994 08:12:31"):
        assert retry_after_seconds(value, now=now) is None, value


def test_the_longest_request_is_bounded() -> None:
    """Every try's deadline and every capped wait: the default policy bounds one request at 1620 s."""
    assert RetryPolicy().longest() == 5 * 300 + 4 * 30
    policy = RetryPolicy(retries=2, timeout=10.0)
    assert all(policy.delay(attempt, None) <= MAX_RETRY_AFTER for attempt in range(40))
    assert policy.delay(0, 1e9) == MAX_RETRY_AFTER and policy.longest() == 3 * 10 + 2 * 30


# -- 4. the key never leaves through the server --------------------------------------------------------

MASKED = f"{KEY[:8]}{'*' * 20}{KEY[-4:]}"


@pytest.mark.parametrize(
    "message",
    [
        f"Incorrect API key provided: {KEY}. You can find your API key at https://example.invalid/keys.",
        f"Incorrect API key provided: {MASKED}.",
        f"invalid header: Authorization: Bearer {KEY}",
        f"key {KEY[:12]} is not valid here",  # a prefix of it
        f"key ending {KEY[-10:]} expired",  # a suffix of it
    ],
)
def test_a_401_quoting_the_key_is_scrubbed(serve: Callable[..., ScriptedServer], message: str) -> None:
    """The server's message is kept, without the key or any 6-character piece of it."""
    server = serve(in_turn(Reply(401, {"error": {"message": message, "type": "invalid_request_error"}})))
    with pytest.raises(RequestRejected) as caught:
        make_client(server.url, Sleeps(), key=KEY).post("/completions", {"prompt": "x"})
    error = caught.value
    assert server.seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert leaks(str(error)) == [] and leaks(error.detail) == [] and leaks(repr(error.args)) == []
    assert "HTTP 401" in str(error) and "***" in error.detail


def test_a_key_in_a_non_json_answer_or_a_connection_error_is_scrubbed(serve: Callable[..., ScriptedServer]) -> None:
    """A 200 that is not JSON and quotes the key, and a 502 with an HTML page quoting it: both scrubbed."""
    server = serve(in_turn(Reply(200, f"token={KEY}".encode())))
    with pytest.raises(ModelOutputError) as caught:
        make_client(server.url, Sleeps(), key=KEY).get("/models")
    assert "not JSON" in str(caught.value) and leaks(str(caught.value)) == []
    server = serve(in_turn(Reply(502, f"<html>upstream refused Bearer {KEY}</html>".encode())))
    with pytest.raises(ServerUnavailable) as caught:
        make_client(server.url, Sleeps(), retries=0, key=KEY).get("/models")
    assert "HTTP 502" in str(caught.value) and leaks(str(caught.value)) == []


def test_redactor() -> None:
    """Secrets, their pieces, credentials and key-shaped tokens go; model names, numbers and words stay."""
    redact = Redactor([KEY, None, ""])
    assert redact(f"a {KEY} b") == "a *** b"
    assert redact(f"x{KEY[3:15]}y") == "x***y"
    assert redact(MASKED) == f"***{'*' * 20}{KEY[-4:]}"  # four characters of a key identify nothing
    assert redact("Authorization: Bearer abc.def") == "Authorization: ***"
    assert redact("sent Bearer abcdef123 and Basic dXNlcjpwYXNz") == "sent Bearer *** and Basic ***"
    assert redact("other key sk-abcdefghijklmnop1234 and hf_abcdefghijklmnopqrstu1") == "other key *** and ***"
    assert redact("token a1b2c3d4e5f6g7h8i9j0k1l2m3 here") == "token *** here"
    for kept in ("Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B", "Qwen2.5-0.5B-Instruct-GGUF", "42 is 6*7"):
        assert redact(kept) == kept
    assert Redactor([]).exact("unchanged") == "unchanged"
    assert redact.exact(f"say {KEY[:8]} and {KEY}") == f"say {KEY[:8]} and ***"


def _engine_with_models(models: Any) -> Callable[[Seen], Reply]:
    engine = FakeEngine()

    def script(seen: Seen) -> Reply:
        if seen.path == "/v1/models":
            return Reply(body=models)
        return engine(seen)

    return script


def test_a_served_model_name_that_looks_like_a_key_is_shown_scrubbed(serve: Callable[..., ScriptedServer]) -> None:
    """The listed names reach reports scrubbed, and such a name is never taken unasked."""
    server = serve(_engine_with_models({"data": [{"id": "m"}, {"id": KEY}]}))
    backend = OpenAIBackend(f"openai:{server.url}#m", OpenAIOptions(retries=0, api_key_env=NO_KEY_ENV))
    found = backend.capabilities()
    assert found is not None and found.served == ("m", "***")
    assert leaks(json.dumps(backend.load().info.details)) == []
    alone = serve(_engine_with_models({"data": [{"id": KEY}]}))
    backend = OpenAIBackend(f"openai:{alone.url}", OpenAIOptions(retries=0, api_key_env=NO_KEY_ENV))
    with pytest.raises(ModelLoadError) as caught:
        backend.load()
    assert "looks like a secret" in str(caught.value) and leaks(str(caught.value)) == []


def test_generated_text_never_carries_the_key(serve: Callable[..., ScriptedServer], monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that answers a prompt with the key it was sent: the stored answer has it replaced."""
    monkeypatch.setenv(NO_KEY_ENV, KEY)
    server = serve(FakeEngine({"echo the key": f" {KEY}"}))
    options = OpenAIOptions(retries=0, api_key_env=NO_KEY_ENV)
    [answer] = (
        OpenAIBackend(f"openai:{server.url}#m", options).load().generate([GenerationRequest("echo the key", max_tokens=40)])
    )
    assert answer.text == " ***"


# -- 5. URLs with user info ------------------------------------------------------------------------------


def test_user_info_is_sent_as_basic_authentication(serve: Callable[..., ScriptedServer]) -> None:
    """openai:http://user:p%40ss@127.0.0.1:PORT/v1 connects to 127.0.0.1 with Basic user:p@ss; it is shown bare."""
    server = serve(FakeEngine())
    secret_url = server.url.replace("http://", "http://alice:p%40ss-w0rd-123@")
    backend = OpenAIBackend(f"openai:{secret_url}#m", OpenAIOptions(retries=0, api_key_env=NO_KEY_ENV))
    model = backend.load()
    assert model.generate([GenerationRequest("hi")])[0].text == " ok"
    expected = "Basic " + base64.b64encode(b"alice:p@ss-w0rd-123").decode()
    assert server.seen and all(s.headers.get("authorization") == expected for s in server.seen)
    assert model.info.details["url"] == server.url and "p%40ss" not in json.dumps(model.info.details)


def test_a_password_quoted_back_is_scrubbed(serve: Callable[..., ScriptedServer]) -> None:
    """A 401 that quotes the URL's password shows neither its encoded nor its decoded form."""
    server = serve(in_turn(Reply(401, {"error": {"message": "user alice, password p@ss-w0rd-123 (p%40ss-w0rd-123) rejected"}})))
    client = make_client(server.url.replace("http://", "http://alice:p%40ss-w0rd-123@"), Sleeps())
    with pytest.raises(RequestRejected) as caught:
        client.get("/models")
    assert "w0rd" not in str(caught.value) and "alice" in str(caught.value)


def test_a_token_as_user_info_is_a_secret_too(serve: Callable[..., ScriptedServer]) -> None:
    """http://TOKEN@host (no password): sent as Basic 'TOKEN:', and the token is scrubbed from what the server says."""
    token = "tok/en-secret-42"
    server = serve(in_turn(Reply(401, {"error": {"message": f"token {token} (tok%2Fen-secret-42) unknown"}})))
    client = make_client(server.url.replace("http://", "http://tok%2Fen-secret-42@"), Sleeps())
    with pytest.raises(RequestRejected) as caught:
        client.get("/models")
    assert server.seen[0].headers["authorization"] == "Basic " + base64.b64encode(f"{token}:".encode()).decode()
    assert "secret" not in str(caught.value) and "unknown" in str(caught.value)


def test_user_info_and_an_api_key_are_refused_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two credentials for one server: refused in one line that names the variable and shows no secret."""
    monkeypatch.setenv(NO_KEY_ENV, KEY)
    with pytest.raises(ModelLoadError) as caught:
        OpenAIBackend("openai:http://alice:hunter2@127.0.0.1:9/v1#m", OpenAIOptions(api_key_env=NO_KEY_ENV))
    message = str(caught.value)
    assert "\n" not in message and NO_KEY_ENV in message and "Basic" in message
    assert "hunter2" not in message and leaks(message) == []


@pytest.mark.parametrize("spec", ["openai:http://127.0.0.1:port/v1", "openai:http://u:p@:8000/v1"])
def test_a_url_without_a_usable_host_or_port_is_one_line(spec: str) -> None:
    with pytest.raises(ModelLoadError) as caught:
        OpenAIBackend(spec, OpenAIOptions(api_key_env=NO_KEY_ENV))
    assert "\n" not in str(caught.value) and ":p@" not in str(caught.value)


# -- 6. impossible answers ----------------------------------------------------------------------------


def _rewrite(rewrite: Callable[[dict[str, Any]], None], *, scoring: bool = False) -> Callable[[Seen], Reply]:
    """The fake engine, with the answers to item requests (not the probe's) changed by ``rewrite``."""
    engine = FakeEngine()

    def script(seen: Seen) -> Reply:
        reply = engine(seen)
        body = seen.body or {}
        is_item = seen.method == "POST" and str(body.get("prompt", "")).startswith("item")
        if is_item and bool(body.get("echo")) == scoring:
            answer = json.loads(json.dumps(reply.body))
            rewrite(answer)
            return Reply(reply.status, answer)
        return reply

    return script


def _backend(server: ScriptedServer) -> OpenAIBackend:
    return OpenAIBackend(f"openai:{server.url}#m", OpenAIOptions(retries=0, request_timeout=10.0, api_key_env=NO_KEY_ENV))


def _set_first_logprob(value: Any) -> Callable[[dict[str, Any]], None]:
    def rewrite(answer: dict[str, Any]) -> None:
        answer["choices"][0]["logprobs"]["token_logprobs"][0] = value

    return rewrite


@pytest.mark.parametrize("value", [7.5, 0.01, float("nan"), float("inf"), "-1.0", True])
def test_an_impossible_generated_logprob_is_that_requests_error(serve: Callable[..., ScriptedServer], value: Any) -> None:
    """+7.5, a small positive value, NaN, infinity, a string, a boolean: one line naming the server, no result."""
    server = serve(_rewrite(_set_first_logprob(value)))
    with pytest.raises(ModelOutputError) as caught:
        _backend(server).load().generate([GenerationRequest("item 1", max_tokens=4)])
    message = str(caught.value)
    assert server.url in message and "log-probability" in message and "\n" not in message


def test_float_noise_above_zero_reads_as_zero(serve: Callable[..., ScriptedServer]) -> None:
    """A log-probability of 5e-5 is rounding, not information: stored as 0."""
    server = serve(_rewrite(_set_first_logprob(5e-5)))
    [result] = _backend(server).load().generate([GenerationRequest("item 1", max_tokens=4)])
    assert result.token_logprobs[0] == 0.0


def _set_echoed(value: Any) -> Callable[[dict[str, Any]], None]:
    def rewrite(answer: dict[str, Any]) -> None:
        answer["choices"][0]["logprobs"]["token_logprobs"][-2] = value  # the continuation's last token

    return rewrite


@pytest.mark.parametrize("value", [7.5, float("nan"), "x"])
def test_an_impossible_echoed_logprob_is_never_a_score(serve: Callable[..., ScriptedServer], value: Any) -> None:
    """Scoring with +7.5 among the continuation's values: that request's error, not a probability of 1808."""
    server = serve(_rewrite(_set_echoed(value), scoring=True))
    model = _backend(server).load()
    with pytest.raises(ModelOutputError) as caught:
        model.loglikelihood([LoglikelihoodRequest("item context", " Paris.")])
    assert server.url in str(caught.value) and "(scoring)" in str(caught.value) and "\n" not in str(caught.value)
    assert "log-probability" in str(caught.value)
    [fine] = model.loglikelihood([LoglikelihoodRequest("The capital of France is", " Paris.")])
    assert fine.logprob == true_value(" Paris") + true_value(".")


def test_a_huge_answer_is_refused_unread(serve: Callable[..., ScriptedServer]) -> None:
    """60 MB for max_tokens=4: refused after reading little more than its limit, in one line; the server stays usable."""
    huge = json.dumps({"choices": [{"text": "x" * (60 << 20)}]}).encode()
    engine = FakeEngine()
    server = serve(lambda seen: Reply(200, huge) if (seen.body or {}).get("prompt") == "item big" else engine(seen))
    model = _backend(server).load()
    with pytest.raises(ModelOutputError) as caught:
        model.generate([GenerationRequest("item big", max_tokens=4)])
    message = str(caught.value)
    assert "more than" in message and "bytes" in message and server.url in message and "\n" not in message
    assert model.generate([GenerationRequest("item small", max_tokens=4)])[0].text == " ok"


def test_text_beyond_what_max_tokens_allows_is_refused(serve: Callable[..., ScriptedServer]) -> None:
    """An answer of more characters than 4 tokens can hold, in a body small enough to read: that item's error."""
    too_long = "y" * (text_bound(4) + 1)

    def rewrite(answer: dict[str, Any]) -> None:
        answer["choices"][0]["text"] = too_long

    server = serve(_rewrite(rewrite))
    with pytest.raises(ModelOutputError, match=r"characters, more than the request's tokens allow"):
        _backend(server).load().generate([GenerationRequest("item 1", max_tokens=4)])


@pytest.mark.parametrize(
    ("rewrite", "problem"),
    [
        (lambda a: a.update(choices={"0": {}}), "no 'choices' list"),
        (lambda a: a.update(choices=[]), "no 'choices' list"),
        (lambda a: a.update(choices=["text"]), "no 'choices' list"),
        (lambda a: a["choices"][0].update(text=["a", "b"]), "not a string (got a list)"),
        (lambda a: a["choices"][0].update(logprobs="yes"), "not an object (got a string)"),
        (lambda a: a["choices"][0]["logprobs"].update(tokens=[1, 2]), "not a list of strings"),
        (lambda a: a["choices"][0]["logprobs"].update(token_logprobs=[-1.0, -2.0]), "one value per token"),
    ],
)
def test_answers_of_the_wrong_shape_are_one_line(
    serve: Callable[..., ScriptedServer], rewrite: Callable[[dict[str, Any]], None], problem: str
) -> None:
    server = serve(_rewrite(rewrite))
    with pytest.raises(ModelOutputError) as caught:
        _backend(server).load().generate([GenerationRequest("item 1", max_tokens=4)])
    assert problem in str(caught.value) and server.url in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("rewrite", "problem"),
    [
        (lambda a: a["choices"][0]["logprobs"].update(text_offset=[0.5] * 99), "'text_offset' is not a list of whole numbers"),
        (lambda a: a["choices"][0]["logprobs"].update(top_logprobs=[["x"]] * 99), "'top_logprobs' holds"),
        (lambda a: a["choices"][0]["logprobs"].update(tokens="abc"), "'tokens' is not a list of strings"),
    ],
)
def test_echoes_of_the_wrong_shape_are_one_line(
    serve: Callable[..., ScriptedServer], rewrite: Callable[[dict[str, Any]], None], problem: str
) -> None:
    server = serve(_rewrite(rewrite, scoring=True))
    with pytest.raises(ModelOutputError) as caught:
        _backend(server).load().loglikelihood([LoglikelihoodRequest("item context", " Paris.")])
    assert problem in str(caught.value) and "\n" not in str(caught.value)


def test_usage_of_the_wrong_type_is_unknown_not_an_error(serve: Callable[..., ScriptedServer]) -> None:
    """A prompt-token count that is not a whole number >= 0 counts as unknown (0); the answer stands."""

    def rewrite(answer: dict[str, Any]) -> None:
        answer["usage"] = {"prompt_tokens": "12"}

    server = serve(_rewrite(rewrite))
    [result] = _backend(server).load().generate([GenerationRequest("item 1", max_tokens=4)])
    assert (result.text, result.tokens_in) == (" ok", 0)


# -- 7. the start-up probe ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("models", "problem"),
    [
        ({"data": 5}, "'data' is not a list of models (got a number)"),
        ([1, 2], "the answer is not an object (got a list)"),
        ({"data": [5]}, "models with a string 'id'"),
        ({"data": [{"id": 7}]}, "models with a string 'id'"),
        (b'{"data": [{"id": "m"', "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_a_malformed_model_listing_is_one_line_at_load(serve: Callable[..., ScriptedServer], models: Any, problem: str) -> None:
    """GET /models answered with nonsense: no capability claimed, identify() still works, load() says why."""
    server = serve(_engine_with_models(models))
    backend = _backend(server)
    assert backend.capabilities() is None
    assert backend.missing_capability("loglikelihood") is None
    assert backend.identify().name == "m"
    with pytest.raises(ModelLoadError) as caught:
        backend.load()
    message = str(caught.value)
    assert problem in message and server.url in message and "\n" not in message


@pytest.mark.parametrize("answer", [{"choices": 5}, {"choices": [{"text": 5}]}, [], {"choices": [{"text": "x" * 10_000}]}])
def test_a_malformed_probe_completion_is_one_line_at_load(serve: Callable[..., ScriptedServer], answer: Any) -> None:
    """The probe's generation answered with the wrong shape: load() is one line naming the server."""
    engine = FakeEngine()

    def script(seen: Seen) -> Reply:
        if seen.method == "POST" and not (seen.body or {}).get("echo"):
            return Reply(body=answer)
        return engine(seen)

    server = serve(script)
    backend = _backend(server)
    assert backend.capabilities() is None
    with pytest.raises(ModelLoadError) as caught:
        backend.load()
    assert server.url in str(caught.value) and "(probe completion)" in str(caught.value) and "\n" not in str(caught.value)


def test_impossible_probe_logprobs_leave_scoring_missing(serve: Callable[..., ScriptedServer]) -> None:
    """The probe's generated log-probabilities are +7.5: scoring is a missing capability saying so; generation works."""
    engine = FakeEngine()

    def script(seen: Seen) -> Reply:
        reply = engine(seen)
        if seen.method == "POST" and (seen.body or {}).get("prompt") == PROBE_CONTEXT:
            answer = json.loads(json.dumps(reply.body))
            answer["choices"][0]["logprobs"]["token_logprobs"][0] = 7.5
            return Reply(body=answer)
        return reply

    backend = _backend(serve(script))
    reason = backend.missing_capability("loglikelihood")
    assert reason is not None and "cannot be used" in reason and "7.5" in reason and "\n" not in reason
    assert backend.load().generate([GenerationRequest("item 1", max_tokens=2)])[0].text == " ok"


def test_a_401_at_the_probe_names_the_key_variable(serve: Callable[..., ScriptedServer], monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrong key: load() is one line saying where the key comes from, with the server's message scrubbed."""
    monkeypatch.setenv(NO_KEY_ENV, KEY)
    server = serve(in_turn(Reply(401, {"error": {"message": f"Incorrect API key provided: {MASKED}"}})))
    backend = _backend(server)
    with pytest.raises(ModelLoadError) as caught:
        backend.load()
    message = str(caught.value)
    assert "HTTP 401" in message and "--holistic-api-key-env" in message and "\n" not in message
    assert leaks(message) == []


# -- 8. https ----------------------------------------------------------------------------------------------


@pytest.fixture
def tls_server(tmp_path: Path, serve: Callable[..., ScriptedServer]) -> Iterator[tuple[str, Path]]:
    """The fake engine over TLS on 127.0.0.1 with a fresh self-signed certificate: (base URL, certificate file)."""
    if shutil.which("openssl") is None:
        pytest.skip("making a test certificate needs the openssl command")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    scripted = serve(FakeEngine())
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd = _QuietServer(("127.0.0.1", 0), _Handler)
    httpd.scripted = scripted  # type: ignore[attr-defined]
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}/v1", cert
    httpd.shutdown()
    httpd.server_close()


def test_https_with_a_trusted_certificate(tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """https goes through the default SSL context: a certificate it trusts (SSL_CERT_FILE) works end to end."""
    url, cert = tls_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    model = OpenAIBackend(f"openai:{url}#m", OpenAIOptions(retries=0, api_key_env=NO_KEY_ENV)).load()
    assert model.generate([GenerationRequest("hi")])[0].text == " ok"


def test_https_with_an_untrusted_certificate_is_one_line(tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A self-signed certificate the system does not trust: refused (verification is on), in one line."""
    url, _ = tls_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    backend = OpenAIBackend(f"openai:{url}#m", OpenAIOptions(retries=0, api_key_env=NO_KEY_ENV))
    with pytest.raises(ModelLoadError) as caught:
        backend.load()
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value) and "\n" not in str(caught.value)


def test_https_to_a_plain_http_server_is_one_line(serve: Callable[..., ScriptedServer]) -> None:
    server = serve(FakeEngine())
    url = server.url.replace("http://", "https://")
    client = JsonClient(url, None, RetryPolicy(retries=0, timeout=5.0), url, sleep=Sleeps())
    with pytest.raises(ServerUnavailable) as caught:
        client.get("/models")
    assert "SSL" in str(caught.value) and "\n" not in str(caught.value)
