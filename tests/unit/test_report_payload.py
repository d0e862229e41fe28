"""The payload's declared shape (``report.payload``) against a report a real session writes: ``read_payload`` accepts
it (from its file and in memory), and the keys the TypedDicts declare are exactly those written at the top level and
per run, so the types the readers are checked against cannot drift from the writer (nor from the shipped schema).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# The report's bootstrap imports numpy: import it before an in-process run (pytester unloads what a run imported).
import numpy  # noqa: F401
import pytest

from pytest_holistic.errors import UserError
from pytest_holistic.report import payload
from pytest_holistic.report.schema import load_schema

HIVE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def hive():
    yield Instance(id="bees", input="Do Bees sting?", references=("Yes",), group="insects")
    yield Instance(id="ants", input="Do ants sting?", references=("No",), group="insects")
    yield Instance(id="dogs", input="Do dogs bark?", references=("Yes",), group="mammals")

@pytest.mark.holistic(hive, adapter="generation", max_train_instances=0, max_tokens=2, metrics=("exact_match",),
                      gates=("exact_match>=0.5",))
def test_hive(instance, completion):
    pass
"""


def _keys(typed: Any) -> set[str]:
    return set(typed.__required_keys__) | set(typed.__optional_keys__)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One tiny session's report.json (perturbed, so every per-preset table is there), run in a subprocess."""
    import subprocess
    import sys

    root = tmp_path_factory.mktemp("payload")
    (root / "test_hive.py").write_text(HIVE)
    (root / "rules.json").write_text(json.dumps({"generate": {"Bees": " Yes", "bark": " Yes"}, "default": " No"}))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--model", "scripted:rules.json"]
        + ["--holistic-perturb", "lowercase", "test_hive.py"],
        check=False,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = (root / "reports").glob("*/latest/report.json")
    return path, json.loads(path.read_text())


def test_a_real_report_is_read_from_its_file_its_folder_and_memory(written: tuple[Path, dict[str, Any]]) -> None:
    path, data = written
    assert payload.read_payload(path, "fix it") == data
    assert payload.read_payload(path.parent, "fix it") == data
    assert payload.read_payload(data) is data


def test_the_declared_keys_are_those_written_at_the_top_and_per_run(written: tuple[Path, dict[str, Any]]) -> None:
    _, report = written
    assert set(report) == _keys(payload.Report)
    (run,) = report["runs"]
    assert set(run) == _keys(payload.Run) - {"early_stop"}  # written only under --holistic-stop-early
    assert set(report["model"]) == _keys(payload.Model)
    assert set(report["provenance"]) == _keys(payload.Provenance)
    assert {key for worker in report["workers"].values() for key in worker} == _keys(payload.Worker)
    assert {key for record in run["instances"] for key in record} <= _keys(payload.InstanceRecord)
    assert set(run["instances"][0]["completion"]) == _keys(payload.Completion)
    assert {key for result in run["metrics"].values() for key in result} <= _keys(payload.MetricResult)
    assert {key for gate in report["gates"] for key in gate} <= _keys(payload.Gate)
    assert {key for preset in run["perturbations"].values() for key in preset} <= _keys(payload.Perturbation)
    assert {key for entry in run["groups"] for key in entry} == _keys(payload.GroupBreakdown)


def test_the_declared_keys_are_the_shipped_schemas() -> None:
    schema = load_schema()
    assert set(schema["properties"]) == _keys(payload.Report)
    for name, typed in (
        ("run", payload.Run),
        ("metric", payload.MetricResult),
        ("gate", payload.Gate),
        ("record", payload.InstanceRecord),
        ("instance", payload.Instance),
        ("worker", payload.Worker),
        ("perturbation", payload.Perturbation),
        ("group_breakdown", payload.GroupBreakdown),
        ("early_stop", payload.EarlyStop),
        ("sequence", payload.GateSequence),
        ("provenance", payload.Provenance),
        ("model", payload.Model),
    ):
        assert set(schema["$defs"][name]["properties"]) == _keys(typed), name
    # a completion's schema is open: it names the fields every answer has, the type declares the scoring ones too
    assert set(schema["$defs"]["completion"]["properties"]) <= _keys(payload.Completion)
    # what every readable version has is what the reader requires
    assert payload.Report.__required_keys__ == {"schema", "schema_version", "model", "runs"}
    assert payload.Run.__required_keys__ == {"key", "scenario"}


def test_data_in_memory_that_is_no_report_is_refused_as_a_file_is() -> None:
    with pytest.raises(UserError, match=r'^payload: not a pytest-holistic report \(no "schema"'):
        payload.read_payload({"runs": []}, "fix it")
    with pytest.raises(UserError, match=r"^payload: report schema version 99, but this pytest-holistic reads versions"):
        payload.read_payload({"schema": "pytest-holistic/report", "schema_version": 99, "runs": []}, "fix it")
