"""Instances, Fields, the JSONL/CSV/hub loaders and Scenario validation."""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from pytest_holistic.errors import ScenarioError
from pytest_holistic.scenarios import Fields, Instance, LoadedScenario, Reference, Scenario, csv_file, hf, jsonl, scenario
from pytest_holistic.scenarios.scenario import instances_digest, subsample

# -- Instance ---------------------------------------------------------------------------------------


def test_strings_become_correct_references() -> None:
    instance = Instance("q1", "Capital of France?", ["Paris", Reference("London", correct=False)])
    assert instance.references == (Reference("Paris", True), Reference("London", False))
    assert instance.correct_references == ("Paris",)
    assert instance.choices == ("Paris", "London")
    assert instance.correct_indices == (0,)


def test_single_string_reference_and_defaults() -> None:
    instance = Instance("q1", "Capital of France?", "Paris")
    assert instance.references == (Reference("Paris", True),)
    assert instance.split == "test"
    assert instance.group is None
    assert instance.tags == ()


def test_instance_is_frozen_and_hashable() -> None:
    instance = Instance("q1", "x", ["y"], tags=["a", 1])
    assert instance.tags == ("a", "1")
    assert hash(instance) == hash(Instance("q1", "x", ("y",), tags=("a", "1")))
    with pytest.raises(AttributeError):
        instance.input = "z"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"id": "", "input": "x"}, "non-empty"),
        ({"id": "  ", "input": "x"}, "non-empty"),
        ({"id": 3, "input": "x"}, "non-empty"),
        ({"id": "q", "input": 42}, "input must be a string"),
        ({"id": "q", "input": "x", "references": ["ok", 7]}, "7"),
    ],
)
def test_invalid_instances(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ScenarioError, match=fragment):
        Instance(**kwargs)


def test_multiple_choice_by_index_and_by_text() -> None:
    by_index = Instance.multiple_choice("q", "2+2?", ["3", "4", "5"], 1, split="validation", group="math")
    by_text = Instance.multiple_choice("q", "2+2?", ["3", "4", "5"], "4", split="validation", group="math")
    assert by_index == by_text
    assert by_index.references == (Reference("3", False), Reference("4", True), Reference("5", False))
    assert by_index.correct_indices == (1,)
    assert by_index.split == "validation"
    assert by_index.group == "math"


@pytest.mark.parametrize(("answer", "fragment"), [("6", "'6' is not one of the choices"), (3, "index 3"), (-1, "index -1")])
def test_multiple_choice_invalid_answer(answer, fragment: str) -> None:
    with pytest.raises(ScenarioError, match=fragment) as raised:
        Instance.multiple_choice("q7", "2+2?", ["3", "4", "5"], answer)
    assert "'q7'" in str(raised.value)


def test_to_record_is_plain_data() -> None:
    record = Instance("q", "x", ["y", Reference("z", False)], group="g", tags=("t",)).to_record()
    assert record == {
        "id": "q",
        "input": "x",
        "references": [{"text": "y", "correct": True}, {"text": "z", "correct": False}],
        "split": "test",
        "group": "g",
        "tags": ["t"],
        "perturbation": None,
    }
    assert json.loads(json.dumps(record)) == record


# -- Fields -----------------------------------------------------------------------------------------


def build(fields: Fields, row: dict, index: int = 0, split: str = "test") -> Instance:
    return fields.to_instance(row, index, split, "origin.jsonl:1")


def test_fields_default_columns() -> None:
    row = {"id": "r1", "input": "Q?", "references": ["A", "B"], "split": "train", "group": "g1", "tags": "x,y"}
    instance = build(Fields(), row)
    assert instance == Instance("r1", "Q?", ["A", "B"], split="train", group="g1", tags=("x", "y"))


def test_fields_template_input() -> None:
    fields = Fields(input="{passage}\nQuestion: {question}?", references="answer")
    instance = build(fields, {"id": 1, "passage": "Cats purr.", "question": "do cats purr", "answer": "yes"})
    assert instance.id == "1"
    assert instance.input == "Cats purr.\nQuestion: do cats purr?"
    assert instance.references == (Reference("yes"),)


def test_fields_missing_id_gets_split_and_index() -> None:
    instance = build(Fields(), {"input": "Q", "references": "A"}, index=7, split="validation")
    assert instance.id == "validation-00007"
    assert instance.split == "validation"


def test_fields_references_as_json_text_and_objects() -> None:
    # a CSV cell holding a JSON list, and a list of {"text", "correct"} objects
    assert build(Fields(), {"id": "a", "input": "Q", "references": '["x", "y"]'}).references == (Reference("x"), Reference("y"))
    refs = [{"text": "x"}, {"text": "y", "correct": False}]
    assert build(Fields(), {"id": "a", "input": "Q", "references": refs}).references == (Reference("x"), Reference("y", False))
    assert build(Fields(), {"id": "a", "input": "Q", "references": "plain text"}).references == (Reference("plain text"),)


def test_fields_bool_labels() -> None:
    fields = Fields(input="question", labels={True: "Yes", False: "No"})
    yes = build(fields, {"id": "a", "question": "Q", "label": True})
    no = build(fields, {"id": "b", "question": "Q", "label": False})
    # every label name is an option, in the order of the mapping
    assert yes.references == (Reference("Yes", True), Reference("No", False))
    assert no.references == (Reference("Yes", False), Reference("No", True))


def test_fields_int_labels_and_custom_answer_column() -> None:
    fields = Fields(input="text", answer="sentiment", labels={0: "negative", 1: "positive"})
    instance = build(fields, {"id": "a", "text": "Great film", "sentiment": 1})
    assert instance.references == (Reference("negative", False), Reference("positive", True))
    # the same label as CSV text
    assert build(fields, {"id": "a", "text": "Bad", "sentiment": "0"}).correct_references == ("negative",)


@pytest.mark.parametrize(("cell", "expected"), [("true", "Yes"), ("True", "Yes"), ("FALSE", "No"), (" false ", "No")])
def test_fields_bool_labels_from_csv_text(cell: str, expected: str) -> None:
    fields = Fields(input="question", labels={True: "Yes", False: "No"})
    assert build(fields, {"id": "a", "question": "Q", "label": cell}).correct_references == (expected,)


@pytest.mark.parametrize(("cell", "expected"), [("1", "Yes"), ("0", "No")])
def test_fields_bool_labels_from_csv_digits(cell: str, expected: str) -> None:
    fields = Fields(input="question", labels={True: "Yes", False: "No"})
    assert build(fields, {"id": "a", "question": "Q", "label": cell}).correct_references == (expected,)


def test_fields_bool_labels_from_json_numbers() -> None:
    fields = Fields(input="question", labels={True: "Yes", False: "No"})
    assert build(fields, {"id": "a", "question": "Q", "label": 1}).correct_references == ("Yes",)
    assert build(fields, {"id": "a", "question": "Q", "label": 0}).correct_references == ("No",)


def test_fields_unknown_label() -> None:
    fields = Fields(input="question", labels={True: "Yes", False: "No"})
    with pytest.raises(ScenarioError) as raised:
        build(fields, {"id": "a", "question": "Q", "label": "maybe"})
    assert "origin.jsonl:1" in str(raised.value)
    assert "'maybe'" in str(raised.value)


def test_fields_choices_list_column() -> None:
    fields = Fields(input="question", choices="options", answer="answer")
    expected = (Reference("3", False), Reference("4", True), Reference("5", False))
    assert build(fields, {"id": "a", "question": "2+2?", "options": ["3", "4", "5"], "answer": 1}).references == expected
    assert build(fields, {"id": "a", "question": "2+2?", "options": ["3", "4", "5"], "answer": "4"}).references == expected
    # CSV: the list is JSON text and the index is text too
    assert build(fields, {"id": "a", "question": "2+2?", "options": '["3", "4", "5"]', "answer": "1"}).references == expected


def test_fields_choices_tuple_of_columns() -> None:
    fields = Fields(input="question", choices=("A", "B", "C", "D"), answer="label")
    row = {"id": "a", "question": "Largest?", "A": "ant", "B": "cat", "C": "whale", "D": "dog", "label": 2}
    instance = build(fields, row)
    assert instance.choices == ("ant", "cat", "whale", "dog")
    assert instance.correct_references == ("whale",)
    assert build(fields, {**row, "label": "whale"}).correct_indices == (2,)


def test_fields_missing_column_names_field_and_origin() -> None:
    fields = Fields(input="{passage} {question}")
    with pytest.raises(ScenarioError) as raised:
        build(fields, {"id": "a", "passage": "P"})
    message = str(raised.value)
    assert message.startswith("origin.jsonl:1: ")
    assert "'question'" in message
    assert "passage" in message  # lists the fields present


def test_fields_choices_cell_that_is_not_json_is_a_scenario_error() -> None:
    fields = Fields(input="question", choices="options")
    with pytest.raises(ScenarioError, match="origin.jsonl:1"):
        build(fields, {"id": "a", "question": "Colour?", "options": "red|blue", "answer": 0})


def test_fields_null_answer_is_a_scenario_error() -> None:
    fields = Fields(input="question", choices="options")
    with pytest.raises(ScenarioError, match="origin.jsonl:1"):
        build(fields, {"id": "a", "question": "Colour?", "options": ["red", "blue"], "answer": None})


def test_fields_id_template_reads_columns_and_the_row_index() -> None:
    fields = Fields(id="{subject}-{index:03d}", input="question", choices="choices", answer="answer")
    row = {"subject": "anatomy", "question": "Bones?", "choices": ["206", "12"], "answer": 0}
    assert build(fields, row).id == "anatomy-000"
    assert fields.to_instance(row, 41, "test", "hub[test][41]").id == "anatomy-041"
    with pytest.raises(ScenarioError, match=r"hub\[test\]\[3\].*'subject'"):
        fields.to_instance({k: v for k, v in row.items() if k != "subject"}, 3, "test", "hub[test][3]")


def _flatten_squad_like(row: dict) -> dict:
    """A nested row (SQuAD-like) to the flat columns the mapping names; raises KeyError on a missing part."""
    return {"id": row["id"], "question": row["question"]["text"], "answers": [a["text"] for a in row["answers"]]}


def test_fields_prepare_flattens_a_nested_row_before_the_mapping_reads_it() -> None:
    fields = Fields(input="Q: {question}", references="answers", prepare=_flatten_squad_like)
    row = {"id": "q1", "question": {"text": "Who wrote it?"}, "answers": [{"text": "Ana"}, {"text": "Ana B."}]}
    instance = build(fields, row)
    assert (instance.id, instance.input, instance.correct_references) == ("q1", "Q: Who wrote it?", ("Ana", "Ana B."))


def test_fields_prepare_failure_names_the_row_and_the_missing_part() -> None:
    fields = Fields(input="question", references="answers", prepare=_flatten_squad_like)
    with pytest.raises(ScenarioError) as raised:
        build(fields, {"id": "q2", "question": {"txt": "typo"}, "answers": []})
    assert str(raised.value).startswith("origin.jsonl:1: ")
    assert "'text'" in str(raised.value)


# -- jsonl ------------------------------------------------------------------------------------------


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    return path


def test_jsonl_reads_rows(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        [
            {"id": "q1", "question": "Capital of France?", "answer": "Paris"},
            "",
            {"question": "Capital of Italy?", "answer": ["Rome", "Roma"], "split": "train"},
        ],
    )
    source = jsonl(path, Fields(input="question", references="answer"), split="validation")
    assert source.path == path
    instances = list(source())
    assert instances == [
        Instance("q1", "Capital of France?", ["Paris"], split="validation"),
        # the blank line is skipped; the second row is index 1 and keeps its own split
        Instance("train-00001", "Capital of Italy?", ["Rome", "Roma"], split="train"),
    ]
    provenance = source.provenance()
    assert provenance["kind"] == "jsonl"
    assert provenance["path"] == str(path)
    assert provenance["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_jsonl_keeps_a_relative_path_until_resolved_against_a_base(tmp_path: Path) -> None:
    source = jsonl("data/x.jsonl")
    assert source.path == Path("data/x.jsonl")  # no stack-frame guessing at definition time
    assert source.resolve(tmp_path).path == tmp_path / "data" / "x.jsonl"
    # an absolute path is left alone
    assert jsonl(tmp_path / "y.jsonl").resolve(tmp_path / "elsewhere").path == tmp_path / "y.jsonl"


def test_relative_path_follows_the_test_file_not_the_helper_module(tmp_path: Path) -> None:
    helpers, suite = tmp_path / "common", tmp_path / "core"
    helpers.mkdir()
    suite.mkdir()
    (helpers / "helper_scenarios.py").write_text(
        "from pytest_holistic.scenarios import jsonl\n\ndef make():\n    return jsonl('rows.jsonl')\n", encoding="utf-8"
    )
    spec = importlib.util.spec_from_file_location("holistic_helper_scenarios", helpers / "helper_scenarios.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = write_jsonl(suite / "rows.jsonl", [{"id": "c1", "input": "x", "references": "y"}])

    loaded = Scenario("s", module.make()).load(base=suite)
    assert [i.id for i in loaded.instances] == ["c1"]
    assert loaded.provenance["path"] == str(rows)
    assert loaded.provenance["sha256"] == hashlib.sha256(rows.read_bytes()).hexdigest()

    with pytest.raises(ScenarioError) as raised:
        Scenario("s", module.make()).load(base=helpers)
    message = str(raised.value)
    assert "\n" not in message
    assert str(helpers / "rows.jsonl") in message
    assert "folder of the test file that uses the scenario" in message


def test_one_scenario_loaded_from_two_folders_reads_each(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    write_jsonl(first / "qa.jsonl", [{"id": "a1", "input": "x", "references": "y"}])
    write_jsonl(second / "qa.jsonl", [{"id": f"b{k}", "input": "x", "references": "y"} for k in (1, 2)])
    shared = Scenario("qa", jsonl("qa.jsonl"))
    from_first = shared.load(base=first)
    assert [i.id for i in shared.load(base=second).instances] == ["b1", "b2"]
    assert [i.id for i in from_first.instances] == ["a1"]
    assert shared.load(base=first) is from_first  # cached per base
    assert from_first.provenance["path"] == str(first / "qa.jsonl")


def test_load_without_base_reads_from_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_jsonl(tmp_path / "qa.jsonl", [{"id": "w1", "input": "x", "references": "y"}])
    monkeypatch.chdir(tmp_path)
    loaded = Scenario("qa", jsonl("qa.jsonl")).load()
    assert [i.id for i in loaded.instances] == ["w1"]
    assert loaded.provenance["path"] == str(tmp_path / "qa.jsonl")


def test_hf_name_becomes_a_local_folder_only_if_it_exists_under_the_base(tmp_path: Path) -> None:
    (tmp_path / "subdir").mkdir()
    source = hf("subdir")
    assert source.name == "subdir"
    assert source.resolve(tmp_path).name == str(tmp_path / "subdir")
    assert source.resolve(tmp_path / "elsewhere").name == "subdir"
    assert hf("org/dataset").resolve(tmp_path).name == "org/dataset"


def test_user_source_without_resolve_still_loads(tmp_path: Path) -> None:
    class Rows:
        def __call__(self):
            yield Instance("u1", "x", ["y"])

        def provenance(self) -> dict:
            return {"kind": "custom"}

    loaded = Scenario("qa", Rows(), hub=Rows()).load("hub", base=tmp_path)
    assert [i.id for i in loaded.instances] == ["u1"]
    assert loaded.provenance == {"kind": "custom", "instances": 1, "instances_sha256": instances_digest(loaded.instances)}


def test_jsonl_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [{"id": "a", "input": "Q", "references": "A"}, "", "{not json"])
    with pytest.raises(ScenarioError) as raised:
        list(jsonl(path)())
    assert f"{path}:3" in str(raised.value)
    assert "not valid JSON" in str(raised.value)


def test_jsonl_non_object_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", ["[1, 2]"])
    with pytest.raises(ScenarioError, match="expected a JSON object, got list"):
        list(jsonl(path)())


def test_jsonl_missing_field_names_the_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "qa.jsonl", [{"id": "a", "input": "Q", "references": "A"}, {"id": "b", "input": "Q"}])
    with pytest.raises(ScenarioError) as raised:
        list(jsonl(path)())
    message = str(raised.value)
    assert f"{path}:2" in message
    assert "'references'" in message


GOOD_ROW = {"id": "a", "input": "Q", "references": ["A"]}


@pytest.mark.parametrize(
    ("fields", "row", "message"),
    [
        (Fields(), {**GOOD_ROW, "id": [1, 2]}, "field 'id' is a list; expected text or a number"),
        (Fields(), {**GOOD_ROW, "input": {"text": "Q"}}, "field 'input' is an object; expected text or a number"),
        (Fields(), {**GOOD_ROW, "input": True}, "field 'input' is a boolean (True); expected text or a number"),
        (Fields(input="Passage: {passage}"), {**GOOD_ROW, "passage": ["p"]}, "field 'passage' is a list"),
        (Fields(input="{passage[0]}"), {**GOOD_ROW, "passage": [{"t": "p"}]}, "field 'passage[0]' is an object"),
        (Fields(), {**GOOD_ROW, "references": ["A", ["B"]]}, "field 'references' is a list; expected text or a number"),
        (Fields(), {**GOOD_ROW, "references": [{"text": {"t": "A"}}]}, "field 'references.text' is an object"),
        (Fields(choices="options", answer="answer"), {**GOOD_ROW, "options": {"a": 1}, "answer": 0}, "expected a list"),
        (Fields(choices="options", answer="answer"), {**GOOD_ROW, "options": ["x", {}], "answer": 0}, "'options[1]' is an"),
        (Fields(), {**GOOD_ROW, "group": {"name": "g"}}, "field 'group' is an object"),
        (Fields(), {**GOOD_ROW, "tags": {"t": 1}}, "field 'tags' is an object; expected a list of texts"),
        (Fields(), {**GOOD_ROW, "split": ["test"]}, "field 'split' is a list"),
    ],
)
def test_jsonl_field_of_the_wrong_type_names_file_line_field_and_type(
    tmp_path: Path, fields: Fields, row: dict, message: str
) -> None:
    path = write_jsonl(tmp_path / "typed.jsonl", ["", row])
    with pytest.raises(ScenarioError) as raised:
        list(jsonl(path, fields)())
    text = str(raised.value)
    assert text.startswith(f"{path}:2: ") and message in text and "\n" not in text


def test_jsonl_numbers_where_text_is_expected_are_read_as_written(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "numbers.jsonl", [{"id": 7, "input": 12, "references": [3.5, "x"], "group": 2}])
    (instance,) = jsonl(path)()
    assert (instance.id, instance.input, instance.correct_references, instance.group) == ("7", "12", ("3.5", "x"), "2")


def test_jsonl_missing_file(tmp_path: Path) -> None:
    source = jsonl(tmp_path / "absent.jsonl")
    with pytest.raises(ScenarioError, match="absent.jsonl does not exist"):
        list(source())
    assert source.provenance()["sha256"] is None


# -- csv_file ---------------------------------------------------------------------------------------


def write_csv(path: Path, header: list[str], rows: list[list[str]], delimiter: str = ",") -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_csv_file_with_labels(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "boolq.csv",
        ["id", "passage", "question", "label"],
        [["b1", "Cats purr.", "do cats purr", "true"], ["b2", "Fish swim.", "do fish fly", "False"]],
    )
    source = csv_file(path, Fields(input="{passage}\nQuestion: {question}?", labels={True: "Yes", False: "No"}))
    instances = list(source())
    assert [i.id for i in instances] == ["b1", "b2"]
    assert instances[0].input == "Cats purr.\nQuestion: do cats purr?"
    assert [i.correct_references for i in instances] == [("Yes",), ("No",)]
    assert all(i.choices == ("Yes", "No") for i in instances)
    assert source.provenance()["kind"] == "csv"


def test_csv_file_choices_and_delimiter(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "mc.tsv",
        ["id", "question", "options", "answer"],
        [["m1", "2+2?", '["3", "4", "5"]', "1"], ["m2", "Red?", '["red", "blue"]', "red"]],
        delimiter="\t",
    )
    instances = list(csv_file(path, Fields(input="question", choices="options"), delimiter="\t")())
    assert instances[0].correct_references == ("4",)
    assert instances[1].correct_references == ("red",)


def test_csv_file_missing_column_names_field_and_line(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "qa.csv", ["id", "input"], [["a", "Q"]])
    with pytest.raises(ScenarioError) as raised:
        list(csv_file(path)())
    # header is line 1, the first row line 2
    assert f"{path}:2" in str(raised.value)
    assert "'references'" in str(raised.value)


def test_csv_file_relative_path_resolves_against_the_base(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    path = write_csv(tmp_path / "data" / "qa.csv", ["id", "input", "references"], [["c1", "Q", "A"]])
    source = csv_file("data/qa.csv")
    assert source.resolve(tmp_path).path == path
    loaded = Scenario("qa", source).load(base=tmp_path)
    assert [i.id for i in loaded.instances] == ["c1"]
    assert loaded.provenance["path"] == str(path)


def test_csv_file_with_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_text("id,input,references\nq1,Capital of France?,Paris\n", encoding="utf-8-sig")
    assert [i.id for i in csv_file(path)()] == ["q1"]


def test_csv_file_takes_a_field_as_long_as_jsonl_does(tmp_path: Path) -> None:
    article = "word " * 60_000  # 300,000 characters: past the csv module's default 131,072-character field limit
    path = write_csv(tmp_path / "long.csv", ["id", "input", "references"], [["l1", article, "A"], ["l2", "Q", "B"]])
    (tmp_path / "long.jsonl").write_text(json.dumps({"id": "l1", "input": article, "references": "A"}) + "\n")
    limit = csv.field_size_limit()
    from_csv = list(csv_file(path)())
    assert [i.input for i in from_csv] == [next(iter(jsonl(tmp_path / "long.jsonl")())).input, "Q"]
    assert len(from_csv[0].input) == 300_000
    assert csv.field_size_limit() == limit  # the process-wide limit is raised for the read only


# -- hf (datasets.load_dataset on local files, offline) ---------------------------------------------


@pytest.fixture
def offline_hf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    # datasets reads these at import time; if it is already imported, patch its config too
    datasets = pytest.importorskip("datasets")
    import huggingface_hub.constants

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    monkeypatch.setattr(datasets.config, "HF_MODULES_CACHE", tmp_path / "modules")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    folder = tmp_path / "boolq_local"
    folder.mkdir()
    write_jsonl(
        folder / "train.jsonl",
        [{"id": f"t{k}", "question": f"train question {k}", "answer": k % 2 == 0} for k in range(3)],
    )
    write_jsonl(
        folder / "validation.jsonl",
        [{"id": f"v{k}", "question": f"validation question {k}", "answer": k % 2 == 1} for k in range(2)],
    )
    return folder


def test_hf_reads_local_folder_through_datasets(offline_hf: Path, tmp_path: Path) -> None:
    fields = Fields(input="question", answer="answer", labels={True: "Yes", False: "No"})
    source = hf(str(offline_hf), splits={"validation": "validation", "train": "train"}, fields=fields)
    assert source.name == str(offline_hf)
    instances = list(source())
    assert [(i.id, i.split) for i in instances] == [
        ("v0", "validation"),
        ("v1", "validation"),
        ("t0", "train"),
        ("t1", "train"),
        ("t2", "train"),
    ]
    # v0: answer 0 % 2 == 1 -> False -> "No"; t0: 0 % 2 == 0 -> True -> "Yes"
    assert instances[0].input == "validation question 0"
    assert instances[0].correct_references == ("No",)
    assert instances[1].correct_references == ("Yes",)
    assert instances[2].correct_references == ("Yes",)
    assert instances[2].choices == ("Yes", "No")
    assert source.provenance() == {"kind": "hf", "name": str(offline_hf), "config": None, "revision": None}
    # the cache went where the test put it, not to the user's home
    assert (tmp_path / "cache").is_dir()

    loaded = Scenario("boolq", [], hub=source, split="validation").load("hub")
    assert loaded.source == "hub"
    assert [i.id for i in loaded.split("validation")] == ["v0", "v1"]
    assert [i.id for i in loaded.split("train")] == ["t0", "t1", "t2"]


def test_hf_splits_as_a_sequence_and_renaming(offline_hf: Path) -> None:
    only_validation = list(hf(str(offline_hf), splits=["validation"], fields=Fields(input="question", references="id"))())
    assert [i.split for i in only_validation] == ["validation", "validation"]
    renamed = list(hf(str(offline_hf), splits={"validation": "test"}, fields=Fields(input="question", references="id"))())
    assert [(i.id, i.split) for i in renamed] == [("v0", "test"), ("v1", "test")]


def test_hf_missing_split(offline_hf: Path) -> None:
    source = hf(str(offline_hf), splits={"test": "test"}, fields=Fields(input="question", references="id"))
    with pytest.raises(ScenarioError, match="has no split 'test'"):
        list(source())


def test_hf_unknown_dataset_offline_is_a_one_line_scenario_error(offline_hf: Path) -> None:
    name = "no-such-org-holistic/no-such-dataset-xyz"
    source = hf(name)
    assert source.name == name  # not a local path, so kept as a hub name
    with pytest.raises(ScenarioError) as raised:
        list(source())
    message = str(raised.value)
    assert repr(name) in message
    assert "\n" not in message


# -- Scenario ---------------------------------------------------------------------------------------


def test_duplicate_ids_name_the_id() -> None:
    instances = [Instance("q1", "a", ["x"]), Instance("dup-7", "b", ["y"]), Instance("dup-7", "c", ["z"])]
    with pytest.raises(ScenarioError) as raised:
        Scenario("qa", instances).load()
    assert "'dup-7'" in str(raised.value)
    assert "'qa'" in str(raised.value)


def test_empty_eval_split() -> None:
    with pytest.raises(ScenarioError) as raised:
        Scenario("qa", [Instance("q1", "a", ["x"], split="train")]).load()
    message = str(raised.value)
    assert "split 'test'" in message
    assert "train" in message  # lists the splits present


def test_no_instances_at_all() -> None:
    with pytest.raises(ScenarioError, match="none"):
        Scenario("qa", []).load()


def test_scenario_decorator_names_after_the_function() -> None:
    @scenario
    def capitals():
        """Capital cities."""
        yield Instance("fr", "Capital of France?", ["Paris"])
        yield Instance("it", "Capital of Italy?", ["Rome"])

    assert isinstance(capitals, Scenario)
    assert capitals.name == "capitals"
    assert capitals.description == "Capital cities."
    assert capitals.sources == ("local",)
    loaded = capitals.load()
    assert isinstance(loaded, LoadedScenario)
    assert [i.id for i in loaded.instances] == ["fr", "it"]
    assert loaded.provenance["kind"] == "python"
    # read once per source
    assert capitals.load() is loaded


def test_scenario_decorator_with_options() -> None:
    @scenario(name="renamed", split="validation", train_split="dev")
    def factory():
        yield Instance("a", "x", ["y"], split="validation")

    assert factory.name == "renamed"
    assert factory.split == "validation"
    assert factory.train_split == "dev"
    assert len(factory.load().instances) == 1


def test_generator_yielding_non_instance() -> None:
    @scenario
    def broken():
        yield Instance("a", "x", ["y"])
        yield {"id": "b"}

    with pytest.raises(ScenarioError) as raised:
        broken.load()
    assert "broken" in str(raised.value)
    assert "'id'" in str(raised.value)


def test_load_falls_back_to_local_without_hub() -> None:
    loaded = Scenario("qa", [Instance("a", "x", ["y"])]).load("hub")
    assert loaded.source == "local"


def test_hub_source_is_used_when_present(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "hub.jsonl", [{"id": "h1", "input": "x", "references": "y"}])
    qa = Scenario("qa", [Instance("a", "x", ["y"])], hub=jsonl(path))
    assert qa.sources == ("local", "hub")
    assert [i.id for i in qa.load("hub").instances] == ["h1"]
    assert [i.id for i in qa.load("local").instances] == ["a"]


def test_subsample() -> None:
    instances = tuple(Instance(f"q{k}", "x", ["y"]) for k in range(20))
    assert subsample(instances, None, 0) is instances
    assert subsample(instances, 50, 0) is instances
    chosen = subsample(instances, 5, seed=3)
    assert len(chosen) == 5
    assert chosen == subsample(instances, 5, seed=3)
    # original order is kept
    positions = [instances.index(i) for i in chosen]
    assert positions == sorted(positions)


def test_same_id_in_two_splits_is_allowed() -> None:
    # Hub datasets such as super_glue/boolq restart their index column in every split.
    loaded = Scenario("qa", [Instance("0", "a", ["x"], split="train"), Instance("0", "b", ["y"], split="test")]).load()
    assert [i.split for i in loaded.split("test")] == ["test"]


def test_fields_contrast_column_gives_partial_rows() -> None:
    fields = Fields(input="q", answer="answer", labels={True: "Yes", False: "No"})
    row = {"id": "a", "q": "are worker bees female", "answer": True, "contrast": [{"q": "are drones female", "answer": False}]}
    (contrast,) = build(fields, row).contrasts
    assert contrast.input == "are drones female"
    assert contrast.references == (Reference("Yes", False), Reference("No", True))
    as_text = build(fields, {**row, "contrast": json.dumps(row["contrast"])})  # a CSV cell holds JSON text
    assert as_text.contrasts == (contrast,)


@pytest.mark.parametrize(
    ("contrast", "fragment"),
    [
        ([{"qq": "are drones female", "answer": False}], "edits column(s) 'qq' the row does not have (columns: id, q, answer)"),
        ([{"q": "are worker bees female"}], "contrast 1 in field 'contrast' leaves the instance as it is"),
        ("are drones female", "field 'contrast' holds text that is not JSON"),
        ([1, 2], "field 'contrast' must be a list of partial rows"),
    ],
)
def test_fields_bad_contrast_names_the_field_and_the_fix(contrast: object, fragment: str) -> None:
    fields = Fields(input="q", answer="answer", labels={True: "Yes", False: "No"})
    row = {"id": "a", "q": "are worker bees female", "answer": True, "contrast": contrast}
    with pytest.raises(ScenarioError) as raised:
        build(fields, row)
    assert str(raised.value).startswith("origin.jsonl:1: ")
    assert fragment in str(raised.value)


def test_a_local_dataset_folder_keeps_the_split_names_of_its_files(tmp_path: Path) -> None:
    """datasets alone would read dev.jsonl as 'validation'; a copy of a hub dataset with a 'dev' split keeps it."""
    folder = tmp_path / "cais" / "mmlu"
    (folder / "data").mkdir(parents=True)
    row = {"question": "Bones in the adult body?", "subject": "anatomy", "choices": ["206", "12"], "answer": 0}
    write_jsonl(folder / "dev.jsonl", [row])
    write_jsonl(folder / "data" / "test-00000-of-00001.jsonl", [row, {**row, "question": "Chambers of the heart?"}])
    fields = Fields(id="{subject}-{index:05d}", input="question", choices="choices", answer="answer")
    instances = list(hf(str(folder), splits={"test": "test", "dev": "dev"}, fields=fields)())
    assert [(i.split, i.id) for i in instances] == [
        ("test", "anatomy-00000"),
        ("test", "anatomy-00001"),
        ("dev", "anatomy-00000"),
    ]


def test_the_markers_max_instances_and_the_option_both_hold(tmp_path: Path) -> None:
    """Both say "at most N": the smaller wins, so --holistic-max-instances 3 also shortens a run whose marker says 6."""
    from pytest_holistic.runspec import build_run

    ten = Scenario("ten", local=[Instance(f"i{k}", "x", ("y",)) for k in range(10)])
    assert len(build_run("k", (ten,), {"max_instances": 6}, "local", 3, tmp_path).instances) == 3
    assert len(build_run("k", (ten,), {"max_instances": 2}, "local", 3, tmp_path).instances) == 2
    assert len(build_run("k", (ten,), {"max_instances": 6}, "local", None, tmp_path).instances) == 6
    assert len(build_run("k", (ten,), {}, "local", None, tmp_path).instances) == 10
