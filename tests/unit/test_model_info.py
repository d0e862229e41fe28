"""A ModelInfo is never changed once made: a model whose details change holds a new one."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from pytest_holistic.models.base import ModelInfo


def test_details_and_variant_cannot_be_changed_in_place() -> None:
    info = ModelInfo("m", "transformers", "r", {"batch_size": 8}, {"dtype": "float32"})
    with pytest.raises(TypeError):
        info.details["batch_size"] = 4  # type: ignore[index]
    with pytest.raises(TypeError):
        info.variant["dtype"] = "bfloat16"  # type: ignore[index]
    for change in ("clear", "popitem"):
        with pytest.raises(TypeError):
            getattr(info.details, change)()
    with pytest.raises(TypeError):
        info.details.update({"batch_size": 4})  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        info.variant.pop("dtype")  # type: ignore[attr-defined]
    assert info.details == {"batch_size": 8} and info.variant == {"dtype": "float32"}


def test_its_mappings_are_still_dicts_to_json_and_comparisons() -> None:
    info = ModelInfo("m", "transformers", "r", {"batch_size": 8}, {"dtype": "float32"})
    assert json.dumps(info.details) == '{"batch_size": 8}' and json.dumps(info.variant, sort_keys=True) == '{"dtype": "float32"}'
    assert info.details == {"batch_size": 8} and {**info.variant, "x": "1"} == {"dtype": "float32", "x": "1"}


def test_the_callers_dicts_are_copied() -> None:
    details, variant = {"device": "cpu"}, {"dtype": "float32"}
    info = ModelInfo("m", "transformers", "r", details, variant)
    details["device"] = "cuda"
    variant["dtype"] = "bfloat16"
    assert info.details == {"device": "cpu"} and info.variant == {"dtype": "float32"}


def test_with_details_makes_a_new_info_in_the_order_an_in_place_change_had() -> None:
    info = ModelInfo("m", "transformers", "r", {"a": 1, "b": 2, "c": 3})
    changed = info.with_details({"a": 10, "d": 4, "b": 20}, drop=("b",))
    assert info.details == {"a": 1, "b": 2, "c": 3}  # the old one is untouched
    expected: dict[str, object] = {"a": 1, "b": 2, "c": 3}
    expected.pop("b")
    expected.update({"a": 10, "d": 4, "b": 20})
    assert json.dumps(changed.to_data()["details"]) == json.dumps(expected)  # same keys, same order
    assert list(changed.with_variant({"x": "1"}).variant) == ["x"]


def test_it_pickles_copies_and_round_trips_as_before() -> None:
    info = ModelInfo("m", "transformers", "r", {"batch_size": 8}, {"dtype": "float32"})
    assert pickle.loads(pickle.dumps(info)) == info
    assert copy.deepcopy(info) == info
    copied = copy.deepcopy(info)
    with pytest.raises(TypeError):
        copied.details["batch_size"] = 1  # type: ignore[index]  # a copy is as read-only as the original
    data = info.to_data()
    assert json.dumps(data) == json.dumps(
        {"name": "m", "backend": "transformers", "revision": "r", "variant": {"dtype": "float32"}, "details": {"batch_size": 8}}
    )
    assert ModelInfo.from_data(data) == info
