"""Stopping a gated scenario early: the run stops where its confidence sequences decide every gate, the items past the
stop are skipped with the decision as the reason (never passed), -n 0 and -n 2 stop at the same instance with the same
bounds and compute nothing twice, and what cannot stop early runs in full and says why."""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic.report.schema import validate_report

RULES = '{"generate": {"capital of France": " Paris"}, "default": " no"}'
SUITE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def capitals():
    # {correct} in 10 instances ask about France (answered right), the rest about Japan (answered wrong)
    for k in range({count}):
        city = "France" if k % 10 < {correct} else "Japan"
        yield Instance(id=f"c{{k:03d}}", input=f"Question {{k}}: the capital of {{city}} is", references=(" Paris",))

@pytest.mark.holistic(capitals, adapter="generation", input_suffix="", output_prefix="", max_tokens=3,
                      max_train_instances=0, metrics=("exact_match",), gates=({gates}){extra})
def test_capitals(instance, completion):
    pass
"""
SHARD = "10"


def _suite(gates: str = '"exact_match>=0.6",', count: int = 200, correct: int = 9, extra: str = "") -> str:
    return SUITE.format(gates=gates, count=count, correct=correct, extra=extra)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "rules.json").write_text(RULES)
    return pytester


def _run(project: pytest.Pytester, cache: str, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    """One run with its own response cache (so each is cold) and its own report folder; the report it wrote."""
    reports = project.path / f"reports-{cache}"
    result = project.runpytest_subprocess(
        "--model", "scripted:rules.json", "-p", "no:cacheprovider", "-rs", "--holistic-shard-size", SHARD,
        "--holistic-cache-dir", str(project.path / cache), "--holistic-report-dir", str(reports), *args, timeout=300,
    )  # fmt: skip
    found = sorted(reports.glob("*/latest/report.json"))
    report = json.loads(found[-1].read_text()) if found else {}
    return result, report


def _literal(text: str) -> str:
    """``text`` as an fnmatch pattern that matches only itself (brackets are character classes there)."""
    return "".join(f"[{character}]" if character in "[]*?" else character for character in text)


def _computed(project: pytest.Pytester, cache: str) -> int:
    """The distinct requests the cache holds: every request any worker computed, once."""
    with sqlite3.connect(project.path / cache / "responses.sqlite") as connection:
        return int(connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def test_a_gated_run_stops_early_and_the_rest_is_skipped_with_the_decision(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=_suite())
    result, report = _run(project, "cache", "--holistic-stop-early")
    assert result.ret == 0, result.stdout.str()
    assert validate_report(report) == []
    (run,) = report["runs"]
    stop = run["early_stop"]
    assert stop["stopped"] and 10 <= stop["n"] < 100 and stop["of"] == 200
    (gate,) = report["gates"]
    low, high = gate["sequence"]["ci"]
    assert gate["status"] == "passed" and gate["n"] == stop["n"] and low >= 0.6 and high <= 1.0
    assert gate["sequence"]["level"] == 0.95 and "Waudby-Smith" in gate["sequence"]["method"]
    # Items past the stop are skipped with the decision, never passed; at -n 0 none of them was computed as an item.
    passed = sum(1 for record in run["instances"] if record["outcome"] == "passed")
    assert passed == stop["n"] and stop["not_computed"] == 200 - stop["n"] and stop["answered_past_stop"] == 0
    reason = f"gate `exact_match>=0.6` holds: [{low:.2f}, {high:.2f}] after {stop['n']} of 200 items"
    result.stdout.fnmatch_lines([_literal(f"SKIPPED [{200 - stop['n']}] ") + f"*{_literal(reason)}*"])
    result.assert_outcomes(passed=stop["n"] + 1, skipped=200 - stop["n"])  # + 1: the gate's own item
    # The instances the gate was decided on are the first n of the seeded order, not the file's first n.
    used = [record["instance_id"] for record in run["instances"]]
    assert used != [f"c{k:03d}" for k in range(stop["n"])]
    # At most the shard the stop fell in was computed past it.
    assert stop["n"] <= _computed(project, "cache") < stop["n"] + int(SHARD)
    page = next((project.path / "reports-cache").glob("*/latest/report.html")).read_text()
    assert f"stopped early after {stop['n']} of 200 instances" in page and "holds: [" in page


def test_the_verdict_is_the_one_the_full_run_gives(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=_suite(gates='"exact_match>=0.6", "exact_match<=0.7"'))
    early, early_report = _run(project, "early", "--holistic-stop-early")
    full, full_report = _run(project, "full")
    assert early.ret == full.ret == 1
    assert [(g["gate"], g["status"]) for g in early_report["gates"]] == [(g["gate"], g["status"]) for g in full_report["gates"]]
    assert {g["gate"]: g["status"] for g in early_report["gates"]} == {"exact_match>=0.6": "passed", "exact_match<=0.7": "failed"}
    assert early_report["runs"][0]["early_stop"]["stopped"] and "early_stop" not in full_report["runs"][0]
    failed = next(g for g in early_report["gates"] if g["status"] == "failed")
    assert "does not meet <= 0.7" in failed["message"] and "stopped early" in failed["message"]
    assert len(full_report["runs"][0]["instances"]) == 200


def test_one_worker_and_two_stop_at_the_same_instance_with_the_same_bounds(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=_suite(count=300, correct=8))
    serial, serial_report = _run(project, "serial", "--holistic-stop-early")
    parallel, parallel_report = _run(project, "parallel", "--holistic-stop-early", "-n", "2")
    assert serial.ret == parallel.ret == 0, parallel.stdout.str()
    assert validate_report(parallel_report) == []
    first, second = serial_report["runs"][0]["early_stop"], parallel_report["runs"][0]["early_stop"]
    assert first["stopped"] and (first["n"], first["gates"]) == (second["n"], second["gates"])
    assert [g["sequence"] for g in serial_report["gates"]] == [g["sequence"] for g in parallel_report["gates"]]
    used = sorted(record["instance_id"] for record in serial_report["runs"][0]["instances"])
    assert used == sorted(record["instance_id"] for record in parallel_report["runs"][0]["instances"])
    # No item computed twice: what the workers computed is what the cache holds, each request once; and each worker
    # computed at most the shard it was in when the stop reached it.
    workers = parallel_report["workers"].values()
    computed = sum(worker["generation_requests"] for worker in workers)
    assert computed == _computed(project, "parallel") < first["n"] + 2 * 2 * int(SHARD)
    assert second["answered_past_stop"] + second["not_computed"] == 300 - second["n"]


@pytest.mark.parametrize(
    ("gates", "why"),
    [
        ('"exact_match.lower>=0.5",', "depends on the final n"),
        ('"exact_match>=0.6", "ece_10_bin<=0.5"', "'ece_10_bin' is a population metric"),
    ],
)
def test_a_gate_that_cannot_stop_early_runs_the_scenario_in_full_and_says_why(
    project: pytest.Pytester, gates: str, why: str
) -> None:
    project.makepyfile(test_capitals=_suite(count=60, gates=gates).replace('("exact_match",)', '("exact_match", "ece_10_bin")'))
    result, report = _run(project, "cache", "--holistic-stop-early")
    stop = report["runs"][0]["early_stop"]
    assert not stop["stopped"] and stop["of"] == 60 and why in stop["reason"]
    assert len(report["runs"][0]["instances"]) == 60
    result.stdout.fnmatch_lines([f"*ran all 60 instances (stop early: *{why}*"])


def test_a_scenario_without_gates_is_never_stopped(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=_suite(gates=""))
    result, report = _run(project, "cache", "--holistic-stop-early")
    assert result.ret == 0
    result.assert_outcomes(passed=200)
    assert report["runs"][0]["early_stop"]["reason"] == "no gate applies to this run"


def test_the_marker_turns_it_on_and_off(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=_suite(extra=", stop_early=True"))
    _, on = _run(project, "on")
    assert on["runs"][0]["early_stop"]["stopped"]
    project.makepyfile(test_capitals=_suite(extra=", stop_early=False"))
    result, off = _run(project, "off", "--holistic-stop-early")
    result.assert_outcomes(passed=201)
    assert "early_stop" not in off["runs"][0]


def test_a_command_line_gate_on_the_scenario_stops_it_and_junit_carries_the_sequence(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=_suite(gates=""))
    junit = project.path / "holistic.xml"
    result, report = _run(
        project, "cache", "--holistic-stop-early", "--holistic-stop-level", "0.99",
        "--holistic-gate", "capitals:exact_match>=0.6", "--holistic-junit", str(junit),
    )  # fmt: skip
    assert result.ret == 0
    stop = report["runs"][0]["early_stop"]
    assert stop["stopped"] and stop["level"] == 0.99
    suite = next(s for s in ET.parse(junit).getroot() if s.get("name") == "holistic gates")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    prefix = "test_capitals.py::test_capitals::gate[capitals:exact_match>=0.6].sequence"
    assert properties[f"{prefix}.n"] == str(stop["n"]) and properties[f"{prefix}.of"] == "200"
    assert properties[f"{prefix}.decision"] == "holds" and properties[f"{prefix}.level"] == "0.99"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--holistic-stop-level", "2"), "--holistic-stop-level = '2' is not a confidence level in (0.5, 1)"),
        (("--holistic-stop-level", "high"), "--holistic-stop-level = 'high' is not a confidence level in (0.5, 1)"),
    ],
)
def test_a_bad_level_is_a_usage_error(project: pytest.Pytester, args: tuple[str, ...], message: str) -> None:
    project.makepyfile(test_capitals=_suite())
    result, _ = _run(project, "cache", "--holistic-stop-early", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])
    assert "Traceback" not in result.stderr.str()


def test_a_marker_value_that_is_not_a_flag_is_a_collection_error(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=_suite(extra=', stop_early="yes"'))
    result, _ = _run(project, "cache")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*holistic(stop_early='yes'): must be True or False*"])


def test_the_session_leaves_no_stop_behind(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=_suite())
    _run(project, "cache", "--holistic-stop-early")
    table: Path = project.path / "cache" / "early-stops.sqlite"
    with sqlite3.connect(table) as connection:
        assert connection.execute("SELECT COUNT(*) FROM stops").fetchone()[0] == 0


def _regressions(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {check["nodeid"]: (check["status"], check["message"]) for check in report["comparison"]["regressions"]}


def test_a_regression_check_is_decided_by_its_paired_sequence(project: pytest.Pytester) -> None:
    """A baseline that answered every France question, a run that answers only some: the paired difference is decided
    early, the check fails as it does on the full run, and an unchanged model passes it early."""
    project.makepyfile(test_capitals=_suite(correct=10))
    _, _ = _run(project, "baseline")
    stored = str(next((project.path / "reports-baseline").glob("*/latest/report.json")))
    project.makepyfile(test_capitals=_suite(correct=7))
    check = ("--holistic-baseline", stored, "--holistic-fail-on-regression", "exact_match:0.05")
    early, early_report = _run(project, "early", "--holistic-stop-early", *check)
    full, full_report = _run(project, "full", *check)
    assert early.ret == full.ret == 1
    stop = early_report["runs"][0]["early_stop"]
    assert stop["stopped"] and "regression check `exact_match:0.05` fails: paired difference" in stop["reason"]
    ((nodeid, (status, message)),) = _regressions(early_report).items()
    assert _regressions(full_report)[nodeid][0] == status == "failed"
    assert "stopped early" in message and f"after {stop['n']} of 200 instances" in message
    assert validate_report(early_report) == []

    project.makepyfile(test_capitals=_suite(correct=10))
    same, same_report = _run(project, "same", "--holistic-stop-early", *check)
    assert same.ret == 0, same.stdout.str()
    stop = same_report["runs"][0]["early_stop"]
    assert [status for status, _ in _regressions(same_report).values()] == ["passed"]
    assert stop["stopped"] and "regression check `exact_match:0.05` holds" in stop["reason"]


def test_a_regression_check_on_a_metric_without_bounds_keeps_the_run_in_full(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=_suite(count=60).replace('("exact_match",)', '("exact_match", "edit_distance")'))
    _run(project, "baseline")
    stored = str(next((project.path / "reports-baseline").glob("*/latest/report.json")))
    result, report = _run(
        project, "cache", "--holistic-stop-early", "--holistic-baseline", stored, "--holistic-fail-on-regression", "edit_distance:0.05"
    )
    stop = report["runs"][0]["early_stop"]
    assert result.ret == 0 and not stop["stopped"], result.stdout.str()
    assert "regression check edit_distance:0.05" in stop["reason"] and len(report["runs"][0]["instances"]) == 60


GROUPED = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def capitals():
    # group "even" is always asked about France (answered right); group "odd" 6 times in 10
    for k in range(200):
        city = "France" if k % 2 == 0 or (k // 2) % 10 < 6 else "Japan"
        yield Instance(id=f"c{k:03d}", input=f"Question {k}: the capital of {city} is", references=(" Paris",),
                       group="even" if k % 2 == 0 else "odd")

@pytest.mark.holistic(capitals, adapter="generation", input_suffix="", output_prefix="", max_tokens=3,
                      max_train_instances=0, metrics=("exact_match",),
                      gates=("groups.gap.exact_match<=0.1", "groups.worst.exact_match>=0.3"))
def test_capitals(instance, completion):
    pass
"""


def test_gates_on_group_numbers_are_judged_and_stop_early_alike(project: pytest.Pytester) -> None:
    """The gap between the groups' means (HELM's disparity) and the worst group's mean: judged on the full run with a
    bootstrap interval, decided early by one sequence per group, with the same verdicts."""
    project.makepyfile(test_capitals=GROUPED)
    full, full_report = _run(project, "full")
    early, early_report = _run(project, "early", "--holistic-stop-early")
    assert full.ret == early.ret == 1
    verdicts = {g["gate"]: (g["status"], g["observed"]) for g in full_report["gates"]}
    assert verdicts["groups.gap.exact_match<=0.1"][0] == "failed"
    assert verdicts["groups.gap.exact_match<=0.1"][1] == pytest.approx(0.4)
    assert verdicts["groups.worst.exact_match>=0.3"] == ("passed", pytest.approx(0.6))
    assert {g["gate"]: g["status"] for g in early_report["gates"]} == {gate: status for gate, (status, _) in verdicts.items()}
    stop = early_report["runs"][0]["early_stop"]
    assert stop["stopped"] and stop["n"] < 200
    assert all(g["sequence"]["stopped"] and g["sequence"]["n"] == stop["n"] for g in early_report["gates"])


def test_a_misspelt_group_number_is_refused_before_any_model_work(project: pytest.Pytester) -> None:
    project.makepyfile(test_capitals=GROUPED)
    result, _ = _run(project, "cache", "--holistic-gate", "groups.wrost.exact_match>=0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no group statistic 'wrost'; use groups.gap.exact_match*groups.worst.exact_match*"])
