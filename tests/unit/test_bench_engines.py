"""The engines benchmark (benchmarks/bench_engines.py) without vLLM or a run: its request count, its agreement, the
line that skips the vLLM side and its one-line errors."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))  # it imports its sibling holistic_runs as the scripts do
    try:
        spec = importlib.util.spec_from_file_location("bench_engines", BENCHMARKS / "bench_engines.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_engines"] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


def _generated(nodeid: str, prompt: str, text: str, logprob: float | None) -> dict[str, Any]:
    completion = {"text": text, "logprob": logprob, "choice_logprobs": [], "choices": []}
    return {"nodeid": nodeid, "prompt": prompt, "completion": completion}


def _scored(nodeid: str, prompt: str, choices: list[str], logprobs: list[float]) -> dict[str, Any]:
    best = max(range(len(choices)), key=lambda k: logprobs[k])
    completion = {"text": choices[best], "logprob": logprobs[best], "choice_logprobs": logprobs, "choices": choices}
    return {"nodeid": nodeid, "prompt": prompt, "completion": completion}


def _report(records: list[dict[str, Any]], scored: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "runs": [
            {"adapter": {"method": "generation", "max_tokens": 5, "stop": ["\n"]}, "instances": records},
            {"adapter": {"method": "multiple_choice_separate", "max_tokens": 0, "stop": []}, "instances": scored},
        ]
    }


def test_requests_are_counted_as_the_plugin_sends_them(bench: ModuleType) -> None:
    report = _report(
        [
            _generated("g::a", "P1", "Yes", -0.5),
            _generated("g::a~typo", "P1", "Yes", -0.5),  # the same prompt: one request
            _generated("g::b", "P2", "No", -0.7),
            {"nodeid": "g::c", "prompt": None, "completion": None},  # errored before the model: nothing sent
        ],
        [
            _scored("m::a", "Q1", ["x", "y", "z"], [-1.0, -2.0, -3.0]),
            _scored("m::a~d", "Q1", ["x", "y", "z"], [-1.0, -2.0, -3.0]),
        ],
    )
    assert bench.requests_of(report) == {"generation": 2, "loglikelihood": 3, "total": 5}


def test_agreement_counts_same_texts_and_the_largest_logprob_difference(bench: ModuleType) -> None:
    first = bench.answers_of(_report([_generated("g::a", "P1", "Yes", -0.5), _generated("g::b", "P2", "No", -0.7)],
                                     [_scored("m::a", "Q", ["x", "y"], [-1.0, -2.0])]))  # fmt: skip
    second = bench.answers_of(_report([_generated("g::a", "P1", "Yes", -0.5004), _generated("g::b", "P2", "Maybe", -9.0)],
                                      [_scored("m::a", "Q", ["x", "y"], [-1.001, -2.01])]))  # fmt: skip
    agreed = bench.agreement(first, second)
    assert agreed["items"] == 3 and agreed["same"] == 2
    assert agreed["mismatches"] == [["g::b", "No", "Maybe"]]
    assert agreed["compared_logprobs"] == 2  # different texts: their totals are not compared
    assert agreed["max_logprob_difference"] == pytest.approx(0.01)
    missing = bench.agreement(first, {})
    assert missing["same"] == 0 and missing["max_logprob_difference"] is None


def test_without_vllm_the_side_is_skipped_with_one_line(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOLISTIC_VLLM_PYTHON", raising=False)
    python, origin = bench.vllm_python(None)
    found, line = bench.probe_vllm(python, origin)
    assert found is None and line.count("\n") == 0
    assert "$HOLISTIC_VLLM_PYTHON" in line and 'eval "$(bash tests/serving/vllm_env.sh' in line
    found, line = bench.probe_vllm(sys.executable, "--vllm-python")  # this environment has no vllm
    assert found is None and "cannot import vllm" in line and "vllm_env.sh" in line


def test_default_engine_arguments_depend_on_cuda(bench: ModuleType) -> None:
    assert bench.engine_args(None, cuda=False) == "--enforce-eager --dtype float32 --max-model-len 4096"
    assert bench.engine_args(None, cuda=True) == "--dtype float32 --max-model-len 4096"
    assert bench.engine_args("--dtype bfloat16", cuda=True) == "--dtype bfloat16"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--model", "no/such/folder"], "not a transformers model folder"),
        (["--workloads", "fewshot,speed"], "give a comma-separated subset of"),
        (["--vllm-python", "no/such/python"], "no such file"),
        (["--vllm-args", "--dtype 'float32"], "cannot split it into arguments"),
    ],
)
def test_a_bad_option_is_one_line_and_status_2(arguments: list[str], said: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_engines.py"), *arguments],
        check=False, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == "" and done.stderr.count("\n") == 1 and said in done.stderr and "Traceback" not in done.stderr


def _side(wall: float, model: float, start: float | None, requests: int) -> dict[str, Any]:
    return {
        "wall_s": wall,
        "model_s": model,
        "model_max_s": model,
        "workers": 1,
        "engine_start_s": start,
        "engine_version": "0.32.0" if start is not None else None,
        "requests_sent": {"generation": requests, "loglikelihood": 0, "total": requests},
        "requests_per_model_s": requests / model,
        "passed_line": f"{requests} passed",
    }


def test_the_table_has_ratios_and_mismatches_only_when_vllm_ran(bench: ModuleType) -> None:
    mismatches = [[f"t.py::test[{k}]", "Yes", "No"] for k in range(7)]
    agreed = {"items": 16, "same": 9, "compared_logprobs": 9, "max_logprob_difference": 2e-5, "mismatches": mismatches}
    both = {
        "title": "BoolQ",
        "items": 16,
        "sides": {"transformers": _side(71.0, 54.3, None, 16), "vllm": _side(94.8, 8.2, 57.4, 16)},
    }
    results = {"vllm": {"args": "--dtype float32"}, "workloads": {"fewshot": {**both, "agreement": agreed}}}
    text = "\n".join(bench.report_lines(results))
    assert "vllm/transformers: wall 1.335x   model 0.151x" in text and "start  57.4 s" in text
    assert "same text on 9/16 items; largest |log-prob difference| 2.00e-05" in text
    assert "t.py::test[4]" in text and "t.py::test[5]" not in text and "... and 2 more" in text
    alone = {
        "vllm": None,
        "workloads": {"fewshot": {"title": "BoolQ", "items": 16, "sides": {"transformers": _side(71.0, 54.3, None, 16)}}},
    }
    lines = bench.report_lines(alone)
    assert len(lines) == 2 and "0.29 req/s" in lines[1] and "vllm" not in "\n".join(lines)
