"""HELM's QA core scenarios (NaturalQuestions open/closed book, NarrativeQA, QuAC) read from hub-schema rows.

Each scenario's hub source is pointed at a local folder of rows written here in the real dataset's nested schema and
read through ``datasets.load_dataset``; the shipped files are read through the suites' own scenarios. Instances and
zero-shot prompts are checked against expectations written out by hand from HELM's layouts.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_holistic import jsonl
from pytest_holistic.adaptation import SPEC_KEYS, Adapter, make_spec
from pytest_holistic.errors import ScenarioError
from pytest_holistic.scenarios.helm_stream import helm_stream
from pytest_holistic.scenarios.instance import Instance

SUITE = Path(__file__).resolve().parents[2] / "suites" / "core"
CANNOT = ["CANNOTANSWER", "Not enough information", "Cannot answer", "Do not know"]


def suite_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"qa_suite_{name}", SUITE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def zero_shot_prompt(test_function: Any, instance: Instance) -> str:
    """The prompt the suite's marker builds for ``instance`` with no in-context examples."""
    (mark,) = [mark for mark in test_function.pytestmark if mark.name == "holistic"]
    spec = make_spec(mark.kwargs.get("adapter", "generation"), **{k: v for k, v in mark.kwargs.items() if k in SPEC_KEYS})
    return Adapter(spec, ()).plan(instance).prompt


def view(instances: list[Instance] | tuple[Instance, ...]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(i.split, i.input, i.correct_references) for i in instances]


@pytest.fixture
def hub_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder ``datasets.load_dataset`` reads offline, with its cache inside tmp_path."""
    datasets = pytest.importorskip("datasets")
    import huggingface_hub.constants

    cache = tmp_path / "cache"
    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    monkeypatch.setattr(datasets.config, "HF_MODULES_CACHE", tmp_path / "modules")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    folder = tmp_path / "hub"
    folder.mkdir()
    return folder


# --- NaturalQuestions ------------------------------------------------------------------------------------------------


def nq_row(example_id: str, question: str, page: str, annotations: list[tuple[str | None, list[str]]]) -> dict[str, Any]:
    """A row of google-research-datasets/natural_questions; each annotation is (long answer html, short answer htmls).

    Byte offsets are found in the UTF-8 page; annotations are columnar, as ``datasets`` hands a sequence of structs over.
    """
    data = page.encode("utf-8")

    def span(piece: str, within: int = 0) -> tuple[int, int]:
        start = data.index(piece.encode("utf-8"), within)
        return start, start + len(piece.encode("utf-8"))

    columns: dict[str, list[Any]] = {"id": [], "long_answer": [], "short_answers": [], "yes_no_answer": []}
    for number, (long, shorts) in enumerate(annotations):
        start, end = span(long) if long is not None else (-1, -1)
        columns["id"].append(f"{example_id}{number}")
        long_answer = {"start_byte": start, "end_byte": end, "start_token": -1, "end_token": -1, "candidate_index": 0}
        columns["long_answer"].append(long_answer)
        short_spans = [span(short, max(start, 0)) for short in shorts]
        columns["short_answers"].append(
            {
                "start_byte": [s for s, _ in short_spans],
                "end_byte": [e for _, e in short_spans],
                "start_token": [0 for _ in shorts],
                "end_token": [0 for _ in shorts],
                "text": list(shorts),
            }
        )
        columns["yes_no_answer"].append(-1)
    return {
        "id": example_id,
        "document": {"title": "t", "url": "u", "html": page, "tokens": {"token": ["x"], "is_html": [False]}},
        "question": {"text": question, "tokens": question.split()},
        "annotations": columns,
    }


GLASS_LONG = "<P>Glass is made by melting sand\u00a0with soda &amp; <b>lime</b>.</P>"
GLASS = f"<html><body><h1>Glass</h1>{GLASS_LONG}<P>Other.</P></body></html>"
ODE = "<html><body><P>The ode was written by Ilse Varga in 1911.</P></body></html>"
ODE_LONG = "<P>The ode was written by Ilse Varga in 1911.</P>"
NQ_ROWS = [
    # odd id: valid; two annotators with short answers (one with a non-breaking space inside), one without any answer
    nq_row("101", "what is glass made from", GLASS, [(GLASS_LONG, ["sand\u00a0with soda"]), (GLASS_LONG, ["sand"]), (None, [])]),
    # even id: train; the question already ends in "?" and capitalize() lowers the rest
    nq_row("202", "Who Wrote the ODE?", ODE, [(ODE_LONG, ["Ilse Varga"])]),
    # no short answer at all: HELM drops it, here it goes to a split no run reads
    nq_row("303", "is glass a liquid", GLASS, [(GLASS_LONG, [])]),
]


def write_nq_folder(folder: Path, rows: list[dict[str, Any]]) -> None:
    """The hub repository's layout: a ``dev`` config whose only split is validation."""
    write_jsonl(folder / "dev" / "validation.jsonl", rows)
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: dev\n  data_files:\n  - split: validation\n    path: dev/validation.jsonl\n---\n",
        encoding="utf-8",
    )


def test_natural_qa_hub_rows_give_helm_instances(hub_folder: Path) -> None:
    nq = suite_module("test_natural_qa")
    write_nq_folder(hub_folder, NQ_ROWS)
    open_book = list(dataclasses.replace(nq.hub_source(nq.OPEN_BOOK), name=str(hub_folder))())
    closed_book = list(dataclasses.replace(nq.hub_source(nq.CLOSED_BOOK), name=str(hub_folder))())
    assert [(i.id, i.split) for i in open_book] == [("101", "valid"), ("202", "train"), ("303", "unanswered")]
    assert view(open_book[:2]) == [
        (
            "valid",
            "Passage: Glass is made by melting sand with soda & lime.\n\nQuestion: What is glass made from?",
            ("sand with soda", "sand"),
        ),
        ("train", "Passage: The ode was written by Ilse Varga in 1911.\n\nQuestion: Who wrote the ode?", ("Ilse Varga",)),
    ]
    assert view(closed_book[:2]) == [
        ("valid", "What is glass made from?", ("sand with soda", "sand")),
        ("train", "Who wrote the ode?", ("Ilse Varga",)),
    ]
    assert zero_shot_prompt(nq.test_natural_qa_openbook_longans, open_book[0]) == (
        "Passage: Glass is made by melting sand with soda & lime.\n\nQuestion: What is glass made from?\nAnswer:"
    )
    assert zero_shot_prompt(nq.test_natural_qa_closedbook, closed_book[0]) == "Question: What is glass made from?\nAnswer:"


def test_natural_qa_train_keeps_one_short_answer(hub_folder: Path) -> None:
    """A train example keeps the one short answer drawn for it, a valid example every distinct one."""
    nq = suite_module("test_natural_qa")
    many = "<P>Red, green or blue.</P>"
    page = f"<html><body>{many}</body></html>"
    write_nq_folder(hub_folder, [nq_row("8", "which colour", page, [(many, ["Red", "green"]), (many, ["blue"])])])
    (train,) = dataclasses.replace(nq.hub_source(nq.CLOSED_BOOK), name=str(hub_folder))()
    assert train.split == "train"
    assert len(train.correct_references) == 1
    assert train.correct_references[0] in {"Red", "green", "blue"}


def test_natural_qa_shipped_file(hub_folder: Path) -> None:
    nq = suite_module("test_natural_qa")
    loaded = nq.natural_qa_closedbook.load("local", base=SUITE)
    # HELM's rule: rows with a short answer alternate train, valid by position (20 rows: 10 and 10)
    assert (len(loaded.split("valid")), len(loaded.split("train"))) == (10, 10)
    assert [i.split for i in loaded.instances[:4]] == ["train", "valid", "train", "valid"]
    first = loaded.split("valid")[0]
    assert (first.input, first.correct_references) == ("What country is mount kilimanjaro in?", ("Tanzania",))
    water = next(i for i in loaded.split("valid") if "boil" in i.input)
    assert water.correct_references == ("100 degrees Celsius", "212 degrees Fahrenheit")
    opened = nq.natural_qa_openbook_longans.load("local", base=SUITE).split("valid")[0]
    assert opened.input.startswith("Passage: Mount Kilimanjaro is a dormant volcano in northeastern Tanzania")
    assert opened.input.endswith("shrinking glaciers.\n\nQuestion: What country is mount kilimanjaro in?")
    # the same rows read as hub rows give the same instances
    write_nq_folder(hub_folder, [json.loads(line) for line in (SUITE / "data" / "natural_qa.jsonl").read_text().splitlines()])
    for scenario, fields in ((nq.natural_qa_closedbook, nq.CLOSED_BOOK), (nq.natural_qa_openbook_longans, nq.OPEN_BOOK)):
        from_hub = list(helm_stream(dataclasses.replace(nq.hub_source(fields), name=str(hub_folder)))())
        shipped = scenario.load("local", base=SUITE).instances
        assert [(i.id, *v) for i, v in zip(from_hub, view(from_hub))] == [(i.id, *v) for i, v in zip(shipped, view(shipped))]


# --- NarrativeQA -----------------------------------------------------------------------------------------------------


def narrative_row(summary: str, question: str, answers: list[str]) -> dict[str, Any]:
    """A row of deepmind/narrativeqa (answers as a list of structs)."""
    return {
        "document": {
            "id": "d1",
            "kind": "movie",
            "url": "u",
            "file_size": 1,
            "word_count": 1,
            "start": "A",
            "end": "B",
            "summary": {"text": summary, "tokens": summary.split(), "url": "s", "title": "T"},
            "text": "full text",
        },
        "question": {"text": question, "tokens": question.split()},
        "answers": [{"text": answer, "tokens": answer.split()} for answer in answers],
    }


def test_narrative_qa_hub_rows_give_helm_instances(hub_folder: Path) -> None:
    nqa = suite_module("test_narrative_qa")
    fox = narrative_row("  A fox hides from a storm in a barn.\n", "Where does the fox hide ", ["In a barn.", "A barn"])
    write_jsonl(hub_folder / "test.jsonl", [fox])
    owl = narrative_row("An owl counts stars.", "What does the owl count?", ["Stars", "The stars"])
    write_jsonl(hub_folder / "train.jsonl", [owl])
    write_jsonl(hub_folder / "validation.jsonl", [narrative_row("A cat naps.", "Who naps?", ["A cat", "The cat"])])
    instances = list(dataclasses.replace(nqa.HUB, name=str(hub_folder))())
    assert [(i.id, *v) for i, v in zip(instances, view(instances))] == [
        ("train-00000", "train", "An owl counts stars.\nQuestion: What does the owl count?", ("Stars", "The stars")),
        ("valid-00000", "valid", "A cat naps.\nQuestion: Who naps?", ("A cat", "The cat")),
        (
            "test-00000",
            "test",
            "A fox hides from a storm in a barn.\nQuestion: Where does the fox hide?",
            ("In a barn.", "A barn"),
        ),
    ]
    assert zero_shot_prompt(nqa.test_narrative_qa, instances[2]) == (
        "Passage: A fox hides from a storm in a barn.\nQuestion: Where does the fox hide?\nAnswer:"
    )


def test_narrative_qa_shipped_file_matches_its_rows_read_as_hub_rows(hub_folder: Path) -> None:
    nqa = suite_module("test_narrative_qa")
    loaded = nqa.narrative_qa.load("local", base=SUITE)
    assert (len(loaded.split("test")), len(loaded.split("train"))) == (15, 5)
    first = loaded.split("test")[0]
    assert first.input.startswith("A marine biologist, Dr. Leena Okafor, returns")
    assert first.input.endswith("at a town meeting.\nQuestion: What causes the glow in the bay?")
    assert first.correct_references == (
        "Tiny organisms feeding on waste from a fish-processing plant.",
        "Organisms feeding on dumped waste.",
    )
    rows = [json.loads(line) for line in (SUITE / "data" / "narrative_qa.jsonl").read_text().splitlines()]
    write_jsonl(hub_folder / "validation.jsonl", [narrative_row("A cat naps.", "Who naps?", ["A cat", "The cat"])])
    for split in ("train", "test"):  # the hub rows carry no id or split column: those belong to the shipped file
        hub_rows = [{k: v for k, v in r.items() if k not in ("id", "split")} for r in rows if r["split"] == split]
        write_jsonl(hub_folder / f"{split}.jsonl", hub_rows)
    from_hub = [i for i in dataclasses.replace(nqa.HUB, name=str(hub_folder))() if i.split != "valid"]
    assert view(from_hub) == view(loaded.instances)


# --- QuAC ------------------------------------------------------------------------------------------------------------


def quac_row(dialogue_id: str, context: str, turns: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """A row of allenai/quac: answers per turn as columns, original answers as columns, context ending in CANNOTANSWER."""
    full = context + " CANNOTANSWER"
    return {
        "dialogue_id": dialogue_id,
        "wikipedia_page_title": "Ada Pell",
        "background": "Ada Pell is a potter.",
        "section_title": "Work",
        "context": full,
        "turn_ids": [f"{dialogue_id}_q#{k}" for k in range(len(turns))],
        "questions": [question for question, _ in turns],
        "followups": [0] * len(turns),
        "yesnos": [2] * len(turns),
        "answers": {"texts": [texts for _, texts in turns], "answer_starts": [[0] * len(texts) for _, texts in turns]},
        "orig_answers": {"texts": [texts[0] for _, texts in turns], "answer_starts": [0] * len(turns)},
    }


QUAC_CONTEXT = "She made bowls in Leeds. She sold them at markets."


def test_quac_hub_rows_give_helm_instances(hub_folder: Path) -> None:
    quac = suite_module("test_quac")
    turns = [("Where did she work?", ["in Leeds"]), ("What did she make?", ["bowls"]), ("Was she married?", ["CANNOTANSWER"])]
    write_jsonl(hub_folder / "validation.jsonl", [quac_row("C_v", QUAC_CONTEXT, turns)])
    train_turns = [("What?", ["bowls"]), ("Where?", ["in Leeds"]), ("How?", ["at markets", "at markets", "She sold them"])]
    write_jsonl(hub_folder / "train.jsonl", [quac_row("C_t", QUAC_CONTEXT, train_turns)])
    instances = list(dataclasses.replace(quac.HUB, name=str(hub_folder))())
    # three turns: HELM asks the third, shows the first as history and (its off-by-one) skips the second
    head = "Title: Ada Pell\n\nBackground: Ada Pell is a potter.\n\nSection: Work\nPassage: " + QUAC_CONTEXT + "\n\n"
    assert [(i.id, *v) for i, v in zip(instances, view(instances))] == [
        ("C_t", "train", head + "Question: What?\nAnswer: bowls\n\nQuestion: How?", ("at markets", "She sold them")),
        ("C_v", "valid", head + "Question: Where did she work?\nAnswer: in Leeds\n\nQuestion: Was she married?", tuple(CANNOT)),
    ]
    assert zero_shot_prompt(quac.test_quac, instances[1]) == (
        head + "Question: Where did she work?\nAnswer: in Leeds\n\nQuestion: Was she married?\nAnswer:"
    )


def test_quac_longer_dialogues_stop_at_a_later_turn(hub_folder: Path) -> None:
    """With more turns the stopping turn k is drawn from 2..turns-1; the history shows turns before k-1."""
    quac = suite_module("test_quac")
    turns = [(f"Question number {k}?", [f"answer {k}"]) for k in range(8)]
    rows = [quac_row(f"C_{n}", QUAC_CONTEXT, turns) for n in range(12)]
    write_jsonl(hub_folder / "validation.jsonl", rows)
    write_jsonl(hub_folder / "train.jsonl", rows[:1])
    stops = set()
    for instance in dataclasses.replace(quac.HUB, name=str(hub_folder))():
        if instance.split == "train":
            continue
        asked = int(instance.input.rsplit("Question number ", 1)[1].rstrip("?"))
        shown = [f"Question: Question number {k}?\nAnswer: answer {k}\n\n" for k in range(asked - 1)]
        assert instance.input.endswith("".join(shown) + f"Question: Question number {asked}?")
        assert f"Question number {asked - 1}?" not in instance.input
        assert instance.correct_references == (f"answer {asked}",)
        stops.add(asked)
    assert stops <= set(range(2, 8)) and len(stops) > 1  # drawn per dialogue, not one fixed turn


def test_quac_shipped_file_matches_its_rows_read_as_hub_rows(hub_folder: Path) -> None:
    quac = suite_module("test_quac")
    loaded = quac.quac.load("local", base=SUITE)
    assert (len(loaded.split("valid")), len(loaded.split("train"))) == (15, 5)
    first = loaded.split("valid")[0]
    assert first.input.startswith(
        "Title: Teodor Brandl\n\nBackground: Teodor Brandl (1931-2004) was an Austrian architect known for schools and "
        "public libraries.\n\nSection: Libraries\nPassage: Brandl designed his first library for the town of Wels in 1962."
    )
    assert "CANNOTANSWER" not in first.input
    rows = [json.loads(line) for line in (SUITE / "data" / "quac.jsonl").read_text().splitlines()]
    for split, hub_split in (("train", "train"), ("valid", "validation")):
        hub_rows = [{k: v for k, v in r.items() if k != "split"} for r in rows if r["split"] == split]
        write_jsonl(hub_folder / f"{hub_split}.jsonl", hub_rows)
    from_hub = list(helm_stream(dataclasses.replace(quac.HUB, name=str(hub_folder)))())
    shipped = loaded.instances
    assert [(i.id, *v) for i, v in zip(from_hub, view(from_hub))] == [(i.id, *v) for i, v in zip(shipped, view(shipped))]


# --- malformed rows --------------------------------------------------------------------------------------------------


def one_line_error(source: Any) -> str:
    with pytest.raises(ScenarioError) as caught:
        list(source())
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_missing_nested_field_names_the_row_and_the_field(tmp_path: Path) -> None:
    nqa, quac, nq = suite_module("test_narrative_qa"), suite_module("test_quac"), suite_module("test_natural_qa")
    good = narrative_row("A fox.", "Why?", ["a", "b"])
    bad = narrative_row("A fox.", "Why?", ["a", "b"])
    del bad["document"]["summary"]["text"]
    write_jsonl(tmp_path / "nqa.jsonl", [good, bad])
    message = one_line_error(jsonl(tmp_path / "nqa.jsonl", nqa.FIELDS))
    assert f"{tmp_path / 'nqa.jsonl'}:2:" in message and "'document.summary.text'" in message

    dialogue = quac_row("C_x", QUAC_CONTEXT, [("a?", ["x"]), ("b?", ["y"]), ("c?", ["z"])])
    del dialogue["orig_answers"]
    write_jsonl(tmp_path / "quac.jsonl", [dialogue])
    message = one_line_error(jsonl(tmp_path / "quac.jsonl", quac.FIELDS))
    assert f"{tmp_path / 'quac.jsonl'}:1:" in message and "'orig_answers.texts'" in message

    example = nq_row("7", "q", ODE, [(ODE_LONG, ["Ilse Varga"])])
    del example["annotations"]["short_answers"]
    write_jsonl(tmp_path / "nq.jsonl", [example])
    message = one_line_error(jsonl(tmp_path / "nq.jsonl", nq.OPEN_BOOK))
    assert f"{tmp_path / 'nq.jsonl'}:1:" in message and "annotations[0].short_answers" in message


def test_malformed_hub_row_names_split_and_index(hub_folder: Path) -> None:
    nqa = suite_module("test_narrative_qa")
    bad = narrative_row("A fox.", "Why?", ["a", "b"])
    bad["question"] = {"tokens": ["Why?"]}
    for split in ("train", "validation"):
        write_jsonl(hub_folder / f"{split}.jsonl", [narrative_row("A cat.", "Who?", ["x", "y"])])
    write_jsonl(hub_folder / "test.jsonl", [narrative_row("An owl.", "What?", ["x", "y"]), bad])
    message = one_line_error(dataclasses.replace(nqa.HUB, name=str(hub_folder)))
    assert f"{hub_folder}[test][1]:" in message and "'question.text'" in message


def test_short_dialogue_is_refused_with_the_reason(tmp_path: Path) -> None:
    quac = suite_module("test_quac")
    write_jsonl(tmp_path / "short.jsonl", [quac_row("C_s", QUAC_CONTEXT, [("a?", ["x"]), ("b?", ["y"])])])
    message = one_line_error(jsonl(tmp_path / "short.jsonl", quac.FIELDS))
    assert "2 turn(s)" in message and "at least 3" in message
