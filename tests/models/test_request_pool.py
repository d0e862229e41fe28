"""The served model's pool of senders: a bound on requests in flight over every open stream, earliest stream first."""

from __future__ import annotations

import threading
import time

from pytest_holistic.models.base import Failed
from pytest_holistic.models.request_pool import RequestPool


def _never() -> Failed:
    raise AssertionError("every request here ends with an outcome")


def test_two_streams_share_the_bound_on_requests_in_flight() -> None:
    pool = RequestPool(3)
    lock = threading.Lock()
    in_flight, most = [0], [0]

    def answer(request: int) -> int:
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.02)
        with lock:
            in_flight[0] -= 1
        return request * 10

    results: dict[str, dict[int, int]] = {"a": {}, "b": {}}

    def consume(name: str, requests: list[int]) -> None:
        for batch in pool.stream(requests, answer, _never):
            results[name].update(batch)

    threads = [threading.Thread(target=consume, args=(name, list(range(12)))) for name in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {name: {k: k * 10 for k in range(12)} for name in results}
    assert most[0] == 3


def _queued(pool: RequestPool, count: int) -> None:
    deadline = time.monotonic() + 30
    while pool._todo.qsize() != count:
        assert time.monotonic() < deadline, "the requests never reached the queue"
        time.sleep(0.01)


def test_of_the_streams_computed_ahead_the_earlier_goes_first() -> None:
    pool = RequestPool(1)
    release = threading.Event()
    order: list[str] = []

    def answer(request: str) -> str:
        if request == "stall":
            release.wait(30)
        order.append(request)
        return request

    def consume(requests: list[str]) -> threading.Thread:
        thread = threading.Thread(target=lambda: [None for _ in pool.stream(requests, answer, _never)])
        thread.start()
        return thread

    first = consume(["stall", "a1", "a2"])
    _queued(pool, 2)  # the only sender holds the stall
    second = consume(["b1", "b2"])
    _queued(pool, 4)
    release.set()
    first.join(30)
    second.join(30)
    assert order == ["stall", "a1", "a2", "b1", "b2"]


def test_a_stalled_request_holds_one_sender_and_the_others_go_on() -> None:
    pool = RequestPool(2)
    release, stalling = threading.Event(), threading.Event()

    def answer(request: str) -> str:
        if request == "stall":
            stalling.set()
            release.wait(30)
        return request

    stalled = pool.stream(["stall"], answer, _never)
    waiting = threading.Thread(target=lambda: [None for _ in stalled])
    waiting.start()
    assert stalling.wait(30)  # one sender is held from here on
    assert sorted(value for batch in pool.stream(["b1", "b2", "b3"], answer, _never) for _, value in batch) == ["b1", "b2", "b3"]
    release.set()
    waiting.join(30)


def test_a_raising_request_is_its_own_failed_outcome_and_a_closed_stream_starts_nothing_more() -> None:
    pool = RequestPool(1)
    started: list[int] = []

    def answer(request: int) -> int:
        started.append(request)
        time.sleep(0.05)
        if request == 1:
            raise ValueError("bad request")
        return request

    stream = pool.stream([0, 1, 2, 3, 4, 5], answer, _never)
    outcomes: dict[int, object] = {}
    for batch in stream:
        outcomes.update(batch)
        if len(outcomes) >= 2:
            break
    stream.close()
    assert outcomes[0] == 0 and isinstance(outcomes[1], Failed) and "bad request" in str(outcomes[1].error)
    time.sleep(0.2)
    assert len(started) <= 3, started  # at most the request the sender had already taken


def test_the_main_threads_stream_goes_before_streams_computed_ahead() -> None:
    """A property test's probe (the main thread) is not queued behind the shards computed ahead in threads."""
    pool = RequestPool(1)
    release = threading.Event()
    order: list[str] = []

    def answer(request: str) -> str:
        if request == "busy":
            release.wait(30)
        order.append(request)
        return request

    ahead: list[str] = []

    def compute_ahead() -> None:
        ahead.extend(value for batch in pool.stream(["busy", "s1", "s2", "s3"], answer, _never) for _, value in batch)

    worker = threading.Thread(target=compute_ahead)
    worker.start()
    while not pool._todo.qsize() < 4:  # the sender has taken "busy" and holds the only slot
        time.sleep(0.01)
    probe = pool.stream(["probe"], answer, _never)
    release.set()
    assert [value for batch in probe for _, value in batch] == ["probe"]
    worker.join(30)
    assert order[:2] == ["busy", "probe"], order
