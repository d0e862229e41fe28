"""``pytest-holistic report RUN.json... -o DIR``: the merged leaderboard on disk, and one-line errors for bad inputs."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
FIX = "pass the report.json written by a run"


def _metric(value: float, direction: str = "higher", family: str = "accuracy") -> dict[str, Any]:
    return {
        "family": family,
        "kind": "instance",
        "value": value,
        "ci95": [value, value],
        "n": 20,
        "direction": direction,
        "optimum": None,
    }


def _report(name: str, run_id: str, em: float, f1: float, throughput: float, rss_mib: float) -> dict[str, Any]:
    """A minimal report.json: what the leaderboard reads (model, runs with requested and computed metrics, workers)."""
    runs = [
        {
            "key": "suite/test_qa.py::test_qa",
            "scenario": "qa",
            "split": "test",
            "requested_metrics": ["exact_match", "f1"],
            "metrics": {"exact_match": _metric(em), "f1": _metric(f1), "throughput": _metric(throughput, family="efficiency")},
            "instances": [],
        }
    ]
    return {
        "schema": "pytest-holistic/report",
        "schema_version": 4,
        "created": "2026-01-01T00:00:00+00:00",
        "run_id": run_id,
        "complete": True,
        "model": {"name": name},
        "runs": runs,
        "gates": [],
        "workers": {"main": {"peak_rss_mib": rss_mib, "peak_gpu_mib": None}},
    }


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def two_runs(tmp_path: Path) -> list[Path]:
    small = _write(tmp_path / "small.json", _report("small", "r1", em=0.4, f1=0.6, throughput=50.0, rss_mib=1024.0))
    big = _write(tmp_path / "big.json", _report("big", "r2", em=0.7, f1=0.5, throughput=10.0, rss_mib=4096.0))
    return [small, big]


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_holistic", "report", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_merge_writes_the_leaderboard_and_the_page(two_runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "board"
    done = _cli(*two_runs, "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(out / "leaderboard.json"), str(out / "index.html")]
    board = json.loads((out / "leaderboard.json").read_text())
    assert [model["name"] for model in board["models"]] == ["small", "big"]
    assert [model["report"] for model in board["models"]] == [str(path) for path in two_runs]
    # main metric exact_match: big beats small; accuracy (exact_match and f1): each wins one column
    assert board["win_rates"]["main"] == {"small": 0.0, "big": 1.0}
    assert board["win_rates"]["accuracy"] == {"small": 0.5, "big": 0.5}
    assert board["win_rates"]["efficiency"] == {"small": 1.0, "big": 0.0}
    qa = board["dynascore"]["scenarios"]["qa"]
    # one pair, perf gap 0.3: throughput |10 - 50| / 0.3, memory |(16 - 4) - (16 - 1)| / 0.3
    assert qa["amrs"]["throughput"] == pytest.approx(40 / 0.3)
    assert qa["amrs"]["memory"] == pytest.approx(3 / 0.3)
    assert qa["goods"]["small"]["memory"] == 15.0
    page = (out / "index.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "small" in page and "big" in page


def test_missing_file_is_one_line_naming_it_and_the_fix(two_runs: list[Path], tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    done = _cli(two_runs[0], missing, "-o", tmp_path / "board")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(missing) in lines[0] and "no such file" in lines[0] and FIX in lines[0]
    assert not (tmp_path / "board").exists()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not JSON"),
        ('{"schema": "something/else", "runs": []}', "not a pytest-holistic report"),
        ("[1, 2]", "not a pytest-holistic report"),
        (
            '{"schema": "pytest-holistic/report", "schema_version": 4, "runs": [{"scenario": "qa", "metrics": []}], '
            '"model": {"name": "m"}}',
            "not a valid report (",
        ),
        ('{"schema": "pytest-holistic/report", "schema_version": 4, "runs": [], "model": "m"}', "not a valid report (model: "),
        ('{"schema": "pytest-holistic/report", "schema_version": 99, "runs": []}', "report schema version 99"),
        ('{"schema": "pytest-holistic/report", "runs": []}', "report schema version None"),
        ('{"schema": "pytest-holistic/report", "schema_version": 5, "runs": [{}]}', "not a valid report ("),
    ],
)
def test_files_that_are_not_reports_are_refused(
    content: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    assert main(["report", str(bad), "-o", str(tmp_path / "board")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pytest-holistic report: error: ") and str(bad) in err[0]
    assert problem in err[0] and FIX in err[0]


def test_unreadable_bytes_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "binary.json"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["report", str(bad), "-o", str(tmp_path / "board")]) == 2
    assert "cannot read it" in capsys.readouterr().err


def test_a_run_folder_stands_for_its_report(two_runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "reports" / "small" / "r1"
    folder.mkdir(parents=True)
    (folder / "report.json").write_text(two_runs[0].read_text())
    assert main(["report", str(folder), str(two_runs[1]), "-o", str(tmp_path / "board")]) == 0
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    assert board["models"][0]["report"] == str(folder)


def test_an_output_folder_that_cannot_be_made_is_one_line(
    two_runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["report", str(two_runs[0]), "-o", str(blocker / "board")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write there" in err[0] and str(blocker / "board") in err[0]


def test_the_console_script_points_at_this_main() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["pytest-holistic"].partition(":")
    assert getattr(import_module(module), function) is main


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["-o", ""], "-o/--output is empty"),
        (["-o", "x", "--memory-cap-gb", "-1"], "--memory-cap-gb -1.0: give a positive number"),
        (["-o", "x", "--memory-cap-gb", "nan"], "give a positive number"),
    ],
)
def test_bad_options_are_usage_errors(
    two_runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args, problem
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["report", str(two_runs[0]), *args])
    assert exited.value.code == 2
    assert problem in capsys.readouterr().err
    assert not list(tmp_path.glob("*.html"))  # nothing written into the current folder


def test_one_run_is_compared_only_on_request(two_runs: list[Path], tmp_path: Path) -> None:
    assert main(["report", str(two_runs[0]), "-o", str(tmp_path / "plain")]) == 0
    plain = (tmp_path / "plain" / "index.html").read_text()
    assert 'id="overview"' in plain and 'id="dynascore"' not in plain and 'id="win-rates"' not in plain
    assert main(["report", str(two_runs[0]), "-o", str(tmp_path / "asked"), "--compare"]) == 0
    asked = (tmp_path / "asked" / "index.html").read_text()
    assert 'id="leaderboard"' in asked and 'id="dynascore"' in asked and 'id="win-rates"' in asked
