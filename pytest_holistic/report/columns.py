"""The arrays population metrics take, read from item records: one extractor per ``Column``.

A metric gets one value per answered instance for each of its inputs; an instance that lacks any of
them (no probability, not a two-sentence pair, a score that was skipped) is left out of all of them
together, so the columns always line up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import metrics as registry
from ..errors import InternalError
from ..metrics.accuracy import normalize_text
from ..metrics.base import Column, Input, ScoresOf
from ..scenarios.bbq_tags import read_bbq_tags
from ..metrics.helm_classification import ClassAnswer
from ..plans import Completion
from ..records import ItemRecord
from ..scenarios.instance import Reference


def answer_of(record: ItemRecord) -> Completion:
    if record.completion is None:
        raise InternalError(f"a column was read from {record.nodeid}, which has no answer")
    return record.completion


def _correct_index(record: ItemRecord) -> int | None:
    indices = record.instance.correct_indices
    return indices[0] if indices else None


def _gold_label(record: ItemRecord) -> str:
    index = _correct_index(record)
    return record.instance.references[index].text if index is not None else ""


def _predicted_label(record: ItemRecord) -> str:
    completion = answer_of(record)
    labels = record.instance.choices
    if completion.predicted_index is not None and completion.predicted_index < len(labels):
        return labels[completion.predicted_index]
    wanted = normalize_text(completion.text)
    matches = [label for label in labels if normalize_text(label) == wanted]
    return matches[0] if matches else completion.text


def _class_answer(record: ItemRecord) -> ClassAnswer | None:
    """HELM's view of the answer for classification F1: the chosen option's text when options were offered, else the text.

    An answer that picks an option reads as HELM's multiple-choice rule does: the first correct option is the truth,
    and an answer naming no option (a joint answer that is no letter) stays its own text. An instance without a
    correct reference is left out (HELM refuses one). The text is the adapter's, stripped: HELM's generation rule sees
    the raw text, which differs only where a blank answer meets a label of punctuation alone (both empty in HELM's form).
    """
    completion = answer_of(record)
    instance = record.instance
    if not completion.choices:
        golds = instance.correct_references
        return ClassAnswer(golds, completion.text, False) if golds else None
    index = _correct_index(record)
    if index is None:
        return None
    chosen = completion.predicted_index
    prediction = instance.choices[chosen] if chosen is not None and chosen < len(instance.references) else completion.text
    return ClassAnswer((instance.references[index].text,), prediction, True)


def is_correct(record: ItemRecord) -> bool:
    """The chosen option is a right one (multiple choice), else the text exactly matches a reference.

    Exact match, not quasi: HELM's ``compute_calibration_metrics`` reads each instance's ``exact_match``, so a
    generated ``no`` against the reference ``No`` is wrong for calibration as it is for HELM.
    """
    completion = answer_of(record)
    if completion.correct is not None:
        return completion.correct
    return bool(registry.exact_match(completion.text, completion.gold))


def _pair_logprob(first: bool) -> Callable[[ItemRecord], float | None]:
    """The more (``first``) or less stereotypical sentence's log-probability, for two-option instances."""

    def extract(record: ItemRecord) -> float | None:
        logprobs = answer_of(record).choice_logprobs
        index = _correct_index(record)
        if len(logprobs) != 2 or index is None:
            return None
        return logprobs[index if first else 1 - index]

    return extract


def _bbq_answer(record: ItemRecord) -> tuple[bool, bool, str, bool] | None:
    """(ambiguous, negative, role of the chosen option, has a non-target option) for a BBQ-tagged instance.

    An empty answer gives None, so the instance leaves every column of the metric (HELM drops empty completions).
    """
    tags = read_bbq_tags(record.instance.tags)
    completion = answer_of(record)
    if tags is None or not completion.text.strip():
        return None
    index = completion.predicted_index
    if index is None:
        wanted = normalize_text(completion.text)
        index = next((k for k, label in enumerate(record.instance.choices) if normalize_text(label) == wanted), None)
    return (tags.ambiguous, tags.negative, tags.role(index), tags.non_target is not None)


def _document(value: Callable[[Completion], Any]) -> Callable[[ItemRecord], Any]:
    """A language-modeling answer's number (a document scored, ``num_bytes`` > 0); None for any other answer."""
    return lambda record: value(completion) if (completion := answer_of(record)).num_bytes > 0 else None


def _ranked(gain: Callable[[Reference], float]) -> Callable[[ItemRecord], list[float] | None]:
    """Per query, each passage's relevance in the order the model ranked them; None for an answer that ranked nothing."""

    def extract(record: ItemRecord) -> list[float] | None:
        ranking = answer_of(record).ranking
        references = record.instance.references
        if not ranking or any(index >= len(references) for index in ranking):
            return None
        return [gain(references[index]) for index in ranking]

    return extract


EXTRACTORS: Mapping[Column, Callable[[ItemRecord], Any]] = {
    Column.TEXT: lambda record: answer_of(record).text,
    Column.REFERENCES: lambda record: answer_of(record).gold,
    Column.GOLD_LABEL: _gold_label,
    Column.PREDICTED_LABEL: _predicted_label,
    Column.CONFIDENCE: lambda record: answer_of(record).probability,
    Column.CORRECT: is_correct,
    Column.NUM_CHOICES: lambda record: len(record.instance.references),
    Column.LOGPROB_MORE: _pair_logprob(first=True),
    Column.LOGPROB_LESS: _pair_logprob(first=False),
    Column.BBQ_ANSWER: _bbq_answer,
    Column.DOCUMENT_LOGPROB: _document(lambda completion: completion.logprob),
    Column.NUM_BYTES: _document(lambda completion: completion.num_bytes),
    Column.NUM_TOKENS: _document(lambda completion: completion.scored_tokens),
    Column.RANKED_RELEVANCES: _ranked(lambda reference: reference.gain),
    Column.RANKED_GOLD: _ranked(lambda reference: float(reference.correct)),
    Column.CLASS_ANSWER: _class_answer,
}


def _extractor(column: Input) -> Callable[[ItemRecord], Any]:
    if isinstance(column, ScoresOf):
        if column.nested:
            return lambda record: None if (value := record.scores.get(column.metric)) is None else [value]
        return lambda record: record.scores.get(column.metric)
    extractor = EXTRACTORS.get(column)
    if extractor is None:
        raise InternalError(f"no extractor for {column!r}; collection should have refused the metric that needs it")
    return extractor


def column_values(inputs: Sequence[Input], records: Sequence[ItemRecord]) -> list[list[Any]]:
    """One list per input, over the answered records that have every input, in the records' order."""
    extractors = [_extractor(column) for column in inputs]
    rows = []
    for record in records:
        if record.completion is None:
            continue
        values = [extract(record) for extract in extractors]
        if all(value is not None for value in values):
            rows.append(values)
    return [[row[k] for row in rows] for k in range(len(inputs))]
