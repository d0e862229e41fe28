"""``--model vllm:MODEL``: the engine the plugin starts, shares and stops, tested with a stand-in for vLLM.

The stand-in (``tests/serving/stand_in_vllm``) takes the arguments the plugin gives ``python -m
vllm.entrypoints.openai.api_server`` and answers vLLM's routes from the tiny GPT-2's folder, so these tests run on
any machine; ``test_vllm_server.py`` runs the real vLLM. Each run is a pytest subprocess, as a user runs it, with its
own temporary folder (``TMPDIR``), so what the engine leaves behind can be seen; the stand-in notes each start
(process id, arguments, environment) in a folder of the test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_holistic.report.schema import validate_report
from tests.plugin.suites import capitals
from tests.plugin.test_faults import holistic_suite
from tests.signals import cache_rows, start_pytest

STAND_IN = Path(__file__).with_name("stand_in_vllm")
ENGINE_ARGS = "--dtype float32 --max-model-len 512 --tensor-parallel-size 1"


@pytest.fixture
def stand_in(tmp_path: Path) -> Path:
    """A Python that has 'vllm' (the stand-in), as ``--holistic-vllm-python`` points at vLLM's own environment."""
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{STAND_IN}" exec "{sys.executable}" "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return python


@pytest.fixture
def starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the stand-in notes each start; the runs' own temporary folder is ``tmp_path/tmp``."""
    folder = tmp_path / "starts"
    folder.mkdir()
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("STAND_IN_VLLM_STARTS", str(folder))
    monkeypatch.setenv("TMPDIR", str(temporary))
    return folder


def _started(starts: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(starts.glob("*.json"))]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def _eventually(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def _left_behind(tmp_path: Path) -> list[str]:
    return sorted(path.name for path in (tmp_path / "tmp").iterdir())


def _report(root: Path) -> dict:
    [path] = (root / "reports").glob("*/latest/report.json")
    report = json.loads(path.read_text())
    assert validate_report(report) == []
    return report


def _answers(report: dict) -> dict[str, tuple[str, float | None]]:
    return {
        record["instance_id"]: (record["completion"]["text"], record["completion"].get("logprob"))
        for run in report["runs"]
        for record in run["instances"]
    }


def _vllm_args(tiny_gpt2: Path, stand_in: Path, *more: str) -> list[str]:
    return [
        "--model", f"vllm:{tiny_gpt2}", f"--holistic-vllm-python={stand_in}", "--holistic-vllm-args", ENGINE_ARGS,
        "-p", "no:cacheprovider", *more,
    ]  # fmt: skip


def test_one_engine_answers_as_transformers_does_and_a_warm_rerun_starts_none(
    pytester: pytest.Pytester, tiny_gpt2: Path, stand_in: Path, starts: Path, tmp_path: Path
) -> None:
    """A cold run starts the engine once, on loopback, with prefix caching and the user's arguments; its answers
    equal the in-process transformers run's; it leaves no process and no file; the rerun answers from the cache with
    no engine, and its report names the engine as the cold one did."""
    pytester.makepyfile(test_capitals=capitals())
    local = pytester.runpytest_subprocess("--model", str(tiny_gpt2), "-p", "no:cacheprovider", timeout=300)
    local.assert_outcomes(passed=4)
    expected = _answers(_report(pytester.path))
    shutil.rmtree(pytester.path / "reports")

    cold = pytester.runpytest_subprocess(*_vllm_args(tiny_gpt2, stand_in), timeout=300)
    cold.assert_outcomes(passed=4)
    [start] = _started(starts)
    assert "--enable-prefix-caching" in start["argv"] and "--tensor-parallel-size" in start["argv"]
    assert start["argv"][start["argv"].index("--host") + 1] == "127.0.0.1"
    assert start["environment"]["VLLM_HOST_IP"] == "127.0.0.1"
    engine_temporary = Path(start["environment"]["TMPDIR"])  # the session folder's, or a shorter one for its sockets
    assert engine_temporary.name == "tmp" or engine_temporary.name.startswith("holistic-engine-"), engine_temporary
    report = _report(pytester.path)
    answers = _answers(report)
    assert answers.keys() == expected.keys()
    for key, (text, logprob) in expected.items():
        assert answers[key][0] == text
        assert answers[key][1] == pytest.approx(logprob, abs=1e-4)
    model = report["model"]
    assert model["backend"] == "vllm" and model["details"]["engine_version"] == "0.0.0+stand-in"
    assert "--tensor-parallel-size 1" in model["details"]["engine_args"]
    assert model["variant"]["engine_args"] == "--dtype float32 --max-model-len 512"  # placement left out of the key
    assert _eventually(lambda: not _alive(start["pid"]), 10)
    assert _left_behind(tmp_path) == [] and not engine_temporary.exists()

    warm = pytester.runpytest_subprocess(*_vllm_args(tiny_gpt2, stand_in), timeout=300)
    warm.assert_outcomes(passed=4)
    assert len(_started(starts)) == 1
    replayed = _report(pytester.path)
    assert _answers(replayed) == answers
    assert replayed["model"]["details"]["engine_version"] == "0.0.0+stand-in"
    assert _left_behind(tmp_path) == []


def test_xdist_workers_share_one_engine_started_from_the_controllers_environment(
    pytester: pytest.Pytester, tiny_gpt2: Path, stand_in: Path, starts: Path, tmp_path: Path
) -> None:
    """Two workers, one engine: started once, without a worker's GPU pinning, and the answers of ``-n 0``."""
    pytester.makepyfile(test_numbers=holistic_suite(count=12))
    serial = pytester.runpytest_subprocess(
        *_vllm_args(tiny_gpt2, stand_in), "--holistic-cache-dir", str(tmp_path / "serial-cache"), timeout=300
    )
    serial.assert_outcomes(passed=12)
    expected = _answers(_report(pytester.path))
    parallel = pytester.runpytest_subprocess(
        *_vllm_args(tiny_gpt2, stand_in), "-n", "2", "--holistic-cache-dir", str(tmp_path / "parallel-cache"), timeout=300
    )
    parallel.assert_outcomes(passed=12)
    report = _report(pytester.path)
    assert sorted(report["workers"]) == ["gw0", "gw1"]
    answers = _answers(report)
    assert answers.keys() == expected.keys()
    for key, (text, logprob) in expected.items():
        assert answers[key][0] == text and answers[key][1] == pytest.approx(logprob, abs=1e-4)
    runs = _started(starts)
    assert len(runs) == 2  # one for the serial run, one shared by both workers
    assert runs[1]["environment"]["CUDA_VISIBLE_DEVICES"] == os.environ.get("CUDA_VISIBLE_DEVICES")
    assert _left_behind(tmp_path) == []


@pytest.fixture
def slow_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every completion takes 0.2 s, so the run is still going when it is interrupted."""
    monkeypatch.setenv("STAND_IN_VLLM_DELAY", "0.2")


@pytest.fixture
def running(
    pytester: pytest.Pytester, tiny_gpt2: Path, stand_in: Path, starts: Path, slow_engine: None
) -> Iterator[tuple[subprocess.Popen[str], dict]]:
    """A run of 40 items in progress: its engine started and some answers committed."""
    pytester.makepyfile(test_numbers=holistic_suite(count=40))
    process = start_pytest(pytester.path, *_vllm_args(tiny_gpt2, stand_in), "--holistic-concurrency", "1")
    try:
        assert _eventually(lambda: cache_rows(pytester.path) >= 2 or process.poll() is not None, 180), "no answer"
        assert process.poll() is None, process.communicate()[0]
        [start] = _started(starts)
        yield process, start
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


@pytest.mark.parametrize("send", ["ctrl-c", "sigterm", "kill -9"])
def test_an_interrupted_run_leaves_no_engine_and_no_file(
    running: tuple[subprocess.Popen[str], dict], pytester: pytest.Pytester, tmp_path: Path, send: str
) -> None:
    """Ctrl-C, SIGTERM or ``kill -9`` of pytest mid-run: the engine's whole process group and its supervisor stop,
    and the session's folder and the engine's temporary files are removed. Ctrl-C and SIGTERM still write the report
    (an interrupted run), what was answered stays in the cache, and a rerun completes."""
    process, start = running
    if send == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)
    elif send == "sigterm":
        os.kill(process.pid, signal.SIGTERM)
    else:
        os.kill(process.pid, signal.SIGKILL)
    output, _ = process.communicate(timeout=60)
    assert _eventually(lambda: not _alive(start["pid"]), 30), f"the engine outlived pytest ({send})"
    assert _eventually(lambda: _left_behind(tmp_path) == [], 10), _left_behind(tmp_path)
    if send != "kill -9":
        assert process.returncode == pytest.ExitCode.INTERRUPTED and "Traceback" not in output, output
        assert _report(pytester.path)["complete"] is False
    assert cache_rows(pytester.path) >= 2  # what was answered before the interruption stays


def test_the_engine_is_not_installed(pytester: pytest.Pytester, tiny_gpt2: Path, starts: Path, tmp_path: Path) -> None:
    """This Python has no vllm: the run stops at the first item with one line that says where to install it."""
    pytester.makepyfile(test_capitals=capitals())
    result = pytester.runpytest_subprocess(
        "--model", f"vllm:{tiny_gpt2}", f"--holistic-vllm-python={sys.executable}", "-p", "no:cacheprovider", timeout=120
    )
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert f"the vLLM engine cannot start: {sys.executable} has no vllm installed" in output
    assert "--holistic-vllm-python" in output and "Traceback" not in output
    assert _started(starts) == [] and _left_behind(tmp_path) == []


def test_a_busy_port(pytester: pytest.Pytester, tiny_gpt2: Path, stand_in: Path, starts: Path, tmp_path: Path) -> None:
    """The user's ``--port`` is taken: said in one line before any start-up wait, and the run stops."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        pytester.makepyfile(test_capitals=capitals())
        result = pytester.runpytest_subprocess(
            "--model", f"vllm:{tiny_gpt2}", f"--holistic-vllm-python={stand_in}",
            "--holistic-vllm-args", f"--port {port}", "-p", "no:cacheprovider", timeout=120,
        )  # fmt: skip
    result.assert_outcomes(errors=1)
    assert f"port {port} on 127.0.0.1 is busy" in result.stdout.str()
    assert _started(starts) == [] and _left_behind(tmp_path) == []


def test_a_model_that_fails_to_load(pytester: pytest.Pytester, stand_in: Path, starts: Path, tmp_path: Path) -> None:
    """The engine exits while starting: one line with its exit status and the last lines of its log; the run stops."""
    broken = pytester.path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    pytester.makepyfile(test_capitals=capitals())
    result = pytester.runpytest_subprocess(
        "--model", f"vllm:{broken}", f"--holistic-vllm-python={stand_in}", "-p", "no:cacheprovider", timeout=300
    )
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert "the vLLM engine exited with status 1 while starting; the last lines of its log:" in output, output
    assert "Traceback" not in output.split("the last lines of its log:")[0]
    assert len(_started(starts)) == 1 and _left_behind(tmp_path) == []


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--holistic-vllm-args", "--model other"], "--model is set by pytest-holistic"),
        (["--holistic-vllm-args", "--dtype 'float32"], "cannot split it into arguments"),
        (["--holistic-vllm-python", "no/such/python"], "no such Python interpreter"),
        (["--holistic-vllm-start-timeout", "soon"], "must be a number of seconds > 0"),
    ],
)
def test_bad_engine_options_are_usage_errors(pytester: pytest.Pytester, tiny_gpt2: Path, args: list[str], problem: str) -> None:
    pytester.makepyfile(test_capitals=capitals())
    result = pytester.runpytest_subprocess("--model", f"vllm:{tiny_gpt2}", *args, "-p", "no:cacheprovider", timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert problem in result.stderr.str() and "Traceback" not in result.stderr.str()
