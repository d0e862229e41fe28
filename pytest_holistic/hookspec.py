"""Hooks that suites and plugins implement to extend pytest-holistic."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec(firstresult=True)
def pytest_holistic_make_model(config: pytest.Config, name: str) -> Any:
    """Return a model for the ``--model`` string ``name``, or None to let the built-in resolution run.

    The object must follow :class:`pytest_holistic.models.Model`: ``info``, ``generate(requests)`` and
    ``loglikelihood(requests)``, each answering a whole list at once.
    """


def pytest_holistic_report_written(config: pytest.Config, path: Any, report: dict[str, Any]) -> None:
    """Called on the controller after ``report.json`` was written, with its path and content."""
