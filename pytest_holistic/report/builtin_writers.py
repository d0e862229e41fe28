"""The report writers that come with pytest-holistic, registered the way a plugin registers its own.

The session needs the kinds' names (which formats ``--holistic-export`` knows) when its settings are read, in every
process, without loading any writer's code: the HTML page's styles and script, ElementTree for JUnit, the exporters'
converters. So each ``make`` here imports its module only when the writer is wanted, and nothing else names a writer
(``configure`` builds whatever is registered).

The three core writers are listed below. An export format is found by its module's name alone: a module
``report/export_NAME.py`` with a ``make(context)`` function is the format NAME (``command_line.export_formats``), so a
new format is that one module.
"""

from __future__ import annotations

import importlib
from typing import cast

from ..command_line import EXPORT_MODULE_PREFIX, JUNIT, export_formats
from ..writer_kinds import EXPORT, Writer, WriterContext, WriterKind


def _json(context: WriterContext) -> Writer:
    from .json_report import JsonWriter

    return JsonWriter(context.report_dir, context.model, context.run_id)


def _html(context: WriterContext) -> Writer:
    from .html_report import HtmlWriter  # the page's styles and script load on the controller only

    return HtmlWriter(context.report_dir, context.model, context.run_id)


def _junit(context: WriterContext) -> Writer:
    from .junit import JunitWriter  # ElementTree loads only when a JUnit file is asked for

    path = context.values[JUNIT]
    if path is None:  # the kind is wanted only when the option is given
        raise ValueError("the JUnit writer is made without --holistic-junit")
    return JunitWriter(path)


class _Export:
    """The ``make`` of an export format: its module's own, imported when the export is asked for."""

    def __init__(self, name: str) -> None:
        self.module = f"{__package__}.{EXPORT_MODULE_PREFIX}{name.replace('-', '_')}"

    def __call__(self, context: WriterContext) -> Writer:
        return cast(Writer, importlib.import_module(self.module).make(context))


BUILTIN_WRITERS: tuple[WriterKind, ...] = (
    WriterKind("json", _json),
    WriterKind("html", _html),
    WriterKind("junit", _junit, JUNIT),
    *(WriterKind(name, _Export(name), EXPORT) for name in export_formats()),
)
"""In the order they write: report.json, report.html, the ``--holistic-junit`` file, then the exports by name."""
