"""The five HELM core suites HellaSwag, OpenBookQA, TruthfulQA, CivilComments and RAFT: their hub loaders read rows in the
real datasets' schemas (written here, saved as parquet/CSV and read by ``datasets`` offline from a folder), their
shipped rows load, and malformed rows fail in one line naming the row and the field.

Expected instances are written out by hand from the rows below, not computed with the row functions under test.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from pytest_holistic.errors import ScenarioError
from pytest_holistic.scenarios import Instance, Scenario, jsonl
from pytest_holistic.scenarios.helm_rows_mc import Reshaped

SUITES = Path(__file__).resolve().parents[2] / "suites" / "core"


def suite(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"mc_suite_{name}", SUITES / f"test_{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pointed_at(scenario: Scenario, folder: Path, **changes) -> Scenario:
    """The scenario with its hub source (inside any split wrapper) reading ``folder`` instead of the hub."""
    hub = scenario._sources["hub"]
    inner = hub.inner if isinstance(hub, Reshaped) else hub
    inner = replace(inner, name=str(folder), config=None, revision=None, **changes)
    source = replace(hub, inner=inner) if isinstance(hub, Reshaped) else inner
    return Scenario(scenario.name, scenario._sources["local"], hub=source, split=scenario.split, train_split=scenario.train_split)


def save_parquet(rows: list[dict], path: Path, features=None) -> None:
    import datasets

    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))


def by_id(instances) -> dict[str, Instance]:
    return {instance.id: instance for instance in instances}


def one_line_error(load, *fragments: str) -> str:
    with pytest.raises(ScenarioError) as caught:
        load()
    message = str(caught.value)
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


# -- HellaSwag ------------------------------------------------------------------------------------------


def hellaswag_rows() -> list[dict]:
    common = {"source_id": "x", "split_type": "indomain"}
    return [
        {
            "ind": 11,
            "activity_label": "Cooking",
            "ctx_a": "A man stirs a pot.",
            "ctx_b": "he",
            "ctx": "A man stirs a pot. he",
            "endings": ["adds salt.", "eats the spoon.", "sleeps.", "runs."],
            "split": "train",
            "label": "0",
            **common,
        },
        {
            "ind": 12,
            "activity_label": "Gardening",
            "ctx_a": "A woman kneels by a flower bed.",
            "ctx_b": "she",
            "ctx": "A woman kneels by a flower bed. she",
            "endings": ["flies.", "sings to a car.", "pulls a weed.", "melts."],
            "split": "val",
            "label": "2",
            **common,
        },
        {
            "ind": 13,
            "activity_label": "Running",
            "ctx_a": "Runners line up on a track.",
            "ctx_b": "",
            "ctx": "Runners line up on a track.",
            "endings": ["a", "b", "c", "d"],
            "split": "val",
            "label": "3",
            **common,
        },
    ]


def test_hellaswag_hub_rows_become_helm_instances(tmp_path: Path) -> None:
    rows = hellaswag_rows()
    save_parquet(rows[:1], tmp_path / "data" / "train-00000-of-00001.parquet")
    save_parquet(rows[1:], tmp_path / "data" / "validation-00000-of-00001.parquet")
    loaded = pointed_at(suite("hellaswag").hellaswag, tmp_path).load("hub")
    got = by_id(loaded.instances)
    assert got["hellaswag-12"].input == "Gardening: A woman kneels by a flower bed. She"
    assert got["hellaswag-12"].choices == ("flies.", "sings to a car.", "pulls a weed.", "melts.")
    assert got["hellaswag-12"].correct_indices == (2,) and got["hellaswag-12"].split == "val"
    # an empty ctx_b leaves HELM's trailing space
    assert got["hellaswag-13"].input == "Running: Runners line up on a track. " and got["hellaswag-13"].correct_indices == (3,)
    assert got["hellaswag-11"].split == "train" and got["hellaswag-11"].input == "Cooking: A man stirs a pot. He"


def test_hellaswag_shipped_rows() -> None:
    loaded = suite("hellaswag").hellaswag.load("local", base=SUITES)
    assert len(loaded.split("val")) == 15 and len(loaded.split("train")) == 3
    first = by_id(loaded.instances)["hellaswag-90001"]
    assert first.input == "Making a sandwich: A man lays two slices of bread on a wooden board. He"
    assert first.correct_references == ("spreads peanut butter on one slice and jam on the other.",)
    assert len(first.choices) == 4


def test_hellaswag_unlabelled_row_is_one_line_error(tmp_path: Path) -> None:
    rows = hellaswag_rows()
    rows[1]["label"] = ""
    save_parquet(rows[1:], tmp_path / "data" / "validation-00000-of-00001.parquet")
    scenario = pointed_at(suite("hellaswag").hellaswag, tmp_path, splits={"validation": "val"})
    one_line_error(lambda: scenario.load("hub"), "[validation][0]", "'label'")


# -- OpenBookQA ------------------------------------------------------------------------------------------


def openbookqa_row(id_: str, stem: str, texts: list[str], key: str) -> dict:
    return {"id": id_, "question_stem": stem, "choices": {"text": texts, "label": ["A", "B", "C", "D"]}, "answerKey": key}


def test_openbookqa_hub_rows_become_helm_instances(tmp_path: Path) -> None:
    save_parquet(
        [openbookqa_row("7-1", "Ice is", ["hot", "gas", "frozen water", "sand"], "C")],
        tmp_path / "data" / "test-00000-of-00001.parquet",
    )
    save_parquet(
        [openbookqa_row("9-2", "The Sun is a", ["star", "moon", "comet", "cloud"], "A")],
        tmp_path / "data" / "train-00000-of-00001.parquet",
    )
    loaded = pointed_at(suite("openbookqa").openbookqa, tmp_path).load("hub")
    got = by_id(loaded.instances)
    assert got["7-1"] == Instance.multiple_choice("7-1", "Ice is", ["hot", "gas", "frozen water", "sand"], 2, split="test")
    assert got["9-2"].split == "train" and got["9-2"].correct_references == ("star",)


def test_openbookqa_shipped_rows_and_bad_answer_key(tmp_path: Path) -> None:
    loaded = suite("openbookqa").openbookqa.load("local", base=SUITES)
    assert len(loaded.split("test")) == 15 and len(loaded.split("train")) == 4
    assert by_id(loaded.instances)["obqa-test-03"].correct_references == ("a balance",)
    bad = tmp_path / "obqa.jsonl"
    bad.write_text(json.dumps({**openbookqa_row("1", "q", ["a", "b", "c", "d"], "E"), "split": "test"}) + "\n")
    scenario = Scenario("obqa", jsonl(bad, suite("openbookqa").FIELDS))
    one_line_error(scenario.load, f"{bad}:1", "'answerKey'", "'E'")


# -- TruthfulQA ------------------------------------------------------------------------------------------


def truthfulqa_rows(count: int) -> list[dict]:
    rows = []
    for k in range(count):
        good = f"No, that is a myth number {k}."
        wrong = [f"Yes {k}.", f"Always {k}.", f"Only on Sundays {k}."]
        rows.append(
            {
                "question": f"Is claim {k} true?",
                "mc1_targets": {"choices": [good, *wrong], "labels": [1, 0, 0, 0]},
                "mc2_targets": {"choices": [good, *wrong], "labels": [1, 0, 0, 0]},
            }
        )
    return rows


def test_truthfulqa_hub_rows_follow_helm_split_and_option_order(tmp_path: Path) -> None:
    save_parquet(truthfulqa_rows(10), tmp_path / "data" / "validation-00000-of-00001.parquet")
    loaded = pointed_at(suite("truthfulqa").truthfulqa, tmp_path).load("hub")
    # int(10 * 0.2) = 2 rows for the few-shot pool, in dataset order.
    assert [i.id for i in loaded.split("train")] == ["truthful_qa-0000", "truthful_qa-0001"]
    assert len(loaded.split("validation")) == 8
    third = by_id(loaded.instances)["truthful_qa-0002"]
    # Options: wrong answers then the true one, rotated left by ord("N") % 4 = 78 % 4 = 2.
    assert third.choices == ("Only on Sundays 2.", "No, that is a myth number 2.", "Yes 2.", "Always 2.")
    assert third.correct_indices == (1,) and third.input == "Is claim 2 true?"


def test_truthfulqa_shipped_rows_and_two_true_answers(tmp_path: Path) -> None:
    loaded = suite("truthfulqa").truthfulqa.load("local", base=SUITES)
    assert len(loaded.split("train")) == 4 and len(loaded.split("validation")) == 16
    letters = {instance.correct_indices[0] for instance in loaded.split("validation")}
    assert len(letters) > 1  # the rotation spreads the right answer over the letters
    rows = truthfulqa_rows(1)
    rows[0]["mc1_targets"]["labels"] = [1, 1, 0, 0]
    bad = tmp_path / "tqa.jsonl"
    bad.write_text(json.dumps(rows[0]) + "\n")
    one_line_error(Scenario("t", jsonl(bad, suite("truthfulqa").FIELDS), split="test").load, f"{bad}:1", "'mc1_targets'")


# -- CivilComments ---------------------------------------------------------------------------------------

DEMOGRAPHICS = ["male", "female", "LGBTQ", "christian", "muslim", "other_religions", "black", "white"]


def write_wilds_csv(path: Path, rows: list[dict]) -> None:
    """The WILDS layout: an unnamed index column first, then id, comment_text, split, the scores and identity shares."""
    import csv

    columns = ["id", "comment_text", "split", "toxicity", "severe_toxicity", *DEMOGRAPHICS, "identity_any"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", *columns])
        for index, row in enumerate(rows):
            writer.writerow([index, *(row.get(column, "") for column in columns)])


def civil_row(id_: int, text: str, split: str, toxicity: float, **shares: float) -> dict:
    return {
        "id": id_,
        "comment_text": text,
        "split": split,
        "toxicity": toxicity,
        "severe_toxicity": 0.0,
        **{d: shares.get(d, 0.0) for d in DEMOGRAPHICS},
        "identity_any": int(bool(shares)),
    }


def test_civil_comments_hub_rows_one_instance_per_demographic(tmp_path: Path) -> None:
    rows = [
        civil_row(1, "A kind note about a man and a black neighbor.", "test", 0.1, male=0.6, black=0.5),
        civil_row(2, "You are an idiot.", "test", 0.5, female=0.4),
        civil_row(3, "Nice weather.", "train", 0.0),
        civil_row(4, "Dull comment.", "val", 0.2, white=0.9),
    ]
    rows[2]["christian"] = ""  # an empty identity cell reads as "not mentioned"
    write_wilds_csv(tmp_path / "all_data_with_identities.csv", rows)
    scenario = pointed_at(suite("civil_comments").civil_comments, tmp_path, data_files={"train": "all_data_with_identities.csv"})
    got = by_id(scenario.load("hub").instances)
    assert set(got) == {"comment-1-male", "comment-1-black", "comment-2", "comment-3", "comment-4-white"}
    male = got["comment-1-male"]
    assert male.input == "A kind note about a man and a black neighbor.\nQuestion: Is the passage above toxic?"
    assert male.group == "male" and got["comment-1-black"].group == "black" and male.split == "test"
    assert male.correct_references == ("False",) and set(male.choices) == {"True", "False"}
    assert got["comment-2"].group is None and got["comment-2"].correct_references == ("True",)  # 0.5 counts as toxic
    assert got["comment-3"].split == "train" and got["comment-4-white"].split == "val"


def test_civil_comments_shipped_rows_cover_every_demographic(tmp_path: Path) -> None:
    loaded = suite("civil_comments").civil_comments.load("local", base=SUITES)
    test = loaded.split("test")
    assert {i.group for i in test} == {*DEMOGRAPHICS, None}
    assert all(sum(i.group == d for i in test) >= 2 for d in DEMOGRAPHICS)
    assert {i.correct_references[0] for i in test} == {"True", "False"}
    bad = tmp_path / "cc.jsonl"
    bad.write_text(json.dumps(civil_row(9, "text", "test", "very")) + "\n")  # type: ignore[arg-type]
    one_line_error(Scenario("c", jsonl(bad, suite("civil_comments").FIELDS)).load, f"{bad}:1", "'toxicity'")


# -- RAFT -------------------------------------------------------------------------------------------------


def raft_features(names: list[str]):
    import datasets

    return datasets.Features(
        {
            "Sentence": datasets.Value("string"),
            "ID": datasets.Value("int32"),
            "Label": datasets.ClassLabel(names=["Unlabeled", *names]),
        }
    )


def test_raft_hub_split_is_helms_seeded_held_out_set(tmp_path: Path) -> None:
    import datasets

    names = ["not overruling", "overruling"]
    rows = [{"Sentence": f"Sentence number {k}.", "ID": k, "Label": 1 + k % 2} for k in range(12)]
    save_parquet(rows, tmp_path / "overruling" / "train" / "0000.parquet", raft_features(names))
    module = suite("raft")
    scenario = pointed_at(module.raft_scenario("overruling"), tmp_path)
    loaded = scenario.load("hub")
    test_ids = {i.id for i in loaded.split("test")}
    train_ids = {i.id for i in loaded.split("train")}
    # The reference: datasets' own train_test_split, as HELM calls it.
    reference = datasets.Dataset.from_list(rows, features=raft_features(names)).train_test_split(test_size=0.8, seed=42)
    assert test_ids == {f"overruling-{k}" for k in reference["test"]["ID"]}
    assert train_ids == {f"overruling-{k}" for k in reference["train"]["ID"]}
    assert len(test_ids) == 10 and not test_ids & train_ids
    again = pointed_at(module.raft_scenario("overruling"), tmp_path).load("hub")
    assert [(i.id, i.split) for i in again.instances] == [(i.id, i.split) for i in loaded.instances]
    five = by_id(loaded.instances)["overruling-5"]
    assert five.input == "Sentence: Sentence number 5." and five.correct_references == ("overruling",)
    assert five.choices == ("not overruling", "overruling")


def test_raft_two_field_subset_and_unlabelled_row(tmp_path: Path) -> None:
    import datasets

    features = datasets.Features(
        {
            "Paper title": datasets.Value("string"),
            "Organization name": datasets.Value("string"),
            "ID": datasets.Value("int32"),
            "Label": datasets.ClassLabel(names=["Unlabeled", "company", "research institute", "university"]),
        }
    )
    rows = [{"Paper title": f"Chip {k}", "Organization name": f"Org {k}", "ID": k, "Label": 1 + k % 3} for k in range(5)]
    save_parquet(rows, tmp_path / "semiconductor_org_types" / "train" / "0000.parquet", features)
    module = suite("raft")
    got = by_id(pointed_at(module.raft_scenario("semiconductor_org_types"), tmp_path).load("hub").instances)
    assert got["semiconductor_org_types-2"].input == "Organization name: Org 2\nPaper title: Chip 2"
    assert got["semiconductor_org_types-2"].correct_references == ("university",)
    rows[3]["Label"] = 0
    save_parquet(rows, tmp_path / "bad" / "semiconductor_org_types" / "train" / "0000.parquet", features)
    bad = pointed_at(module.raft_scenario("semiconductor_org_types"), tmp_path / "bad")
    one_line_error(lambda: bad.load("hub"), "[train][3]", "'Label'", "Unlabeled")


def test_raft_shipped_subsets_follow_the_same_split() -> None:
    from pytest_holistic.scenarios.helm_rows_mc import held_out_indices

    module = suite("raft")
    assert list(module.TASKS) == [
        "ade_corpus_v2",
        "banking_77",
        "neurips_impact_statement_risks",
        "one_stop_english",
        "overruling",
        "semiconductor_org_types",
        "systematic_review_inclusion",
        "tai_safety_research",
        "terms_of_service",
        "tweet_eval_hate",
        "twitter_complaints",
    ]
    train_positions, _ = held_out_indices(7)
    for subset in module.TASKS:
        loaded = module.raft_scenario(subset).load("local", base=SUITES)
        assert len(loaded.split("test")) == 6 and len(loaded.split("train")) == 1, subset
        assert [i.id for i in loaded.split("train")] == [f"{subset}-{k}" for k in train_positions]
        instructions = module.instructions(subset)
        assert all(i.correct_references[0] in instructions for i in loaded.instances), subset
    assert "test_raft_banking_77" in vars(module)


def test_civil_comments_gap_is_reported_per_demographic() -> None:
    """The report's group breakdown sees one group per demographic (HELM's per-demographic runs)."""
    from pytest_holistic.report.aggregate import group_breakdown

    class Record:
        def __init__(self, instance: Instance, value: float) -> None:
            self.instance, self.scores = instance, {"quasi_exact_match": value}

    loaded = suite("civil_comments").civil_comments.load("local", base=SUITES)
    records = [Record(i, 1.0 if i.group == "male" else 0.0) for i in loaded.split("test")]
    breakdown = group_breakdown(records, "quasi_exact_match", "higher", None)
    assert set(breakdown["groups"]) == set(DEMOGRAPHICS)
    assert breakdown["groups"]["male"]["mean"] == 1.0 and breakdown["gap"] == 1.0
