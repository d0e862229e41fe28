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

from pytest_holistic.models import ScriptedModel
from pytest_holistic.models.base import GenerationRequest, LoglikelihoodRequest, LoglikelihoodResult, ModelInfo
from pytest_holistic.models.cache import ResponseCache, _decode, clear, request_key
from pytest_holistic.models.cached import CachedModel
from tests.plugin.suites import capitals


def _workers(root: Path, model: str, folder: str = "reports") -> dict:
    return json.loads((root / folder / model / "latest" / "report.json").read_text())["workers"]


def test_warm_rerun_computes_nothing_and_gives_the_same_records(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    pytester.makepyfile(test_caps=capitals())
    pytester.runpytest("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    cold = read_report(pytester.path, "tiny-gpt2")
    pytester.runpytest("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    warm = read_report(pytester.path, "tiny-gpt2")
    assert cold["workers"]["main"]["generation_requests"] == 4
    assert warm["workers"]["main"]["generation_requests"] == 0
    assert warm["workers"]["main"]["cache_hits"] == 4
    texts = lambda report: [(r["instance_id"], r["completion"]["text"], r["completion"]["logprob"]) for r in report["runs"][0]["instances"]]
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


def test_warm_rerun_reports_the_model_details_and_marks_replayed_answers(
    pytester: pytest.Pytester, tiny_gpt2: Path, read_report
) -> None:
    pytester.makepyfile(test_caps=capitals())
    pytester.runpytest_subprocess("--model", str(tiny_gpt2)).assert_outcomes(passed=4)
    cold = read_report(pytester.path, "tiny-gpt2")
    rerun = pytester.runpytest_subprocess("--model", str(tiny_gpt2))
    rerun.assert_outcomes(passed=4)
    warm = read_report(pytester.path, "tiny-gpt2")
    assert warm["workers"]["main"]["cache_hits"] == 4
    # Timings replayed from the cache are said to be replayed, in the report and the terminal.
    assert [run["replayed_from_cache"] for run in cold["runs"]] == [0]
    assert [run["replayed_from_cache"] for run in warm["runs"]] == [4]
    rerun.stdout.fnmatch_lines(["*efficiency: 4 of 4 answers replayed from the response cache*"])
    assert warm["workers"]["main"]["device"] is None, "a worker that loaded nothing ran on no device"
    stable = ("architecture", "parameters", "dtype", "device", "source")
    assert {key: warm["model"]["details"][key] for key in stable} == {key: cold["model"]["details"][key] for key in stable}
    assert cold["model"]["details"]["architecture"] == "GPT2LMHeadModel"
    assert warm["model"]["details"]["from_cache"] is True and "from_cache" not in cold["model"]["details"]
    assert warm["model"]["variant"] == cold["model"]["variant"] == {"device": "cpu", "dtype": "float32"}
    records = lambda report: [record for run in report["runs"] for record in run["instances"]]
    assert [r["execution"]["cached"] for r in records(cold)] == [False] * 4
    assert [r["execution"]["cached"] for r in records(warm)] == [True] * 4
    assert [r["completion"]["cached"] for r in records(warm)] == [True] * 4


def test_dtype_and_device_are_part_of_the_key(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    pytester.makepyfile(test_caps=capitals())
    pytester.runpytest("--model", str(tiny_gpt2)).assert_outcomes(passed=4)  # auto: float32 on this CPU machine
    pytester.runpytest("--model", str(tiny_gpt2), "--holistic-dtype", "bfloat16").assert_outcomes(passed=4)
    workers = _workers(pytester.path, "tiny-gpt2")["main"]
    assert (workers["generation_requests"], workers["cache_hits"]) == (4, 0)
    # What auto resolves to shares the cache entries of auto; the bfloat16 answers are kept apart.
    for options in (("--holistic-dtype", "float32", "--holistic-device", "cpu"), ("--holistic-dtype", "bfloat16")):
        pytester.runpytest("--model", str(tiny_gpt2), *options).assert_outcomes(passed=4)
        workers = _workers(pytester.path, "tiny-gpt2")["main"]
        assert (workers["generation_requests"], workers["cache_hits"]) == (0, 4)


class _MispredictingBackend:
    """Predicts bfloat16 without loading, but loads a float32 copy (as when a GPU is listed that torch cannot use)."""

    def __init__(self) -> None:
        self.loads = 0

    def identify(self) -> ModelInfo:
        return ModelInfo("m", "scripted", "v1", variant={"dtype": "bfloat16"})

    def load(self) -> ScriptedModel:
        self.loads += 1
        model = ScriptedModel(default=" yes", name="m", revision="v1")
        model.info = model.info.with_variant({"dtype": "float32"})
        return model


def test_answers_are_keyed_by_what_was_loaded_when_the_prediction_was_wrong(tmp_path: Path) -> None:
    requests = [GenerationRequest(f"q{i}") for i in range(3)]
    cold = CachedModel(_MispredictingBackend, ResponseCache(tmp_path))
    assert [r.text for r in cold.generate(requests)] == [" yes"] * 3
    warm = CachedModel(_MispredictingBackend, ResponseCache(tmp_path))
    answers = warm.generate(requests)
    # The prediction misses, so the model is loaded, and the answers are found under the loaded variant.
    assert (warm.stats.generation_requests, warm.stats.cache_hits) == (0, 3)
    assert all(answer.cached for answer in answers)
    predicted = ModelInfo("m", "scripted", "v1", variant={"dtype": "bfloat16"})
    assert ResponseCache(tmp_path).get_many([request_key(predicted, "generate", requests[0])], "generate") == {}


def test_key_covers_backend_and_variant_and_old_rows_decode() -> None:
    request = LoglikelihoodRequest("The sky is", " blue")
    base = ModelInfo("m", "transformers", "rev", variant={"device": "cpu", "dtype": "float32"})
    variants = [
        base,
        ModelInfo("m", "transformers", "rev", variant={"device": "cpu", "dtype": "bfloat16"}),
        ModelInfo("m", "transformers", "rev", variant={"device": "cuda", "dtype": "float32"}),
        ModelInfo("m", "other", "rev", variant={"device": "cpu", "dtype": "float32"}),
        ModelInfo("m", "transformers", "rev2", variant={"device": "cpu", "dtype": "float32"}),
    ]
    assert len({request_key(info, "loglikelihood", request) for info in variants}) == len(variants)
    # Details describe one loaded copy and do not change answers; variant order does not matter.
    same = ModelInfo("m", "transformers", "rev", {"device": "cuda:1"}, {"dtype": "float32", "device": "cpu"})
    assert request_key(same, "loglikelihood", request) == request_key(base, "loglikelihood", request)
    # A row written before truncated_tokens existed reads back with its default, marked as replayed.
    row = {"logprob": -1.5, "is_greedy": True, "tokens_in": 3, "tokens_scored": 1, "seconds": 0.1}
    old = _decode("loglikelihood", json.dumps(row))
    assert old == LoglikelihoodResult(-1.5, True, 3, 1, 0.1, truncated_tokens=0) and old.cached


def test_corrupt_cache_file_is_reported_and_results_are_kept(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    cache = pytester.path / "reports" / ".cache"
    cache.mkdir(parents=True)
    (cache / "responses.sqlite").write_bytes(b"this is not an SQLite database" * 100)
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", str(tiny_gpt2))
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["pytest-holistic: response cache *responses.sqlite disabled after an error: *"])
    assert read_report(pytester.path, "tiny-gpt2")["runs"][0]["metrics"]["quasi_exact_match"]["value"] == pytest.approx(0.75)


def _foreign_database(path: Path, table: str, wal: bool) -> bytes:
    """Another program's SQLite file: its own table (or one named like the cache's with other columns)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, isolation_level=None)
    if wal:
        connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, body TEXT)")
    connection.execute(f"INSERT INTO {table} (body) VALUES ('keep me')")
    connection.close()
    return path.read_bytes()


@pytest.mark.parametrize(("table", "wal"), [("notes", False), ("notes", True), ("responses", False)])
def test_a_foreign_sqlite_file_is_refused_without_being_altered(tmp_path: Path, table: str, wal: bool) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    before = _foreign_database(path, table, wal)
    model = CachedModel(_DetailedBackend, ResponseCache(path.parent))
    assert [answer.text for answer in model.generate([GenerationRequest("q")])] == [" yes"]  # computed all the same
    assert model.cache is None and model.cache_problem is not None
    assert model.cache_problem == (
        f"response cache {path} disabled after an error: {path} is another program's SQLite database (tables {table}); "
        "it was left as it is: point --holistic-cache-dir at another folder, or move the file away"
    )
    assert path.read_bytes() == before
    assert sorted(item.name for item in path.parent.iterdir()) == ["responses.sqlite"]  # no journal or WAL file made


def test_a_cache_names_itself_and_one_written_before_that_is_still_read(tmp_path: Path) -> None:
    request = GenerationRequest("q")
    old = tmp_path / "old" / "responses.sqlite"  # the layout of earlier versions: the two tables, no application id
    old.parent.mkdir()
    connection = sqlite3.connect(old, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT NOT NULL, value TEXT)")
    connection.execute("CREATE TABLE models (key TEXT PRIMARY KEY, details TEXT NOT NULL)")
    row = {"text": " stored", "tokens_in": 1, "tokens_out": 1, "seconds": 0.5}
    key = request_key(ModelInfo("m", "scripted", "v1"), "generate", request)
    connection.execute("INSERT INTO responses VALUES (?, 'generate', 'm', ?)", (key, json.dumps(row)))
    connection.close()
    warm = CachedModel(_DetailedBackend, ResponseCache(old.parent))
    assert [answer.text for answer in warm.generate([request])] == [" stored"] and warm.cache_problem is None
    fresh = ResponseCache(tmp_path / "new")
    fresh.count()
    fresh.close()
    header = (tmp_path / "new" / "responses.sqlite").read_bytes()[:100]
    assert header[68:72] == b"phrc"  # SQLite's application_id field, big-endian


class _DetailedBackend:
    """A scripted model whose load records details, so every cache table is read and written."""

    def identify(self) -> ModelInfo:
        return ModelInfo("m", "scripted", "v1")

    def load(self) -> ScriptedModel:
        model = ScriptedModel(default=" yes", name="m", revision="v1")
        model.info = model.info.with_details({"device": "cpu"})
        return model


def test_cache_behind_a_broken_link_is_disabled_and_results_are_kept(tmp_path: Path) -> None:
    """The ``models`` table read of a worker's summary (``known_info``) must not raise when the folder cannot exist."""
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    model = CachedModel(_DetailedBackend, ResponseCache(tmp_path / "link" / "cache"))
    assert model.identity is not None
    assert model.known_info == ModelInfo("m", "scripted", "v1")  # read the models table: the cache is disabled, not raised
    assert model.cache is None
    where = tmp_path / "link" / "cache" / "responses.sqlite"
    assert model.cache_problem == f"response cache {where} disabled after an error: File exists: {tmp_path / 'link'}"
    assert [answer.text for answer in model.generate([GenerationRequest("q")])] == [" yes"]
    assert model.stats.generation_requests == 1


@pytest.mark.parametrize("method", ["get_many", "put_many", "get_model", "put_model"])
def test_an_os_error_from_any_cache_access_disables_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    """Whichever read or write meets an unreachable folder (a permission taken away mid-run), computed results are kept."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(tmp_path))

    monkeypatch.setattr(ResponseCache, method, refuse)
    model = CachedModel(_DetailedBackend, ResponseCache(tmp_path))
    assert model.identity is not None and model.known_info == ModelInfo("m", "scripted", "v1")  # get_model: a summary's read
    assert [answer.text for answer in model.generate([GenerationRequest("q"), GenerationRequest("r")])] == [" yes"] * 2
    model.close()
    assert model.cache is None
    where = tmp_path / "responses.sqlite"
    assert model.cache_problem == f"response cache {where} disabled after an error: Permission denied: {tmp_path}"


CACHE_BREAKS_AFTER_START_UP = '''
import pathlib

ready = []


def _break(config):
    # After every process checked its folders at start-up, before the first answer: the cache folder cannot be created.
    (config.rootpath / "reports" / ".cache").symlink_to("/nonexistent/holistic-cache")


def pytest_sessionstart(session):
    if not session.config.getoption("numprocesses") and not hasattr(session.config, "workerinput"):
        _break(session.config)


def pytest_testnodeready(node):  # the xdist controller: items are scheduled only after every worker is ready
    ready.append(node)
    if len(ready) == node.config.getoption("numprocesses"):
        _break(node.config)
'''


@pytest.mark.parametrize("workers", ["0", "2"])
def test_cache_folder_broken_during_the_run_is_reported_not_an_internal_error(pytester: pytest.Pytester, workers: str) -> None:
    pytester.path.joinpath("rules.json").write_text('{"generate": {"France": " Paris"}}')
    pytester.makeconftest(CACHE_BREAKS_AFTER_START_UP)
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", workers, "--model", "scripted:rules.json", timeout=120)
    output = "\n".join(result.outlines + result.errlines)
    assert result.ret == pytest.ExitCode.OK, output
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["pytest-holistic: response cache *responses.sqlite disabled after an error: File exists: *"])


def test_cache_clear_that_cannot_delete_the_file_is_not_an_internal_error(pytester: pytest.Pytester) -> None:
    """A folder where the cache file should be: --cache-clear cannot delete it, and the run goes on without a cache."""
    (pytester.path / "reports" / ".cache" / "responses.sqlite").mkdir(parents=True)
    assert clear(pytester.path / "reports" / ".cache") == (
        f"--cache-clear could not delete {pytester.path / 'reports' / '.cache' / 'responses.sqlite'}: Is a directory"
    )
    pytester.path.joinpath("rules.json").write_text('{"generate": {"France": " Paris"}}')
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest_subprocess("--model", "scripted:rules.json", "--cache-clear", timeout=120)
    output = "\n".join(result.outlines + result.errlines)
    assert result.ret == pytest.ExitCode.OK, output
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    result.stdout.fnmatch_lines(
        ["pytest-holistic: response cache *responses.sqlite disabled after an error: Is a directory: *responses.sqlite"]
    )
