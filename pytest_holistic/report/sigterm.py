"""SIGTERM (a cancelled CI job, ``kill``) ends a run the way Ctrl-C does, so the report is still written."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be, so pytest finishes the session (and the report) the same way."""


class SigtermAsInterrupt:
    """Installs the handler only where nothing else handles SIGTERM; fires once; ``restore`` puts the old one back.

    A second SIGTERM, or one after ``restore`` (the report is written), ends the process the usual way.
    """

    def __init__(self, before_raising: Callable[[], None]) -> None:
        self._before_raising = before_raising
        self._previous: Any = None

    def install(self) -> None:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return
        try:
            self._previous = signal.signal(signal.SIGTERM, self._terminate)
        except ValueError:  # not the main thread: leave the default
            self._previous = None

    def _terminate(self, signum: int, frame: Any) -> None:
        self.restore()
        self._before_raising()
        raise Terminated("terminated by SIGTERM")

    def restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
            self._previous = None
