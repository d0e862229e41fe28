"""The table that tells every process where a run stopped early: written by the controller, read by the workers.

When every gate on a run is settled (``report.sequential``), the controller writes one row: the run, how many
instances of its seeded order were used, and the line its skipped items carry. Each process reads the table before
an item of a run that may stop early needs its answer, so no new shard is computed past the stop. The table is a
small SQLite file beside the response cache (every worker already reaches that folder), keyed by the session's run
id, so two sessions sharing a cache never read each other's stops; the session removes its rows when it ends.
A stop, once written, never changes: a process keeps what it read and does not ask again for that run.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ._roles import STOP_TABLE_FILE

FILE_NAME = STOP_TABLE_FILE
STALE_SECONDS = 7 * 24 * 3600
"""Rows of sessions that ended without removing theirs (killed) are dropped after a week."""


@dataclass(frozen=True)
class Stop:
    """A run stopped after its first ``n`` instances (of ``population``) in the seeded order; ``reason`` is the
    skip message of every item past it."""

    run: str
    n: int
    population: int
    reason: str


class StopTable:
    """One session's rows of the early-stop table at ``path``; opened on first use, in every process that asks."""

    def __init__(self, path: Path, session: str) -> None:
        self.path = path
        self.session = session
        self._connection: sqlite3.Connection | None = None
        self._known: dict[str, Stop] = {}
        self._lock = threading.Lock()  # a worker's shards computed ahead ask from their own threads

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            connection.execute(
                "CREATE TABLE IF NOT EXISTS stops (session TEXT, run TEXT, n INTEGER, population INTEGER, "
                "reason TEXT, written REAL, PRIMARY KEY (session, run))"
            )
            self._connection = connection
        return self._connection

    def write(self, stop: Stop) -> None:
        """Record the stop (the first one written for a run stands); a failure to write raises (the caller says so)."""
        with self._lock:
            self._known.setdefault(stop.run, stop)
            self._connect().execute(
                "INSERT OR IGNORE INTO stops VALUES (?, ?, ?, ?, ?, ?)",
                (self.session, stop.run, stop.n, stop.population, stop.reason, time.time()),
            )

    def stop_of(self, run: str) -> Stop | None:
        """The run's stop, if the controller has written one (asked again until it has). A table that cannot be read
        (the cache folder gone) stops nothing: the items are computed, and the report still uses those before the stop."""
        with self._lock:
            known = self._known.get(run)
            if known is not None:
                return known
            try:
                row = (
                    self._connect()
                    .execute("SELECT n, population, reason FROM stops WHERE session = ? AND run = ?", (self.session, run))
                    .fetchone()
                )
            except (OSError, sqlite3.Error):
                return None
            if row is None:
                return None
            stop = Stop(run, int(row[0]), int(row[1]), str(row[2]))
            self._known[run] = stop
            return stop

    def remove(self) -> None:
        """The session is over: its rows go, with those of sessions that ended without removing theirs."""
        if self._connection is None and not self.path.exists():
            return
        with self._lock:
            try:
                self._connect().execute(
                    "DELETE FROM stops WHERE session = ? OR written < ?", (self.session, time.time() - STALE_SECONDS)
                )
            except (OSError, sqlite3.Error):
                pass  # a read-only or vanished cache folder: the rows are keyed by session and harmless
        self.close()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
