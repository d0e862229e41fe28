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


def test_an_earlier_stream_is_served_first_and_a_stalled_request_holds_one_sender() -> None:
    pool = RequestPool(2)
    release = threading.Event()
    order: list[str] = []

    def answer(request: str) -> str:
        if request == "stall":
            release.wait(30)
        order.append(request)
        return request

    first = pool.stream(["stall", "a1", "a2"], answer, _never)
    second = pool.stream(["b1", "b2"], answer, _never)
    got_first: list[str] = []
    seen = threading.Thread(target=lambda: [got_first.extend(v for _, v in batch) for batch in first])
    seen.start()
    got_second = [value for batch in second for _, value in batch]  # the stall holds one sender; the other serves both
    assert sorted(got_second) == ["b1", "b2"]
    assert order[:2] == ["a1", "a2"], order  # the earlier stream's requests went first
    release.set()
    seen.join(30)
    assert sorted(got_first) == ["a1", "a2", "stall"]


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
