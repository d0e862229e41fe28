"""Hooks that suites and plugins implement to extend pytest-holistic, and the messages the reporter receives.

The messages (``worker_finished``, ``item_recorded``, ``items_expected``, ``worker_lost``, ``runs_collected``) are how
every process and the xdist glue reach the reporter; ``channels`` says which carries each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .extensions import Extensions
    from .records import ItemRecord, RunHeader


@pytest.hookspec(historic=True)
def pytest_holistic_register(extensions: Extensions) -> None:
    """Register model-scored metrics (``extensions.add_metric``), model backends (``extensions.add_backend``) and
    report writers (``extensions.add_writer``, a ``WriterKind``).

    Each brings its own options, which pytest then parses like its own. Called once per plugin while pytest adds its
    options, and for the root ``conftest.py`` when it is loaded (as ``pytest_addoption`` is). pytest-holistic's own
    implementation runs first and registers the built-in ones, so a later registration can take over a metric's
    name, a backend's scheme or a writer's name.
    """


@pytest.hookspec(firstresult=True)
def pytest_holistic_make_model(config: pytest.Config, name: str) -> Any:
    """Return the model backend for the ``--model`` string ``name``, or None to let the registry resolve it.

    Either a backend (``identify()`` -> ``ModelInfo`` or None, without loading; ``load()`` -> model), which
    the response cache can key without loading it, or an already built model following
    :class:`pytest_holistic.models.Model` (``info``, ``generate``, ``loglikelihood`` and their ``*_batches``
    streams; subclass :class:`pytest_holistic.models.BatchStreaming` to write only the streams). Asked once
    per process, when the model is first needed.
    """


def pytest_holistic_worker_finished(config: pytest.Config, summary: dict[str, Any]) -> None:
    """Called on the controller with one process's summary (requests computed, cache hits, device), as plain data.

    At -n 0 the process sends it itself; under xdist the controller relays it from the worker's ``workeroutput``.
    """


def pytest_holistic_item_recorded(config: pytest.Config, record: ItemRecord, header: RunHeader | None) -> None:
    """Called on the controller with one item's ``ItemRecord`` and, with a run's first record from a process, its
    ``RunHeader`` (else None).

    At -n 0 the process sends the objects it made; under xdist the controller rebuilds them from the worker's report.
    """


def pytest_holistic_items_expected(config: pytest.Config, nodeids: list[str]) -> None:
    """Called on the xdist controller with the items the run means to run (the first worker's collection)."""


def pytest_holistic_worker_lost(config: pytest.Config, worker: str, reason: str) -> None:
    """Called on the xdist controller when a worker died (killed, crashed) instead of finishing, with why, in a line."""


def pytest_holistic_report_written(config: pytest.Config, path: Any, report: dict[str, Any]) -> None:
    """Called on the controller after ``report.json`` was written, with its path and content."""


def pytest_holistic_runs_collected(config: pytest.Config, runs: list[dict[str, Any]]) -> None:
    """Called on the controller once a process's collection is done, with every run collection built.

    Each entry is a run's description plus how many items it had before and after deselection, so the
    reporter can decide every gate, also those of a scenario with no item left. Under xdist the controller relays
    each finished worker's list from its ``workeroutput``.
    """
