"""Every channel between processes, named in one place, and the two outboxes a process sends through.

What leaves a process travels one way each, whatever its role; only the carrier differs:

=====================================  ===========================================  ===========================================
message                                in one process (``-n 0``)                    from an xdist worker
=====================================  ===========================================  ===========================================
an item's record (with its run's       hook ``pytest_holistic_item_recorded``,      plain data on the test report (``RECORD``,
header on the run's first record)      the objects themselves                       ``RUN``), relayed to the same hook
the runs collection built              hook ``pytest_holistic_runs_collected``      ``workeroutput[OUTPUT]`` at the end,
                                       once collection is over                      relayed to the same hook
the process's summary                  hook ``pytest_holistic_worker_finished``     ``workeroutput[OUTPUT]``, relayed to the
                                                                                    same hook
its runs and counts so far, only for   (not needed: this process writes the         a ledger file in ``workerinput[LEDGER]``,
a worker that never reports back       report)                                      rewritten at every checkpoint
where a run stopped early (controller  the ``StopTable`` object, shared (written    the table's file in ``workerinput[STOPS]``,
to every process)                      by ``report.early_stop``, read by            read before each item of such a run
                                       ``stops.RunOrder``)
=====================================  ===========================================  ===========================================

The outbox is chosen once, in ``pytest_configure``; nothing else asks which role a process plays. The controller's
xdist glue relays what arrives with ``relay_report`` and ``relay_output``; the reporter only implements the hooks.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest

from ._roles import LEDGER
from .records import CollectedRun, ItemRecord, RunHeader, WorkerSummary

RECORD = "holistic_record"
"""Test report attribute: the item's record as plain data (also what report-log and other plugins see)."""
RUN = "holistic_run"
"""Test report attribute, on the first record of a run from each process: the run's header as plain data."""
OUTPUT = "holistic"
"""``workeroutput`` key: a worker's final summary and the runs it collected."""


class Outbox(Protocol):
    """Where a process sends what the reporter needs, in the way its role (chosen at configure) allows."""

    @property
    def name(self) -> str:
        """This process as the report names it: ``main``, or the xdist worker's id."""

    def record(self, report: pytest.TestReport, record: ItemRecord, header: RunHeader | None) -> None:
        """One item's record, and with the first record of a run from this process, the run's header."""

    def collected(self, runs: Sequence[CollectedRun], final: bool) -> None:
        """The runs collection built: so far (``final`` false, before a step that may hang), or all of them."""

    def checkpoint(self, progress: Callable[[], WorkerSummary]) -> None:
        """The counts changed (a batch committed, an item ended); ``progress()`` gives them, if this outbox keeps them."""

    def finished(self, summary: WorkerSummary, idle: bool) -> None:
        """This process's final summary; ``idle``: it had no holistic item and never touched the model."""


def _put_on(report: pytest.TestReport, record: ItemRecord, header: RunHeader | None) -> None:
    setattr(report, RECORD, record.to_data())
    if header is not None:
        setattr(report, RUN, header.to_data())


class InProcess:
    """The process that also writes the report (``-n 0``, or the idle xdist controller): messages go straight to the hooks.

    The record rides on the report as plain data too, for other plugins; the reporter takes the object itself,
    so no second copy of every instance and answer is made.
    """

    name = "main"

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def record(self, report: pytest.TestReport, record: ItemRecord, header: RunHeader | None) -> None:
        _put_on(report, record, header)
        self.config.hook.pytest_holistic_item_recorded(config=self.config, record=record, header=header)

    def collected(self, runs: Sequence[CollectedRun], final: bool) -> None:
        if final and runs:
            self.config.hook.pytest_holistic_runs_collected(config=self.config, runs=[run.to_data() for run in runs])

    def checkpoint(self, progress: Callable[[], WorkerSummary]) -> None:
        """Nothing to keep: if this process dies, there is no report to write."""

    def finished(self, summary: WorkerSummary, idle: bool) -> None:
        if not idle:  # the xdist controller (or a run without holistic items) did no model work: no worker to list
            self.config.hook.pytest_holistic_worker_finished(config=self.config, summary=summary.to_data())


class XdistWorker:
    """An xdist worker: records as plain data on its reports, its summary and runs in ``workeroutput`` at the end.

    Until then its ledger holds its runs and counts so far, rewritten atomically at each checkpoint, so a worker
    killed mid-shard or cut off by Ctrl-C still shows up in the report with counts that match the cache.
    """

    def __init__(self, config: pytest.Config) -> None:
        workerinput: Mapping[str, Any] = config.workerinput  # type: ignore[attr-defined]
        self.name = str(workerinput["workerid"])
        self._output: dict[str, Any] = config.workeroutput  # type: ignore[attr-defined]
        folder = workerinput.get(LEDGER)
        self.ledger = Path(folder) / f"{self.name}.json" if folder else None
        self._runs: list[dict[str, Any]] = []  # the collected runs as data, made once for every ledger write
        self._writing = threading.Lock()

    def record(self, report: pytest.TestReport, record: ItemRecord, header: RunHeader | None) -> None:
        _put_on(report, record, header)

    def collected(self, runs: Sequence[CollectedRun], final: bool) -> None:
        self._runs = [run.to_data() for run in runs]

    def checkpoint(self, progress: Callable[[], WorkerSummary]) -> None:
        if self.ledger is None:
            return
        with self._writing:
            # The pid lets the controller stop this worker when it is told to stop (SIGTERM).
            data = {"summary": progress().to_data(), "runs": self._runs, "pid": os.getpid()}
            temporary = self.ledger.with_name(f".{self.ledger.name}.tmp")
            try:
                # Named by a controller that was not yet awake, the folder is made by the first worker that writes.
                self.ledger.parent.mkdir(mode=0o700, exist_ok=True)
                temporary.write_text(json.dumps(data), encoding="utf-8")
                os.replace(temporary, self.ledger)
            except OSError:  # a safety net: the final summary does not need it
                pass

    def finished(self, summary: WorkerSummary, idle: bool) -> None:
        self._output[OUTPUT] = {"summary": summary.to_data(), "runs": self._runs}  # idle or not: every worker is listed


# -- the controller's end ---------------------------------------------------------------------------


def relay_report(config: pytest.Config, report: pytest.TestReport) -> None:
    """A worker's test report, as the controller gets it: its record and run header passed on as objects.

    Only a report that came from a worker (xdist sets ``node`` on it) is relayed: one made here was sent already.
    """
    data = getattr(report, RECORD, None)
    if data is None or getattr(report, "node", None) is None:
        return
    header = getattr(report, RUN, None)
    config.hook.pytest_holistic_item_recorded(
        config=config,
        record=ItemRecord.from_data(data),
        header=RunHeader.from_data(header) if header is not None else None,
    )


def relay_output(config: pytest.Config, workeroutput: Mapping[str, Any]) -> None:
    """A finished worker's output: the runs it collected, then its summary."""
    sent = workeroutput.get(OUTPUT)
    if sent is None:
        return
    config.hook.pytest_holistic_runs_collected(config=config, runs=list(sent["runs"]))
    config.hook.pytest_holistic_worker_finished(config=config, summary=sent["summary"])


def read_ledger(data: Mapping[str, Any]) -> tuple[WorkerSummary, tuple[CollectedRun, ...]]:
    """A ledger's summary and runs; raises ValueError, KeyError or TypeError for one that is damaged."""
    return WorkerSummary.from_data(data["summary"]), tuple(CollectedRun.from_data(run) for run in data["runs"])


def ledger_pid(data: Mapping[str, Any]) -> int | None:
    """The process that wrote a ledger, so the controller can stop it."""
    pid = data.get("pid")
    return pid if isinstance(pid, int) else None
