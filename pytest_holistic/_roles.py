"""Whether this process is an xdist worker, the one fact both roles are decided by, and the names of what a
controller hands each worker (``workerinput``), which a controller with no holistic work yet must give too."""

from __future__ import annotations

import secrets
import shutil
import tempfile
from pathlib import Path

import pytest

LEDGER = "holistic_ledger"
"""``workerinput`` key: the folder where each xdist worker keeps its ledger file."""
STOPS = "holistic_stops"
"""``workerinput`` key: the session's early-stop table (its file and the session's run id), which every worker reads
before computing an item of a run that may stop early (``stops.StopTable``)."""
ENGINE = "holistic_engine"
"""``workerinput`` key: the folder of the session's engine (``--model vllm:MODEL``), which every worker's model sends
its requests to (``models.engine``); absent when the model runs in each process."""
STOP_TABLE_FILE = "early-stops.sqlite"
"""The early-stop table's file name, beside the response cache or in the folder of worker ledgers."""


def is_worker(config: pytest.Config) -> bool:
    """True in an xdist worker; the controller (or a plain run) is the only process that writes reports."""
    return hasattr(config, "workerinput")


class Planned:
    """Where the workers of a controller not yet awake keep their ledgers and read the early-stop table: named at
    start (xdist configures each worker before any collects), made only by a worker that wakes."""

    def __init__(self) -> None:
        self.ledger_folder = Path(tempfile.gettempdir()) / f"pytest-holistic-workers-{secrets.token_hex(8)}"
        self.stops_session = self.ledger_folder.name

    @property
    def stop_table(self) -> Path:
        return self.ledger_folder / STOP_TABLE_FILE

    def some_worker_woke(self) -> bool:
        return self.ledger_folder.is_dir() and any(self.ledger_folder.glob("*.json"))

    def remove(self) -> None:
        shutil.rmtree(self.ledger_folder, ignore_errors=True)
