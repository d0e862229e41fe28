"""A served model that fails or hangs, driven through pytest the way a user runs it.

A failing request is sent no more often than its retries allow, however large its shard; a stalled one costs
only its own item while the rest are computed and committed; and Ctrl-C or SIGTERM end a run whose requests hang
on the server (at the default timeout and retries) within seconds, with the committed answers kept and a report
that says it is incomplete. The server is the scripted one on 127.0.0.1; pytest runs in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_holistic.report.schema import validate_report
from tests.models.test_openai_protocol import FakeEngine, Reply, ScriptedServer, Seen
from tests.plugin.test_faults import holistic_suite
from tests.signals import cache_rows, computed, start_pytest

Fault = Callable[[Seen], Reply]
_ITEM = re.compile(r"Number (\d+):")


class Faulty:
    """A correct engine for the probe and the healthy items; item ``k``'s generation requests get ``faults[k]``.

    Counts every generation request per item and notes when each arrived, so a test can tell how often a request
    was sent and whether the others went on while one was stalled.
    """

    def __init__(self, faults: dict[int, Fault]) -> None:
        self.engine = FakeEngine()
        self.faults = faults
        self.sent: Counter[int] = Counter()
        self.arrived: dict[int, list[float]] = {}
        self._lock = threading.Lock()

    def __call__(self, seen: Seen) -> Reply:
        prompt = seen.body.get("prompt") if seen.method == "POST" and isinstance(seen.body, dict) else None
        found = _ITEM.search(prompt) if isinstance(prompt, str) else None
        if found is None:
            return self.engine(seen)
        number = int(found[1])
        with self._lock:
            self.sent[number] += 1
            self.arrived.setdefault(number, []).append(time.monotonic())
        fault = self.faults.get(number)
        return fault(seen) if fault is not None else self.engine(seen)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown, so handlers that hang on purpose end (their threads are daemons either way)."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def serve_faulty(release: threading.Event) -> Iterator[Callable[[dict[int, Fault]], tuple[ScriptedServer, Faulty]]]:
    started: list[ScriptedServer] = []

    def start(faults: dict[int, Fault]) -> tuple[ScriptedServer, Faulty]:
        script = Faulty(faults)
        server = ScriptedServer(script)
        started.append(server)
        return server, script

    yield start
    release.set()
    for server in started:
        server.stop()


def _hang(release: threading.Event) -> Fault:
    """Accept the request and never answer (until the test ends)."""

    def fault(seen: Seen) -> Reply:
        release.wait()
        return Reply(503, {"error": {"message": "gone"}})

    return fault


def _failing(seen: Seen) -> Reply:
    return Reply(500, {"error": {"message": "internal server error"}}, {"Retry-After": "0"})


def _report(root: Path) -> dict:
    [path] = (root / "reports").glob("*/latest/report.json")
    report = json.loads(path.read_text())
    assert validate_report(report) == []
    return report


def _outcomes(report: dict) -> dict[str, str]:
    return {record["instance_id"]: record["outcome"] for run in report["runs"] for record in run["instances"]}


# -- failing requests are not multiplied -------------------------------------------------------------


@pytest.mark.parametrize(("retries", "sends"), [("0", 1), (None, 5)])
def test_one_failing_request_is_sent_retries_plus_one_times_on_a_64_item_shard(
    pytester: pytest.Pytester, serve_faulty: Callable[..., tuple[ScriptedServer, Faulty]], retries: str | None, sends: int
) -> None:
    """HTTP 500 for one item of a 64-item shard: its request is sent retries + 1 times (default 4 + 1), every
    other request once; the failure is that item's one-line error and the other 63 pass."""
    server, script = serve_faulty({7: _failing})
    pytester.makepyfile(test_numbers=holistic_suite(count=64))
    args = ["--model", f"openai:{server.url}#m", "-p", "no:cacheprovider"]
    result = pytester.runpytest_subprocess(*args, *(["--holistic-retries", retries] if retries else []), timeout=120)
    result.assert_outcomes(passed=63, errors=1)
    assert script.sent[7] == sends
    assert set(script.sent) == set(range(64)) and all(script.sent[k] == 1 for k in range(64) if k != 7)
    result.stdout.fnmatch_lines(["*pytest-holistic: instance 'n7': server *HTTP 500*"])
    report = _report(pytester.path)
    assert _outcomes(report)["n7"] == "error" and sum(o == "passed" for o in _outcomes(report).values()) == 63
    assert cache_rows(pytester.path) == 63  # the failure is not cached: a rerun asks it again


def test_ten_items_failing_on_http_500_are_each_tried_retries_plus_one_times(
    pytester: pytest.Pytester, serve_faulty: Callable[..., tuple[ScriptedServer, Faulty]]
) -> None:
    """Ten items whose requests always fail, with the server's backoff: each is sent exactly twice at
    --holistic-retries 1, the twenty others once, and the run ends with ten errors."""

    def busy(seen: Seen) -> Reply:
        return Reply(500, {"error": {"message": "overloaded"}})

    failing = set(range(0, 30, 3))
    server, script = serve_faulty(dict.fromkeys(failing, busy))
    pytester.makepyfile(test_numbers=holistic_suite(count=30))
    result = pytester.runpytest_subprocess(
        "--model", f"openai:{server.url}#m", "--holistic-retries", "1", "-p", "no:cacheprovider", timeout=120
    )
    result.assert_outcomes(passed=20, errors=10)
    assert {k: script.sent[k] for k in failing} == dict.fromkeys(failing, 2)
    assert all(script.sent[k] == 1 for k in range(30) if k not in failing)


# -- a stalled request -------------------------------------------------------------------------------


def test_a_stalled_request_costs_only_its_item_and_the_rest_are_committed_meanwhile(
    pytester: pytest.Pytester, serve_faulty: Callable[..., tuple[ScriptedServer, Faulty]], release: threading.Event
) -> None:
    """Item n0's request hangs; with two requests in flight, the 29 others are all sent and committed while it
    waits, and once its deadline passes it is n0's error (sent once at --holistic-retries 0)."""
    timeout = 10.0
    server, script = serve_faulty({0: _hang(release)})
    pytester.makepyfile(test_numbers=holistic_suite(count=30))
    result = pytester.runpytest_subprocess(
        "--model",
        f"openai:{server.url}#m",
        "--holistic-concurrency",
        "2",
        "--holistic-request-timeout",
        str(timeout),
        "--holistic-retries",
        "0",
        "-p",
        "no:cacheprovider",
        timeout=120,
    )
    result.assert_outcomes(passed=29, errors=1)
    result.stdout.fnmatch_lines(["*pytest-holistic: instance 'n0': server *"])
    assert script.sent[0] == 1
    error = {record["instance_id"]: record["error"] for run in _report(pytester.path)["runs"] for record in run["instances"]}
    assert "pytest-holistic: instance 'n0': server" in error["n0"] and "\n" not in error["n0"]
    stalled = script.arrived[0][0]
    # n1 may overtake n0 on the way to the server; every other request arrives while n0 is still in flight
    assert max(script.arrived[k][0] for k in range(1, 30)) < stalled + timeout, "the others waited for the stall"
    assert cache_rows(pytester.path) == 29


@pytest.mark.parametrize("stall", ["hang", "retry-after"])
def test_a_stalled_request_holds_no_other_shard(
    pytester: pytest.Pytester,
    serve_faulty: Callable[..., tuple[ScriptedServer, Faulty]],
    release: threading.Event,
    stall: str,
) -> None:
    """Shards of 2 items; item n3's request stalls, by hanging to its deadline or by a Retry-After at the cap. The
    shards after n3's are all sent and committed while it waits: a single process computes a served model's shards
    side by side. The report's model time is counted once for streams that overlap, so it stays within the wall time."""
    timeout = 8.0
    if stall == "hang":
        fault, retries = _hang(release), "0"
    else:

        def fault(seen: Seen) -> Reply:
            return Reply(503, {"error": {"message": "busy"}}, {"Retry-After": "100000"})

        retries = "1"
    server, script = serve_faulty({3: fault})
    pytester.makepyfile(test_numbers=holistic_suite(count=12))
    started = time.monotonic()
    result = pytester.runpytest_subprocess(
        "--model",
        f"openai:{server.url}#m",
        "--holistic-shard-size",
        "2",
        "--holistic-request-timeout",
        str(timeout),
        "--holistic-retries",
        retries,
        "-p",
        "no:cacheprovider",
        timeout=180,
    )
    wall = time.monotonic() - started
    result.assert_outcomes(passed=11, errors=1)
    stalled = script.arrived[3][0]
    later = [script.arrived[k][0] for k in range(4, 12)]
    assert max(later) < stalled + 3.0, f"the shards after n3's waited for it: {[round(t - stalled, 2) for t in later]}"
    assert cache_rows(pytester.path) == 11
    [worker] = _report(pytester.path)["workers"].values()
    assert worker["model_seconds"] <= wall, (worker["model_seconds"], wall)


# -- Ctrl-C and SIGTERM while requests hang ----------------------------------------------------------


def _stop(process: subprocess.Popen[str], send: str) -> str:
    """Press Ctrl-C (SIGINT to the group) or send SIGTERM, then wait: pytest's output once it has exited within 15 s."""
    signalled = time.monotonic()
    if send == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)
    else:
        os.kill(process.pid, signal.SIGTERM)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        raise AssertionError(f"pytest was still running 60 s after {send}:\n{output}") from None
    elapsed = time.monotonic() - signalled
    assert elapsed < 15, f"pytest took {elapsed:.1f} s to stop after {send}:\n{output}"
    return output


def _wait_for(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            output, _ = process.communicate()
            raise AssertionError(f"the run never reached the point to stop it ({what}):\n{output}")
        time.sleep(0.05)


@pytest.mark.parametrize("send", ["ctrl-c", "sigterm"])
@pytest.mark.parametrize("workers", ["0", "2"])
def test_stopping_a_run_whose_requests_hang_exits_within_seconds_with_a_partial_report(
    pytester: pytest.Pytester,
    serve_faulty: Callable[..., tuple[ScriptedServer, Faulty]],
    release: threading.Event,
    workers: str,
    send: str,
) -> None:
    """Item n3's request hangs at the default timeout (300 s) and retries (4), the other 29 are answered and
    committed. Ctrl-C or SIGTERM then: pytest exits within 15 s, the cache keeps the 29 answers, and report.json
    says the run is incomplete and lists the 30 items that did not finish."""
    server, script = serve_faulty({3: _hang(release)})
    pytester.makepyfile(test_numbers=holistic_suite(count=30))
    process = start_pytest(pytester.path, "-n", workers, "--model", f"openai:{server.url}#m")
    _wait_for(lambda: cache_rows(pytester.path) == 29 and script.sent[3] == 1, process, "29 answers committed")
    output = _stop(process, send)
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    report = _report(pytester.path)
    assert report["complete"] is False and report["interrupted"]
    assert len(report["not_completed"]) + sum(len(run["instances"]) for run in report["runs"]) == 30
    assert "test_numbers.py::test_numbers[n3]" in {entry["nodeid"] for entry in report["not_completed"]}
    assert cache_rows(pytester.path) == 29 == computed(report)
    assert script.sent[3] == 1  # nothing resent the hung request on the way out


def test_stopping_while_the_next_shard_hangs_in_the_background(
    pytester: pytest.Pytester, serve_faulty: Callable[..., tuple[ScriptedServer, Faulty]], release: threading.Event
) -> None:
    """--holistic-overlap on: the second shard is computed in a background thread while the first one's items run,
    and its request for n15 hangs. Ctrl-C while pytest waits for that shard: the run still ends within 15 s, with
    the first shard's ten items reported and the second's ten listed as not completed."""
    server, script = serve_faulty({15: _hang(release)})
    last_of_first = pytester.path / "n9-ran"
    pytester.makepyfile(
        test_numbers=holistic_suite(count=20, body=f"if instance.id == 'n9':\n        open({str(last_of_first)!r}, 'w').close()")
    )
    process = start_pytest(
        pytester.path, "--model", f"openai:{server.url}#m", "--holistic-overlap", "on", "--holistic-shard-size", "10"
    )
    _wait_for(
        lambda: cache_rows(pytester.path) == 19 and script.sent[15] == 1 and last_of_first.exists(),
        process,
        "19 answers committed and the first shard's items run",
    )
    time.sleep(0.5)  # n9's result is reported; pytest waits for the second shard
    output = _stop(process, "ctrl-c")
    assert process.returncode == pytest.ExitCode.INTERRUPTED and "Traceback" not in output, output
    report = _report(pytester.path)
    assert report["complete"] is False
    assert _outcomes(report) == {f"n{k}": "passed" for k in range(10)}
    assert {entry["nodeid"] for entry in report["not_completed"]} == {
        f"test_numbers.py::test_numbers[n{k}]" for k in range(10, 20)
    }
    assert cache_rows(pytester.path) == 19


def test_stopping_while_the_servers_probe_hangs(pytester: pytest.Pytester, release: threading.Event) -> None:
    """A server that accepts every request and answers none, not even the probe of /v1/models: SIGTERM ends the
    run within 15 s, and the report says nothing was completed."""
    asked = threading.Event()

    def silent(seen: Seen) -> Reply:
        asked.set()
        release.wait()
        return Reply(503, {"error": {"message": "gone"}})

    server = ScriptedServer(silent)
    try:
        pytester.makepyfile(test_numbers=holistic_suite(count=30))
        process = start_pytest(pytester.path, "--model", f"openai:{server.url}#m")
        _wait_for(asked.is_set, process, "the probe sent")
        output = _stop(process, "sigterm")
        assert process.returncode == pytest.ExitCode.INTERRUPTED and "Traceback" not in output, output
        report = _report(pytester.path)
        assert report["complete"] is False and len(report["not_completed"]) == 30
    finally:
        release.set()
        server.stop()


SCORED_SUITE = """
import pytest
from pytest_holistic import Instance, Reference, scenario

@scenario
def colours():
    for k in range(12):
        yield Instance(id=f"c{k}", input=f"Number {k}: is the sky blue?",
                       references=(Reference(" Yes", True), Reference(" No", False)))

@pytest.mark.holistic(colours, adapter="multiple_choice_separate", input_suffix="", output_prefix="",
                      max_train_instances=0)
def test_colours(instance, completion):
    pass
"""


@pytest.mark.parametrize("send", ["ctrl-c", "sigterm"])
@pytest.mark.parametrize("workers", ["0", "2"])
def test_stopping_while_the_probe_at_collection_hangs(
    pytester: pytest.Pytester, release: threading.Event, workers: str, send: str
) -> None:
    """A scenario scored by log-likelihoods asks the server what it can do while it is collected; the server never
    answers. Ctrl-C or SIGTERM then ends the run within 15 s with a report that says it was interrupted during
    collection and names the scenario that was being collected, none of it run."""
    asked = threading.Event()

    def silent(seen: Seen) -> Reply:
        asked.set()
        release.wait()
        return Reply(503, {"error": {"message": "gone"}})

    server = ScriptedServer(silent)
    try:
        pytester.makepyfile(test_colours=SCORED_SUITE)
        process = start_pytest(pytester.path, "-n", workers, "--model", f"openai:{server.url}#m")
        _wait_for(asked.is_set, process, "the probe sent")
        time.sleep(0.5)
        output = _stop(process, send)
        assert process.returncode == pytest.ExitCode.INTERRUPTED and "Traceback" not in output, output
        report = _report(pytester.path)
        assert report["complete"] is False and "collection" in report["interrupted"], report["interrupted"]
        [collected] = report["runs_without_records"]
        assert collected["scenario"] == "colours" and collected["collected"] == 12, collected
        assert collected["reason"] == "interrupted during collection", collected
        assert report["runs"] == []
    finally:
        release.set()
        server.stop()
