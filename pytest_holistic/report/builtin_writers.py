"""The report writers that come with pytest-holistic, registered the way a plugin registers its own.

One list, because the session needs the kinds' names (which formats ``--holistic-export`` knows) when its settings are
read, in every process, without loading any writer's code: the HTML page's styles and script, ElementTree for JUnit,
the exporters' converters. So a built-in writer is its module plus one entry here, whose ``make`` imports the module
only when the writer is wanted; nothing else names it (``configure`` builds whatever is registered).
"""

from __future__ import annotations

from ..command_line import JUNIT
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


def _every_eval_ever(context: WriterContext) -> Writer:
    from .export_every_eval_ever import EveryEvalEverWriter  # loads only when the export is asked for

    return EveryEvalEverWriter(context.report_dir, context.model, context.run_id)


def _inspect(context: WriterContext) -> Writer:
    from .export_inspect import InspectWriter

    return InspectWriter(context.report_dir, context.model, context.run_id)


BUILTIN_WRITERS: tuple[WriterKind, ...] = (
    WriterKind("json", _json),
    WriterKind("html", _html),
    WriterKind("junit", _junit, JUNIT),
    WriterKind("every-eval-ever", _every_eval_ever, EXPORT),
    WriterKind("inspect", _inspect, EXPORT),
)
"""In the order they write: report.json, report.html, the ``--holistic-junit`` file, then the exports."""
