"""The model-scored metrics, model backends and report writers of one pytest session, with the options each declares.

Third-party ones are added by an implementation of the ``pytest_holistic_register`` hook: the plugin's own adds the
``pytest_holistic.models`` entry points; a plugin or the root ``conftest.py`` adds its own. Each addition puts its
options on pytest's parser at once, as a conftest's ``pytest_addoption`` would, so the options of a conftest loaded
after the plugin are still parsed. Once the settings are read nothing more can be added: its options could no longer
be given.

The built-in ones are declared at every start from light modules (``command_line``, ``builtin_options``) and join
the session only when the settings are read, before anything added through the hook, so a run with no eval in it
imports no metric, model or writer code. The built-in writers come from the report package, which this layer does
not import: the plugin hands over a function that loads them (``builtin_writers``), called at that moment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

import pytest

from typing import TYPE_CHECKING

from . import command_line, options
from .builtin_options import BUILTIN as BUILTIN_OPTIONS
from .errors import UserError
from .options import Option, Values

if TYPE_CHECKING:
    from .metrics.base import ScoredMetric
    from .models.registry import BackendKind, Backends
    from .writer_kinds import WriterKind

PLUGIN_NAME = "holistic-extensions"
"""The name the session's :class:`Extensions` is registered under in pytest's plugin manager."""


class Extensions:
    """Declares every option while pytest starts and collects the metrics, backends and writers added through the hook;
    ``read`` then parses every declared option once."""

    def __init__(self, parser: pytest.Parser, builtin_writers: Callable[[], Iterable[WriterKind]] = tuple) -> None:
        self.declared = command_line.add_options(parser)
        self._metrics: dict[str, ScoredMetric] = {}
        self._backends: list[BackendKind[Any]] = []
        self._writers: dict[str, WriterKind] = {}
        self._builtin_writers = builtin_writers
        self._options: dict[str, tuple[Option[Any], str]] = {}  # flag -> (option, who declared it first)
        self._options[command_line.JUNIT.flag] = (command_line.JUNIT, "report writer 'junit'")  # declared by add_options
        self._closed = False
        self._with_builtins = False
        for option, owner in BUILTIN_OPTIONS:
            self._declare(option, owner)

    def add_metric(self, metric: ScoredMetric) -> None:
        """A model-scored metric, usable in ``metrics=`` by its name; one registered again under its name replaces it."""
        self._still_open(f"model-scored metric {metric.name!r}")
        self._metrics[metric.name] = metric
        if metric.option is not None:
            self._declare(metric.option, f"metric {metric.name!r}")

    def add_backend(self, kind: BackendKind[Any]) -> None:
        """A kind of model backend; registered later than another for the same specs, it takes them over."""
        self._still_open(f"model backend {kind.name!r}")
        self._backends.append(kind)
        for option in kind.options:
            self._declare(option, f"model backend {kind.name!r}")

    def add_writer(self, kind: WriterKind) -> None:
        """A kind of report writer; one registered again under its name (a built-in one included) replaces it, and
        writes in its place."""
        self._still_open(f"report writer {kind.name!r}")
        self._writers[kind.name] = kind
        if kind.option is not None:
            self._declare(kind.option, f"report writer {kind.name!r}")

    def given(self, config: pytest.Config) -> list[str]:
        """The options of pytest-holistic (the core's, the built-ins' and the extensions') the user gave."""
        return self.declared.given(config)

    @property
    def metrics(self) -> Mapping[str, ScoredMetric]:
        self._add_builtins()
        return MappingProxyType(self._metrics)

    @property
    def backends(self) -> Backends:
        from .models.registry import Backends

        self._add_builtins()
        return Backends.of(self._backends)

    @property
    def writers(self) -> tuple[WriterKind, ...]:
        """Every registered kind of report writer, the built-in ones first, in registration order."""
        self._add_builtins()
        return tuple(self._writers.values())

    @property
    def exports(self) -> tuple[str, ...]:
        """The formats ``--holistic-export`` knows: the names of the registered kinds written when it names them."""
        from .writer_kinds import EXPORT

        return tuple(kind.name for kind in self.writers if kind.when == EXPORT)

    def read(self, config: pytest.Config) -> Values:
        """Every declared option's value, parsed (a bad one is a one-line UserError); closes the registration."""
        self._add_builtins()
        self._closed = True
        return Values(MappingProxyType({flag: options.read(config, option) for flag, (option, _) in self._options.items()}))

    def _add_builtins(self) -> None:
        """The built-in metrics and backends, ahead of those added through the hook (a later one of the same name or
        scheme takes over); their options were declared at start, from ``builtin_options``."""
        if self._with_builtins:
            return
        from .metrics import BUILTIN, POPULATION, SCORED
        from .models.builtin import BUILTIN_BACKENDS

        self._with_builtins = True
        for name in self._metrics:
            if name in BUILTIN or name in POPULATION:
                raise UserError(f"model-scored metric {name!r} has the name of a built-in metric; register it under another name")
        builtin_writers = tuple(self._builtin_writers())
        declared = (
            *(metric.option for metric in SCORED.values() if metric.option is not None),
            *(option for kind in BUILTIN_BACKENDS for option in kind.options),
            *(kind.option for kind in builtin_writers if kind.option is not None),
        )
        for option in declared:
            if self._options.get(option.flag, (None,))[0] is not option:
                raise RuntimeError(f"built-in option {option.flag} is not declared in builtin_options.BUILTIN")
        self._metrics = {**SCORED, **self._metrics}
        self._backends = [*BUILTIN_BACKENDS, *self._backends]
        self._writers = {**{kind.name: kind for kind in builtin_writers}, **self._writers}

    def _declare(self, option: Option[Any], owner: str) -> None:
        """One option may serve several owners (the three BERTScore metrics), when it is the very same declaration."""
        known = self._options.get(option.flag)
        if known is not None:
            if known[0] is not option:
                raise ValueError(f"option {option.flag} is declared by {known[1]} and, differently, by {owner}")
            return
        self._options[option.flag] = (option, owner)
        self.declared.option(option)

    def _still_open(self, what: str) -> None:
        if self._closed:
            from .printable import printable

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
