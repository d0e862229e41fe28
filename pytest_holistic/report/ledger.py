"""The folder where xdist workers leave their ledgers, read by the controller when a worker never reports back.

Each worker rewrites ``<folder>/<worker>.json`` after collection and after every committed batch (its format is
``channels``'s): its summary so far, the runs it collected and its pid. A worker that is killed, or cut off by
Ctrl-C before xdist relays its final summary, is still reported from its ledger, with counts that match the cache.
The folder is decided once, at configure, and given to the xdist glue (to tell the workers) and the reporter.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Any

from ..channels import ledger_pid, read_ledger
from ..records import CollectedRun, WorkerSummary


class Ledgers:
    """A temporary folder of worker ledgers: made on first use, removed by ``remove``; or one named before, which the
    first worker to write makes."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder: Path | None = folder

    def folder(self) -> Path:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="pytest-holistic-workers-"))
        return self._folder

    def _entries(self) -> list[dict[str, Any]]:
        found = []
        for path in sorted(self._folder.glob("*.json")) if self._folder is not None else []:
            try:
                found.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue  # a worker killed mid-write leaves no usable file
        return found

    def summaries(self) -> list[tuple[WorkerSummary, tuple[CollectedRun, ...]]]:
        """What each worker last wrote (counts so far, runs collected); damaged ledgers are left out."""
        found = []
        for data in self._entries():
            try:
                found.append(read_ledger(data))
            except (ValueError, KeyError, TypeError):
                continue  # from another version, or damaged: the worker's final summary, if it came, remains
        return found

    def interrupt_workers(self) -> None:
        """Send each worker Ctrl-C, so it stops now instead of finishing its shard."""
        for data in self._entries():
            pid = ledger_pid(data)
            if pid is not None and pid != os.getpid():
                try:
                    os.kill(pid, signal.SIGINT)
                except OSError:
                    continue  # already gone

    def remove(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
