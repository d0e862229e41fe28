"""A warm run (every answer cached) opens no weight file: the folder's identity is kept, not rehashed."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.plugin.suites import capitals

AUDIT_CONFTEST = """
import os
import sys

_LOG = os.open(os.environ["HOLISTIC_AUDIT_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
_WEIGHTS = (".safetensors", ".bin", ".pt", ".gguf")


def _record(event, args):
    # os.write raises no audit event, so recording cannot recurse into this hook.
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if path.endswith(_WEIGHTS):
            os.write(_LOG, (os.path.realpath(path) + "\\n").encode())


sys.addaudithook(_record)
"""


def _opened_weights(log: Path, folder: Path) -> list[str]:
    opened = log.read_text().splitlines() if log.exists() else []
    return [path for path in opened if Path(path).parent == folder.resolve()]


def test_a_warm_run_reads_no_weight_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tiny_gpt2: Path, tmp_path: Path, read_report
) -> None:
    folder = tmp_path / "models" / "tiny-gpt2"
    shutil.copytree(tiny_gpt2, folder)
    stamp = time.time_ns() - 3600 * 10**9  # saved an hour ago: a just-written file's digest is never kept (racy)
    for path in folder.iterdir():
        os.utime(path, ns=(stamp, stamp))
    monkeypatch.setenv("PYTEST_HOLISTIC_CACHE_DIR", str(tmp_path / "holistic-cache"))
    pytester.makeconftest(AUDIT_CONFTEST)
    pytester.makepyfile(test_caps=capitals())
    cold_log, warm_log = tmp_path / "cold.log", tmp_path / "warm.log"

    monkeypatch.setenv("HOLISTIC_AUDIT_LOG", str(cold_log))
    pytester.runpytest_subprocess("--model", str(folder), timeout=300).assert_outcomes(passed=4)
    assert str((folder / "model.safetensors").resolve()) in _opened_weights(cold_log, folder)  # the hook sees the hash

    monkeypatch.setenv("HOLISTIC_AUDIT_LOG", str(warm_log))
    pytester.runpytest_subprocess("--model", str(folder), timeout=300).assert_outcomes(passed=4)
    assert _opened_weights(warm_log, folder) == []
    workers = read_report(pytester.path, "tiny-gpt2")["workers"]["main"]
    assert (workers["generation_requests"], workers["cache_hits"]) == (0, 4)
