"""How the executor gives request outcomes to items: a request that failed by itself is the error of exactly the
items that asked it and is not asked again; a call that fails as a whole is narrowed down by halving."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from pytest_holistic.errors import ModelLoadError, ModelOutputError
from pytest_holistic.execution import _ask
from pytest_holistic.models.base import (
    BatchStreaming,
    Cancelled,
    Failed,
    GenerationRequest,
    GenerationResult,
    ModelInfo,
    collect,
    outcomes,
)
from pytest_holistic.models.cache import ResponseCache
from pytest_holistic.models.cached import CachedModel
from pytest_holistic.models.registry import BuiltModel


class Served:
    """A stream like a served model's: each request its own outcome; requests in ``bad`` fail, in batches of two."""

    def __init__(self, bad: set[str]) -> None:
        self.bad = bad
        self.calls: list[list[str]] = []

    def __call__(self, requests: list[str]) -> Iterator[list[tuple[int, object]]]:
        self.calls.append(list(requests))
        for start in range(0, len(requests), 2):
            yield [
                (k, Failed(ModelOutputError(f"{r} refused")) if r in self.bad else r.upper())
                for k, r in enumerate(requests[start : start + 2], start)
            ]


class Local:
    """A stream like a local model's: a batch of two that holds a request in ``bad`` raises as a whole."""

    def __init__(self, bad: set[str]) -> None:
        self.bad = bad
        self.calls: list[list[str]] = []

    def __call__(self, requests: list[str]) -> Iterator[list[tuple[int, object]]]:
        self.calls.append(list(requests))
        for start in range(0, len(requests), 2):
            batch = requests[start : start + 2]
            if self.bad & set(batch):
                raise ModelOutputError("out of memory")
            yield [(k, r.upper()) for k, r in enumerate(batch, start)]


def test_a_failed_request_is_the_error_of_exactly_the_items_that_asked_it_and_is_asked_once() -> None:
    stream = Served({"q3"})
    wanted = {f"item{k}": (f"q{k}",) for k in range(8)} | {"shares": ("q3", "q5"), "empty": ()}
    results, failures = _ask(stream, wanted)
    assert stream.calls == [["q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7"]]  # one call, nothing resent
    assert sorted(failures) == ["item3", "shares"]
    assert str(failures["item3"]) == str(failures["shares"]) == "q3 refused"
    assert results == {f"q{k}": f"Q{k}" for k in range(8) if k != 3}


def test_a_call_that_fails_as_a_whole_is_narrowed_down_keeping_what_it_handed_on() -> None:
    stream = Local({"q5"})
    results, failures = _ask(stream, {f"item{k}": (f"q{k}",) for k in range(8)})
    assert list(failures) == ["item5"] and str(failures["item5"]) == "out of memory"
    assert results == {f"q{k}": f"Q{k}" for k in range(8) if k != 5}
    assert stream.calls[0] == [f"q{k}" for k in range(8)]
    assert all("q0" not in call and "q3" not in call for call in stream.calls[1:])  # handed on before the failure: kept
    assert ["q5"] in stream.calls and len(stream.calls) < 1 + 8


@pytest.mark.parametrize("stop", [ModelLoadError("no weights"), Cancelled("the session is ending")])
def test_a_load_failure_or_the_session_ending_stops_everything(stop: Exception) -> None:
    calls: list[list[str]] = []

    def stream(requests: list[str]) -> Iterator[list[tuple[int, object]]]:
        calls.append(requests)
        raise stop
        yield []

    with pytest.raises(type(stop)):
        _ask(stream, {"a": ("q0",), "b": ("q1",)})
    assert len(calls) == 1


def test_the_list_api_keeps_failures_in_place_or_raises_the_first() -> None:
    stream = Served({"q1", "q2"})
    assert [str(o.error) if isinstance(o, Failed) else o for o in outcomes(3, stream(["q0", "q1", "q2"]))] == [
        "Q0",
        "q1 refused",
        "q2 refused",
    ]
    with pytest.raises(ModelOutputError, match="q1 refused"):
        collect(3, stream(["q0", "q1", "q2"]))
    assert collect(2, stream(["q0", "q3"])) == ["Q0", "Q3"]


class Cancellable(BatchStreaming):
    """Answers every prompt with its upper case; remembers being cancelled."""

    info = ModelInfo("cancellable", "test", None)

    def __init__(self) -> None:
        self.cancelled = 0

    def generate_batches(self, requests: Sequence[GenerationRequest]) -> Iterator[list[tuple[int, GenerationResult]]]:
        for index, request in enumerate(requests):
            yield [(index, GenerationResult(request.prompt.upper()))]

    def cancel(self) -> None:
        self.cancelled += 1


def test_cancelling_the_cached_model_cancels_the_loaded_one_and_stops_its_streams() -> None:
    inner = Cancellable()
    cached = CachedModel(lambda: BuiltModel(inner), None)
    cached.cancel()  # nothing loaded yet: nothing to tell
    assert inner.cancelled == 0
    cached = CachedModel(lambda: BuiltModel(inner), None)
    stream = cached.generate_batches([GenerationRequest("a"), GenerationRequest("b")])
    assert next(stream) == [(0, GenerationResult("A"))]
    cached.cancel()
    assert inner.cancelled == 1
    with pytest.raises(Cancelled):
        next(stream)


class Upper(Cancellable):
    info = ModelInfo("upper", "test", "v1")  # a revision: its answers may be cached


def test_the_executor_is_told_after_each_batch_once_the_model_has_committed_and_counted_it(tmp_path) -> None:
    """What a worker's ledger relies on: at each notice, the counts so far match what the cache holds."""
    cache = ResponseCache(tmp_path)
    cached = CachedModel(lambda: BuiltModel(Upper()), cache)
    seen: list[tuple[int, int, int]] = []

    def batch_done() -> None:
        seen.append((cached.stats.generation_requests, cached.stats.cache_hits, cache.count()))

    wanted = {f"item{k}": (GenerationRequest(f"p{k}"),) for k in range(3)}
    results, _ = _ask(cached.generate_batches, wanted, batch_done)
    assert seen == [(1, 0, 1), (2, 0, 2), (3, 0, 3)] and len(results) == 3
    seen.clear()
    _ask(cached.generate_batches, wanted | {"item3": (GenerationRequest("p3"),)}, batch_done)
    assert seen == [(3, 3, 3), (4, 3, 4)]  # the cache's answers arrive as one batch, then the one computed
    cache.close()
