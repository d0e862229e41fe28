"""Nothing lost, nothing silent: crashed workers, interrupted runs and what the report says about them.

Every test runs pytest in a subprocess on the scripted model (fast, deterministic), the way a user would. Every
report read here, however the run ended, must validate against the shipped JSON Schema.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pytest_holistic.report.schema import validate_report
from tests.signals import cache_rows, computed, start_pytest

SCRIPT = '{"generate": {"capital of France": " Paris", "capital of Japan": " Tokyo"}, "default": " no"}'

CRASHING_PLAIN = """
import os
import pytest

@pytest.mark.parametrize("n", range(20))
def test_param(n):
    if n == 7:
        os._exit(1)

{plain}
"""


def _plain_tests(count: int) -> str:
    return "\n".join(f"def test_plain_{k}():\n    pass\n" for k in range(count))


HOLISTIC = """
import os
import pytest
from pytest_holistic import Instance, scenario

@scenario
def numbers():
    for k in range({count}):
        yield Instance(id=f"n{{k}}", input=f"Number {{k}}: the capital of France is", references=(" Paris",))

@pytest.mark.holistic(numbers, adapter="generation", input_suffix="", output_prefix="", max_tokens=3,
                      max_train_instances=0, metrics=("exact_match",){extra})
def test_numbers(instance, completion):
    {body}
"""


def holistic_suite(count: int = 30, body: str = "pass", extra: str = "") -> str:
    return HOLISTIC.format(count=count, body=body, extra=extra)


def _latest(root: Path, model: str = "scripted_rules.json") -> dict:
    """The newest report, which must validate against the schema: a crash or a signal leaves no half-written one."""
    report = json.loads((root / "reports" / model / "latest" / "report.json").read_text())
    assert validate_report(report) == []
    return report


@pytest.fixture
def rules(pytester: pytest.Pytester) -> str:
    (pytester.path / "rules.json").write_text(SCRIPT)
    return "scripted:rules.json"


def test_crashing_worker_costs_only_its_item_in_plain_tests(pytester: pytest.Pytester) -> None:
    """The same outcome as without the plugin: one failure, every other test runs once."""
    pytester.makepyfile(test_crash=CRASHING_PLAIN.format(plain=_plain_tests(20)))
    with_plugin = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", timeout=300)
    without = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "-p", "no:holistic", timeout=300)
    without.assert_outcomes(failed=1, passed=39)
    with_plugin.assert_outcomes(failed=1, passed=39)
    with_plugin.stdout.fnmatch_lines(["*crashed while running*test_param[[]7[]]*"])


def test_crashing_worker_in_a_holistic_shard(pytester: pytest.Pytester, rules: str) -> None:
    """A crash in the middle of a shard: the rest of the shard runs on a live worker, the report lists the crash."""
    pytester.makepyfile(test_numbers=holistic_suite(body="if instance.id == 'n5':\n        os._exit(1)"))
    result = pytester.runpytest_subprocess("-n", "2", "--model", rules, "-p", "no:cacheprovider", timeout=300)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(failed=1, passed=29)
    assert result.ret == 1
    report = _latest(pytester.path)
    assert report["complete"] is False
    crashed = [entry for entry in report["not_completed"] if entry["reason"].startswith("worker")]
    assert [entry["nodeid"] for entry in crashed] == ["test_numbers.py::test_numbers[n5]"]
    assert "crashed" in crashed[0]["reason"]
    run = report["runs"][0]
    assert run["n"] == 29 and run["outcomes"] == {"passed": 29}
    assert run["not_completed"] == 1
    # The crashed worker's summary is gone, but its replacement and the healthy worker report.
    assert report["workers"]


SLOW_SECOND = """
import time
from pathlib import Path
import pytest
from pytest_holistic import Instance, scenario

@scenario
def second():
    for k in range(20):
        yield Instance(id=f"s{k}", input=f"Item {k}: the capital of Japan is", references=(" Tokyo",))

@pytest.mark.holistic(second, adapter="generation", input_suffix="", output_prefix="", max_tokens=3,
                      max_train_instances=0, metrics=("exact_match",), gates=("exact_match>=0.5",))
def test_second(instance, completion):
    time.sleep(0.2)
"""


def _interrupt_when(pytester: pytest.Pytester, marker: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Start pytest in its own process group, wait for ``marker`` to appear, then press Ctrl-C (SIGINT to the group)."""
    process = start_pytest(pytester.path, *args)
    deadline = time.monotonic() + 120
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the run never reached the point to interrupt"
    os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, output, "")


@pytest.mark.parametrize("workers", ["0", "2"])
def test_interrupted_run_says_so(pytester: pytest.Pytester, rules: str, workers: str) -> None:
    """Ctrl-C: the report exists, says it is incomplete, lists what did not run, and judges no gate."""
    marker = pytester.path / "reached"
    body = f"time.sleep(0.1)\n    if instance.id == 'n12':\n        Path({str(marker)!r}).touch()"
    pytester.makepyfile(
        test_first=holistic_suite(count=40, body=body, extra=", gates=('exact_match>=0.5',)").replace(
            "import os", "import os, time\nfrom pathlib import Path"
        )
    )
    pytester.makepyfile(test_second=SLOW_SECOND)
    result = _interrupt_when(pytester, marker, "-n", workers, "--model", rules, "--holistic-gate", "second:exact_match>=0.9")
    assert result.returncode == 2, result.stdout
    assert "Traceback" not in result.stdout
    report = _latest(pytester.path)
    assert report["complete"] is False
    assert "interrupt" in report["interrupted"].lower()
    finished = {record["nodeid"] for run in report["runs"] for record in run["instances"]}
    missing = {entry["nodeid"] for entry in report["not_completed"]}
    assert len(finished) + len(missing) == 60 and not finished & missing
    assert any(node.startswith("test_second.py") for node in missing)
    assert report["gates"] and all(gate["status"] == "not_evaluated" for gate in report["gates"])
    assert {gate["gate"] for gate in report["gates"]} >= {"exact_match>=0.5", "second:exact_match>=0.9"}
    assert "run incomplete" in result.stdout
    # The workers' counts match what the cache holds: every computed answer was committed and counted.
    assert computed(report) == cache_rows(pytester.path) > 0


def test_a_model_that_never_loads_writes_no_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_numbers=holistic_suite(count=3))
    result = pytester.runpytest_subprocess("--model", "./no-such-model", "-p", "no:cacheprovider", timeout=300)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*no report written: the model never answered*"])
    assert not list((pytester.path / "reports").glob("**/report.json"))


def test_a_scenario_whose_every_answer_is_empty_is_warned_about(pytester: pytest.Pytester) -> None:
    (pytester.path / "silent.json").write_text('{"default": ""}')
    pytester.makepyfile(test_numbers=holistic_suite(count=4))
    result = pytester.runpytest_subprocess("--model", "scripted:silent.json", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*numbers: all 4 answers are empty, so its scores say nothing about the model*"])
    report = _latest(pytester.path, "scripted_silent.json")
    assert any("all 4 answers are empty" in warning for warning in report["warnings"])


SLOW_RULES = '{"generate": {"capital of France": " Paris"}, "default": " no", "delay": 0.4, "batch_size": 4}'


def _run_then_signal(pytester: pytest.Pytester, seconds: float, send: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Start pytest in its own process group, wait for its first committed answer and then ``seconds`` more, then
    signal it as a terminal or a CI runner would.

    Waiting on the cache rather than on the clock keeps the test's meaning on a loaded machine, where a model
    can take longer than any fixed sleep to commit its first batch.
    """
    process = start_pytest(pytester.path, *args)
    deadline = time.monotonic() + 120
    while cache_rows(pytester.path) == 0 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be signalled"
    time.sleep(seconds)
    if send == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)
    elif send == "sigterm":
        os.kill(process.pid, signal.SIGTERM)
    else:  # kill -9 one xdist worker, mid-shard
        workers = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False).stdout.split()
        os.kill(int(workers[0]), signal.SIGKILL)
    output, _ = process.communicate(timeout=180)
    return subprocess.CompletedProcess(process.args, process.returncode, output, "")


@pytest.mark.parametrize("send", ["ctrl-c", "sigterm"])
def test_stopped_before_any_item_finished_still_reports_everything(pytester: pytest.Pytester, send: str) -> None:
    """Mid-shard, before a single item has a result: the report still has every run, gate and worker count."""
    (pytester.path / "slow.json").write_text(SLOW_RULES)
    pytester.makepyfile(test_numbers=holistic_suite(count=40, extra=", gates=('exact_match>=0.5',)"))
    pytester.makepyfile(test_second=SLOW_SECOND)
    result = _run_then_signal(pytester, 0.2, send, "-n", "2", "--model", "scripted:slow.json", "--holistic-shard-size", "40")
    assert "Traceback" not in result.stdout and "INTERNALERROR" not in result.stdout, result.stdout
    report = _latest(pytester.path, "scripted_slow.json")
    assert report["complete"] is False and report["interrupted"]
    assert sorted(gate["gate"] for gate in report["gates"]) == ["exact_match>=0.5", "exact_match>=0.5"]
    assert {gate["status"] for gate in report["gates"]} == {"not_evaluated"}
    assert {run["scenario"] for run in report["runs_without_records"]} | {run["scenario"] for run in report["runs"]} == {
        "numbers",
        "second",
    }
    assert len(report["not_completed"]) + sum(len(run["instances"]) for run in report["runs"]) == 60
    assert computed(report) == cache_rows(pytester.path) > 0
    assert cache_rows(pytester.path) < 60, "the workers were stopped, not left to finish their shards"


def test_worker_killed_mid_shard_is_counted_from_its_ledger(pytester: pytest.Pytester) -> None:
    (pytester.path / "slow.json").write_text(SLOW_RULES)
    pytester.makepyfile(test_numbers=holistic_suite(count=40))
    result = _run_then_signal(
        pytester, 0.3, "kill-worker", "-n", "2", "--model", "scripted:slow.json", "--holistic-shard-size", "20"
    )
    assert "INTERNALERROR" not in result.stdout, result.stdout
    report = _latest(pytester.path, "scripted_slow.json")
    assert report["complete"] is False
    assert [entry for entry in report["not_completed"] if "crashed" in entry["reason"]]
    assert sum(len(run["instances"]) for run in report["runs"]) == 39
    finished = {record["nodeid"] for run in report["runs"] for record in run["instances"]}
    missing = {entry["nodeid"] for entry in report["not_completed"]}
    assert len(finished | missing) == 40 and not finished & missing  # what ran and what did not: every item, once
    assert computed(report) == cache_rows(pytester.path) == 40
    assert any(not worker["final"] for worker in report["workers"].values())


def test_gates_are_not_judged_when_xdist_gives_up_on_crashed_workers(pytester: pytest.Pytester, rules: str) -> None:
    pytester.makepyfile(
        test_numbers=holistic_suite(body="if instance.id == 'n3':\n        os._exit(1)", extra=", gates=('exact_match>=0.5',)")
    )
    result = pytester.runpytest_subprocess(
        "-n", "2", "--max-worker-restart", "0", "--model", rules, "-p", "no:cacheprovider", timeout=300
    )
    assert "INTERNALERROR" not in result.stdout.str()
    report = _latest(pytester.path)
    assert report["complete"] is False and "never run" in report["interrupted"]
    assert [gate["status"] for gate in report["gates"]] == ["not_evaluated"]


def test_a_scenario_without_the_asked_source_says_which_data_it_used(pytester: pytest.Pytester, rules: str) -> None:
    pytester.makepyfile(test_numbers=holistic_suite(count=3))
    result = pytester.runpytest_subprocess("--model", rules, "--holistic-source", "hub", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*numbers: has no hub source, so its local data was used*"])
    assert any("has no hub source" in warning for warning in _latest(pytester.path)["warnings"])


SLOW_COLLECTION = """
import time
from pathlib import Path
import pytest
from pytest_holistic import Instance, scenario

@scenario
def sluggish():
    Path("collecting").touch()
    time.sleep(5)
    yield Instance(id="s0", input="the capital of France is", references=(" Paris",))

@pytest.mark.holistic(sluggish, adapter="generation", max_tokens=3, max_train_instances=0)
def test_sluggish(instance, completion):
    pass
"""


def test_interrupted_during_collection_says_so(pytester: pytest.Pytester, rules: str) -> None:
    pytester.makepyfile(test_sluggish=SLOW_COLLECTION)
    result = _interrupt_when(pytester, pytester.path / "collecting", "--model", rules, "--holistic-gate", "exact_match>=0.1")
    assert result.returncode == 2 and "Traceback" not in result.stdout, result.stdout
    report = _latest(pytester.path)
    assert report["complete"] is False and "during collection" in report["interrupted"]
    assert [(gate["gate"], gate["status"]) for gate in report["gates"]] == [("exact_match>=0.1", "not_evaluated")]


def test_two_different_scenarios_with_one_name_are_warned_about(pytester: pytest.Pytester, rules: str) -> None:
    pytester.makepyfile(test_numbers=holistic_suite(count=3))
    pytester.makepyfile(
        test_other=holistic_suite(count=3).replace("Number {k}", "Count {k}").replace("def test_numbers", "def test_other")
    )
    result = pytester.runpytest_subprocess("--model", rules, "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*numbers: 2 different scenarios share this name*give each scenario its own name*"])
