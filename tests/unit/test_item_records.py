"""The per-item data path: lean records serialised once, cache keys computed in bulk, and the report's layout."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math

import pytest

from pytest_holistic.models.base import GenerationRequest, LoglikelihoodRequest, ModelInfo
from pytest_holistic.models.cache import model_key, request_key, request_keys
from pytest_holistic.plans import Completion
from pytest_holistic.records import ItemRecord
from pytest_holistic.report.json_report import _finite, render
from pytest_holistic.scenarios.instance import Instance, Reference


def _record(**changes: object) -> ItemRecord:
    instance = Instance("q1", "Is ice hot?", (Reference("Yes", False), Reference("No", True)), group="g", tags=("t",))
    completion = Completion(
        text="B",
        prompt="Question: Is ice hot?\nA. Yes\nB. No\nAnswer:",
        gold=("B",),
        choices=("A", "B"),
        predicted_index=1,
        probability=0.75,
        logprob=-0.29,
        choice_logprobs=(-1.5, -0.29),
        tokens_in=12,
        tokens_out=1,
        seconds=0.01,
        correct_indices=(1,),
        truncated_tokens=2,
        cached=True,
    )
    values: dict[str, object] = {
        "nodeid": "test_x.py::test_q[q1]",
        "run_key": "test_x.py::test_q",
        "instance": instance,
        "perturbation": None,
        "prompt": completion.prompt,
        "completion": completion,
        "scores": {"exact_match": 1.0},
        "outcome": "passed",
        "worker": "gw1",
        "scorers": {"toxicity": {"name": "clf", "version": "1"}},
        "skipped": ("bias not scored: no words",),
    }
    values.update(changes)
    return ItemRecord(**values)  # type: ignore[arg-type]


def test_record_round_trip_keeps_every_field_and_reuses_the_data_it_came_from() -> None:
    record = _record()
    data = json.loads(json.dumps(record.to_data()))  # as it arrives from an xdist worker
    back = ItemRecord.from_data(data)
    assert back == record
    assert back.cached and back.truncated_tokens == 2 and back.completion is not None and back.completion.correct
    assert back.to_data() is data  # the controller does not serialise the item a second time
    assert record.to_data() is record.to_data()  # nor does the worker


def test_record_without_an_answer_round_trips() -> None:
    record = _record(completion=None, prompt=None, outcome="error", error="model failed", scores={})
    back = ItemRecord.from_data(json.loads(json.dumps(record.to_data())))
    assert back == record and not back.answered and back.to_data()["execution"]["seconds"] is None


def test_records_and_completions_are_slotted_and_carry_no_run_or_model() -> None:
    record = _record()
    assert not hasattr(record, "__dict__") and not hasattr(record.completion, "__dict__")
    assert set(record.to_data()) == {
        "nodeid", "run", "instance_id", "perturbation", "instance", "prompt", "completion",
        "scores", "scorers", "outcome", "skipped", "error", "execution",
    }  # fmt: skip
    assert record.to_data()["run"] == "test_x.py::test_q"  # the run is named, its description travels once per run


def test_replaced_record_rebuilds_its_data() -> None:
    record = _record()
    first = record.to_data()
    changed = dataclasses.replace(record, outcome="failed")
    assert changed.to_data()["outcome"] == "failed" and first["outcome"] == "passed"


def test_completion_record_matches_the_dataclass_fields() -> None:
    completion = _record().completion
    assert completion is not None
    expected = dataclasses.asdict(completion)
    expected.update({key: list(expected[key]) for key in ("gold", "choices", "choice_logprobs", "correct_indices", "choice_scores", "ranking")})
    expected["correct"] = True
    assert completion.to_record() == expected
    assert all(not isinstance(value, tuple) for value in completion.to_record().values())


def _legacy_key(info: ModelInfo, kind: str, request: GenerationRequest | LoglikelihoodRequest) -> str:
    """How earlier versions keyed a request (a scoring request had two fields); a cache filled by them must still answer."""
    fields = (request.context, request.continuation) if isinstance(request, LoglikelihoodRequest) else dataclasses.astuple(request)
    payload = json.dumps([model_key(info), kind, fields], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def test_bulk_request_keys_are_the_keys_of_earlier_versions() -> None:
    info = ModelInfo("m", "transformers", "sha256:1", variant={"dtype": "float32", "device": "cpu"})
    generations = [GenerationRequest("Q: é?\nA:", 5, ("\n", "."), 0.0, 3), GenerationRequest("x", 1, (), 0.0, 0)]
    scorings = [LoglikelihoodRequest("Is fire hot?", " Yes"), LoglikelihoodRequest("", "")]
    assert request_keys(info, "generate", generations) == [_legacy_key(info, "generate", r) for r in generations]
    assert request_keys(info, "loglikelihood", scorings) == [_legacy_key(info, "loglikelihood", r) for r in scorings]
    assert request_key(info, "generate", generations[0]) == _legacy_key(info, "generate", generations[0])
    assert request_keys(info, "generate", []) == []


def test_a_scoring_request_from_a_texts_start_has_a_key_of_its_own() -> None:
    info = ModelInfo("m", "transformers", "sha256:1")
    plain, opening = LoglikelihoodRequest("Call me", " Ishmael"), LoglikelihoodRequest("Call me", " Ishmael", text_start=True)
    assert request_key(info, "loglikelihood", opening) != request_key(info, "loglikelihood", plain)
    assert request_key(info, "loglikelihood", plain) == _legacy_key(info, "loglikelihood", plain)


def test_rendered_report_is_the_payload_with_one_line_per_record() -> None:
    records = [_record(nodeid=f"test_x.py::test_q[q{k}]").to_data() for k in range(3)]
    payload = {
        "schema": "pytest-holistic/report",
        "runs": [
            {"key": "a", "metrics": {"m": {"ci95": [0.1, 0.9]}}, "instances": records},
            {"key": "b", "instances": []},
            {"key": "c"},
        ],
        "workers": {"main": {"peak_rss_mib": 1.5}},
    }
    text = render(payload)
    assert json.loads(text) == payload
    lines = text.splitlines()
    for record in records:
        assert (
            f"    {json.dumps(record, ensure_ascii=False)}" in lines or f"    {json.dumps(record, ensure_ascii=False)}," in lines
        )
    assert '   "instances": []' in lines
    assert json.loads(render({"runs": []})) == {"runs": []}


def test_rendered_report_keeps_text_that_looks_like_a_marker() -> None:
    record = _record(prompt="\0holistic-instances-0\0", error="\0holistic-instances-1\0").to_data()
    payload = {"runs": [{"key": "a", "instances": [record]}, {"key": "b", "instances": [record]}]}
    assert json.loads(render(payload)) == payload


def test_finite_writes_null_for_nan_and_infinity_without_touching_the_input() -> None:
    record = _record(scores={"x": math.nan}).to_data()
    cleaned = _finite({"runs": [{"instances": [record]}], "v": math.inf, "t": (1.0, -math.inf)})
    assert cleaned["v"] is None and cleaned["t"] == [1.0, None]
    assert cleaned["runs"][0]["instances"][0]["scores"] == {"x": None}
    assert math.isnan(record["scores"]["x"])  # the record's shared data is copied, never changed
    with pytest.raises(ValueError):
        render({"v": math.nan})  # what the writer refuses, _finite is there to prevent


def test_an_instances_helm_id_round_trips_and_is_left_out_when_unset() -> None:
    instance = dataclasses.replace(_record().instance, helm_id="id17")
    record = _record(instance=instance)
    back = ItemRecord.from_data(json.loads(json.dumps(record.to_data())))
    assert back.instance.helm_id == "id17" and back.instance.seed_id == "id17" and back == record
    assert "helm_id" not in _record().to_data()["instance"] and _record().instance.seed_id == "q1"
