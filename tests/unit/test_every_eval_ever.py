"""The Every Eval Ever export of hand-built runs: it validates against the coalition's schemas (0.2.2, kept in
tests/conformance/data/every_eval_ever/), its numbers read back equal to report.json's, and what the schema cannot
state truthfully is left out with its reason."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

# The report's bootstrap imports numpy; imported here first, as the other report tests do.
import numpy  # noqa: F401
import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from pytest_holistic import metrics
from pytest_holistic.plans import Completion
from pytest_holistic.records import ItemRecord, RunInfo
from pytest_holistic.report.aggregate import Results, RunResults
from pytest_holistic.report.every_eval_ever import EvaluationLog, convert, file_stem, metric_scale, sample_hash
from pytest_holistic.report.export_every_eval_ever import write_log
from pytest_holistic.report.json_report import build_report
from pytest_holistic.scenarios.instance import Instance, Reference

SCHEMAS = Path(__file__).resolve().parents[1] / "conformance" / "data" / "every_eval_ever"
ANSWERS = {"bees": ("Yes", 1.0, 1.0), "ants": ("Yes", 0.0, 0.5), "cats": ("No", 1.0, 1.0), "owls": ("Maybe", 0.0, 0.0)}


def validators() -> tuple[Draft7Validator, Draft7Validator]:
    aggregate = json.loads((SCHEMAS / "eval.schema.json").read_text(encoding="utf-8"))
    instance = json.loads((SCHEMAS / "instance_level_eval.schema.json").read_text(encoding="utf-8"))
    return Draft7Validator(aggregate), Draft7Validator(instance)


def errors(validator: Draft7Validator | Draft202012Validator, data: Any) -> list[str]:
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(data)]


def _run(key: str, scenario: str, provenance: dict[str, Any], multiple_choice: bool) -> RunResults:
    info = RunInfo(key, scenario, "test", "local", provenance, {"method": "generation", "max_tokens": 3}, (), (), ())
    run = RunResults(info)
    for index, (name, (text, exact, f1)) in enumerate(ANSWERS.items()):
        references = (
            (Reference("Yes", name != "ants"), Reference("No", name == "ants")) if multiple_choice else (Reference("Yes"),)
        )
        instance = Instance(name, f"Do {name} sting?", references)
        completion = Completion(
            text=text, prompt=f"Q: Do {name} sting?\nA:", gold=("Yes",), tokens_in=7, tokens_out=1, seconds=0.25
        )
        scores = {"exact_match": exact, "f1_score": f1, "valid": 1.0}
        run.add(ItemRecord(f"{key}[{name}]", key, instance, None, completion.prompt, completion, scores, "passed", "main"))
    return run


def hand_built_report() -> dict[str, Any]:
    """Two runs of four answers (one multiple choice from a shipped file, one from the hub), as report.json holds them."""
    hub = {"kind": "hf", "name": "org/hive", "config": None, "revision": "abc123"}
    runs = [
        _run("t.py::test_hive", "hive", {"kind": "python", "where": "t.py:1"}, multiple_choice=True),
        _run("t.py::test_hub", "hub_hive", hub, multiple_choice=False),
    ]
    started = "2026-01-01T00:00:00+00:00"
    return build_report(
        Results("org/tiny-model", None, runs, [], {}, ["pytest"], run_id="20260101-000000-abcdef", started=started)
    )


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return hand_built_report()


@pytest.fixture(scope="module")
def logs(report: dict[str, Any]) -> list[EvaluationLog]:
    return convert(report, {}, metrics.find)


def test_every_file_validates_against_the_coalition_schemas(logs: list[EvaluationLog], tmp_path: Path) -> None:
    aggregate, instance = validators()
    assert len(logs) == 2
    for log in logs:
        written = json.loads(write_log(tmp_path, log).read_text(encoding="utf-8"))
        assert errors(aggregate, written) == []
        lines = (tmp_path / f"{log.stem}_samples.jsonl").read_text(encoding="utf-8").splitlines()
        assert lines and all(errors(instance, json.loads(line)) == [] for line in lines)


def test_the_numbers_read_back_equal_to_the_report(logs: list[EvaluationLog], report: dict[str, Any], tmp_path: Path) -> None:
    for log, run in zip(logs, report["runs"], strict=True):
        written = json.loads(write_log(tmp_path, log).read_text(encoding="utf-8"))
        samples = tmp_path / written["detailed_evaluation_results"]["file_path"]
        data = samples.read_bytes()
        rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
        detailed = written["detailed_evaluation_results"]
        assert (detailed["total_rows"], detailed["checksum"]) == (len(rows), hashlib.sha256(data).hexdigest())
        results = {result["evaluation_result_id"]: result for result in written["evaluation_results"]}
        assert set(results) == {"exact_match", "f1_score"}
        for name, result in results.items():
            expected = run["metrics"][name]
            uncertainty = result["score_details"]["uncertainty"]
            assert result["score_details"]["score"] == expected["value"]
            assert uncertainty["num_samples"] == expected["n"] == 4
            interval = uncertainty["confidence_interval"]
            assert [interval["lower"], interval["upper"]] == expected["ci95"]
            assert interval["method"] == expected["interval"]
            linked = [row for row in rows if row["evaluation_result_id"] == name]
            assert len(linked) == expected["n"]
            by_instance = {record["instance_id"]: record["scores"][name] for record in run["instances"]}
            assert {row["sample_id"]: row["evaluation"]["score"] for row in linked} == by_instance
        assert {row["evaluation_id"] for row in rows} == {written["evaluation_id"]}
        assert {row["model_id"] for row in rows} == {written["model_info"]["id"]} == {"org/tiny-model"}


def test_a_row_carries_input_prompt_output_gold_and_ids(logs: list[EvaluationLog]) -> None:
    hive, hub = logs
    row = next(row for row in hive.rows if row["sample_id"] == "ants" and row["evaluation_result_id"] == "exact_match")
    assert row["input"] == {
        "raw": "Do ants sting?",
        "formatted": "Q: Do ants sting?\nA:",
        "reference": ["No"],
        "choices": ["Yes", "No"],
    }
    assert row["output"] == {"raw": ["Yes"]}
    assert row["evaluation"] == {"score": 0.0, "is_correct": False}
    assert row["sample_hash"] == sample_hash("Do ants sting?", ["No"])
    assert row["token_usage"] == {"input_tokens": 7, "output_tokens": 1, "total_tokens": 8}
    assert row["metadata"]["nodeid"] == "t.py::test_hive[ants]"
    partial = next(row for row in hive.rows if row["sample_id"] == "ants" and row["evaluation_result_id"] == "f1_score")
    assert partial["evaluation"] == {"score": 0.5, "is_correct": False}  # correct means the metric's best score
    assert next(row for row in hub.rows if row["sample_id"] == "bees")["input"]["choices"] is None


def test_provenance_model_library_and_sources(logs: list[EvaluationLog], report: dict[str, Any]) -> None:
    hive, hub = (log.aggregate for log in logs)
    assert hive["evaluation_id"] == "t.py__test_hive/org_tiny-model/20260101-000000-abcdef"
    assert hive["eval_library"]["name"] == "pytest-holistic"
    assert hive["eval_library"]["additional_details"]["run_id"] == report["run_id"]
    assert hive["evaluation_timestamp"] == "2026-01-01T00:00:00+00:00"
    assert hive["model_info"]["developer"] == "org"
    details = hive["model_info"]["additional_details"]  # no backend known: nothing is claimed about the deployment
    assert (details["deployment_type"], details["model_availability"]) == ("unknown", "unknown")
    assert hive["source_metadata"]["source_type"] == "evaluation_run"
    assert hive["evaluation_results"][0]["source_data"]["source_type"] == "other"
    source = hub["evaluation_results"][0]["source_data"]
    assert (source["source_type"], source["hf_repo"], source["samples_number"]) == ("hf_dataset", "org/hive", 4)
    assert source["additional_details"]["revision"] == "abc123"
    config = hive["evaluation_results"][0]["metric_config"]
    assert (config["lower_is_better"], config["min_score"], config["max_score"]) == (False, 0.0, 1.0)


def test_what_the_schema_cannot_state_is_named_with_its_reason(logs: list[EvaluationLog]) -> None:
    left_out = json.loads(logs[0].aggregate["eval_library"]["additional_details"]["metrics_not_exported"])
    assert left_out["valid"] == "no registered direction and bounds"  # a score the test recorded under its own name
    assert "runtime_s" in left_out and "exact_match" not in left_out


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("exact_match", (0.0, 1.0)),
        ("robustness.exact_match", (0.0, 1.0)),
        ("ece_10_bin", (0.0, 1.0)),
        ("perplexity", "a scale without a finite bound"),
        ("prompt_stereotyping", "best at a target value"),
        ("robustness.delta.exact_match", "no registered direction and bounds"),
        ("my_score", "no registered direction and bounds"),
    ],
)
def test_metric_scale_comes_from_the_registry(name: str, expected: object) -> None:
    scale = metric_scale(name, metrics.find)
    if isinstance(expected, tuple):
        assert not isinstance(scale, str) and scale.bounds == expected
    else:
        assert isinstance(scale, str) and scale.startswith(str(expected))


def test_file_stems_are_safe_and_unique() -> None:
    taken: set[str] = set()
    assert file_stem("suites/core/test_mmlu.py::test_mmlu", taken) == "suites_core_test_mmlu.py__test_mmlu"
    assert file_stem("suites/core/test_mmlu.py::test_mmlu", taken) == "suites_core_test_mmlu.py__test_mmlu-2"
    assert file_stem("..", taken) == "run"
