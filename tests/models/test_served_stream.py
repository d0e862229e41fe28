"""A served model's request stream: each request's own outcome, in-process, against the scripted server.

A failed request is handed on as its own ``Failed`` outcome (never resent, never cached) while the others go on;
a hung one holds only its own slot, and a consumer that stops early does not wait for it: its sender is a daemon
thread, so neither the stream nor the process's exit joins it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_holistic.models.base import Failed, GenerationRequest
from pytest_holistic.models.openai_options import OpenAIOptions
from pytest_holistic.models.cache import ResponseCache
from pytest_holistic.models.cached import CachedModel
from pytest_holistic.models.openai_backend import OpenAIBackend
from tests.models.test_openai_protocol import NO_KEY_ENV, FakeEngine, Reply, ScriptedServer, Seen


@pytest.fixture
def server() -> Iterator[tuple[ScriptedServer, FakeEngine, threading.Event, list[str]]]:
    """The fake engine; prompts starting with 'hang' are accepted and never answered (until teardown)."""
    engine, release, prompts = FakeEngine(), threading.Event(), []
    engine.rejected = {"bad"}

    def script(seen: Seen) -> Reply:
        prompt = seen.body.get("prompt") if isinstance(seen.body, dict) else None
        if isinstance(prompt, str):
            prompts.append(prompt)
            if prompt.startswith("hang"):
                release.wait()
        return engine(seen)

    served = ScriptedServer(script)
    yield served, engine, release, prompts
    release.set()
    served.stop()


def _backend(server: ScriptedServer, concurrency: int = 2, timeout: float = 300.0) -> OpenAIBackend:
    options = OpenAIOptions(concurrency=concurrency, retries=4, request_timeout=timeout, api_key_env=NO_KEY_ENV)
    return OpenAIBackend(f"openai:{server.url}#m", options)


def _senders() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("holistic-http")]


def test_a_hung_request_holds_neither_the_others_nor_a_consumer_that_stops(server: tuple) -> None:
    """With two in flight and one hung at the default timeout, the three others are all answered; closing the
    stream then returns at once, leaving the hung request's daemon thread behind, unjoined."""
    served, _, _, prompts = server
    model = _backend(served).load()
    stream = model.generate_batches([GenerationRequest(p) for p in ["hang", "a", "b", "c"]])
    got: dict[int, object] = {}
    while len(got) < 3:
        got.update(next(stream))
    assert sorted(got) == [1, 2, 3] and all(result.text == " ok" for result in got.values())  # type: ignore[attr-defined]
    closing = threading.Thread(target=stream.close, daemon=True)  # were it joined, the hung request would hold it 300 s
    closing.start()
    closing.join(10)
    assert not closing.is_alive(), "closing the stream waited for the hung request"
    hung = [thread for thread in _senders() if thread.is_alive()]
    assert hung and all(thread.daemon for thread in hung)
    # The server's handler thread for the hung request records it when it runs: on a loaded machine that can come
    # after the other three were answered, so wait for it (sent once, never again) rather than race it.
    deadline = time.monotonic() + 30
    while "hang" not in prompts and time.monotonic() < deadline:
        time.sleep(0.05)
    assert prompts.count("hang") == 1


def test_failures_pass_through_the_cache_uncached_and_only_they_are_sent_again(server: tuple, tmp_path: Path) -> None:
    """A refused request is its own Failed outcome through the cached model; the successes are committed, so asking
    the same list again sends only the failed request (once), and the rest come from the cache."""
    served, _, _, prompts = server
    backend = _backend(served, timeout=5.0)
    cached = CachedModel(lambda: backend, ResponseCache(tmp_path))
    requests = [GenerationRequest(p) for p in ["a", "bad", "c"]]
    first: dict[int, object] = {}
    for batch in cached.generate_batches(requests):
        first.update(batch)
    assert isinstance(first[1], Failed) and "prompt too long" in str(first[1].error)
    assert first[0].text == first[2].text == " ok"  # type: ignore[attr-defined]
    assert cached.stats.generation_requests == 2 and cached.cache is not None and cached.cache.count() == 2
    sent = list(prompts)
    again: dict[int, object] = {}
    for batch in cached.generate_batches(requests):
        again.update(batch)
    assert prompts[len(sent) :] == ["bad"]
    assert isinstance(again[1], Failed) and again[0].cached and again[2].cached  # type: ignore[attr-defined]
    cached.close()


def test_the_list_api_raises_the_failed_requests_error(server: tuple) -> None:
    """generate() of a list with a refused request raises that request's error, after the others were answered."""
    served, _, _, prompts = server
    model = _backend(served, timeout=5.0).load()
    with pytest.raises(Exception, match="prompt too long"):
        model.generate([GenerationRequest(p) for p in ["x", "bad", "y"]])
    assert sorted(p for p in prompts if p in {"x", "bad", "y"}) == ["bad", "x", "y"]
