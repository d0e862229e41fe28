"""A real vLLM server on loopback through the served backend: the engine the README names for big models.

vLLM echoes prompt log-probabilities, so unlike llama.cpp's server it runs the log-likelihood scenarios too. Its
answers on the embedded SmolLM2 (float32, the same transformers folder) are checked against the in-process
transformers backend's, and a run split over two xdist workers against one server against a run in one process.
vLLM lives in an environment of its own, built by ``tests/serving/vllm_env.sh`` (``.ci/run`` does it); without
``HOLISTIC_VLLM_PYTHON`` these tests skip with one line.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.serving.test_llama_cpp_server import _answers, _pytest, _report
from tests.serving.vllm_server import NAME, VllmServer, needs_vllm

SCENARIOS = ("suites/core/test_boolq.py", "suites/core/test_mmlu.py", "suites/core/test_hellaswag.py")
"""Two generation scenarios (multiple choice answered by a letter or a word) and one scored by log-likelihoods."""
INSTANCES = "4"
LOGPROB_TOLERANCE = 1e-3
"""Nats, for any one log-probability of the same item: both engines compute in float32 on the same weights (the
issue measured 1.8e-4 at most)."""

pytestmark = needs_vllm


def _values(record: dict) -> list[float | None]:
    """Every log-probability an item's answer carries: the generated text's and each choice's."""
    completion = record["completion"]
    return [completion["logprob"], *completion["choice_logprobs"]]


def _differences(first: dict[str, dict], second: dict[str, dict]) -> tuple[list[str], float]:
    """The items whose answers differ (text, chosen index, or which log-probabilities exist), and the largest
    log-probability gap over the others."""

    def answer(record: dict) -> tuple[object, ...]:
        completion = record["completion"]
        return completion["text"], completion["predicted_index"], [value is None for value in _values(record)]

    differ = [nodeid for nodeid in first if answer(first[nodeid]) != answer(second[nodeid])]
    gaps = [
        abs(a - b)
        for nodeid in first
        if nodeid not in differ
        for a, b in zip(_values(first[nodeid]), _values(second[nodeid]), strict=True)
        if a is not None and b is not None
    ]
    return differ, max(gaps, default=math.nan)


@pytest.fixture(scope="module")
def served(vllm_server: VllmServer, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The subset run once in one process against the server: the report the other runs are compared with."""
    folder = tmp_path_factory.mktemp("served")
    result = _pytest(
        *SCENARIOS, "--holistic-max-instances", INSTANCES, "--model", f"openai:{vllm_server.url}#{NAME}",
        "-n", "0", "--holistic-report-dir", str(folder),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    return _report(folder)


def test_the_probe_accepts_vllm_echo_unshifted_and_every_scenario_passes(served: dict) -> None:
    details = served["model"]["details"]
    assert details["endpoint"] == "completions" and details["served_models"] == [NAME], details
    assert details["loglikelihood"] == "echo", details  # unshifted: vLLM aligns echoed values with their tokens
    outcomes = {run["name"]: run["outcomes"] for run in served["runs"]}
    assert len(outcomes) == len(SCENARIOS) and all(set(o) == {"passed"} for o in outcomes.values()), outcomes
    generated = [r for run in served["runs"] for r in run["instances"] if not r["completion"]["choice_logprobs"]]
    assert generated and all(r["completion"]["text"] and r["completion"]["logprob"] < 0 for r in generated)


def test_two_workers_against_one_server_give_the_same_answers(vllm_server: VllmServer, served: dict, tmp_path: Path) -> None:
    result = _pytest(
        *SCENARIOS, "--holistic-max-instances", INSTANCES, "--model", f"openai:{vllm_server.url}#{NAME}",
        "-n", "2", "--holistic-report-dir", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    split = _report(tmp_path)
    assert len(split["workers"]) == 2, split["workers"]
    one, two = _answers(served), _answers(split)
    assert one.keys() == two.keys() and len(one) >= 3 * int(INSTANCES)
    differ, largest = _differences(one, two)
    assert differ == [] and largest <= LOGPROB_TOLERANCE, (differ, largest)


def test_answers_equal_the_transformers_backend_on_the_same_weights(served: dict, tmp_path: Path) -> None:
    from pytest_holistic.models.embedded import converted_dir

    result = _pytest(
        *SCENARIOS, "--holistic-max-instances", INSTANCES, "--model", str(converted_dir()),
        "--holistic-report-dir", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    remote, local = _answers(served), _answers(_report(tmp_path))
    assert remote.keys() == local.keys()
    differ, largest = _differences(remote, local)
    assert differ == [] and largest <= LOGPROB_TOLERANCE, (differ, largest)
