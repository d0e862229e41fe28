"""Readers of stored reports (``pytest-holistic report`` and ``--holistic-baseline``) never crash on what they read.

Whatever a file holds (an older version's shapes, a hand edit, a FIFO, a huge file, JSON nested 100 000 deep), a
reader either renders it or refuses it in one line naming the file and the field. The property tests mutate a
real report at random and check exactly that.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_holistic.__main__ import main
from pytest_holistic.errors import UserError
from pytest_holistic.report.compare import compare, load_baseline
from pytest_holistic.report.schema import MAX_DEPTH, MAX_REPORT_BYTES, validate_report

ROOT = Path(__file__).resolve().parents[2]
FIX = "pass the report.json written by a run"

SUITE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def hive():
    yield Instance(id="bees", input="Do Bees sting?", references=("Yes",), group="insects")
    yield Instance(id="ants", input="Do ants sting?", references=("No",), group="insects")
    yield Instance(id="cats", input="do cats purr", references=("No",), group="mammals")
    yield Instance(id="dogs", input="Do dogs bark?", references=("Yes",), group="mammals")

@pytest.mark.holistic(hive, adapter="generation", max_train_instances=0, max_tokens=2, metrics=("exact_match",),
                      perturbations=("lowercase",), gates=("exact_match>=0.5",))
def test_hive(instance, completion):
    pass
"""


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report.json of a real run (scripted model, perturbed variants, groups, a gate), as written."""
    root = tmp_path_factory.mktemp("run")
    (root / "test_hive.py").write_text(SUITE)
    (root / "rules.json").write_text(json.dumps({"generate": {"Bees": " Yes", "bark": " Yes"}, "default": " No"}))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--model", "scripted:rules.json", "-p", "no:cacheprovider", "-q"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = root.glob("reports/*/latest/report.json")
    report = json.loads(path.read_text())
    assert validate_report(report) == [] and report["runs"][0]["perturbations"] and report["runs"][0]["groups"]
    return report


def _write(path: Path, data: Any) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _merge(path: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    status = main(["report", str(path), "-o", str(out)])
    return status, capsys.readouterr().err.strip().splitlines()


def _one_line(status: int, err: list[str], *parts: str) -> None:
    assert status == 2 and len(err) == 1, err
    assert err[0].startswith("pytest-holistic report: error: ") and FIX in err[0]
    for part in parts:
        assert part in err[0], err[0]


# --- wrong shapes, named by file and field ----------------------------------------------------------------------


@pytest.mark.parametrize("version", [3, 4, 5])
@pytest.mark.parametrize(
    ("breaks", "field"),
    [
        (lambda r: r["runs"][0]["metrics"]["exact_match"].update(ci95=5), "runs/0/metrics/exact_match/ci95: is an integer"),
        (lambda r: r["runs"][0].update(instances=[None, 5]), "runs/0/instances/0: is null, expected object"),
        (
            lambda r: r["runs"][0]["metrics"]["exact_match"].update(value="0.5"),
            "exact_match/value: is a string, expected number or null",
        ),
        (lambda r: r["runs"][0]["metrics"]["exact_match"].update(ci95=[0.1]), "runs/0/metrics/exact_match/ci95: "),
        (lambda r: r["runs"][0]["instances"][0].update(completion=[]), "runs/0/instances/0/completion: "),
        (lambda r: r["runs"][0]["instances"][0]["instance"].update(references="Yes"), "instance/references: is a string"),
        (lambda r: r["runs"][0].update(groups={"a": 1}), "runs/0/groups: is an object, expected array"),
        (lambda r: r["workers"]["main"].update(peak_rss_mib="lots"), "workers/main/peak_rss_mib: is a string"),
        (lambda r: r.update(gates=[7]), "gates/0: is an integer, expected object"),
        (lambda r: r.update(runs_without_records=[{"scenario": 3}]), "runs_without_records/0/scenario: is an integer"),
        (lambda r: r["runs"][0].pop("key"), "runs/0: 'key' is a required property"),
    ],
)
def test_a_wrong_shape_is_one_line_naming_the_file_and_the_field(
    real: dict, version: int, breaks, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = copy.deepcopy(real)
    broken["schema_version"] = version
    breaks(broken)
    path = _write(tmp_path / "old.json", broken)
    status, err = _merge(path, tmp_path / "board", capsys)
    _one_line(status, err, str(path), "not a valid report (", field)
    assert not (tmp_path / "board").exists()
    with pytest.raises(UserError, match="^--holistic-baseline .*old.json: not a valid report") as refused:
        load_baseline(path)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("version", [3, 4])
def test_an_older_report_without_optional_fields_renders(real: dict, version: int, tmp_path: Path, capsys) -> None:
    older = copy.deepcopy(real)
    older["schema_version"] = version
    for name in ("finished", "started", "provenance", "comparison", "model_time", "warnings"):
        del older[name]
    for run in older["runs"]:
        for name in ("perturbations", "groups", "name", "edition", "source_provenance"):
            run.pop(name, None)
        for metric in run["metrics"].values():
            del metric["interval"]
    older["provenance"] = {"command": 5}  # a field the readers do not use may have any shape
    status, err = _merge(_write(tmp_path / "old.json", older), tmp_path / "board", capsys)
    assert status == 0 and err == []
    assert "hive" in (tmp_path / "board" / "index.html").read_text()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"schema": "pytest-holistic/report", "runs": [], "x": NaN}', "NaN is not a JSON number"),
        ('{"schema": "pytest-holistic/report", "runs": [], "x": 1e999}', "out of range"),
        ('{"schema": "pytest-holistic/report", "runs": [], "x": ' + "9" * 40 + "}", "out of range"),
        ("[" * 100_000, "nested deeper than this reader follows"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"nested deeper than {MAX_DEPTH} levels"),
        ('{"schema": "pytest-holistic/report", "schema_version": "\\u001b[31m5", "runs": []}', "'\\x1b[31m5'"),
    ],
)
def test_numbers_json_does_not_have_and_pathological_nesting_are_one_line(
    text: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "odd.json", text)
    status, err = _merge(path, tmp_path / "board", capsys)
    _one_line(status, err, str(path), problem)
    assert "\x1b" not in err[0]


def test_a_field_name_with_escape_codes_is_shown_escaped(real: dict, tmp_path: Path, capsys) -> None:
    broken = copy.deepcopy(real)
    broken["runs"][0]["metrics"]["\x1b]0;owned\x07"] = {"value": "x"}
    status, err = _merge(_write(tmp_path / "esc.json", broken), tmp_path / "board", capsys)
    _one_line(status, err, "\\x1b]0;owned\\x07")
    assert "\x1b" not in err[0] and "\x07" not in err[0]


# --- files that are not regular files, or too big ---------------------------------------------------------------


def _cli(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_holistic", "report", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    done = _cli(fifo, "-o", tmp_path / "board")  # a reader that opened it would wait for a writer forever
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert f"{fifo}: not a regular file (a FIFO)" in line and FIX in line
    done = _cli(tmp_path, "-o", tmp_path / "board")  # the folder holding it: the same
    assert done.returncode == 2 and "not a regular file (a FIFO)" in done.stderr
    with pytest.raises(UserError, match="not a regular file"):
        load_baseline(fifo)


def test_a_character_device_is_refused(tmp_path: Path, capsys) -> None:
    status, err = _merge(Path("/dev/zero"), tmp_path / "board", capsys)
    _one_line(status, err, "/dev/zero: not a regular file (a character device)")


def test_a_file_larger_than_any_report_is_refused_unread(tmp_path: Path, capsys) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:  # sparse: no disk space and no time spent
        handle.truncate(MAX_REPORT_BYTES + 1)
    status, err = _merge(huge, tmp_path / "board", capsys)
    _one_line(status, err, f"{huge}: {MAX_REPORT_BYTES + 1} bytes, more than the 512 MiB a report can be")


# --- random mutations of a real report ----------------------------------------------------------------------------


def _paths(node: Any, prefix: tuple = ()) -> Iterator[tuple]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=6,
)
MUTATION = st.tuples(st.integers(min_value=0), st.sampled_from(["replace", "delete", "empty"]), JSON_VALUES)


def _mutate(report: dict, mutations: list[tuple[int, str, Any]]) -> dict:
    data = copy.deepcopy(report)
    for choice, how, value in mutations:
        paths = [path for path in _paths(data) if path]
        path = paths[choice % len(paths)]
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        if how == "delete":
            del parent[path[-1]]
        elif how == "empty":
            parent[path[-1]] = type(parent[path[-1]])() if isinstance(parent[path[-1]], dict | list | str) else None
        else:
            parent[path[-1]] = value
    return data


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from([3, 4, 5]), mutations=st.lists(MUTATION, min_size=1, max_size=3))
def test_random_mutations_either_render_or_are_one_line(
    real: dict, version: int, mutations: list, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = copy.deepcopy(real)
    report["schema_version"] = version
    path = _write(tmp_path / "mutated.json", _mutate(report, mutations))
    status, err = _merge(path, tmp_path / "board", capsys)
    if status == 0:
        assert err == [] and (tmp_path / "board" / "index.html").read_text().startswith("<!DOCTYPE html>")
    else:
        _one_line(status, err, str(path))
    try:
        baseline = load_baseline(path)
    except UserError as error:
        assert "\n" not in str(error) and str(path) in str(error)
    else:
        compare(list(baseline.runs), baseline)
