"""The model-scored metrics and model backends of one pytest session, with the options each declares.

Built-in and third-party ones are added the same way, by an implementation of the ``pytest_holistic_register``
hook: the plugin's own adds its metrics, its backends and the ``pytest_holistic.models`` entry points; a plugin or
the root ``conftest.py`` adds its own. Each addition puts its options on pytest's parser at once, as a conftest's
``pytest_addoption`` would, so the options of a conftest loaded after the plugin are still parsed. Once the
settings are read (``pytest_configure``) nothing more can be added: its options could no longer be given.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest

from . import options
from .errors import UserError
from .metrics import BUILTIN, POPULATION
from .metrics.base import ScoredMetric
from .models.registry import BackendKind, Backends
from .options import Option, Values
from .printable import printable

PLUGIN_NAME = "holistic-extensions"
"""The name the session's :class:`Extensions` is registered under in pytest's plugin manager."""


class Extensions:
    """Collects metrics and backends while pytest starts; ``read`` then parses every declared option once."""

    def __init__(self, parser: pytest.Parser) -> None:
        self._parser = parser
        self._metrics: dict[str, ScoredMetric] = {}
        self._backends: list[BackendKind[Any]] = []
        self._options: dict[str, tuple[Option[Any], str]] = {}  # flag -> (option, who declared it first)
        self._closed = False

    def add_metric(self, metric: ScoredMetric) -> None:
        """A model-scored metric, usable in ``metrics=`` by its name; one registered again under its name replaces it."""
        self._still_open(f"model-scored metric {metric.name!r}")
        if metric.name in BUILTIN or metric.name in POPULATION:
            raise ValueError(f"model-scored metric {metric.name!r} has the name of a built-in metric; choose another")
        self._metrics[metric.name] = metric
        if metric.option is not None:
            self._declare(metric.option, f"metric {metric.name!r}")

    def add_backend(self, kind: BackendKind[Any]) -> None:
        """A kind of model backend; registered later than another for the same specs, it takes them over."""
        self._still_open(f"model backend {kind.name!r}")
        self._backends.append(kind)
        for option in kind.options:
            self._declare(option, f"model backend {kind.name!r}")

    @property
    def metrics(self) -> Mapping[str, ScoredMetric]:
        return MappingProxyType(self._metrics)

    @property
    def backends(self) -> Backends:
        return Backends.of(self._backends)

    def read(self, config: pytest.Config) -> Values:
        """Every declared option's value, parsed (a bad one is a one-line UserError); closes the registration."""
        self._closed = True
        return Values(MappingProxyType({flag: options.read(config, option) for flag, (option, _) in self._options.items()}))

    def _declare(self, option: Option[Any], owner: str) -> None:
        """One option may serve several owners (the three BERTScore metrics), when it is the very same declaration."""
        known = self._options.get(option.flag)
        if known is not None:
            if known[0] is not option:
                raise ValueError(f"option {option.flag} is declared by {known[1]} and, differently, by {owner}")
            return
        self._options[option.flag] = (option, owner)
        options.declare(self._parser, option)

    def _still_open(self, what: str) -> None:
        if self._closed:
            raise LateRegistration(
                printable(
                    f"pytest-holistic: {what} was registered after pytest-holistic read its options "
                    "(by a conftest.py below the root folder?); register it in the root conftest.py or in a plugin"
                )
            )


class LateRegistration(UserError, pytest.Collector.CollectError):
    """An addition once the options are read: most often a sub-folder conftest, loaded while pytest collects.

    Raised there, pytest shows a collection error's message as the whole report of that folder (one line, no
    traceback, exit status 2); raised anywhere else it is a :class:`UserError` like any other.
    """


def session_extensions(config: pytest.Config) -> Extensions:
    """The session's extensions, registered by the plugin when pytest added its options."""
    found = config.pluginmanager.get_plugin(PLUGIN_NAME)
    if not isinstance(found, Extensions):
        raise TypeError(f"pytest-holistic's extensions are not registered as {PLUGIN_NAME!r}: its pytest_addoption did not run")
    return found
