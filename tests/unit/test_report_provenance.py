"""Provenance pieces by hand: the command line scrubbed of secrets, GPUs read without importing torch, the data's
content hash, and which interval a scenario number gets (Wilson for a small 0/1 sample, the bootstrap otherwise)."""

from __future__ import annotations

import math
import sys
from types import SimpleNamespace

import pytest

from pytest_holistic import Instance
from pytest_holistic.metrics.paired import wilson_interval
from pytest_holistic.records import ItemRecord
from pytest_holistic.report import provenance
from pytest_holistic.report.aggregate import SMALL_BINARY_N, metric_results, summarise
from pytest_holistic.scenarios import Scenario, jsonl
from pytest_holistic.scenarios.scenario import instances_digest
from pytest_holistic.scrubbing import scrub_command, sensitive


@pytest.mark.parametrize(
    ("argv", "scrubbed"),
    [
        (["--api-key=sk-abc"], ["--api-key=***"]),
        (["--hf-token", "abc", "-q"], ["--hf-token", "***", "-q"]),
        (["TOKEN=abc", "OPENAI_API_KEY=xyz", "db_password=p"], ["TOKEN=***", "OPENAI_API_KEY=***", "db_password=***"]),
        (["--env=HF_TOKEN=abc"], ["--env=HF_TOKEN=***"]),
        (["https://user:pass@host.org/x"], ["https://***@host.org/x"]),
        (["--holistic-baseline=https://tok@host.org/r.json"], ["--holistic-baseline=https://***@host.org/r.json"]),
        (["-H", "Authorization: Bearer abc"], ["-H", "Authorization: ***"]),
        (["-H", "Authorization:", "Bearer", "abc", "-q"], ["-H", "Authorization:", "Bearer", "***", "-q"]),
        (["hf_abcdefghijklmnopqrstuvwxyz", "x=sk-proj-abcdefghijklmnop1234"], ["***", "x=***"]),
        (["--no-auth", "-q"], ["--no-auth", "-q"]),  # a flag named like a secret takes no value: -q stays
    ],
)
def test_secrets_are_removed_from_the_command_line(argv: list[str], scrubbed: list[str]) -> None:
    assert scrub_command(argv) == scrubbed


def test_everything_else_on_the_command_line_stays_as_typed() -> None:
    argv = [
        "pytest",
        "--model",
        "HuggingFaceTB/SmolLM2-135M",
        "--holistic-gate",
        "boolq:exact_match.lower>=0.5",
        "--holistic-gate=abs(prompt_stereotyping-0.5)<=0.1",
        "--max-tokens=5",
        "--tokenizer=gpt2",
        "-k",
        "token and not slow",
        "tests/test_api_key.py::test_token[a=b]",
        "-o",
        "cache_dir=.cache",
    ]
    assert scrub_command(argv) == argv


@pytest.mark.parametrize("name", ["HF_TOKEN", "--api-key", "apikey", "OPENAI_API_KEY", "--db-password", "x.secret", "oauth"])
def test_names_of_secrets(name: str) -> None:
    assert sensitive(name)


@pytest.mark.parametrize("name", ["--max-tokens", "--tokenizer", "--holistic-gate", "-k", "--keyword", "PATH"])
def test_names_that_are_not_secrets(name: str) -> None:
    assert not sensitive(name)


def test_gpus_come_from_torch_only_when_it_already_runs_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []

    def name(index: int) -> str:
        asked.append(index)
        return f"GPU {index}"

    cuda = SimpleNamespace(is_initialized=lambda: False, is_available=lambda: True, device_count=lambda: 2, get_device_name=name)
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda, version=SimpleNamespace(cuda="12.4")))
    monkeypatch.setattr(provenance, "_proc_gpus", list)
    monkeypatch.setattr(provenance, "_nvidia_driver", lambda: None)
    assert provenance.gpus() is None and asked == []  # no CUDA context is created just to name the GPUs
    cuda.is_initialized = lambda: True
    monkeypatch.setattr(provenance, "_nvidia_driver", lambda: "550.54.15")
    found = provenance.gpus()
    assert found == {"count": 2, "names": ["GPU 0", "GPU 1"], "driver": "550.54.15", "cuda": "12.4", "source": "torch"}


def test_gpus_without_torch_come_from_the_driver_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setattr(provenance, "_proc_gpus", lambda: ["NVIDIA H100 80GB HBM3"])
    monkeypatch.setattr(provenance, "_nvidia_driver", lambda: "550.54.15")
    found = provenance.gpus()
    assert found == {
        "count": 1,
        "names": ["NVIDIA H100 80GB HBM3"],
        "driver": "550.54.15",
        "cuda": None,
        "source": "/proc/driver/nvidia",
    }
    assert "torch" not in sys.modules


def test_the_driver_files_are_read_as_the_nvidia_driver_writes_them(tmp_path) -> None:
    (tmp_path / "version").write_text(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (dvs-builder@U16)\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
    )
    for bus, model in (("0000:19:00.0", "NVIDIA H100 80GB HBM3"), ("0000:3b:00.0", "NVIDIA H100 80GB HBM3")):
        (tmp_path / "gpus" / bus).mkdir(parents=True)
        (tmp_path / "gpus" / bus / "information").write_text(f"Model: \t\t {model}\nIRQ:   \t\t 38\nBus Location: \t {bus}\n")
    assert provenance._nvidia_driver(tmp_path) == "550.54.15"
    assert provenance._proc_gpus(tmp_path) == ["NVIDIA H100 80GB HBM3"] * 2
    (tmp_path / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.161.07  Sat Feb 17 22:55:48 UTC 2024\n"
    )
    assert provenance._nvidia_driver(tmp_path) == "535.161.07"
    assert provenance._nvidia_driver(tmp_path / "absent") is None and provenance._proc_gpus(tmp_path / "absent") == []


def test_the_content_hash_is_the_data_whatever_its_source(tmp_path) -> None:
    rows = tmp_path / "qa.jsonl"
    rows.write_text('{"id": "a", "input": "2+2", "references": ["4"]}\n{"id": "b", "input": "3+3", "references": ["6"]}\n')

    def generated():
        yield Instance("a", "2+2", ("4",))
        yield Instance("b", "3+3", ("6",))

    from_file = Scenario("qa", jsonl(rows)).load(base=tmp_path).provenance
    from_code = Scenario("qa", generated).load(base=tmp_path).provenance
    assert from_file["instances_sha256"] == from_code["instances_sha256"] and from_file["instances"] == 2
    assert from_file["sha256"] is not None and from_file["kind"] == "jsonl"  # the source's own description is kept
    changed = instances_digest([Instance("a", "2+2", ("4",)), Instance("b", "3+3", ("7",))])
    assert changed != from_file["instances_sha256"]


def _result(values: list[float], name: str = "exact_match", kind: str = "instance"):
    return summarise(name, "accuracy", kind, "higher", None, values)


def test_a_small_binary_sample_gets_wilson_and_a_large_one_the_bootstrap() -> None:
    small = _result([1.0] * 18 + [0.0] * 2)
    assert small.interval_method == "wilson" and small.to_dict()["interval"] == "wilson"
    assert (small.low, small.high) == wilson_interval(18, 20)
    # Wilson's interval (Wilson 1927) by its formula: centre (x + z²/2) / (n + z²), half-width z / (n + z²) · √(x(n-x)/n + z²/4).
    z = 1.959963984540054
    centre, half = (18 + z * z / 2) / (20 + z * z), z / (20 + z * z) * math.sqrt(18 * 2 / 20 + z * z / 4)
    assert (small.low, small.high) == (pytest.approx(centre - half), pytest.approx(centre + half))
    assert small.low <= small.value == 0.9 <= small.high and small.n == 20
    at_threshold = _result([1.0, 0.0] * (SMALL_BINARY_N // 2))
    assert at_threshold.interval_method == "wilson"
    above = _result([1.0, 0.0] * (SMALL_BINARY_N // 2) + [1.0])
    assert above.interval_method == "bootstrap" and above.low <= above.value <= above.high


def test_all_right_is_not_a_point_interval() -> None:
    """The bootstrap of 30 right answers out of 30 is [1, 1]; Wilson's admits the model is not perfect."""
    perfect = _result([1.0] * 30)
    assert perfect.value == perfect.high == 1.0 and 0.88 < perfect.low < 0.89


def test_values_other_than_0_and_1_keep_the_bootstrap() -> None:
    assert _result([0.0, 0.5, 1.0, 1.0]).interval_method == "bootstrap"
    assert _result([0.0, 1.0, 1.0], name="robustness.wer", kind="wer").interval_method == "bootstrap"  # WER can exceed 1
    # a metric whose range goes beyond [0, 1] (log-probabilities): 0/1 values there are no proportion
    assert _result([0.0, 1.0, 1.0], name="robustness.mean_logprob_difference").interval_method == "bootstrap"
    assert _result([0.0, 1.0, 1.0], name="robustness.consistency", kind="consistency").interval_method == "wilson"


def test_instance_metrics_and_recorded_pass_rates_of_a_run_get_wilson() -> None:
    from pytest_holistic.plans import Completion

    records = [
        ItemRecord(
            f"t.py::t[{k}]",
            "run",
            Instance(f"i{k}", "q", ("a",)),
            None,
            "p",
            Completion(text="a", prompt="p", gold=("a",), tokens_in=3, tokens_out=1, seconds=0.1),
            {"exact_match": float(k % 2), "my_check": 1.0, "my_score": 0.5 * k},
            "passed",
            "main",
        )
        for k in range(6)
    ]
    results = metric_results(records, [])
    assert results["exact_match"].interval_method == "wilson"
    assert results["my_check"].interval_method == "wilson" and results["my_check"].low < 1.0
    assert results["my_score"].interval_method == "bootstrap"
    assert results["runtime_s"].interval_method == "bootstrap"
