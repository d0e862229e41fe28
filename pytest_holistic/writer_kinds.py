"""A kind of report writer, declared like a kind of model backend: its name, when it is wanted, how it is made.

The controller builds its writers from the kinds registered in the session (``Extensions.add_writer``, in a
``pytest_holistic_register`` hook, as backends), with no code of its own per writer. The built-in kinds are listed in
``report/builtin_writers.py`` and join the session when its settings are read, ahead of those added through the hook:
a later registration of the same name takes the writer over.

A kind is wanted in one of three ways (``when``):

- ``ALWAYS``: every session with holistic work writes it (report.json, report.html);
- ``EXPORT``: when ``--holistic-export NAME`` (or the ini's ``holistic_export`` line) names it;
- an :class:`~pytest_holistic.options.Option`, the kind's own, declared with it like a backend's: when its parsed
  value is not None (``--holistic-junit PATH``); the writer reads the value from its context.

This module is what a third party needs to declare a writer; it imports no writer code, so declaring a kind loads
nothing of the report package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from .options import Option, Values

ALWAYS: Literal["always"] = "always"
"""Written in every session with holistic work."""
EXPORT: Literal["export"] = "export"
"""Written when ``--holistic-export`` names the kind."""


class Writer(Protocol):
    """One output file (``report.outputs.Writer``, whose ``results`` is the controller's ``Results`` and ``payload`` a
    ``report.payload.Report``: typed there, since this layer imports nothing of the report package); ``problem`` is a
    one-line note when it had to be written somewhere else or could not be written."""

    name: str
    problem: str | None

    def write(self, results: Any, payload: Any) -> Path: ...


@dataclass(frozen=True)
class WriterContext:
    """What a writer is made from: the report folder, the model's spec as it may be shown (secrets scrubbed), the
    session's run id, the export formats asked for and the parsed value of every declared option."""

    report_dir: Path
    model: str
    run_id: str
    exports: tuple[str, ...] = ()
    values: Values = Values()


@dataclass(frozen=True)
class WriterKind:
    """One kind of report writer: ``make(context)`` is called once on the controller, when the session's writers are
    built, if the kind is wanted (see the module's docstring for ``when``)."""

    name: str
    make: Callable[[WriterContext], Writer]
    when: Literal["always", "export"] | Option[Any] = ALWAYS

    @property
    def option(self) -> Option[Any] | None:
        """The kind's own option, if it is wanted when that option is given."""
        return self.when if isinstance(self.when, Option) else None

    def wanted(self, context: WriterContext) -> bool:
        if self.when == ALWAYS:
            return True
        if self.when == EXPORT:
            return self.name in context.exports
        return context.values[self.when] is not None


def wanted_writers(kinds: tuple[WriterKind, ...], context: WriterContext) -> list[Writer]:
    """The writers of the wanted kinds, made in registration order (the built-ins first), which is the order they write in."""
    return [kind.make(context) for kind in kinds if kind.wanted(context)]
