"""A line every so often while one long step (a batch, the model's load) keeps pytest's own thread busy.

Lines between batches cannot help while a single batch computes for minutes: the thread that would write them
is inside the model. So a second thread writes, and only then: pytest's thread is inside the step and writes
nothing, and it ends the step with :meth:`Heartbeat.stop`, which returns only once no line is being written
(the line is written holding the lock ``stop`` takes), so a heartbeat never interleaves with pytest's output and
none comes after the step. One daemon thread, started at the first step and woken by a condition; a step
shorter than ``every`` costs two lock round trips and writes nothing. Tests drive :meth:`Heartbeat.tick`
themselves with a fake clock and no thread.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable


class Heartbeat:
    """Writes ``describe(seconds so far)`` every ``every`` seconds of a step, counted from the step's start and
    from the last line of any kind (:meth:`wrote`), so it never doubles the lines around it."""

    def __init__(
        self, emit: Callable[[str], None], every: float, clock: Callable[[], float] = time.monotonic, threaded: bool = True
    ) -> None:
        self.emit, self.every, self.clock, self.threaded = emit, every, clock, threaded
        self._condition = threading.Condition(threading.RLock())  # reentrant: a signal handler may stop it mid-start
        self._describe: Callable[[float], str] | None = None
        self._since = 0.0
        self._last = -math.inf
        self._thread: threading.Thread | None = None
        self._asleep = False  # the thread waits with no deadline: a new step must wake it
        self._closed = False

    def start(self, describe: Callable[[float], str]) -> None:
        """A step begins; ``describe`` gives its line from the seconds it has run."""
        with self._condition:
            if self._closed:
                return
            self._describe, self._since = describe, self.clock()
            if self.threaded and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="holistic-heartbeat", daemon=True)
                self._thread.start()
            elif self._asleep:
                self._condition.notify()

    def stop(self) -> None:
        """The step is over: no line after this returns (the thread wakes at its deadline and finds nothing)."""
        with self._condition:
            self._describe = None

    def wrote(self) -> None:
        """Another line was just written: the next heartbeat waits a full ``every`` after it."""
        with self._condition:
            self._last = self.clock()

    def tick(self) -> float | None:
        """Write the line if one is due; the seconds until one may be, or None while no step is under way."""
        with self._condition:
            if self._describe is None or self._closed:
                return None
            now = self.clock()
            due = max(self._since, self._last) + self.every
            if now < due:
                return due - now
            try:
                self.emit(self._describe(now - self._since))
            except Exception:  # noqa: BLE001 - a terminal that cannot be written to ends the heartbeat, not the run
                self._describe = None
                return None
            self._last = now
            return self.every

    def close(self, wait: float = 1.0) -> None:
        """No more lines, ever (the session ends); the thread is given ``wait`` seconds to finish."""
        with self._condition:
            self._closed, self._describe = True, None
            self._condition.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(wait)

    def _run(self) -> None:
        with self._condition:
            while not self._closed:
                delay = self.tick()
                self._asleep = delay is None
                self._condition.wait(delay)
                self._asleep = False
