"""The backend registry end to end: ``--model`` resolved by an entry point or by the hook, then cached.

What is tested, each through a real pytest run in a temporary project:

* a backend registered only through a ``pytest_holistic.models`` entry point (a ``*.dist-info`` folder on
  ``PYTHONPATH``) is found by its scheme, identified without loading, and its answers are cached, so a
  warm rerun never calls ``load()``;
* a backend returned by a conftest's ``pytest_holistic_make_model`` behaves the same way;
* an unknown scheme and a hook answer that is neither a backend nor a model stop the run with one line;
* a backend that cannot identify itself is loaded once per run and still answers; one whose identity has
  no revision is never cached.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import Any

# The report's bootstrap imports numpy. Import it here, not first inside an in-process run: pytester unloads the
# modules a run imported, and numpy's C core cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest

from tests.plugin.suites import capitals

# The backend under test: ``EchoBackend(spec)`` answers the capitals suite (three of four right, as the
# suite's wrong Egypt reference wants), counts its loads in ``loads.txt`` and derives its identity from the
# spec's ending: ``...unknown`` cannot identify itself, ``...norev`` has no revision.
BACKEND = '''
from pathlib import Path

from pytest_holistic import LoglikelihoodResult, GenerationResult, ModelInfo
from pytest_holistic.models import BatchStreaming

LOADS = Path(__file__).with_name("loads.txt")
ANSWERS = {"France": " Paris. It is", "Japan": " Tokyo", "Italy": " Rome", "Egypt": " Cairo"}


class EchoModel(BatchStreaming):
    def __init__(self, revision):
        self.info = ModelInfo("echo:v1", "echo", revision, {"device": "cpu", "batch_size": 2})

    def generate_batches(self, requests):
        for start in range(0, len(requests), 2):
            batch = []
            for index, request in enumerate(requests[start : start + 2], start):
                text = next((answer for key, answer in ANSWERS.items() if key in request.prompt), " nowhere")
                for stop in request.stop:
                    text = text.split(stop)[0] if stop else text
                batch.append((index, GenerationResult(text, (-0.5,), len(request.prompt.split()))))
            yield batch

    def loglikelihood_batches(self, requests):
        yield [(index, LoglikelihoodResult(-float(len(r.continuation)))) for index, r in enumerate(requests)]


class EchoBackend:
    def __init__(self, spec):
        self.spec = spec
        self.revision = None if spec.endswith("norev") else "rev-1"

    def identify(self):
        if self.spec.endswith("unknown"):
            return None
        return ModelInfo("echo:v1", "echo", self.revision)

    def load(self):
        with LOADS.open("a") as loads:
            loads.write(self.spec + "\\n")
        return EchoModel(self.revision)


def factory(spec, options):
    return EchoBackend(spec)
'''

HOOK = """
def pytest_holistic_make_model(config, name):
    return EchoBackend(name) if name.startswith("hooked") else None
"""


def _entry_point_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The capitals suite, plus ``holistic_echo_backend`` installed the way pip would: a module and its dist-info."""
    pytester.makepyfile(test_caps=capitals(), holistic_echo_backend=BACKEND)
    dist_info = pytester.path / "holistic_echo_backend-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: holistic-echo-backend\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text("[pytest_holistic.models]\necho = holistic_echo_backend:factory\n")
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))


def _hook_project(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(BACKEND + HOOK)
    pytester.makepyfile(test_caps=capitals())


def _loads(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "loads.txt"
    return path.read_text().splitlines() if path.exists() else []


def _report(pytester: pytest.Pytester, slug: str) -> dict[str, Any]:
    return json.loads((pytester.path / "reports" / slug / "latest" / "report.json").read_text())


def _model(report: dict[str, Any]) -> tuple[str, str, str | None]:
    return report["model"]["name"], report["model"]["backend"], report["model"]["revision"]


def _counts(report: dict[str, Any]) -> tuple[int, int, int]:
    main = report["workers"]["main"]
    return main["generation_requests"], main["loglikelihood_requests"], main["cache_hits"]


def _texts(report: dict[str, Any]) -> dict[str, str]:
    return {record["instance_id"]: record["completion"]["text"] for record in report["runs"][0]["instances"]}


EXPECTED_TEXTS = {"fr": "Paris", "jp": "Tokyo", "it": "Rome", "eg": "Cairo"}


def test_entry_point_backend_is_identified_cached_and_not_loaded_on_a_warm_rerun(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _entry_point_project(pytester, monkeypatch)
    cold = pytester.runpytest_subprocess("--model", "echo:anything", timeout=120)
    cold.assert_outcomes(passed=4)
    assert cold.ret == pytest.ExitCode.OK
    cold.stdout.fnmatch_lines(["*= holistic summary: echo:v1 =*"])
    report = _report(pytester, "echo_anything")
    assert _model(report) == ("echo:v1", "echo", "rev-1")
    assert _counts(report) == (4, 0, 0)
    assert _texts(report) == EXPECTED_TEXTS
    assert report["runs"][0]["metrics"]["exact_match"]["value"] == pytest.approx(0.75)
    assert _loads(pytester) == ["echo:anything"]

    warm = pytester.runpytest_subprocess("--model", "echo:anything", timeout=120)
    warm.assert_outcomes(passed=4)
    warm.stdout.fnmatch_lines(["*= holistic summary: echo:v1 =*", "main: *0 requests computed, 4 from cache*"])
    report = _report(pytester, "echo_anything")
    assert _model(report) == ("echo:v1", "echo", "rev-1")
    assert _counts(report) == (0, 0, 4)
    assert _texts(report) == EXPECTED_TEXTS
    assert _loads(pytester) == ["echo:anything"], "a warm rerun must answer from the cache without load()"


def test_hook_backend_is_identified_cached_and_not_loaded_on_a_warm_rerun(pytester: pytest.Pytester) -> None:
    _hook_project(pytester)
    cold = pytester.runpytest("--model", "hooked")
    cold.assert_outcomes(passed=4)
    cold.stdout.fnmatch_lines(["*= holistic summary: echo:v1 =*"])
    report = _report(pytester, "hooked")
    assert (_model(report), _counts(report), _texts(report)) == (("echo:v1", "echo", "rev-1"), (4, 0, 0), EXPECTED_TEXTS)
    assert _loads(pytester) == ["hooked"]

    warm = pytester.runpytest("--model", "hooked")
    warm.assert_outcomes(passed=4)
    report = _report(pytester, "hooked")
    assert (_model(report), _counts(report), _texts(report)) == (("echo:v1", "echo", "rev-1"), (0, 0, 4), EXPECTED_TEXTS)
    assert _loads(pytester) == ["hooked"], "a warm rerun must answer from the cache without load()"


def test_unknown_scheme_is_one_line_naming_it_and_the_known_schemes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _entry_point_project(pytester, monkeypatch)  # so the known schemes include one from an entry point
    result = pytester.runpytest_subprocess("--model", "nosuch:thing", timeout=120)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    message = "no model backend handles 'nosuch' in --model 'nosuch:thing' (known: *); install the plugin that registers it*"
    result.stdout.fnmatch_lines([f"pytest-holistic: {message}", "! Interrupted: pytest-holistic: the model could not be loaded (the error above says why) !"])
    lines = [line for line in result.stdout.lines if "no model backend handles" in line]
    assert all("'nosuch'" in line and "--model 'nosuch:thing'" in line for line in lines)
    known = lines[0].split("(known: ", 1)[1].split(")", 1)[0].split(", ")
    assert {"echo", "scripted"} <= set(known)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert _loads(pytester) == []


@pytest.mark.parametrize(("answer", "kind"), [("42", "int"), ("'a string'", "str"), ("object()", "object")])
def test_hook_answer_that_is_neither_backend_nor_model_is_one_line(pytester: pytest.Pytester, answer: str, kind: str) -> None:
    pytester.makeconftest(f"def pytest_holistic_make_model(config, name):\n    return {answer}\n")
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", "anything")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    message = f"pytest_holistic_make_model returned {kind}, which is neither a backend (identify() and load()) nor a model (*)"
    result.stdout.fnmatch_lines([f"pytest-holistic: {message}", "! Interrupted: pytest-holistic: the model could not be loaded (the error above says why) !"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    ("conftest", "spec"),
    [("", "nosuch:thing"), ("def pytest_holistic_make_model(config, name):\n    return 42\n", "anything")],
    ids=["unknown-scheme", "bad-hook-answer"],
)
def test_model_load_error_is_shown_once_in_the_error_section(pytester: pytest.Pytester, conftest: str, spec: str) -> None:
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", spec)
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    errors = output.split("= ERRORS =", 1)[1].split("\n=", 1)[0]
    assert "During handling of the above exception" not in errors
    body = [line for line in errors.splitlines()[2:] if line.strip()]
    assert len(body) == 1, body


def test_backend_without_identity_is_loaded_once_per_run_and_keyed_by_the_loaded_info(pytester: pytest.Pytester) -> None:
    _hook_project(pytester)
    cold = pytester.runpytest("--model", "hooked-unknown")
    cold.assert_outcomes(passed=4)
    report = _report(pytester, "hooked-unknown")
    assert (_model(report), _counts(report), _texts(report)) == (("echo:v1", "echo", "rev-1"), (4, 0, 0), EXPECTED_TEXTS)
    assert report["runs"][0]["metrics"]["exact_match"]["value"] == pytest.approx(0.75)
    assert _loads(pytester) == ["hooked-unknown"]

    # Only loading tells the identity, so a rerun loads (once) and then finds every answer in the cache.
    warm = pytester.runpytest("--model", "hooked-unknown")
    warm.assert_outcomes(passed=4)
    report = _report(pytester, "hooked-unknown")
    assert (_model(report), _counts(report), _texts(report)) == (("echo:v1", "echo", "rev-1"), (0, 0, 4), EXPECTED_TEXTS)
    assert _loads(pytester) == ["hooked-unknown"] * 2


def test_backend_without_revision_is_never_cached(pytester: pytest.Pytester) -> None:
    _hook_project(pytester)
    for run in (1, 2):
        result = pytester.runpytest("--model", "hooked-norev")
        result.assert_outcomes(passed=4)
        report = _report(pytester, "hooked-norev")
        assert (_model(report), _counts(report), _texts(report)) == (("echo:v1", "echo", None), (4, 0, 0), EXPECTED_TEXTS)
        assert _loads(pytester) == ["hooked-norev"] * run
    cache = pytester.path / "reports" / ".cache" / "responses.sqlite"
    if cache.exists():
        with closing(sqlite3.connect(cache)) as connection:
            assert connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
