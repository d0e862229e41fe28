"""Progress while pytest itself is silent: the model loading, and long streams of batches.

pytest prints a dot when an item finishes, but the first item of a shard waits for the whole shard's
batches, and the first of all waits for the model to load: minutes without output on a large model, which
reads as a hang. These lines say what is happening, with requests per second and an estimate of the time
left. They are whole lines (never a rewritten line: that would eat pytest's own progress dots), throttled so
a log file gets a line every ``log_every`` seconds and a terminal one every ``tty_every``; a stream that is
over before ``quiet_for`` seconds says nothing at all.

Under xdist a worker's output never reaches the terminal, so the controller says how far the items are
(:class:`ItemProgress`) from the reports it receives.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..printable import printable


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 90:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _pace(done: int, remaining: int, elapsed: float) -> tuple[float, str]:
    """The rate of ``done`` over ``elapsed`` seconds, and the time ``remaining`` more take at it, in words."""
    rate = done / elapsed if elapsed > 0 else 0.0
    return rate, _duration(remaining / rate) if rate > 0 else "unknown"


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

    ``emit`` writes one line to the terminal. The counts are the requests the model computes (cache hits
    are not waited for), so the rate is the model's and the estimate covers the stream under way.
    """

    emit: Callable[[str], None]
    tty: bool
    clock: Callable[[], float] = time.monotonic
    tty_every: float = 10.0
    log_every: float = 30.0
    quiet_for: float = 3.0
    _throttle: Throttle = field(init=False)
    _kind: str = ""
    _total: int = 0
    _done: int = 0
    _open: int = 0  # streams started and not finished

    def __post_init__(self) -> None:
        self._throttle = Throttle(self.tty_every if self.tty else self.log_every, self.quiet_for, self.clock)

    def loading(self, name: str) -> None:
        self.emit(f"pytest-holistic: loading model {name} ..." if name else "pytest-holistic: loading the model ...")

    def loaded(self, name: str, seconds: float, details: dict[str, object]) -> None:
        where = ", ".join(str(details[key]) for key in ("device", "dtype") if details.get(key))
        self.emit(f"pytest-holistic: model {name} loaded in {seconds:.1f} s{f' ({where})' if where else ''}")

    def started(self, kind: str, total: int) -> None:
        """A stream starts; one started while another is open (a served model's shards side by side) adds to it."""
        if self._open == 0:
            self._kind, self._total, self._done = kind, total, 0
            self._throttle.start()
        else:
            self._total += total
        self._open += 1

    def finished(self) -> None:
        self._open = max(0, self._open - 1)

    def advanced(self, requests: int) -> None:
        self._done += requests
        if self._done < self._total and self._throttle.due():
            elapsed = self.clock() - self._throttle.started
            rate, eta = _pace(self._done, self._total - self._done, elapsed)
            self.emit(
                f"pytest-holistic: {self._kind} {self._done}/{self._total} requests, {rate:.1f} requests/s, about {eta} left"
            )


@dataclass
class ItemProgress:
    """The controller's view under xdist: items finished out of those selected, items per second, time left.

    The rate is measured from the first finished item on: before it, the workers start and load the model,
    which says nothing about how fast items go.
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

    def __post_init__(self) -> None:
        self._throttle = Throttle(self.tty_every if self.tty else self.log_every, self.quiet_for, self.clock)

    def expect(self, total: int) -> None:
        self.total = total

    def finished(self) -> None:
        self.done += 1
        if self._first is None:
            self._first = self.done
            self._throttle.start()
            return
        if self.total and self.done < self.total and self._throttle.due():
            elapsed = self.clock() - self._throttle.started
            rate, left = _pace(self.done - self._first, self.total - self.done, elapsed)
            self.emit(f"pytest-holistic: {self.done}/{self.total} items, {rate:.1f} items/s, about {left} left")


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
