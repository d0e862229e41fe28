"""The reference's option and metric tables, generated from the code so they cannot drift from it.

An MkDocs hook (``hooks:`` in mkdocs.yml): a page line ``<!-- generated: options -->`` or ``<!-- generated: metrics -->``
becomes the table at build time. ``python docs/gen_tables.py options|metrics`` prints one. The options are read as
pytest reads them: ``command_line.add_options`` and the options of the built-in model-scored metrics and backends
(``builtin_options.BUILTIN``, with who declares each), each given a parser that records what is added. The metrics come from the registries ``BUILTIN``, ``POPULATION`` and ``SCORED``.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the checkout's package, also when another copy is installed
    sys.path.insert(0, str(ROOT))
import pytest_holistic  # noqa: F401 (bound now: MkDocs restores sys.path once the hook is loaded)

MARKER = re.compile(r"^<!-- generated: (\w+) -->$", re.MULTILINE)


@dataclass
class Row:
    """One command-line option: its flags, ini key, default, help and who declares it."""

    flags: tuple[str, ...]
    dest: str
    help: str
    default: Any
    metavar: str | None
    choices: tuple[str, ...] | None
    owner: str
    ini: str | None = None
    ini_default: Any = None


@dataclass
class Recorder:
    """Stands in for ``pytest.Parser`` and its option group: records every option and ini key added."""

    owner: str = "pytest-holistic"
    rows: list[Row] = field(default_factory=list)
    inis: dict[str, tuple[str, Any]] = field(default_factory=dict)

    def getgroup(self, name: str, description: str = "", after: str | None = None) -> Recorder:
        return self

    def addoption(self, *flags: str, **attrs: Any) -> None:
        dest = attrs.get("dest") or flags[0].lstrip("-").replace("-", "_")
        choices = attrs.get("choices")
        self.rows.append(
            Row(
                flags,
                dest,
                attrs.get("help", ""),
                attrs.get("default"),
                attrs.get("metavar"),
                tuple(choices) if choices else None,
                self.owner,
            )
        )

    def addini(self, name: str, help: str, type: str | None = None, default: Any = None) -> None:
        self.inis[name] = (help, default)


def option_rows() -> tuple[list[Row], dict[str, tuple[str, Any]]]:
    """Every option, in declaration order, with the ini key of the same name; and the ini keys no option has."""
    from pytest_holistic import options
    from pytest_holistic.builtin_options import BUILTIN
    from pytest_holistic.command_line import add_options

    recorder = Recorder()
    add_options(recorder)  # type: ignore[arg-type]
    for option, owner in BUILTIN:
        recorder.owner = owner.replace("'", "`")
        options.declare(recorder, option)  # type: ignore[arg-type]
    inis = dict(recorder.inis)
    for row in recorder.rows:
        if row.dest in inis:
            row.ini = row.dest
            row.ini_default = inis.pop(row.dest)[1]
    return recorder.rows, inis


def _cell(text: str) -> str:
    """Text for one table cell: pipes and angle brackets escaped, ``code`` as Markdown code, one line."""
    text = re.sub(r"``(.+?)``", r"`\1`", " ".join(str(text).split()))
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _default(row: Row) -> str:
    for value in (row.ini_default, row.default):
        if value not in (None, "", [], False):
            return f"`{value}`" if not isinstance(value, list) else ", ".join(f"`{v}`" for v in value)
    return ""


def options_markdown() -> str:
    rows, inis = option_rows()
    lines = [
        "| option | ini key | default | meaning | declared by |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        value = row.metavar or ("|".join(row.choices) if row.choices else None)
        flags = ", ".join(f"`{flag}`" for flag in row.flags)
        if value is not None and not isinstance(row.default, bool):
            flags += f" `{value}`".replace("|", "\\|")
        ini = f"`{row.ini}`" if row.ini else ""
        lines.append(f"| {flags} | {ini} | {_default(row)} | {_cell(row.help)} | {row.owner} |")
    if inis:
        lines += ["", "Ini keys without a command-line option:", "", "| ini key | default | meaning |", "| --- | --- | --- |"]
        for name, (help_text, default) in inis.items():
            shown = f"`{default}`" if default not in (None, "", [], False) else ""
            lines.append(f"| `{name}` | {shown} | {_cell(help_text)} |")
    return "\n".join(lines)


def _number(value: float) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:g}"


def _definition(function: Any) -> str:
    """The first paragraph of the metric function's docstring."""
    doc = (getattr(function, "__doc__", None) or "").strip()
    return doc.split("\n\n")[0]


def metric_entries() -> list[tuple[str, str, str, str, str, str, str]]:
    """(family, name, kind, better, range, computed from, definition, source) for every registered metric."""
    from pytest_holistic.metrics import BUILTIN, POPULATION, SCORED

    entries = []
    infos = [*BUILTIN.values(), *POPULATION.values(), *(metric.info for metric in SCORED.values())]
    options = {metric.name: metric.option for metric in SCORED.values()}
    for info in infos:
        kind = {"instance": "per answer", "population": "over the run", "scored": "per answer, by a scoring model"}[info.kind]
        option = options.get(info.name)
        if option is not None:
            kind += f" (`{option.flag}`)"
        better = {"higher": "higher ↑", "lower": "lower ↓"}.get(info.direction) or f"closest to {info.optimum:g}"
        low, high = info.bounds
        inputs = "; ".join(column.value for column in info.inputs)
        entries.append(
            (
                info.family,
                info.name,
                kind,
                better,
                f"[{_number(low)}, {_number(high)}]",
                inputs,
                _definition(info.function),
                info.citation,
            )
        )
    return entries


def metrics_markdown() -> str:
    from pytest_holistic.metrics.base import EFFICIENCY, FAMILIES

    entries = metric_entries()
    lines: list[str] = []
    for family in FAMILIES:
        rows = [entry for entry in entries if entry[0] == family]
        if family == "efficiency":
            lines += [
                "",
                "### efficiency",
                "",
                "Every run, from the timings and token counts of its requests: "
                + ", ".join(f"`{name}`" for name in EFFICIENCY)
                + ".",
            ]
            continue
        if not rows:
            continue
        lines += [
            "",
            f"### {family}",
            "",
            "| metric | computed | better | range | from | definition | source |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for _, name, kind, better, bounds, inputs, definition, source in rows:
            lines.append(f"| `{name}` | {kind} | {better} | {bounds} | {_cell(inputs)} | {_cell(definition)} | {_cell(source)} |")
    return "\n".join(lines).strip("\n")


GENERATORS = {"options": options_markdown, "metrics": metrics_markdown}


def expand(markdown: str) -> str:
    """``markdown`` with every ``<!-- generated: NAME -->`` line replaced by its table (an unknown NAME raises)."""
    return MARKER.sub(lambda match: GENERATORS[match.group(1)](), markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The MkDocs hook."""
    return expand(markdown)


if __name__ == "__main__":
    print(GENERATORS[sys.argv[1]]() if len(sys.argv) > 1 else expand(sys.stdin.read()))
