"""``--holistic-export every-eval-ever`` end to end: a tiny GPT-2 run writes the files next to report.json, they
validate against the coalition's schemas and read back to report.json's numbers; an unknown format is a usage error."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The report's bootstrap imports numpy. Import it here, not first inside an in-process run: pytester unloads the
# modules a run imported, and numpy's C core cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest

from tests.plugin.suites import capitals
from tests.unit.test_every_eval_ever import errors, validators
from tests.unit.test_export_inspect import check_against_report, inspect_validator

READ_WITH_INSPECT = """
import json, sys
from inspect_ai.log import list_eval_logs, read_eval_log
for info in list_eval_logs(sys.argv[1]):
    log = read_eval_log(info.name)
    print(json.dumps(log.model_dump(mode="json", exclude_none=True)))
"""


def test_the_export_validates_and_reads_back_to_the_report(
    pytester: pytest.Pytester, tiny_gpt2: Path, read_report: Callable[[Path, str], dict[str, Any]]
) -> None:
    pytester.makepyfile(test_caps=capitals())
    exports = ("--holistic-export", "every-eval-ever", "--holistic-export", "inspect")
    result = pytester.runpytest("--model", str(tiny_gpt2), "-p", "no:cacheprovider", *exports)
    result.assert_outcomes(passed=4)
    report = read_report(pytester.path, "tiny-gpt2")
    folder = pytester.path / "reports" / "tiny-gpt2" / report["run_id"] / "every_eval_ever"
    result.stdout.fnmatch_lines(["report: *report.json", f"report: {folder}", f"report: {folder.with_name('inspect')}"])
    (run,) = report["runs"]
    aggregate_schema, instance_schema = validators()
    (aggregate,) = folder.glob("*test_caps.py__test_capitals.json")  # the run's key, as a file name
    written = json.loads(aggregate.read_text(encoding="utf-8"))
    assert errors(aggregate_schema, written) == []
    rows = [json.loads(line) for line in (folder / written["detailed_evaluation_results"]["file_path"]).read_text().splitlines()]
    assert rows and all(errors(instance_schema, row) == [] for row in rows)
    assert written["detailed_evaluation_results"]["total_rows"] == len(rows)
    results = {result["evaluation_result_id"]: result for result in written["evaluation_results"]}
    assert {"exact_match", "quasi_exact_match"} <= set(results)
    for name in ("exact_match", "quasi_exact_match"):
        expected = run["metrics"][name]
        assert results[name]["score_details"]["score"] == expected["value"] == 0.75
        assert results[name]["score_details"]["uncertainty"]["num_samples"] == expected["n"] == 4
        scores = {row["sample_id"]: row["evaluation"]["score"] for row in rows if row["evaluation_result_id"] == name}
        assert scores == {record["instance_id"]: record["scores"][name] for record in run["instances"]}
    assert {row["input"]["formatted"] for row in rows} == {record["prompt"] for record in run["instances"]}
    assert {row["output"]["raw"][0] for row in rows} == {record["completion"]["text"] for record in run["instances"]}
    (log,) = folder.with_name("inspect").glob("*.json")
    written_log = json.loads(log.read_text(encoding="utf-8"))
    assert errors(inspect_validator(), written_log) == []
    check_against_report(written_log, run)
    details = written["model_info"]["additional_details"]  # weights loaded here: schema 0.3.0's deployment words
    assert (details["deployment_type"], details["model_availability"]) == ("self_deployed", "open_weights")


READERS = {
    "every-eval-ever": "HOLISTIC_EEE_PYTHON",
    "inspect": "HOLISTIC_INSPECT_PYTHON",
}
"""Each format's own reader runs in a Python of its own, named by this variable; tests/conformance/export_readers.sh
builds them (``.ci/run`` does)."""


@pytest.mark.parametrize("reader", sorted(READERS))
def test_the_formats_own_reader_accepts_the_export(
    pytester: pytest.Pytester, tiny_gpt2: Path, read_report: Callable[[Path, str], dict[str, Any]], reader: str
) -> None:
    """The coalition's validator (``python -m every_eval_ever validate``) passes every file; Inspect's
    ``read_eval_log`` reads the log back to report.json's numbers."""
    python = os.environ.get(READERS[reader])
    if not python:
        pytest.skip(f"{READERS[reader]} names no Python with the {reader} reader: run tests/conformance/export_readers.sh")
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", str(tiny_gpt2), "-p", "no:cacheprovider", "--holistic-export", reader)
    result.assert_outcomes(passed=4)
    report = read_report(pytester.path, "tiny-gpt2")
    folder = pytester.path / "reports" / "tiny-gpt2" / report["run_id"] / reader.replace("-", "_")
    if reader == "every-eval-ever":
        files = sorted(str(path) for path in folder.iterdir())
        command = [python, "-m", "every_eval_ever", "validate", "--format", "json", *files]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        verdicts = json.loads(done.stdout)
        assert [(Path(entry["file"]).suffix, entry["valid"], entry["errors"]) for entry in verdicts] == [
            (".json", True, []),
            (".jsonl", True, []),
        ], done.stdout
        assert done.returncode == 0, done.stderr
    else:
        done = subprocess.run(
            [python, "-c", READ_WITH_INSPECT, str(folder)], capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, done.stderr
        (read,) = [json.loads(line) for line in done.stdout.splitlines()]
        check_against_report(read, report["runs"][0])


def test_an_unknown_format_is_a_usage_error_naming_the_known_ones(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("-p", "no:cacheprovider", "--holistic-export", "helm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--holistic-export = 'helm' is not a known format; use every-eval-ever or inspect"])


def test_the_ini_key_names_formats_too(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nholistic_export =\n    every-eval-ever\n    csv\n")
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*holistic_export in tox.ini = 'csv' is not a known format; use every-eval-ever or inspect"])
