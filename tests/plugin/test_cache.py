"""The response cache: warm reruns compute nothing, --cache-clear empties it, a SIGKILL loses one batch at most."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_holistic.models.base import LoglikelihoodRequest, LoglikelihoodResult, ModelInfo
from pytest_holistic.models.cache import ResponseCache, request_key
from tests.plugin.suites import capitals


def _workers(root: Path, model: str, folder: str = "reports") -> dict:
    return json.loads((root / folder / model / "report.json").read_text())["workers"]


def test_warm_rerun_computes_nothing_and_gives_the_same_records(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    pytester.makepyfile(test_caps=capitals())
    pytester.runpytest("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    cold = read_report(pytester.path, "tiny-gpt2")
    pytester.runpytest("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    warm = read_report(pytester.path, "tiny-gpt2")
    assert cold["workers"]["main"]["generation_requests"] == 4
    assert warm["workers"]["main"]["generation_requests"] == 0
    assert warm["workers"]["main"]["cache_hits"] == 4
    texts = lambda report: [(r["instance_id"], r["completion"]["text"], r["completion"]["logprob"]) for r in report["runs"][0]["instances"]]  # noqa: E731
    assert texts(cold) == texts(warm)


def test_cache_clear_and_no_cache(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    pytester.makepyfile(test_caps=capitals())
    pytester.runpytest("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    assert (pytester.path / "reports" / ".cache" / "responses.sqlite").is_file()
    pytester.runpytest("--model", str(tiny_gpt2), "--cache-clear").assert_outcomes(passed=4)
    assert _workers(pytester.path, "tiny-gpt2")["main"]["cache_hits"] == 0
    pytester.runpytest("--model", str(tiny_gpt2), "--holistic-no-cache").assert_outcomes(passed=4)
    assert _workers(pytester.path, "tiny-gpt2")["main"]["generation_requests"] == 4


def test_changed_decoding_parameters_miss_the_cache(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    pytester.makepyfile(test_caps=capitals())
    pytester.runpytest("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    pytester.makepyfile(test_caps=capitals().replace("max_tokens=5", "max_tokens=4"))
    pytester.runpytest("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    workers = _workers(pytester.path, "tiny-gpt2")["main"]
    assert (workers["generation_requests"], workers["cache_hits"]) == (4, 0)


def _write_rows(path: str, worker: int) -> None:
    cache = ResponseCache(Path(path))
    info = ModelInfo("m", "test", "rev")
    for start in range(0, 200, 20):
        rows = [(request_key(info, "loglikelihood", LoglikelihoodRequest(f"{worker}-{i}", " x")), LoglikelihoodResult(-float(i)))
                for i in range(start, start + 20)]
        cache.put_many(rows, "loglikelihood", "m")


def test_concurrent_writers_do_not_corrupt(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_rows, args=(str(tmp_path), worker)) for worker in range(3)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
        assert writer.exitcode == 0
    cache = ResponseCache(tmp_path)
    assert cache.count() == 600
    key = request_key(ModelInfo("m", "test", "rev"), "loglikelihood", LoglikelihoodRequest("2-7", " x"))
    assert cache.get_many([key], "loglikelihood")[key].logprob == -7.0


SLOW_SUITE = '''
import pytest
from pytest_holistic import Instance, scenario

@scenario
def many():
    for i in range(400):
        yield Instance(id=f"q{i:03d}", input=f"Question {i}", references=("yes",))

@pytest.mark.holistic(many, max_train_instances=0, metrics=("exact_match",))
def test_many(completion):
    pass
'''


def _saved(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=30) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_sigkill_loses_at_most_the_batch_in_flight(tmp_path: Path) -> None:
    (tmp_path / "test_many.py").write_text(SLOW_SUITE)
    # 400 requests in batches of 10, 0.05 s each: about 2 s of model time, long enough to kill mid-run.
    (tmp_path / "script.json").write_text(json.dumps({"default": " yes", "batch_size": 10, "delay": 0.05}))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--model", "scripted:script.json", "--holistic-shard-size", "400"]
    db = tmp_path / "reports" / ".cache" / "responses.sqlite"
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while _saved(db) < 100 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)
    saved = _saved(db)
    assert 100 <= saved < 400, "the run should have been killed part-way"
    rerun = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout[-2000:]
    worker = _workers(tmp_path, "scripted_script.json")["main"]
    # Everything committed before the kill is reused; only what was never saved is computed again.
    assert worker["cache_hits"] == saved
    assert worker["generation_requests"] == 400 - saved


def test_warm_rerun_does_not_load_the_model(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    pytester.makeconftest(
        """
        import sys

        def pytest_sessionfinish(session):
            print("TORCH-LOADED", "torch" in sys.modules)
        """
    )
    pytester.makepyfile(test_caps=capitals())
    cold = pytester.runpytest_subprocess("--model", str(tiny_gpt2), "-s")
    cold.stdout.fnmatch_lines(["*TORCH-LOADED True*"])
    warm = pytester.runpytest_subprocess("--model", str(tiny_gpt2), "-s")
    warm.assert_outcomes(passed=4)
    warm.stdout.fnmatch_lines(["*TORCH-LOADED False*", "capitals (generation, local; 4 passed)", "*quasi_exact_match*0.750*"])
    report = read_report(pytester.path, "tiny-gpt2")
    assert report["workers"]["main"]["cache_hits"] == 4
    assert report["model"]["revision"].startswith("sha256:")


def test_corrupt_cache_file_is_reported_and_results_are_kept(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    cache = pytester.path / "reports" / ".cache"
    cache.mkdir(parents=True)
    (cache / "responses.sqlite").write_bytes(b"this is not an SQLite database" * 100)
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", str(tiny_gpt2))
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["pytest-holistic: response cache *responses.sqlite disabled after an error: *"])
    assert read_report(pytester.path, "tiny-gpt2")["runs"][0]["metrics"]["quasi_exact_match"]["value"] == pytest.approx(0.75)
