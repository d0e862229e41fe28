"""Hooks that suites and plugins implement to extend pytest-holistic."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .extensions import Extensions


@pytest.hookspec(historic=True)
def pytest_holistic_register(extensions: Extensions) -> None:
    """Register model-scored metrics (``extensions.add_metric``) and model backends (``extensions.add_backend``).

    Each brings its own options, which pytest then parses like its own. Called once per plugin while pytest adds its
    options, and for the root ``conftest.py`` when it is loaded (as ``pytest_addoption`` is). pytest-holistic's own
    implementation runs first and registers the built-in ones, so a later registration can take over a metric's
    name or a backend's scheme.
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
    """Called on the controller with one process's summary (requests computed, cache hits, device), as plain data."""


def pytest_holistic_report_written(config: pytest.Config, path: Any, report: dict[str, Any]) -> None:
    """Called on the controller after ``report.json`` was written, with its path and content."""


def pytest_holistic_runs_collected(config: pytest.Config, runs: list[dict[str, Any]]) -> None:
    """Called in a process without xdist workers once collection is done, with every run collection built.

    Each entry is a run's description plus how many items it had before and after deselection, so the
    reporter can decide every gate, also those of a scenario with no item left. (An xdist worker sends the
    same list with its summary instead.)
    """
