"""The table that tells every process where a run stopped early: written by the controller, read by the workers.

When every gate on a run is settled (``report.sequential``), the controller writes one row: the run, how many
instances of its seeded order were used, and the line its skipped items carry. Each process reads the table before
an item of a run that may stop early needs its answer, so no new shard is computed past the stop. The table is a
small SQLite file beside the response cache (every worker already reaches that folder), keyed by the session's run
id, so two sessions sharing a cache never read each other's stops; the session removes its rows when it ends.
A stop, once written, never changes: a process keeps what it read and does not ask again for that run.

``RunOrder`` is the worker side's half: each stop-early run's selected instances in collection order (the seeded
order, the same in every process), sent to the controller with the run's header, and whether an item lies past its
run's stop, which the worker side asks before an item needs its answer and the executor before it computes a shard.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ._roles import STOP_TABLE_FILE

if TYPE_CHECKING:
    from .execution import Work

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


@dataclass(frozen=True)
class _Order:
    """One run's selected instances in the seeded order, each one's group, and each one's place in that order."""

    ids: tuple[str, ...]
    groups: tuple[str | None, ...]
    positions: dict[str, int]


class RunOrder:
    """Each run that may stop early, in the order its sequences are fed: arranged once from the collected works
    (``arrange``, at registration), read with the session's stop table (None: no run of the session can stop early).

    The worker side sends ``ids``/``groups`` with a run's header and asks ``past_stop`` before an item needs its
    answer; the executor asks ``past_stop`` before it computes a shard."""

    def __init__(self, stops: StopTable | None = None) -> None:
        self.stops = stops
        self._runs: dict[str, _Order] = {}

    def arrange(self, works: Iterable[Work]) -> None:
        """For each run that may stop early: its selected instances in collection order, which is the seeded order
        its sequences are fed in, the same in every process (each collects and deselects alike)."""
        orders: dict[str, dict[str, str | None]] = {}
        for work in works:
            if work.run.stop_early:
                orders.setdefault(work.run.key, {})[work.instance.id] = work.instance.group
        self._runs = {
            key: _Order(tuple(ids), tuple(ids.values()), {instance: k for k, instance in enumerate(ids)})
            for key, ids in orders.items()
        }

    def ids(self, run: str) -> tuple[str, ...]:
        """The run's selected instances in the seeded order (empty: the run cannot stop early)."""
        order = self._runs.get(run)
        return order.ids if order is not None else ()

    def groups(self, run: str) -> tuple[str | None, ...]:
        """Each of those instances' group (None: none), in the same order."""
        order = self._runs.get(run)
        return order.groups if order is not None else ()

    def past_stop(self, work: Work) -> str | None:
        """Why this item is not computed (its run stopped early before its instance), or None."""
        if self.stops is None or not work.run.stop_early:
            return None
        stop = self.stops.stop_of(work.run.key)
        if stop is None:
            return None
        order = self._runs.get(work.run.key)
        position = order.positions.get(work.instance.id) if order is not None else None
        return stop.reason if position is not None and position >= stop.n else None
