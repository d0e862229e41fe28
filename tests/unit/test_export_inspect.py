"""The Inspect AI log export of hand-built runs: it validates against the JSON Schema of Inspect's ``EvalLog``
(tests/conformance/data/inspect_ai/), names its files as Inspect's log listing expects, and its numbers are
report.json's. (Inspect's own reader reads them in tests/plugin/test_export.py, where Inspect is at hand.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from pytest_holistic.report.export_inspect import convert
from tests.unit.test_every_eval_ever import errors, hand_built_report

SCHEMA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "inspect_ai" / "eval_log.schema.json"
INSPECT_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}[^_]*_[^_]+_[0-9a-f]+$")  # {time}_{task}_{id}


def inspect_validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))


def check_against_report(log: dict[str, Any], run: dict[str, Any]) -> None:
    """Every finite metric and per-instance score of the run, read back from the log."""
    scores = {score["name"]: score for score in log["results"]["scores"]}
    assert set(scores) == {name for name, result in run["metrics"].items() if result["value"] is not None}
    for name, result in run["metrics"].items():
        if result["value"] is None:
            continue
        metrics = scores[name]["metrics"]
        key = "mean" if result["kind"] in ("instance", "scored") else name
        assert metrics[key]["value"] == result["value"]
        assert scores[name]["scored_samples"] == result["n"]
        if result["ci95"][0] is not None:
            assert [metrics["ci95_low"]["value"], metrics["ci95_high"]["value"]] == result["ci95"]
    originals = [record for record in run["instances"] if record["perturbation"] is None]
    assert log["results"]["total_samples"] == len(log["samples"]) == len(originals)
    for sample, record in zip(log["samples"], originals, strict=True):
        assert sample["id"] == record["instance_id"]
        assert {name: score["value"] for name, score in sample["scores"].items()} == record["scores"]
        assert sample["messages"][0]["content"] == record["prompt"]
        assert sample["output"]["choices"][0]["message"]["content"] == record["completion"]["text"]


def test_every_log_validates_and_reads_back_to_the_report() -> None:
    report = hand_built_report()
    logs = convert(report)
    validator = inspect_validator()
    assert len(logs) == len(report["runs"]) == 2
    for (stem, log), run in zip(logs, report["runs"], strict=True):
        assert errors(validator, log) == []
        assert INSPECT_NAME.match(stem), stem
        assert (log["eval"]["task"], log["eval"]["metadata"]["run"], log["eval"]["run_id"]) == (
            run["scenario"],
            run["key"],
            report["run_id"],
        )
        check_against_report(log, run)


def test_a_sample_has_its_targets_choices_and_usage() -> None:
    (_, hive), _ = convert(hand_built_report())
    ants = next(sample for sample in hive["samples"] if sample["id"] == "ants")
    assert (ants["input"], ants["target"], ants["choices"]) == ("Do ants sting?", ["No"], ["Yes", "No"])
    assert ants["output"]["usage"] == {"input_tokens": 7, "output_tokens": 1, "total_tokens": 8}
    assert ants["scores"]["exact_match"] == {"value": 0.0, "answer": "Yes"}
    assert hive["status"] == "success"


def test_a_run_that_was_cut_short_is_not_a_success() -> None:
    report = {**hand_built_report(), "interrupted": "interrupted by the user (KeyboardInterrupt)", "complete": False}
    assert {log["status"] for _, log in convert(report)} == {"cancelled"}
