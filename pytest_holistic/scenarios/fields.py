"""Turn one raw row (a JSONL/CSV line, a hub dataset row) into an Instance.

Shipped data files keep the field names of the public dataset they stand in for, so one ``Fields``
mapping serves both the local file and the hub dataset.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from string import Formatter
from typing import Any

from ..errors import ScenarioError
from .instance import Instance, Reference


@dataclass(frozen=True)
class Fields:
    """Where each part of an instance lives in a row.

    ``input`` is a column name or a ``str.format`` template over columns
    (``"{passage}\\nQuestion: {question}?"``). ``choices`` is a column holding a list, or a tuple of
    columns; ``answer`` is the index or text of the right choice, or a label mapped through ``labels``
    (``{True: "Yes", False: "No"}``), which also makes every label name an option.
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

    def to_instance(self, row: Mapping[str, Any], index: int, default_split: str, origin: str) -> Instance:
        """Build the instance for ``row``; ``origin`` (file:line, hub split/index) goes into errors."""
        try:
            return self._build(row, index, default_split)
        except ScenarioError as error:
            raise ScenarioError(f"{origin}: {error}") from None
        except (ValueError, TypeError) as error:
            raise ScenarioError(f"{origin}: {error}; fix the row or the scenario's Fields(...) mapping") from None
        except KeyError as error:
            raise ScenarioError(
                f"{origin}: row has no field {error.args[0]!r} (fields present: {', '.join(map(str, row))}); "
                "fix the row or the scenario's Fields(...) mapping"
            ) from None

    def _build(self, row: Mapping[str, Any], index: int, default_split: str) -> Instance:
        split = str(row.get(self.split) or default_split)
        raw_id = row.get(self.id)
        instance_id = str(raw_id) if raw_id not in (None, "") else f"{split}-{index:05d}"
        text = self._input(row)
        group = row.get(self.group) if self.group else None
        tags = row.get(self.tags) or ()
        if isinstance(tags, str):
            tags = tuple(tag for tag in tags.split(",") if tag)
        common = {"split": split, "group": None if group in (None, "") else str(group), "tags": tuple(tags)}
        if self.labels is not None:
            label = _label_name(self.labels, row[self.answer or "label"])
            references = tuple(Reference(name, name == label) for name in dict.fromkeys(self.labels.values()))
            return Instance(instance_id, text, references, **common)
        if self.choices is not None:
            choices = self._choices(row)
            answer = row[self.answer or "answer"]
            if isinstance(answer, str) and answer.strip().lstrip("-").isdigit() and answer not in choices:
                answer = int(answer)
            return Instance.multiple_choice(instance_id, text, choices, answer, **common)
        return Instance(instance_id, text, _references(row[self.references]), **common)

    def _input(self, row: Mapping[str, Any]) -> str:
        if "{" not in self.input:
            return str(row[self.input])
        names = [name for _, name, _, _ in Formatter().parse(self.input) if name]
        return self.input.format(**{name: row[name] for name in names})

    def _choices(self, row: Mapping[str, Any]) -> list[str]:
        if isinstance(self.choices, tuple):
            return [str(row[column]) for column in self.choices]
        value = row[self.choices]
        if isinstance(value, str):
            value = json.loads(value)
        return [str(choice) for choice in value]


def _label_name(labels: Mapping[Any, str], value: Any) -> str:
    if value in labels:
        return labels[value]
    text = str(value).strip().lower()
    for key, name in labels.items():
        spellings = {str(key).lower()} | ({str(int(key))} if isinstance(key, bool) else set())
        if text in spellings:
            return name
    raise ScenarioError(f"label {value!r} is not one of {list(labels)!r}; extend Fields(labels=...)")


def _references(value: Any) -> tuple[Reference, ...]:
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            return (Reference(value, True),)
        value = decoded if isinstance(decoded, list) else [value]
    references = []
    for item in value if isinstance(value, list | tuple) else [value]:
        if isinstance(item, Mapping):
            references.append(Reference(str(item["text"]), bool(item.get("correct", True))))
        else:
            references.append(Reference(str(item), True))
    return tuple(references)
