"""Report writers added by a test plugin (a conftest) through the ``pytest_holistic_register`` hook, and nothing else.

The conftest declares three kinds, the three ways a writer is wanted: ``scores`` (a CSV of each item's scores) written
when ``--holistic-export scores`` names it, ``count`` written to the file its own option ``--holistic-count-file``
names, and ``html``, which takes the built-in HTML writer over. Each is checked through a real pytest run.
"""

from __future__ import annotations

import json
from pathlib import Path

# The report's bootstrap imports numpy. Import it here, not first inside an in-process run: pytester unloads the
# modules a run imported, and numpy's C core cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest

PLUGIN = '''
from pathlib import Path

from pytest_holistic import Given, Option, WriterKind


class ScoresCsv:
    name = "scores CSV"

    def __init__(self, folder, model, run_id):
        self.path = Path(folder) / "scores.csv"
        self.model, self.run_id, self.problem = model, run_id, None

    def write(self, results, payload):
        lines = [f"{self.model},{self.run_id},{payload['run_id']}"]
        for run in payload["runs"]:
            lines += [f"{r['instance_id']},{r['scores']['exact_match']}" for r in run["instances"]]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\\n".join(lines) + "\\n")
        return self.path


class Count:
    name = "count"
    problem = None

    def __init__(self, path):
        self.path = path

    def write(self, results, payload):
        self.path.write_text(str(sum(len(run["instances"]) for run in payload["runs"])))
        return self.path


class NoHtml:
    name = "no HTML"
    problem = None

    def __init__(self, folder):
        self.path = Path(folder) / "instead.txt"

    def write(self, results, payload):
        self.path.write_text("no page")
        return self.path


def _count_file(given: Given):
    return None if given.value is None else given.base / given.text


COUNT_FILE = Option("--holistic-count-file", "write how many items were evaluated to this file", _count_file, metavar="PATH")


def pytest_holistic_register(extensions):
    extensions.add_writer(WriterKind("scores", lambda c: ScoresCsv(c.report_dir, c.model, c.run_id), "export"))
    extensions.add_writer(WriterKind("count", lambda c: Count(c.values[COUNT_FILE]), COUNT_FILE))
    extensions.add_writer(WriterKind("html", lambda c: NoHtml(c.report_dir)))
'''

SUITE = '''
import pytest
from pytest_holistic import Instance, scenario

@scenario
def capitals():
    yield Instance(id="fr", input="The capital of France is", references=("Paris",))
    yield Instance(id="jp", input="The capital of Japan is", references=("Tokyo",))

@pytest.mark.holistic(capitals, max_train_instances=0, metrics=("exact_match",))
def test_capitals(completion):
    pass
'''
RULES = 'generate: {"France": " Paris", "Japan": " Kyoto"}\n'


def _project(pytester: pytest.Pytester) -> Path:
    pytester.makeconftest(PLUGIN)
    pytester.makepyfile(test_caps=SUITE)
    pytester.path.joinpath("rules.yaml").write_text(RULES)
    return pytester.path / "reports" / "scripted_rules.yaml" / "latest"


def test_a_registered_export_writes_its_file_at_the_end_of_the_session(pytester: pytest.Pytester) -> None:
    latest = _project(pytester)
    result = pytester.runpytest("-p", "no:cacheprovider", "--model", "scripted:rules.yaml", "--holistic-export", "scores")
    result.assert_outcomes(passed=2)
    run_id = json.loads((latest / "report.json").read_text())["run_id"]
    reports = pytester.path / "reports"  # the report folder; the built-in writers make the model's and the run's below it
    assert (reports / "scores.csv").read_text() == f"scripted:rules.yaml,{run_id},{run_id}\nfr,1.0\njp,0.0\n"
    assert not (latest / "report.html").exists() and (reports / "instead.txt").read_text() == "no page"  # taken over


def test_a_writer_with_its_own_option_is_written_only_when_it_is_given(pytester: pytest.Pytester) -> None:
    latest = _project(pytester)
    pytester.runpytest("-p", "no:cacheprovider", "--model", "scripted:rules.yaml").assert_outcomes(passed=2)
    assert (latest / "report.json").is_file() and not (pytester.path / "reports" / "scores.csv").exists()
    assert not (pytester.path / "count.txt").exists()
    result = pytester.runpytest("-p", "no:cacheprovider", "--model", "scripted:rules.yaml", "--holistic-count-file", "count.txt")
    result.assert_outcomes(passed=2)
    assert (pytester.path / "count.txt").read_text() == "2"


def test_an_unknown_format_names_the_registered_ones_too(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--holistic-export", "helm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: pytest-holistic: --holistic-export = 'helm' is not a known format; use every-eval-ever or inspect or scores"]
    )


def test_an_export_module_is_the_whole_registration_of_its_format(tmp_path: Path) -> None:
    """A format is its ``report/export_NAME.py`` module: named in the help and registered, its ``make`` builds it."""
    import importlib

    from pytest_holistic.command_line import export_formats
    from pytest_holistic.report.builtin_writers import BUILTIN_WRITERS
    from pytest_holistic.writer_kinds import WriterContext

    exports = [kind for kind in BUILTIN_WRITERS if kind.when == "export"]
    assert tuple(kind.name for kind in exports) == export_formats() == ("every-eval-ever", "inspect")
    context = WriterContext(report_dir=tmp_path, model="m", run_id="r", exports=export_formats())
    for kind in exports:
        module = importlib.import_module(f"pytest_holistic.report.export_{kind.name.replace('-', '_')}")
        assert callable(module.make)
        assert kind.make(context).name == kind.name  # the module's own writer, under its format's name
    for name in ("export_csv_rows.py", "export_notes.txt", "exporter.py", "export_bad-name.py"):
        (tmp_path / name).write_text("")
    assert export_formats(tmp_path) == ("csv-rows",)