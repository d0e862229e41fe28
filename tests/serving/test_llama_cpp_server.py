"""A real OpenAI-compatible engine on loopback: llama-cpp-python's server on the embedded SmolLM2 GGUF.

The same weights run in-process through transformers (the GGUF dequantised to float32), so the server's greedy
answers are checked against that backend's: the same answers on most items, and the generated tokens'
log-probabilities within a tolerance that allows for llama.cpp computing with the 4-bit weights and 8-bit
activations. The server is killed mid-run to check that the items it could not answer are errors the report
names, and that a rerun against a restarted server computes only those. ``.ci/run`` builds the engine (a source
build, cached as a wheel); elsewhere these tests skip with one line.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("suites/core/test_boolq.py", "suites/core/test_mmlu.py")
LOGPROB_TOLERANCE = 0.2
"""Nats, for the summed log-probability of one identical greedy answer (one to three tokens). Measured here:
41 of 44 answers identical, gaps 0.028 on average and 0.097 at most (llama.cpp multiplies the 4-bit weights
with 8-bit activations; the in-process copy is the same weights dequantised to float32)."""
PROBE_COMPLETIONS = 2
"""Completion requests of the start-up probe (a short generation, then the same text echoed)."""
AGREEMENT = 0.8
"""Share of items whose greedy answers must be identical."""

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None,
    reason="llama-cpp-python[server] is not installed (a source build: .ci/run makes and caches it)",
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """One ``python -m llama_cpp.server`` process; its access log counts the requests it answered."""

    def __init__(self, port: int, log: Path) -> None:
        from pytest_holistic.models.embedded import gguf_path

        self.port = port
        self.log = log
        self.url = f"http://127.0.0.1:{port}/v1"
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--model_alias", "smollm2",
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=log.open("a"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"llama-cpp-python's server exited at start: {log.read_text()[-800:]}")
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=2).read()
                return
            except OSError:
                time.sleep(0.5)
        self.stop()
        pytest.fail("llama-cpp-python's server did not answer within 120 s")

    def completions(self) -> int:
        return self.log.read_text(errors="replace").count("POST /v1/completions")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(_free_port(), tmp_path_factory.mktemp("server") / "server.log")
    yield running
    running.stop()


def _pytest(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    return subprocess.run(
        command, check=False, cwd=ROOT, capture_output=True, text=True, timeout=900, env={**os.environ, **(env or {})}
    )


def _report(folder: Path) -> dict:
    (path,) = folder.glob("*/latest/report.json")
    return json.loads(path.read_text())


def _answers(report: dict) -> dict[str, dict]:
    return {record["nodeid"]: record for run in report["runs"] for record in run["instances"]}


def test_server_answers_agree_with_the_transformers_backend_and_no_key_is_written(server: Server, tmp_path: Path) -> None:
    secret = "sk-holistic-test-0123456789abcdefSECRET"
    served = _pytest(
        *SCENARIOS, "--holistic-max-instances", "6", "--model", f"openai:{server.url}#smollm2",
        "--holistic-api-key-env", "EVAL_SERVER_KEY", "--holistic-report-dir", str(tmp_path / "served"),
        "--junitxml", str(tmp_path / "served" / "junit.xml"),
        env={"EVAL_SERVER_KEY": secret},
    )  # fmt: skip
    assert served.returncode == 0, served.stdout[-3000:]
    local = _pytest(
        *SCENARIOS, "--holistic-max-instances", "6", "--holistic-chat-template", "none",
        "--holistic-report-dir", str(tmp_path / "local"),
    )  # fmt: skip
    assert local.returncode == 0, local.stdout[-3000:]

    remote, inprocess = _answers(_report(tmp_path / "served")), _answers(_report(tmp_path / "local"))
    assert remote.keys() == inprocess.keys() and len(remote) >= 20
    same = [nodeid for nodeid in remote if remote[nodeid]["completion"]["text"] == inprocess[nodeid]["completion"]["text"]]
    assert len(same) >= AGREEMENT * len(remote), [
        (remote[n]["completion"]["text"], inprocess[n]["completion"]["text"]) for n in remote if n not in same
    ]
    gaps = [
        abs(remote[n]["completion"]["logprob"] - inprocess[n]["completion"]["logprob"])
        for n in same
        if remote[n]["completion"]["logprob"] is not None and inprocess[n]["completion"]["text"]
    ]
    assert gaps and max(gaps) <= LOGPROB_TOLERANCE, sorted(gaps)[-5:]

    written = [path for path in (tmp_path / "served").rglob("*") if path.is_file()]
    assert any(path.name == "report.json" for path in written) and any(
        path.suffix == ".sqlite" or "cache" in str(path) for path in written
    )
    for path in written:
        assert secret.encode() not in path.read_bytes(), f"the API key was written to {path}"
    assert secret not in served.stdout + served.stderr


def test_a_scenario_needing_prompt_logprobs_fails_at_collection_in_one_line(server: Server, tmp_path: Path) -> None:
    result = _pytest(
        "suites/core/test_hellaswag.py", "--model", f"openai:{server.url}#smollm2", "--holistic-report-dir", str(tmp_path)
    )
    assert result.returncode == 2, result.stdout[-2000:]
    lines = [line for line in result.stdout.splitlines() if "scores log-likelihoods" in line]
    assert len(lines) == 1 and "hellaswag" in lines[0] and "echoed prompt log-probabilities" in lines[0], result.stdout[-2000:]
    assert "Traceback" not in result.stdout + result.stderr


def test_killing_the_server_mid_run_errors_the_rest_and_a_rerun_computes_only_those(tmp_path: Path) -> None:
    port = _free_port()
    first = Server(port, tmp_path / "first.log")
    args = (
        "suites/core/test_boolq.py", "--holistic-max-instances", "8", "--model", f"openai:{first.url}#smollm2",
        "--holistic-concurrency", "1", "--holistic-retries", "1", "--holistic-report-dir", str(tmp_path / "reports"),
    )  # fmt: skip
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    run = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300
        while first.completions() < 6 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        first.stop()
        output, _ = run.communicate(timeout=600)
    finally:
        first.stop()
        if run.poll() is None:
            run.kill()
    answered = first.completions()
    assert run.returncode == 1, output[-3000:]
    report = _report(tmp_path / "reports")
    (boolq,) = report["runs"]
    outcomes = boolq["outcomes"]
    failed = outcomes.get("failed", 0) + outcomes.get("error", 0)
    assert outcomes.get("passed", 0) >= 1 and failed >= 1, outcomes
    errors = [record for record in boolq["instances"] if record.get("outcome") in ("failed", "error")]
    assert errors and all("unreachable" in json.dumps(record) for record in errors), errors[:1]
    assert "unreachable" in output
    total = sum(outcomes.values())

    second = Server(port, tmp_path / "second.log")
    try:
        rerun = _pytest(*args)
    finally:
        second.stop()
    assert rerun.returncode == 0, rerun.stdout[-3000:]
    assert _report(tmp_path / "reports")["runs"][0]["outcomes"] == {"passed": total}
    computed = second.completions() - PROBE_COMPLETIONS
    assert 1 <= computed <= failed, (computed, failed, answered)  # what the first server answered came from the cache
