"""The plugin's own outputs survive other plugins' session finishes: a full disk under pytest's ``--junitxml``.

pytest's JUnit writer raises OSError in its ``pytest_sessionfinish`` when the disk is full; the summary,
report.json, report.html and the ``--holistic-junit`` file are written all the same, and pytest's own error is
still shown. Each of the plugin's writers is independent of the others.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from pytest_holistic.report.schema import validate_report
from tests.plugin.test_faults import SCRIPT, holistic_suite

FULL = Path("/dev/full")


def _disk_full_on_write() -> bool:
    """Whether /dev/full raises ENOSPC on write here (Linux); the tests that need it skip elsewhere."""
    try:
        with FULL.open("w") as handle:
            handle.write("x")
    except OSError as error:
        return error.errno == errno.ENOSPC
    return False


needs_dev_full = pytest.mark.skipif(not _disk_full_on_write(), reason="no /dev/full that fails writes with ENOSPC here")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    (pytester.path / "rules.json").write_text(SCRIPT)
    pytester.makepyfile(test_numbers=holistic_suite(count=4))
    return pytester.runpytest_subprocess("--model", "scripted:rules.json", "-p", "no:cacheprovider", *args, timeout=300)


def _written(result: pytest.RunResult) -> list[Path]:
    return [Path(line.split("report: ", 1)[1]) for line in result.stdout.lines if line.startswith("report: ")]


@needs_dev_full
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_full_disk_for_pytests_junitxml_does_not_stop_the_plugins_outputs(pytester: pytest.Pytester, workers: str) -> None:
    junit = pytester.path / "out" / "holistic.xml"
    result = _run(pytester, "--junitxml", str(FULL), "--holistic-junit", str(junit), "-n", workers)
    assert "No space left on device" in result.stderr.str() + result.stdout.str()  # pytest's own failure is still shown
    result.stdout.fnmatch_lines(["*holistic summary: scripted:rules.json*", "*exact_match*"])
    written = _written(result)
    assert [path.name for path in written] == ["report.json", "report.html", "holistic.xml"]
    report = json.loads(written[0].read_text())
    assert validate_report(report) == [] and report["complete"] is True
    assert len(report["runs"][0]["instances"]) == 4
    assert written[1].read_text().startswith("<!DOCTYPE html>")
    assert written[2] == junit and "<testsuite" in junit.read_text()


TAKE_THE_REPORT_FOLDER = """
import shutil
from pathlib import Path

import pytest

@pytest.hookimpl(tryfirst=True)  # before pytest's --junitxml writer raises
def pytest_sessionfinish(session):
    # The report folder was writable when the run started; by the end a file has taken its place.
    shutil.rmtree("reports")
    Path("reports").write_text("not a folder any more")
"""


@needs_dev_full
def test_an_unwritable_report_folder_uses_the_fallback_folder_also_with_a_full_junitxml(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TAKE_THE_REPORT_FOLDER)
    result = _run(pytester, "--junitxml", str(FULL))
    result.stdout.fnmatch_lines(["pytest-holistic: could not write *report.json (*); wrote *report.json instead"])
    result.stdout.fnmatch_lines(["pytest-holistic: could not write *report.html (*); wrote *report.html instead"])
    written = _written(result)
    assert [path.name for path in written] == ["report.json", "report.html"]
    assert all(path.is_file() and not path.is_relative_to(pytester.path) for path in written)
    assert json.loads(written[0].read_text())["complete"] is True


NOWHERE_TO_WRITE = """
import shutil
import tempfile
from pathlib import Path

import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    # Neither the report folder nor the temporary folder can take a file any more.
    shutil.rmtree("reports")
    Path("reports").write_text("not a folder any more")
    tempfile.tempdir = str(Path("no-such-folder").absolute())
"""


def test_writers_that_cannot_write_anywhere_do_not_stop_the_next(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(NOWHERE_TO_WRITE)
    junit = pytester.path / "ci" / "holistic.xml"
    result = _run(pytester, "--holistic-junit", str(junit))
    result.stdout.fnmatch_lines(
        [
            "*holistic summary*",
            "pytest-holistic: could not write the json report (No such file or directory: *no-such-folder*)",
            "pytest-holistic: could not write the html report (No such file or directory: *no-such-folder*)",
            f"report: {junit}",
        ]
    )
    assert "<testsuite" in junit.read_text() and _written(result) == [junit]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


LATEST_TAKEN = """
from pathlib import Path

def pytest_sessionstart(session):
    # Folders where the pointers to the newest report would go: neither can be replaced.
    for name in ("latest", "LATEST"):
        (Path("reports") / "scripted_rules.json" / name / "keep").mkdir(parents=True, exist_ok=True)
"""


def test_a_latest_pointer_that_cannot_be_written_keeps_the_written_report(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(LATEST_TAKEN)
    result = _run(pytester)
    written = _written(result)
    assert [path.name for path in written] == ["report.json", "report.html"]
    result.stdout.fnmatch_lines([f"pytest-holistic: wrote {written[0]}, but could not mark it as *latest (*)"])
    assert json.loads(written[0].read_text())["complete"] is True
