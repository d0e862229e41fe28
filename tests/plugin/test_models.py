"""``--model`` resolution end to end: a saved folder, a hub name from the local HF cache, load failures."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.plugin.suites import capitals

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _offline_env(monkeypatch: pytest.MonkeyPatch, hf_home: Path) -> None:
    # huggingface_hub reads these at import time, so the run under test needs its own process.
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def _fake_hub_cache(hf_home: Path, repo: str, folder: Path, commit: str) -> None:
    """Lay out a local HF cache as huggingface_hub writes it: refs/main names snapshots/<commit>/."""
    root = hf_home / "hub" / f"models--{repo.replace('/', '--')}"
    snapshot = root / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for file in folder.iterdir():
        shutil.copy(file, snapshot / file.name)
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(commit)


def test_model_from_saved_folder(pytester: pytest.Pytester, tiny_gpt2: Path, read_report) -> None:
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", str(tiny_gpt2))
    result.assert_outcomes(passed=4)
    assert read_report(pytester.path, "tiny-gpt2")["model"]["details"]["source"] == str(tiny_gpt2)


def test_model_given_as_dot_dot_reports_inside_the_report_folder(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tiny_gpt2: Path
) -> None:
    model = pytester.path / "tiny-gpt2"
    shutil.copytree(tiny_gpt2, model)
    suite = model / "suite"  # run from a folder inside the model's: --model .. is the model folder
    suite.mkdir()
    (suite / "test_caps.py").write_text(capitals())
    monkeypatch.chdir(suite)
    reports = pytester.path / "out" / "reports"
    result = pytester.runpytest(str(suite), "--model", "..", "--holistic-report-dir", str(reports))
    result.assert_outcomes(passed=4)
    assert sorted(path.name for path in reports.iterdir()) == [".cache", "tiny-gpt2"]  # named after the folder .. means
    assert (reports / "tiny-gpt2" / "latest" / "report.json").is_file()
    assert sorted(path.name for path in (pytester.path / "out").iterdir()) == ["reports"]  # nothing beside it


@pytest.mark.parametrize("spec", [".", "..", "../..", "/", "/tmp/..", "...", "~/..", "./.."])
def test_no_model_spec_names_a_report_folder_outside_the_report_folder(spec: str) -> None:
    from pytest_holistic.report.json_report import JsonWriter

    reports = Path("/srv/reports")
    target = JsonWriter(reports, spec, "run").target
    assert Path(os.path.normpath(target)).parent.parent.parent == reports
    assert target.parent.parent.name not in ("", ".", "..")


def test_hub_name_from_local_cache_offline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tiny_gpt2: Path, read_report
) -> None:
    _fake_hub_cache(pytester.path / "hf", "holistic-test/tiny-gpt2", tiny_gpt2, COMMIT)
    _offline_env(monkeypatch, pytester.path / "hf")
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest_subprocess("--holistic-model", "holistic-test/tiny-gpt2", timeout=300)
    result.assert_outcomes(passed=4)
    report = read_report(pytester.path, "holistic-test_tiny-gpt2")
    assert report["model"]["name"] == "holistic-test/tiny-gpt2"
    assert report["model"]["revision"] == COMMIT
    assert report["runs"][0]["metrics"]["quasi_exact_match"]["value"] == pytest.approx(0.75)


def test_hub_name_from_local_cache_when_the_hub_cannot_be_reached(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tiny_gpt2: Path, read_report
) -> None:
    # No HF_HUB_OFFLINE: one short probe finds the hub unreachable, so the load reads the cache without retrying.
    _fake_hub_cache(pytester.path / "hf", "holistic-test/tiny-gpt2", tiny_gpt2, COMMIT)
    monkeypatch.setenv("HF_HOME", str(pytester.path / "hf"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    for name in ("HF_HUB_CACHE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest_subprocess("--model", "holistic-test/tiny-gpt2", timeout=300)
    result.assert_outcomes(passed=4)
    assert "Retry" not in result.stdout.str() + result.stderr.str()
    assert read_report(pytester.path, "holistic-test_tiny-gpt2")["model"]["revision"] == COMMIT


def test_hub_name_missing_offline_errors_in_one_line_and_stops(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _offline_env(monkeypatch, pytester.path / "hf")
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest_subprocess("--model", "holistic-test/absent", timeout=300)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*could not load model 'holistic-test/absent': *; it is not in the local HF cache (HF_HUB_OFFLINE is set)", "*Interrupted*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_missing_model_folder(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", "./models/nothing-here")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*model folder './models/nothing-here' does not exist*"])


def test_make_model_hook_supplies_a_custom_model(pytester: pytest.Pytester, read_report) -> None:
    pytester.makeconftest(
        """
        import json
        from pytest_holistic import ScriptedModel

        def pytest_configure(config):
            config.scripted = ScriptedModel(generate={"France": " Paris", "Japan": " Kyoto"}, default=" nowhere", name="my-model")

        def pytest_holistic_make_model(config, name):
            return config.scripted if name == "mine" else None

        def pytest_sessionfinish(session):
            session.config.rootpath.joinpath("batches.json").write_text(json.dumps(session.config.scripted.batches))
        """
    )
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", "mine")
    result.assert_outcomes(passed=4)
    (run,) = read_report(pytester.path, "mine")["runs"]
    assert run["metrics"]["quasi_exact_match"]["value"] == pytest.approx(0.25)
    # All four items of the shard went to the model in one call.
    assert (pytester.path / "batches.json").read_text() == '[["generate", 4]]'


def test_scripted_model_file(pytester: pytest.Pytester, read_report) -> None:
    pytester.path.joinpath("script.yaml").write_text('generate:\n  "France": " Paris"\n  "Italy": " Rome"\n')
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", "scripted:script.yaml")
    result.assert_outcomes(passed=4)
    (run,) = read_report(pytester.path, "scripted_script.yaml")["runs"]
    assert run["metrics"]["exact_match"]["value"] == pytest.approx(0.5)
