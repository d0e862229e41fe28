"""The progress lines: the model loading, long streams of batches, and the items under xdist.

pytest prints a dot when an item finishes, but the first item of a shard waits for the whole shard's
batches, and the first of all waits for the model to load: minutes without output on a large model, which
reads as a hang. These lines say what is happening, with requests per second and the time left as a range
(:mod:`.estimate`); while one batch or the load runs long, a heartbeat thread (:mod:`.heartbeat`) says it is
still under way. They are whole lines (never a rewritten line: that would eat pytest's own progress dots),
throttled so a log file gets a line every ``log_every`` seconds and a terminal one every ``tty_every``; a stream
that is over before ``quiet_for`` seconds says nothing at all, and a batch shorter than that interval no heartbeat.

Under xdist a worker's output never reaches the terminal, so the controller says how far the items are
(:class:`ItemProgress`) from the reports it receives.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..printable import printable
from .estimate import TimeLeft, duration
from .heartbeat import Heartbeat


@dataclass
class Throttle:
    """When the next line may be written: not before ``quiet_for`` after the start, then every ``every`` seconds."""

    every: float
    quiet_for: float
    clock: Callable[[], float] = time.monotonic
    started: float = 0.0
    last: float | None = None

    def start(self) -> None:
        self.started, self.last = self.clock(), None

    def due(self) -> bool:
        now = self.clock()
        if now - self.started < self.quiet_for or (self.last is not None and now - self.last < self.every):
            return False
        self.last = now
        return True


@dataclass
class ModelProgress:
    """Lines about one process's model: loading, and each stream of batches the model computes.

    ``emit`` writes one line to the terminal. The counts are the requests the model computes (cache hits are not
    waited for), so the rate is the model's and the estimate covers the stream under way. ``work`` is what the
    requests cost in the caller's units (characters of input, say): each batch's seconds per unit give the range
    of the time left, so longer batches to come widen it rather than break it. The heartbeat speaks only for a
    step (:meth:`computing`, :meth:`loading`) on the thread that made this object, pytest's: a shard computed
    ahead in another thread runs while pytest writes.
    """

    emit: Callable[[str], None]
    tty: bool
    clock: Callable[[], float] = time.monotonic
    tty_every: float = 10.0
    log_every: float = 30.0
    quiet_for: float = 3.0
    threaded: bool = True  # False: no heartbeat thread, a test calls ``heartbeat.tick()`` itself
    heartbeat: Heartbeat = field(init=False)
    _throttle: Throttle = field(init=False)
    _owner: int = field(init=False)  # the thread pytest runs on
    _kind: str = ""
    _total: int = 0
    _done: int = 0
    _work: float = 0.0  # the open streams' work, in the caller's units
    _work_done: float = 0.0
    _batches: int = 0
    _mark: float = 0.0  # when the last batch ended, or the stream started
    _left: TimeLeft = field(default_factory=TimeLeft)
    _open: int = 0  # streams started and not finished

    def __post_init__(self) -> None:
        every = self.tty_every if self.tty else self.log_every
        self._throttle = Throttle(every, self.quiet_for, self.clock)
        self.heartbeat = Heartbeat(self.emit, every, self.clock, self.threaded)
        self._owner = threading.get_ident()

    def _say(self, line: str) -> None:
        self.emit(line)
        self.heartbeat.wrote()

    def _step(self, describe: Callable[[float], str]) -> None:
        if threading.get_ident() == self._owner:
            self.heartbeat.start(describe)

    def idle(self) -> None:
        """The step under way (a batch, the load) is over, however it ended: no heartbeat line after this returns."""
        if threading.get_ident() == self._owner:
            self.heartbeat.stop()

    def close(self) -> None:
        """The session ends (or is cancelled): no heartbeat line ever again."""
        self.heartbeat.close()

    def loading(self, name: str) -> None:
        self._say(f"pytest-holistic: loading model {name} ..." if name else "pytest-holistic: loading the model ...")
        what = f"model {name}" if name else "the model"
        self._step(lambda seconds: f"pytest-holistic: still loading {what} ({duration(seconds)} so far)")

    def loaded(self, name: str, seconds: float, details: dict[str, object]) -> None:
        self.idle()
        where = ", ".join(str(details[key]) for key in ("device", "dtype") if details.get(key))
        self._say(f"pytest-holistic: model {name} loaded in {seconds:.1f} s{f' ({where})' if where else ''}")

    def started(self, kind: str, total: int, work: float | None = None) -> None:
        """A stream starts; one started while another is open (a served model's shards side by side) adds to it."""
        if self._open == 0:
            self._kind, self._total, self._done, self._work, self._work_done = kind, 0, 0, 0.0, 0.0
            self._batches, self._left, self._mark = 0, TimeLeft(), self.clock()
            self._throttle.start()
        self._total += total
        self._work += total if work is None else work
        self._open += 1

    def computing(self) -> None:
        """The stream's next batch is under way (the heartbeat's step, ended by :meth:`idle`)."""
        kind, number, done, total = self._kind, self._batches + 1, self._done, self._total
        self._step(
            lambda seconds: (
                f"pytest-holistic: still computing {kind} batch {number} "
                f"({done}/{total} requests done, {duration(seconds)} in this batch)"
            )
        )

    def finished(self) -> None:
        self._open = max(0, self._open - 1)

    def advanced(self, requests: int, work: float | None = None) -> None:
        """A batch of ``requests`` is done, ``work`` of the stream's units (the requests themselves if not given)."""
        now = self.clock()
        work = requests if work is None else work
        self._done, self._work_done, self._batches = self._done + requests, self._work_done + work, self._batches + 1
        self._left.add(work, now - self._mark)
        self._mark = now
        if self._done < self._total and self._throttle.due():
            elapsed = now - self._throttle.started
            rate = self._done / elapsed if elapsed > 0 else 0.0
            left = self._left.text(self._work - self._work_done)
            # Of this shard's requests only: the shards after it are not known here (the item lines under xdist count them).
            line = f"pytest-holistic: {self._kind} {self._done}/{self._total} requests, {rate:.1f} requests/s, {left}"
            self._say(f"{line} in this shard")


@dataclass
class ItemProgress:
    """The controller's view under xdist: items finished out of those selected, items per second, time left.

    The rate is measured from the first finished item on: before it, the workers start and load the model,
    which says nothing about how fast items go. Each line closes a window whose seconds per unit of work is one
    sample of the time left's range: items arrive a shard at a time, and a window from one line to the next holds
    whole shards where a single item's wait would not. An item's work is the seconds it took in the last run
    that ran it (:mod:`.durations`), so slow items still to come lengthen the time left; an item never timed
    counts as the mean of those that were, and with none timed every item counts the same.
    """

    emit: Callable[[str], None]
    tty: bool
    clock: Callable[[], float] = time.monotonic
    tty_every: float = 15.0
    log_every: float = 30.0
    quiet_for: float = 5.0
    total: int = 0
    done: int = 0
    _throttle: Throttle = field(init=False)
    _first: int | None = None  # items finished when the clock started
    _left: TimeLeft = field(default_factory=TimeLeft)
    _work: dict[str, float] = field(default_factory=dict)  # each unfinished item's work
    _work_left: float = 0.0
    _window: tuple[float, float] = (0.0, 0.0)  # when the last window closed, and the work finished since

    def __post_init__(self) -> None:
        self._throttle = Throttle(self.tty_every if self.tty else self.log_every, self.quiet_for, self.clock)

    def expect(self, nodeids: Sequence[str], seconds_before: Mapping[str, float] | None = None) -> None:
        """The items selected, and the seconds the earlier runs took for them (those known)."""
        before = seconds_before or {}
        known = [before[nodeid] for nodeid in nodeids if nodeid in before]
        if known:
            usual = statistics.fmean(known)
            self._work = {nodeid: max(before.get(nodeid, usual), _LEAST) for nodeid in nodeids}
        else:
            self._work = dict.fromkeys(nodeids, 1.0)
        self.total, self._work_left = len(nodeids), math.fsum(self._work.values())

    def finished(self, nodeid: str) -> None:
        self.done += 1
        work = self._work.pop(nodeid, 0.0)  # an item reported twice (its setup failed, then its teardown) counts once
        self._work_left -= work
        if self._first is None:
            self._first = self.done
            self._throttle.start()
            self._window = (self._throttle.started, 0.0)
            return
        self._window = (self._window[0], self._window[1] + work)
        if self.total and self.done < self.total and self._throttle.due():
            now = self.clock()
            self._left.add(self._window[1], now - self._window[0])
            self._window = (now, 0.0)
            elapsed = now - self._throttle.started
            rate = (self.done - self._first) / elapsed if elapsed > 0 else 0.0
            left = self._left.text(max(self._work_left, 0.0))
            self.emit(f"pytest-holistic: {self.done}/{self.total} items, {rate:.1f} items/s, {left}")


_LEAST = 0.001
"""The least work an item counts for, in seconds: one that took no measurable time still moves the count."""


def terminal_emitter(config: object) -> tuple[Callable[[str], None], bool] | None:
    """A function writing one line to pytest's terminal, and whether that is a TTY; None under ``-qq`` or without one.

    The terminal reporter is looked up at each line: it registers after this plugin is configured.
    """
    if config.get_verbosity() <= -2:  # type: ignore[attr-defined]
        return None
    writer = config.get_terminal_writer()  # type: ignore[attr-defined]
    stream = getattr(writer, "_file", None)
    tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())

    def emit(line: str) -> None:
        plugins = config.pluginmanager  # type: ignore[attr-defined]
        terminal = plugins.get_plugin("terminalreporter")
        if terminal is None:
            return
        capture = plugins.get_plugin("capturemanager")  # the model works inside an item's setup, with output captured
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            if writer.width_of_current_line:  # after pytest's progress dots
                terminal.write("\n")
            terminal.write_line(printable(line))

    return emit, tty
