"""The scoring-only adaptation methods through a real vLLM server, and a server that dies or a run that is stopped.

``test_vllm_server.py`` covers generation, joint multiple choice and separate multiple choice (BoolQ, MMLU,
HellaSwag); here the other three methods run through vLLM's echoed prompt log-probabilities and must give the
answers the in-process transformers backend gives on the same float32 weights: calibrated multiple choice
(OpenBookQA as HELM classic ran it), binary ranking (MS MARCO) and language modelling (The Pile). Then a server of
the test's own is killed mid-run, and a run against the shared server is stopped with Ctrl-C. Without
``HOLISTIC_VLLM_PYTHON`` every test skips with one line.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_holistic.report.schema import validate_report
from tests.serving.test_llama_cpp_server import ROOT, _answers, _report
from tests.serving.test_vllm_server import LOGPROB_TOLERANCE
from tests.serving.vllm_server import NAME, PYTHON_VARIABLE, VllmServer, needs_vllm
from tests.signals import cache_rows, computed, start_pytest

INSTANCES = 2
RANKING = ("suites/core/test_msmarco.py::test_msmarco_regular", "-k", "not mild_mix and not dialect",
           "--holistic-max-instances", str(INSTANCES))  # fmt: skip
"""Binary ranking as the core MS MARCO suite adapts it, its unperturbed queries only: vLLM on 2 CPU cores takes
seconds per echoed prompt, and each query asks two per passage."""
LANGUAGE_MODELLING = ("suites/core/test_language_modeling.py", "--holistic-max-instances", "1")
CALIBRATED = """
import pytest
from pytest_holistic import Fields, Scenario, jsonl
from pytest_holistic.scenarios.helm_rows_mc import openbookqa_row

openbookqa = Scenario("openbookqa", local=jsonl("openbookqa.jsonl", Fields(choices="choices", answer="answer",
                      prepare=openbookqa_row)), split="test", train_split="train")

@pytest.mark.holistic(openbookqa, adapter="multiple_choice_calibrated", max_train_instances=1)
def test_openbookqa_calibrated(completion):
    assert len(completion.choice_scores) == len(completion.choices) == 4
"""
"""No core suite uses calibrated multiple choice (HELM classic v0.2 ran OpenBookQA with it): the shipped OpenBookQA
rows under that method, one in-context example so the calibration prompt differs from the bare question."""
TOKEN_TOLERANCE = LOGPROB_TOLERANCE / 20
"""Nats per scored token of a language-modelling document: its log-probability sums hundreds of tokens' (the
float32 gap of one token is about 1e-5), so its bound grows with the tokens scored, from 1e-3 at 20 tokens."""
FORBIDDEN = ("Traceback", "INTERNALERROR")

pytestmark = needs_vllm


# -- running pytest ---------------------------------------------------------------------------------


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--rootdir", str(cwd), *args]
    return subprocess.run(command, check=False, cwd=cwd, capture_output=True, text=True, timeout=900)


def _records(model: str, folder: Path, *selections: tuple[tuple[str, ...], Path]) -> dict[str, dict]:
    """Every record of each selection (pytest's arguments, and the folder it runs in), run against ``model``."""
    records: dict[str, dict] = {}
    for number, (args, cwd) in enumerate(selections):
        reports = folder / str(number)
        result = _run(*args, "--model", model, "--holistic-report-dir", str(reports), "-n", "0", cwd=cwd)
        assert result.returncode == 0, result.stdout[-3000:]
        report = _report(reports)
        assert validate_report(report) == []
        records.update(_answers(report))
    return records


def _served_equals_local(vllm_server: VllmServer, folder: Path, *selections: tuple[tuple[str, ...], Path]) -> dict[str, dict]:
    """The served run's records, after checking them against the transformers backend's on the same weights."""
    from pytest_holistic.models.embedded import converted_dir

    remote = _records(f"openai:{vllm_server.url}#{NAME}", folder / "served", *selections)
    local = _records(str(converted_dir()), folder / "local", *selections)
    assert remote.keys() == local.keys() and remote
    differ, largest = _compare(remote, local)
    assert differ == [], [(remote[n]["completion"], local[n]["completion"]) for n in differ[:2]]
    assert largest <= 1.0, largest
    return remote


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("calibrated")
    (folder / "test_openbookqa_calibrated.py").write_text(CALIBRATED)
    shutil.copy(ROOT / "suites" / "core" / "data" / "openbookqa.jsonl", folder / "openbookqa.jsonl")
    return folder


# -- comparing answers ------------------------------------------------------------------------------


def _exact(record: dict) -> tuple[object, ...]:
    """What must be identical: the answer, the order passages are ranked in, what was scored, which values exist."""
    completion = record["completion"]
    numbers = [completion["logprob"], completion["probability"], *completion["choice_logprobs"], *completion["choice_scores"]]
    return (
        record["outcome"], completion["text"], completion["predicted_index"], completion["ranking"],
        completion["num_bytes"], completion["scored_tokens"], [value is None for value in numbers],
    )  # fmt: skip


def _gaps(first: dict, second: dict) -> list[float]:
    """Every log-probability gap of one item, each divided by its allowance (at most 1 when within tolerance)."""
    one, two = first["completion"], second["completion"]
    allowance = LOGPROB_TOLERANCE
    if one["scored_tokens"]:  # a document: the sum of its tokens' log-probabilities
        allowance = max(LOGPROB_TOLERANCE, TOKEN_TOLERANCE * one["scored_tokens"])
    pairs = [
        (one["logprob"], two["logprob"]),
        *zip(one["choice_logprobs"], two["choice_logprobs"], strict=True),
        *zip(one["choice_scores"], two["choice_scores"], strict=True),
    ]
    return [abs(a - b) / allowance for a, b in pairs if a is not None and b is not None]


def _compare(first: dict[str, dict], second: dict[str, dict]) -> tuple[list[str], float]:
    """The items whose exact parts differ, and the largest log-probability gap (in allowances) over the others."""
    differ = [nodeid for nodeid in first if _exact(first[nodeid]) != _exact(second[nodeid])]
    gaps = [gap for nodeid in first if nodeid not in differ for gap in _gaps(first[nodeid], second[nodeid])]
    return differ, max(gaps, default=math.nan)


def test_calibrated_choice_and_ranking_equal_the_transformers_backend(
    vllm_server: VllmServer, calibrated: Path, tmp_path: Path
) -> None:
    calibrated_suite = (str(calibrated / "test_openbookqa_calibrated.py"), "--holistic-max-instances", str(INSTANCES))
    remote = _served_equals_local(vllm_server, tmp_path, (RANKING, ROOT), (calibrated_suite, calibrated))
    methods = {nodeid.split("::")[1].split("[")[0] for nodeid in remote}
    assert methods == {"test_msmarco_regular", "test_openbookqa_calibrated"}, methods
    assert len(remote) == 2 * INSTANCES
    assert all(len(r["completion"]["ranking"]) >= 2 for n, r in remote.items() if "msmarco" in n)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="a plain openai: model cannot score a document's first token when the server's tokenizer adds no start "
    "token (SmolLM2's adds none): each document is an error asking for context, where the transformers backend "
    "conditions it on the start token; the plugin does not know an openai: server's tokenizer (a vllm: model does: "
    "test_vllm_engine.py's language-modelling test)",
)
def test_language_modelling_equals_the_transformers_backend(vllm_server: VllmServer, tmp_path: Path) -> None:
    remote = _served_equals_local(vllm_server, tmp_path, (LANGUAGE_MODELLING, ROOT))
    assert all(record["completion"]["scored_tokens"] > 0 for record in remote.values())


# -- a server that dies, a run that is stopped ------------------------------------------------------


def _sections(output: str) -> dict[str, list[str]]:
    """pytest's ERRORS and FAILURES sections: each item's parameters (``boolq-049~dialect``) and its lines."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    inside = False
    for line in output.splitlines():
        if line.startswith("="):  # a section of the run: only ERRORS and FAILURES hold the items' reports
            current = [] if line.strip("= ") in ("ERRORS", "FAILURES") else None
            inside = current is not None
        elif inside and (header := re.fullmatch(r"_+ (?:ERROR at \w+ of )?\w+\[(.+)\] _+", line)):
            current = sections.setdefault(header[1], [])
        elif current is not None and line.strip():
            current.append(line)
    return sections


def _served_report(folder: Path, server: VllmServer) -> dict:
    """The latest report of the runs against ``server``: reports are filed by the model's URL, answers cached by its
    served name."""
    reports = [json.loads(path.read_text()) for path in folder.glob("*/latest/report.json")]
    (report,) = [report for report in reports if report["model"]["details"]["url"] == server.url]
    assert validate_report(report) == []
    return report


def _until(condition: Callable[[], bool], run: subprocess.Popen[str], what: str, deadline_s: float = 300) -> None:
    """Wait for ``condition`` while pytest runs; fail (stopping pytest) if it ends or the deadline passes first."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        if run.poll() is not None or time.monotonic() > deadline:
            os.killpg(run.pid, signal.SIGKILL)
            output, _ = run.communicate()
            raise AssertionError(f"the run never reached the point to stop it ({what}):\n{output[-3000:]}")
        time.sleep(0.05)


def _finish(run: subprocess.Popen[str], within_s: float) -> str:
    """pytest's output once it has exited, failing (and killing it) if it is still running after ``within_s``."""
    try:
        return run.communicate(timeout=within_s)[0]
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        raise AssertionError(f"pytest hung:\n{run.communicate()[0][-3000:]}") from None


@pytest.fixture
def own_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], VllmServer]]:
    """Start vLLM servers of the test's own (each on a fresh port); every one is stopped at teardown. Each gets a
    short folder: vLLM's engine binds a Unix socket under it, and a socket path must stay under 108 bytes."""
    from pytest_holistic.models.embedded import converted_dir

    started: list[VllmServer] = []

    def start() -> VllmServer:
        started.append(VllmServer(os.environ[PYTHON_VARIABLE], converted_dir(), tmp_path_factory.mktemp("vllm")))
        return started[-1]

    yield start
    for server in started:
        server.stop()


KILLED_RUN_INSTANCES = 12
"""BoolQ's instances in the run whose server is killed: 50 answers with their variants, of which the kill comes
after three, so the run still has 10 to 20 seconds of answers to ask (0.27 to 0.45 s an answer, measured) when
the test's poll (every 50 ms, on a machine other tests keep busy) sees the third. With 4 instances (17 answers)
CI once saw the third too late: the run had finished. The rerun asks each answer the first run lacked."""


def test_a_server_killed_mid_run_errors_the_rest_in_one_line_and_a_rerun_resumes_from_the_cache(
    own_servers: Callable[[], VllmServer], tmp_path: Path
) -> None:
    """SIGKILL to the server's process group once a few answers are committed: pytest still ends, each item left
    fails with one line naming the server, and the report says so. The cache is keyed by the served name, not
    the URL, so a fresh server on another port serves the rerun, which asks only for what the first run lacked."""
    first = own_servers()
    args = ["suites/core/test_boolq.py", "--holistic-max-instances", str(KILLED_RUN_INSTANCES),
            "--holistic-concurrency", "1", "--holistic-retries", "1",
            "--holistic-report-dir", str(tmp_path / "reports"), "-n", "0"]  # fmt: skip
    run = start_pytest(ROOT, "-q", "-p", "no:randomly", *args, "--model", f"openai:{first.url}#{NAME}")
    _until(lambda: cache_rows(tmp_path) >= 3, run, "three answers committed")
    seen = time.monotonic()
    first.kill()
    at_kill, kill_s = cache_rows(tmp_path), time.monotonic() - seen
    output = _finish(run, 300)
    late = f"the run ended before the server was killed ({at_kill} answers committed, killed {kill_s:.2f} s after the third)"
    assert run.returncode != pytest.ExitCode.OK, f"{late}:\n{output[-3000:]}"
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, output[-3000:]
    assert not any(word in output for word in FORBIDDEN), output[-3000:]
    report = _served_report(tmp_path / "reports", first)
    before = _answers(report)
    failed = {nodeid for nodeid, record in before.items() if record["outcome"] != "passed"}
    passed = before.keys() - failed
    assert passed and failed, {nodeid: record["outcome"] for nodeid, record in before.items()}
    server = f"127.0.0.1:{first.port}"
    for nodeid in failed:
        error = before[nodeid]["error"]
        assert error and "\n" not in error.strip() and server in error, error
    sections = _sections(output)
    assert set(sections) == {nodeid.partition("[")[2][:-1] for nodeid in failed}, sections.keys()
    assert all(len(lines) == 1 and server in lines[0] for lines in sections.values()), sections
    committed = cache_rows(tmp_path)

    second = own_servers()
    rerun = _run(*args, "--model", f"openai:{second.url}#{NAME}")
    assert rerun.returncode == 0, rerun.stdout[-3000:]
    again = _served_report(tmp_path / "reports", second)
    after = _answers(again)
    assert after.keys() == before.keys() and all(record["outcome"] == "passed" for record in after.values())
    assert all(after[nodeid]["completion"]["cached"] for nodeid in passed)
    assert not any(after[nodeid]["completion"]["cached"] for nodeid in failed)
    asked = computed(again)
    assert asked == cache_rows(tmp_path) - committed and 1 <= asked <= len(failed), (asked, committed, len(failed))


def _healthy(server: VllmServer) -> str:
    """The server's answer to a short completion, after ``GET /health`` says it is well."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/health", timeout=10) as response:
        assert response.status == 200
    body = json.dumps({"model": NAME, "prompt": "The capital of France is", "max_tokens": 4, "temperature": 0}).encode()
    request = urllib.request.Request(f"{server.url}/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["choices"][0]["text"]


def test_ctrl_c_mid_run_ends_pytest_interrupted_with_a_report_and_leaves_the_server_serving(
    vllm_server: VllmServer, tmp_path: Path
) -> None:
    """SIGINT to pytest's process group, as a terminal sends it; the server, in a group of its own, never gets it
    and must go on answering after its client dropped the requests in flight."""
    run = start_pytest(
        ROOT, "-q", "-p", "no:randomly", "suites/core/test_msmarco.py::test_msmarco_regular",
        "--holistic-max-instances", "4", "--holistic-concurrency", "2", "--model", f"openai:{vllm_server.url}#{NAME}",
        "--holistic-report-dir", str(tmp_path / "reports"), "-n", "0",
    )  # fmt: skip
    _until(lambda: cache_rows(tmp_path) >= 3, run, "three answers committed")
    os.killpg(run.pid, signal.SIGINT)
    output = _finish(run, 60)
    assert run.returncode == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert not any(word in output for word in FORBIDDEN), output[-3000:]
    report = _report(tmp_path / "reports")
    assert validate_report(report) == []
    assert report["complete"] is False and "interrupt" in report["interrupted"].lower(), report["interrupted"]
    assert report["not_completed"], "the report lists nothing that did not run"
    assert vllm_server.process.poll() is None
    assert _healthy(vllm_server).strip()
