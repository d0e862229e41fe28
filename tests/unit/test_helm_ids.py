"""HELM's positional ids (``HelmIds``): split order, per-group runs, label blocks, and the loaders that set them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_holistic.errors import ScenarioError
from pytest_holistic.scenarios import Fields, Instance, Scenario, jsonl
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows import boolq_row


def make(id: str, split: str, group: str | None = None, answer: str = "A") -> Instance:
    return Instance(id, id, (answer,), split=split, group=group)


def test_ids_follow_helms_split_order_not_the_load_order() -> None:
    loaded = [make("v1", "valid"), make("t1", "train"), make("v2", "valid"), make("t2", "train"), make("x", "other")]
    got = {instance.id: instance.helm_id for instance in HelmIds(("train", "valid")).assign(loaded)}
    assert got == {"t1": "id0", "t2": "id1", "v1": "id2", "v2": "id3", "x": None}


def test_per_group_runs_count_from_zero_each() -> None:
    loaded = [make("a-test", "test", "a"), make("b-dev", "dev", "b"), make("a-dev", "dev", "a"), make("b-test", "test", "b")]
    got = {instance.id: instance.helm_id for instance in HelmIds(("dev", "test"), per_group=True).assign(loaded)}
    assert got == {"a-dev": "id0", "a-test": "id1", "b-dev": "id0", "b-test": "id1"}


def test_answer_blocks_order_a_split() -> None:
    loaded = [make("n1", "test", answer="Negative"), make("p1", "test", answer="Positive"), make("p2", "test", answer="Positive")]
    got = [i.helm_id for i in HelmIds(("test",), answers=("Positive", "Negative")).assign(loaded)]
    assert got == ["id2", "id0", "id1"]


def test_a_split_named_twice_is_refused() -> None:
    with pytest.raises(ScenarioError, match="each split once"):
        HelmIds(("train", "train"))


def test_a_scenario_with_helm_ids_sets_them_and_keeps_its_own(tmp_path: Path) -> None:
    rows = [
        {"id": "q1", "split": "validation", "input": "x", "references": ["y"]},
        {"id": "q0", "split": "train", "input": "a", "references": ["b"]},
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    scenario = Scenario("s", local=jsonl("rows.jsonl"), split="validation", helm=HelmIds(("train", "validation")))
    loaded = scenario.load("local", base=tmp_path).instances
    assert [(i.id, i.helm_id, i.seed_id) for i in loaded] == [("q1", "id1", "id1"), ("q0", "id0", "id0")]


def test_a_contrast_edit_goes_through_prepare_as_its_row_does(tmp_path: Path) -> None:
    row = {"passage": "P", "question": "is it SO", "answer": True, "contrast": [{"question": "is it NOT so", "answer": False}]}
    fields = Fields(
        input="{passage}\nQuestion: {question}?", labels={True: "Yes", False: "No"}, answer="answer", prepare=boolq_row
    )
    instance = fields.to_instance(row, 0, "validation", "row")
    assert instance.input == "P\nQuestion: Is it so?"
    assert [contrast.input for contrast in instance.contrasts] == ["P\nQuestion: Is it not so?"]


def test_a_hub_source_gets_no_ids_when_helms_order_is_not_in_its_rows(tmp_path: Path) -> None:
    rows = [{"id": "q0", "split": "test", "input": "x", "references": ["y"]}]
    (tmp_path / "rows.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    helm = HelmIds(("test",), hub=False)
    scenario = Scenario("s", local=jsonl("rows.jsonl"), hub=jsonl("rows.jsonl"), split="test", helm=helm)
    assert scenario.load("local", base=tmp_path).instances[0].helm_id == "id0"
    assert scenario.load("hub", base=tmp_path).instances[0].helm_id is None
