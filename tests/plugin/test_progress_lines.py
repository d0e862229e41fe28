"""The model's progress lines reach the terminal (not an item's captured output), and -qq silences them."""

from __future__ import annotations

import json

import pytest

SUITE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def tiny():
    yield Instance(id="a", input="Say yes", references=("yes",))
    yield Instance(id="b", input="Say no", references=("no",))

@pytest.mark.holistic(tiny, max_train_instances=0, max_tokens=2)
def test_tiny(completion):
    assert False, "fails, so pytest shows this item's captured output"
"""


def test_loading_lines_are_printed_once_outside_the_captured_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tiny=SUITE)
    rules = pytester.path / "rules.json"
    rules.write_text(json.dumps({"default": " yes"}))
    result = pytester.runpytest_subprocess("--model", f"scripted:{rules}", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    assert output.count("pytest-holistic: loading model ") == 1
    result.stdout.fnmatch_lines(["pytest-holistic: model * loaded in *s*"])
    assert "Captured stdout" not in output  # the lines were not swallowed by the failing items' capture
    quiet = pytester.runpytest_subprocess("--model", f"scripted:{rules}", "-p", "no:cacheprovider", "-qq", timeout=300)
    assert "pytest-holistic: loading" not in quiet.stdout.str()


HEARTBEAT_CONFTEST = """
import pytest
from pytest_holistic.activation import WORKER_SIDE

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.stash[WORKER_SIDE].model.progress.heartbeat.every = 0.2  # seconds, not a terminal's 10: a short test
"""


def test_a_slow_batch_prints_a_heartbeat_on_the_terminal_and_none_after_the_summary(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tiny=SUITE)
    pytester.makeconftest(HEARTBEAT_CONFTEST)
    rules = pytester.path / "rules.json"
    rules.write_text(json.dumps({"default": " yes", "batch_size": 1, "delay": 0.7}))  # each batch: 0.7 s in the model
    result = pytester.runpytest_subprocess("--model", f"scripted:{rules}", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(failed=2)
    lines = result.stdout.lines
    beats = [n for n, line in enumerate(lines) if line.startswith("pytest-holistic: still computing generation batch ")]
    assert beats, result.stdout.str()
    assert "(0/2 requests done, " in lines[beats[0]]
    summary = max(n for n, line in enumerate(lines) if "failed" in line and line.startswith("="))
    assert max(beats) < summary
    assert "Captured stdout" not in result.stdout.str()


TIMED = """
import time
import pytest

@pytest.mark.parametrize("k", range(4))
def test_quick(k):
    pass

def test_slow():
    time.sleep(0.3)
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_each_items_seconds_are_kept_for_the_next_runs_time_left(pytester: pytest.Pytester, workers: str) -> None:
    """pytest's cache keeps the seconds each item took (the controller gets every worker's reports), and a run of
    a few items keeps the others' seconds from before."""
    pytester.makepyfile(test_timed=TIMED)
    (pytester.path / "rules.json").write_text(json.dumps({"default": " yes"}))
    args = ("--model", "scripted:rules.json", "-n", workers)
    pytester.runpytest_subprocess(*args, timeout=300).assert_outcomes(passed=5)
    stored = pytester.path / ".pytest_cache" / "v" / "holistic" / "item-seconds"
    seconds = json.loads(stored.read_text())
    assert set(seconds) == {f"test_timed.py::test_quick[{k}]" for k in range(4)} | {"test_timed.py::test_slow"}
    assert seconds["test_timed.py::test_slow"] >= 0.3 > max(seconds[f"test_timed.py::test_quick[{k}]"] for k in range(4))
    pytester.runpytest_subprocess(*args, "-k", "quick", timeout=300).assert_outcomes(passed=4)
    assert json.loads(stored.read_text())["test_timed.py::test_slow"] == seconds["test_timed.py::test_slow"]
