"""Peak memory of a run replayed from the cache: the figures of the run that computed the answers, or none, said so.

A warm rerun loads no model, so its own peak measures only the replaying process. The leaderboard and the page
must not rank a model on that.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_holistic.report.html_report import render
from pytest_holistic.report.leaderboard import NOT_MEASURED, build_leaderboard, peak_memory_gb
from tests.plugin.suites import capitals

BALLAST = """
import os

# A cold run that holds this much more memory than the warm one, all session long.
KEPT = b"x" * (int(os.environ.get("BALLAST_MIB") or 0) << 20)
"""


def test_a_warm_rerun_reports_the_peak_memory_of_the_run_that_computed_it(
    pytester: pytest.Pytester, tiny_gpt2: Path, read_report, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest(BALLAST)
    pytester.makepyfile(test_caps=capitals())
    monkeypatch.setenv("BALLAST_MIB", "400")
    pytester.runpytest_subprocess("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    cold = read_report(pytester.path, "tiny-gpt2")
    monkeypatch.delenv("BALLAST_MIB")
    pytester.runpytest_subprocess("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    warm = read_report(pytester.path, "tiny-gpt2")
    cold_peak, warm_own = cold["workers"]["main"]["peak_rss_mib"], warm["workers"]["main"]["peak_rss_mib"]
    assert warm["workers"]["main"]["cache_hits"] == 4 and cold_peak > warm_own + 300  # the replaying process is smaller
    assert warm["model"]["details"]["peak_rss_mib"] == cold_peak  # the cold run's figure travelled with the cache
    memory, source = peak_memory_gb(warm)
    assert memory == round(cold_peak / 1024, 1) == peak_memory_gb(cold)[0]
    assert source == "peak RSS of the run that computed the replayed answers"
    board = build_leaderboard([warm])
    assert board["models"][0]["memory_gb"] == memory
    assert f"peak memory {memory:.1f} GB (peak RSS of the run that computed the replayed answers)" in render([warm], board)


def _worker(**fields: object) -> dict:
    return {"load_seconds": 0.0, "batches": 0, "peak_rss_mib": 255.0, "peak_gpu_mib": None, **fields}


def test_a_replayed_run_without_recorded_figures_has_no_memory_and_says_why() -> None:
    report = {"model": {"name": "m", "details": {"from_cache": True}}, "runs": [], "workers": {"main": _worker()}}
    assert peak_memory_gb(report) == (None, NOT_MEASURED)
    board = build_leaderboard([report])
    assert board["models"][0]["memory_gb"] is None
    assert f"peak memory {NOT_MEASURED}" in render([report], board)


def test_only_workers_that_loaded_the_model_measure_it() -> None:
    # Under xdist one worker computed on the GPU while another only replayed: the replaying one's RSS is not the model's.
    workers = {
        "gw0": _worker(load_seconds=2.5, batches=3, peak_rss_mib=900.0, peak_gpu_mib=3481.6),
        "gw1": _worker(peak_rss_mib=255.0, peak_gpu_mib=None),
    }
    assert peak_memory_gb({"model": {"name": "m"}, "workers": workers}) == (3.4, "GPU peak")
    replayed = {
        "model": {"name": "m", "details": {"peak_gpu_mib": 3481.6, "from_cache": True}},
        "workers": {"gw1": workers["gw1"]},
    }
    assert peak_memory_gb(replayed) == (3.4, "GPU peak of the run that computed the replayed answers")


def test_a_run_started_from_a_bigger_process_measures_its_own_peak() -> None:
    # Linux keeps ru_maxrss across exec: a pytest launched by a 600 MiB parent would report the parent's peak.
    import subprocess
    import sys

    ballast = b"x" * (600 << 20)
    child = "from pytest_holistic.worker import peak_memory; print(peak_memory()['peak_rss_mib'])"
    measured = float(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout)
    assert len(ballast) == 600 << 20 and measured < 400
