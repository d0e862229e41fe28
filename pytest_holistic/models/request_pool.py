"""One bounded pool of senders per served model, shared by every request stream that runs at once.

A served model's requests are independent, so the executor computes several shards side by side and a request that
stalls holds one sender, never the shards after it. The pool keeps the user's ``--holistic-concurrency`` as the bound
on requests in flight however many streams are open, and sends an earlier stream's requests first, so the shard
pytest is waiting for is never queued behind the ones computed ahead.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .base import Failed


@dataclass(frozen=True, eq=False)
class _Job:
    request: Any
    answer: Callable[[Any], Any]
    done: queue.SimpleQueue[tuple[int, Any]]
    stop: threading.Event
    failed: Callable[[], Failed]


class RequestPool:
    """``size`` daemon senders taking requests from every open stream: the main thread's first, then the earliest.

    The senders are daemon threads that nothing joins: when a stream's consumer stops (Ctrl-C, SIGTERM, an early
    return), its requests not yet started are dropped, and one hung on the server cannot keep the process from
    writing its report and exiting.
    """

    def __init__(self, size: int, name: str = "holistic-http") -> None:
        self.size = max(1, size)
        self._name = name
        self._todo: queue.PriorityQueue[tuple[tuple[int, int], int, _Job]] = queue.PriorityQueue()
        self._streams = itertools.count()
        self._senders = 0
        self._lock = threading.Lock()

    def stream(
        self, requests: Sequence[Any], answer: Callable[[Any], Any], failed: Callable[[], Failed]
    ) -> Iterator[list[tuple[int, Any]]]:
        """Every request answered by the pool; batches of ``(index, outcome)`` as they finish.

        ``answer`` raising is that request's :class:`Failed` outcome (the others go on); ``failed`` is the outcome of
        a request that ended without one (it is always told, so the consumer never waits for a request that is over).
        """
        if not requests:
            return
        # The main thread is what pytest waits on (a probe of a property test, a shard computed in place): it goes
        # before every stream computed ahead in a background thread; otherwise the earlier stream goes first.
        urgent = threading.current_thread() is threading.main_thread()
        order = (0 if urgent else 1, next(self._streams))
        done: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        stop = threading.Event()
        for index, request in enumerate(requests):
            self._todo.put((order, index, _Job(request, answer, done, stop, failed)))
        self._start_senders()
        left = len(requests)
        try:
            while left:
                batch = [done.get()]
                while True:
                    try:
                        batch.append(done.get_nowait())
                    except queue.Empty:
                        break
                left -= len(batch)
                yield batch
        finally:
            stop.set()  # the consumer stopped early or finished: none of this stream's requests starts any more

    def _start_senders(self) -> None:
        with self._lock:
            while self._senders < self.size:
                threading.Thread(target=self._send, name=f"{self._name}-{self._senders}", daemon=True).start()
                self._senders += 1

    def _send(self) -> None:
        while True:
            _, index, job = self._todo.get()
            if job.stop.is_set():
                continue
            outcome: Any = None
            try:
                outcome = job.answer(job.request)
            except Exception as error:  # noqa: BLE001 - this request's failure, given to the items that asked it
                outcome = Failed(error)
            finally:
                job.done.put((index, outcome if outcome is not None else job.failed()))
