"""A hostile server seen through a whole pytest run: what reaches the files and the terminal.

pytest runs in a subprocess on a small suite against the scripted server on 127.0.0.1, the way a user would run
it. A server that quotes the API key back must leave no trace of it (or of any 6-character piece of it) in
report.json, report.html, either JUnit file, the response cache or the output; a server whose start-up probe
answers nonsense must end the run with one line and no traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.models.test_openai_protocol import FakeEngine, Reply, ScriptedServer, Seen
from tests.plugin.test_faults import holistic_suite

KEY = "sk-proj-Zq8WmL3vR7tYp2Xc9Nb4Hd6Kf1Js5Ga0"
KEY_ENV = "PYTEST_HOLISTIC_TEST_SERVED_KEY"
PIECES = [KEY[i : i + 6] for i in range(len(KEY) - 5)]
QUOTES = f"Incorrect API key provided: {KEY}. Also known as {KEY[:8]}{'*' * 24}{KEY[-4:]}; we saw 'Authorization: Bearer {KEY}'"


def leaks(data: bytes) -> list[str]:
    return [piece for piece in [KEY, *PIECES] if piece.encode() in data]


def refusing(where: str) -> Callable[[Seen], Reply]:
    """The fake engine, except that the probe (``probe``) or the items' requests (``items``) get a 401 quoting the key."""
    engine = FakeEngine()

    def script(seen: Seen) -> Reply:
        item = "Number" in str((seen.body or {}).get("prompt", ""))
        if seen.method == "POST" and (item if where == "items" else True):
            return Reply(401, {"error": {"message": QUOTES, "type": "invalid_request_error", "code": "invalid_api_key"}})
        return engine(seen)

    return script


@pytest.mark.parametrize("where", ["probe", "items"])
def test_a_key_quoted_by_the_server_appears_nowhere(
    pytester: pytest.Pytester, serve: Callable[..., ScriptedServer], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """401s quoting the key in full, masked and as a header: no file under the project and no output carries it."""
    server = serve(refusing(where))
    monkeypatch.setenv(KEY_ENV, KEY)
    pytester.makepyfile(test_numbers=holistic_suite(count=6))
    written = {path for path in pytester.path.rglob("*") if path.is_file()}
    result = pytester.runpytest_subprocess(
        "--model",
        f"openai:{server.url}#m",
        "--holistic-api-key-env",
        KEY_ENV,
        "--holistic-retries",
        "0",
        "--holistic-junit",
        "reports/holistic-junit.xml",
        "--junitxml",
        "reports/pytest-junit.xml",
        "-p",
        "no:cacheprovider",
        timeout=120,
    )
    assert server.seen and all(s.headers.get("authorization") == f"Bearer {KEY}" for s in server.seen)
    output = (result.stdout.str() + result.stderr.str()).encode()
    assert b"HTTP 401" in output  # the server's refusal was met and reported
    assert leaks(output) == []
    files = [path for path in pytester.path.rglob("*") if path.is_file() and path not in written]
    names = {path.name for path in files}
    if where == "items":  # the model loaded: every output is written, the errors in it
        assert {"report.json", "report.html", "holistic-junit.xml", "pytest-junit.xml", "responses.sqlite"} <= names, names
        report = json.loads(next(path for path in files if path.name == "report.json").read_text())
        assert "HTTP 401" in json.dumps(report)
    else:  # the model never loaded: pytest's own JUnit file is the only one
        assert "pytest-junit.xml" in names and b"the model never answered" in output
    for path in files:
        assert leaks(path.read_bytes()) == [], path


@pytest.mark.parametrize(
    "models",
    [{"data": 5}, b'{"data": [{"id": "m"', [None], b"[" * 50_000 + b"]" * 50_000],
    ids=["data-not-a-list", "truncated", "wrong-shape", "deeply-nested"],
)
def test_a_malformed_probe_ends_the_run_in_one_line(
    pytester: pytest.Pytester, serve: Callable[..., ScriptedServer], models: Any
) -> None:
    """GET /models answered with nonsense: each item's error is one line naming the server; no traceback anywhere."""
    engine = FakeEngine()
    server = serve(lambda seen: Reply(body=models) if seen.path == "/v1/models" else engine(seen))
    pytester.makepyfile(test_numbers=holistic_suite(count=3))
    result = pytester.runpytest_subprocess(
        "--model", f"openai:{server.url}#m", "--holistic-retries", "0", "-p", "no:cacheprovider", timeout=120
    )
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output
    assert result.ret == 2  # pytest was interrupted: without a model no item can run
    lines = [  # pytest's short summary repeats the line after the item's name
        line
        for line in output.splitlines()
        if f"server {server.url}" in line and "GET /models" in line and not line.startswith("ERROR ")
    ]
    assert lines and all(line.startswith("pytest-holistic: ") for line in lines), output[-3000:]
    assert "the model could not be loaded" in output
