"""Row functions (``Fields(prepare=...)``) that flatten HELM's QA datasets from their hub schema into prompt columns.

Each function takes one row in the nested layout of the real Hugging Face dataset and returns the flat columns a
suite's ``Fields`` reads: ``id``, ``split`` where the function decides it, the text pieces of the prompt, and
``references``. The shipped offline files use the same nested layout, so one function serves both sources.

Facts carried over (HELM, stanford-crfm/helm, src/helm/benchmark/scenarios/):
* imdb_scenario.py: the review is stripped (HELM reads each review file and strips it).
* boolq_scenario.py: the question is stripped and ``capitalize()``d (the rest lower-cased) before its ``?``; a
  contrast question likewise.
* natural_qa_scenario.py: only dev-set examples with at least one short answer; even/odd examples (by position
  among those kept) become train/valid; a short answer and the long answer of its annotation are cut out of the page HTML by byte offsets,
  raw non-breaking-space bytes become spaces, then entities are unescaped (so ``&nbsp;`` stays U+00A0, as in
  HELM) and tags removed; the question is ``capitalize()``d and
  gets a ``?``; the context is the long answer of one randomly chosen short answer; a train instance keeps that one
  short answer, a valid instance all distinct short answers.
* narrativeqa_scenario.py: the summary and the question, stripped, the question ending in ``?``; both answers correct;
  one question per document, drawn with ``random.choice`` from one ``random.seed(0)`` stream over the documents in
  order of first appearance, train, then valid, then test (``one_question_per_document``).
* quac_scenario.py: title, background, section title and the section text without its trailing `` CANNOTANSWER``;
  a stopping turn ``k = randint(3, turns) - 1``; the turns before ``k - 1`` with their original answers as history
  (HELM's loop stops one turn short of ``k``, so turn ``k - 1`` is never shown; kept as HELM has it); the distinct
  answers of turn ``k``, and for an unanswerable turn three paraphrases of "cannot answer" besides.
Field names follow the hub datasets ``google-research-datasets/natural_questions``, ``deepmind/narrativeqa`` and
``allenai/quac`` (their dataset cards and the loading scripts formerly in huggingface/datasets).

Where HELM draws with one global ``random.seed(0)`` over the file order (NaturalQuestions, QuAC), these functions
draw from that one stream when the source is read under ``helm_stream`` (as the suites read them), and NaturalQuestions
then splits by the row's position among the rows kept, as HELM does; called on its own, a function draws from a
generator seeded with the row's own id and splits NaturalQuestions by the id's parity.
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from .helm_rows_mc import Reshaped
from .helm_stream import active
from .instance import Instance
from .loaders import Source

_TAG = re.compile("<([^>]*)>")
NQ_UNANSWERED = "unanswered"
"""The split NaturalQuestions rows without a short answer go to: HELM drops them, and no run reads this split."""
QUAC_CANNOT = "CANNOTANSWER"
QUAC_CANNOT_ALIASES = ("Not enough information", "Cannot answer", "Do not know")


def records(value: Any, what: str) -> list[dict[str, Any]]:
    """A datasets ``Sequence`` of structs as a list of dicts, whether it arrives as columns or as a list of rows.

    ``datasets`` hands a sequence of structs over as one dict of equal-length lists (``{"text": [...], "id": [...]}``);
    a JSON file written by hand, or another version of the library, may give a list of dicts instead.
    """
    if isinstance(value, Mapping):
        columns = {key: list(column) for key, column in value.items()}
        lengths = {len(column) for column in columns.values()}
        if len(lengths) > 1:
            shown = ", ".join(f"{key}={len(column)}" for key, column in columns.items())
            raise ValueError(f"{what}: its columns have different lengths ({shown})")
        count = lengths.pop() if lengths else 0
        return [{key: column[index] for key, column in columns.items()} for index in range(count)]
    if isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(item, Mapping) for item in value):
        return [dict(item) for item in value]
    raise ValueError(f"{what} must be a list of objects or an object of lists, got {type(value).__name__}")


def field(row: Mapping[str, Any], path: str) -> Any:
    """``row["a"]["b"]`` for ``path="a.b"``; a missing or null step is a KeyError naming the whole path."""
    value: Any = row
    for step in path.split("."):
        if not isinstance(value, Mapping) or value.get(step) is None:
            raise KeyError(path)
        value = value[step]
    return value


def _carried(row: Mapping[str, Any]) -> dict[str, Any]:
    """The ``id`` and ``split`` a shipped file adds at the top level of a row (hub rows take them from the loader)."""
    return {key: row[key] for key in ("id", "split") if row.get(key) not in (None, "")}


def _seeded(scenario: str, key: str) -> random.Random:
    return random.Random(f"{scenario}:{key}")


def _question(text: str) -> str:
    return text if text.endswith("?") else text + "?"


# --- BoolQ ----------------------------------------------------------------------------------------------------------


def boolq_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A BoolQ row with its question as HELM's class writes it (stripped, ``capitalize()``d); other columns kept."""
    question = str(field(row, "question")).strip()
    if not question:
        raise ValueError("question is empty")
    return {**row, "question": question.capitalize()}


# --- IMDB -----------------------------------------------------------------------------------------------------------


def imdb_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """An IMDB row with its review stripped, as HELM's class reads the review file; other columns kept."""
    return {**row, "text": str(field(row, "text")).strip()}


# --- NaturalQuestions ------------------------------------------------------------------------------------------------


def _html_span(page: bytes, start: int, end: int, what: str) -> str:
    if not 0 <= start <= end <= len(page):
        raise ValueError(f"{what} bytes {start}:{end} lie outside document.html ({len(page)} bytes)")
    text = page[start:end].replace(b"\xc2\xa0", b" ").decode("utf-8")
    return _TAG.sub("", html.unescape(text))


def natural_qa_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """One NaturalQuestions example as ``id``, ``split``, ``question``, ``passage`` (the long answer), ``references``."""
    example_id = str(field(row, "id"))
    page = str(field(row, "document.html")).encode("utf-8")
    question = str(field(row, "question.text"))
    pairs: list[tuple[str, str]] = []  # (short answer, long answer of its annotation), in HELM's order
    for number, annotation in enumerate(records(field(row, "annotations"), "annotations"), 1):
        where = f"annotations[{number - 1}]"
        long = annotation.get("long_answer")
        shorts = annotation.get("short_answers")
        if not isinstance(long, Mapping) or shorts is None:
            raise KeyError(f"{where}.long_answer" if not isinstance(long, Mapping) else f"{where}.short_answers")
        spans = records(shorts, f"{where}.short_answers")
        if not spans:  # no short answer; its long answer may be absent too (bytes -1)
            continue
        long_text = _html_span(page, int(long["start_byte"]), int(long["end_byte"]), f"{where}.long_answer")
        for short in spans:
            text = _html_span(page, int(short["start_byte"]), int(short["end_byte"]), f"{where}.short_answers")
            pairs.append((text, long_text))
    if not example_id.lstrip("-").isdigit():
        raise ValueError(f"id {example_id!r} is not a NaturalQuestions example id (a whole number)")
    if not question.strip():
        raise ValueError("question.text is empty")
    capitalized = _question(question.capitalize())
    if not pairs:
        return {"id": example_id, "split": NQ_UNANSWERED, "question": capitalized, "passage": "", "references": []}
    stream = active()
    if stream is not None:  # HELM: even/odd position among the kept rows, then randint(0, n - 1) from its stream
        split = "train" if stream.next_position() % 2 == 0 else "valid"
        chosen, passage = pairs[stream.random.randint(0, len(pairs) - 1)]
    else:
        split = "train" if int(example_id) % 2 == 0 else "valid"
        chosen, passage = pairs[_seeded("natural_qa", example_id).randrange(len(pairs))]
    answers = [chosen] if split == "train" else list(dict.fromkeys(answer for answer, _ in pairs))
    return {"id": example_id, "split": split, "question": capitalized, "passage": passage, "references": answers}


# --- NarrativeQA -----------------------------------------------------------------------------------------------------


def narrative_qa_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """One NarrativeQA question as ``summary``, ``question`` and its two ``references``.

    The hub rows carry no question id (a document has several questions), so a hub instance keeps the loader's
    ``<split>-<index>`` id; a shipped row may give ``id`` and ``split`` at its top level.
    """
    summary = str(field(row, "document.summary.text")).strip()
    question = str(field(row, "question.text")).strip()
    answers = [str(field(answer, "text")) for answer in records(field(row, "answers"), "answers")]
    if not question:
        raise ValueError("question.text is empty")
    if not answers:
        raise ValueError("answers is empty; NarrativeQA gives two answers per question")
    document = f"{DOCUMENT_TAG}{field(row, 'document.id')}"
    return {**_carried(row), "summary": summary, "question": _question(question), "references": answers, "tags": [document]}


DOCUMENT_TAG = "document:"
"""A NarrativeQA instance's tag naming its document, which HELM's one-question-per-document draw groups by."""


def _one_per_document(splits: Sequence[str], instances: list[Instance]) -> list[Instance]:
    draw = random.Random(0)
    chosen: list[Instance] = []
    for split in splits:
        documents: dict[str, list[Instance]] = {}
        for instance in instances:
            if instance.split == split:
                tag = next((tag for tag in instance.tags if tag.startswith(DOCUMENT_TAG)), instance.id)
                documents.setdefault(tag, []).append(instance)
        chosen += [draw.choice(questions) for questions in documents.values()]
    return chosen


def one_question_per_document(source: Source, splits: Sequence[str] = ("train", "valid", "test")) -> Reshaped:
    """HELM's NarrativeQA draw: one question per document and split, in HELM's order (see the module docstring)."""
    return Reshaped(source, partial(_one_per_document, tuple(splits)), "HELM's draw: one question per document, random.seed(0)")


# --- QuAC ------------------------------------------------------------------------------------------------------------


def quac_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """One QuAC dialogue as ``id`` (the dialogue id), the ``prompt`` (page, section, dialogue so far, question) and
    ``references``; a shipped row gives its ``split`` at the top level."""
    dialogue = str(field(row, "dialogue_id"))
    questions = [str(question) for question in field(row, "questions")]
    answers = field(row, "answers.texts")
    history = field(row, "orig_answers.texts")
    if len(questions) < 3:
        raise ValueError(f"dialogue has {len(questions)} turn(s); HELM asks at turn 3 or later, so it needs at least 3")
    if len(answers) != len(questions) or len(history) != len(questions):
        raise ValueError(
            f"questions, answers.texts and orig_answers.texts must have one entry per turn "
            f"({len(questions)}, {len(answers)}, {len(history)})"
        )
    context = str(field(row, "context"))
    if context.endswith(" " + QUAC_CANNOT):
        context = context[: -len(QUAC_CANNOT) - 1]
    stream = active()
    k = (stream.random if stream is not None else _seeded("quac", dialogue)).randint(3, len(questions)) - 1
    parts = [
        f"Title: {field(row, 'wikipedia_page_title')}\n\n",
        f"Background: {field(row, 'background')}\n\n",
        f"Section: {field(row, 'section_title')}\n",
        f"Passage: {context}\n\n",
    ]
    parts += [f"Question: {questions[turn]}\nAnswer: {history[turn]}\n\n" for turn in range(k - 1)]
    parts.append(f"Question: {questions[k]}")
    references = list(dict.fromkeys(str(text) for text in answers[k]))
    if not references:
        raise ValueError(f"answers.texts[{k}] is empty; every QuAC turn has at least one answer (or {QUAC_CANNOT})")
    if references == [QUAC_CANNOT]:
        references += QUAC_CANNOT_ALIASES
    return {**_carried(row), "id": dialogue, "prompt": "".join(parts), "references": references}
