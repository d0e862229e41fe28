"""Turn one raw row (a JSONL/CSV line, a hub dataset row) into an Instance.

Shipped data files keep the field names of the public dataset they stand in for, so one ``Fields``
mapping serves both the local file and the hub dataset.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from string import Formatter
from typing import Any

from ..errors import ScenarioError
from .instance import Contrast, Instance, Reference


@dataclass(frozen=True)
class Fields:
    """Where each part of an instance lives in a row.

    ``input`` is a column name or a ``str.format`` template over columns
    (``"{passage}\\nQuestion: {question}?"``). ``choices`` is a column holding a list, or a tuple of
    columns; ``answer`` is the index or text of the right choice, or a label mapped through ``labels``
    (``{True: "Yes", False: "No"}``), which also makes every label name an option.
    ``contrasts`` is a column holding the row's contrast-set edits (Gardner et al. 2020), each a partial row
    that overrides some columns (``[{"question": "...", "answer": true}]``) and changes the gold answer;
    rows without it have none.
    ``id`` is a column, or a template over columns plus ``{index}`` (the row's position in its file or hub split)
    and ``{split}``: ``"{subject}-{index:05d}"`` gives hub rows without an id ids that ``-k anatomy`` selects.
    ``references`` may hold objects ``{"text": ..., "correct": ..., "relevance": 2}``: ``relevance`` is a graded
    judgment that ranking metrics read (TREC's 0-3); ``prepare`` can build such a list from a nested row.
    ``prepare`` turns a row of a real dataset's nested schema into the flat columns named here (NaturalQuestions'
    token lists into a passage, say), before any other field is read; it runs on the shipped file's rows too, so
    one mapping serves both. It may raise ``ValueError``/``KeyError`` for a row it cannot read: the error names
    the row and the fix.
    """

    id: str = "id"
    input: str = "input"
    references: str = "references"
    choices: str | tuple[str, ...] | None = None
    answer: str | None = None
    labels: Mapping[Any, str] | None = None
    split: str = "split"
    group: str | None = "group"
    tags: str = "tags"
    contrasts: str | None = "contrast"
    prepare: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None

    def to_instance(self, row: Mapping[str, Any], index: int, default_split: str, origin: str) -> Instance:
        """Build the instance for ``row``; ``origin`` (file:line, hub split/index) goes into errors."""
        try:
            return self._build(row, index, default_split)
        except ScenarioError as error:
            raise ScenarioError(f"{origin}: {error}") from None
        except (ValueError, TypeError, IndexError, AttributeError) as error:
            raise ScenarioError(f"{origin}: {error}; fix the row or the scenario's Fields(...) mapping") from None
        except KeyError as error:
            raise ScenarioError(
                f"{origin}: row has no field {error.args[0]!r} (fields present: {', '.join(map(str, row))}); "
                "fix the row or the scenario's Fields(...) mapping"
            ) from None

    def _prepared(self, row: Mapping[str, Any]) -> Mapping[str, Any]:
        return self.prepare(row) if self.prepare is not None else row

    def _build(self, raw: Mapping[str, Any], index: int, default_split: str) -> Instance:
        row = self._prepared(raw)
        instance = self._build_one(row, index, default_split)
        column = self.contrasts
        edits = row.get(column) if column else None
        if not column or not edits:
            return instance
        example = '[{"question": "...", "answer": true}]'
        if isinstance(edits, str):
            try:
                edits = json.loads(edits)
            except ValueError:
                raise ScenarioError(
                    f"field {self.contrasts!r} holds text that is not JSON; give a list of partial rows, e.g. {example}"
                ) from None
        if isinstance(edits, Mapping):
            edits = [edits]
        if not isinstance(edits, list) or not all(isinstance(edit, Mapping) for edit in edits):
            raise ScenarioError(f"field {self.contrasts!r} must be a list of partial rows (objects), e.g. {example}")
        contrasts = []
        for number, edit in enumerate(edits, 1):
            unknown = sorted(str(key) for key in edit if key not in row and key not in raw)
            if unknown:
                raise ScenarioError(
                    f"contrast {number} in field {self.contrasts!r} edits column(s) {', '.join(map(repr, unknown))} the row "
                    f"does not have (columns: {', '.join(str(key) for key in row if key != self.contrasts)}); "
                    "a contrast overrides columns of its row"
                )
            changed = self._build_one(self._edited(raw, row, {**edit, column: None}), index, default_split)
            if changed.input == instance.input and changed.references == instance.references:
                raise ScenarioError(
                    f"contrast {number} in field {self.contrasts!r} leaves the instance as it is; "
                    "a contrast changes the input and, with it, the gold answer"
                )
            contrasts.append(Contrast(changed.input, changed.references))
        return replace(instance, contrasts=tuple(contrasts))

    def _edited(self, raw: Mapping[str, Any], row: Mapping[str, Any], edit: Mapping[str, Any]) -> Mapping[str, Any]:
        """The row a contrast edit makes: an edit of the raw row's columns goes through ``prepare`` as the row did
        (HELM builds a contrast input with the function that built the original's); one of prepared columns does not."""
        if all(key in raw for key in edit):
            return self._prepared({**raw, **edit})
        return {**row, **edit}

    def _build_one(self, row: Mapping[str, Any], index: int, default_split: str) -> Instance:
        split = _text(self.split, row.get(self.split) or default_split)
        if "{" in self.id:
            instance_id = self._format("id", self.id, row, {"index": index, "split": split})
        else:
            raw_id = row.get(self.id)
            instance_id = _text(self.id, raw_id) if raw_id not in (None, "") else f"{split}-{index:05d}"
        text = self._input(row)
        group = row.get(self.group) if self.group else None
        if isinstance(group, bool):  # a flag column: "challenging" / "not challenging" reads better than "True" / "False"
            group = self.group if group else f"not {self.group}"
        tags = row.get(self.tags) or ()
        if isinstance(tags, str):
            tags = tuple(tag for tag in tags.split(",") if tag)
        elif not isinstance(tags, list | tuple):
            raise ScenarioError(f"field {self.tags!r} is {_kind(tags)}; expected a list of texts or comma-separated text")
        group_text = None if group in (None, "") else _text(str(self.group), group)
        tag_texts = tuple(_text(self.tags, tag) for tag in tags)
        if self.labels is not None:
            label = _label_name(self.labels, row[self.answer or "label"])
            references = tuple(Reference(name, name == label) for name in dict.fromkeys(self.labels.values()))
            return Instance(instance_id, text, references, split=split, group=group_text, tags=tag_texts)
        if self.choices is not None:
            choices = self._choices(row, self.choices)
            answer = row[self.answer or "answer"]
            if isinstance(answer, str) and answer.strip().lstrip("-").isdigit() and answer not in choices:
                answer = int(answer)
            return Instance.multiple_choice(instance_id, text, choices, answer, split=split, group=group_text, tags=tag_texts)
        references = _references(_present(row, self.references), self.references)
        return Instance(instance_id, text, references, split=split, group=group_text, tags=tag_texts)

    def _input(self, row: Mapping[str, Any]) -> str:
        if "{" not in self.input:
            return _text(self.input, _present(row, self.input))
        return self._format("input", self.input, row)

    @staticmethod
    def _format(field: str, template: str, row: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> str:
        """``template`` filled from the row's columns (and ``extra``: the row's ``index`` and ``split`` for ids)."""
        try:
            names = {_column(name) for _, name, _, _ in Formatter().parse(template) if name is not None}
        except ValueError as error:
            raise ScenarioError(
                f"Fields({field}={template!r}) is not a valid template ({error}); write columns as {{name}}"
            ) from None
        if "" in names or any(name.isdigit() for name in names):
            raise ScenarioError(f"Fields({field}={template!r}) has a positional field; name a column, as in {{question}}")
        given = dict(extra or {})
        values = {name: given[name] if name in given else _present(row, name) for name in names}
        for _, name, _, _ in Formatter().parse(template):
            if name is not None:  # each filled value, after any .attribute or [index], must be text or a number
                _text(name, Formatter().get_field(name, (), values)[0])
        return template.format(**values)

    @staticmethod
    def _choices(row: Mapping[str, Any], spec: str | tuple[str, ...]) -> list[str]:
        if isinstance(spec, tuple):
            return [_text(column, row[column]) for column in spec]
        value = row[spec]
        if isinstance(value, str):
            value = json.loads(value)
        if not isinstance(value, list | tuple):
            raise ScenarioError(f"field {spec!r} is {_kind(value)}; expected a list of options")
        return [_text(f"{spec}[{number}]", choice) for number, choice in enumerate(value)]


def _column(field_name: str) -> str:
    """The column a template field reads: ``passage`` for ``{passage}``, ``{passage.title}`` and ``{passage[0]}``."""
    return field_name.split(".", 1)[0].split("[", 1)[0]


def _kind(value: Any) -> str:
    """A value's kind in JSON's words, for errors."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    return "null" if value is None else f"a {type(value).__name__}"


def _text(name: str, value: Any) -> str:
    """A text field's value: text, or a number as written; a list or an object would become a Python repr."""
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return str(value)
    raise ScenarioError(f"field {name!r} is {_kind(value)}; expected text or a number")


def _present(row: Mapping[str, Any], name: str) -> Any:
    """The row's value for ``name``; a null (JSON null, a missing CSV cell) is an error, never the text 'None'."""
    value = row[name]
    if value is None:
        raise ScenarioError(f"field {name!r} is null; give it a value or fix the scenario's Fields(...) mapping")
    return value


def _label_name(labels: Mapping[Any, str], value: Any) -> str:
    if value in labels:
        return labels[value]
    text = str(value).strip().lower()
    for key, name in labels.items():
        spellings = {str(key).lower()} | ({str(int(key))} if isinstance(key, bool) else set())
        if text in spellings:
            return name
    raise ScenarioError(f"label {value!r} is not one of {list(labels)!r}; extend Fields(labels=...)")


def _references(value: Any, name: str) -> tuple[Reference, ...]:
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            return (Reference(value, True),)
        value = decoded if isinstance(decoded, list) else [value]
    references = []
    for item in value if isinstance(value, list | tuple) else [value]:
        if isinstance(item, Mapping):
            if "text" not in item:
                raise ScenarioError(
                    f"reference {item!r} has no 'text'; write strings or {{'text': ..., 'correct': ..., 'relevance': ...}}"
                )
            grade = item.get("relevance")
            if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int | float)):
                shown = str(item["text"])[:40]
                raise ScenarioError(f"reference {shown!r}: relevance {grade!r} must be a number (a graded judgment)")
            references.append(Reference(_text(f"{name}.text", item["text"]), bool(item.get("correct", True)), grade))
        else:
            references.append(Reference(_text(name, item), True))
    return tuple(references)
