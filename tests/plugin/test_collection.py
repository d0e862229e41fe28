"""Instances become pytest items with stable ids; malformed suites are collection errors that say the fix."""

from __future__ import annotations

import json

import pytest

from tests.plugin.suites import capitals


def test_instance_ids_are_param_ids(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["test_caps.py::test_capitals[fr]", "test_caps.py::test_capitals[jp]", "test_caps.py::test_capitals[it]", "test_caps.py::test_capitals[eg]"]
    )
    assert result.ret == 0


def test_k_selects_instances(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--collect-only", "-q", "-k", "jp or fr")
    result.stdout.fnmatch_lines(["*2/4 tests collected (2 deselected)*"])


def test_duplicate_instance_id_fails_collection_naming_it(pytester: pytest.Pytester) -> None:
    rows = [{"id": "q1", "input": "a", "references": ["x"]}, {"id": "q1", "input": "b", "references": ["y"]}]
    pytester.path.joinpath("data.jsonl").write_text("\n".join(json.dumps(row) for row in rows))
    pytester.makepyfile(
        test_dup="""
        import pytest
        from pytest_holistic import Scenario, jsonl
        dup = Scenario("dup", local=jsonl("data.jsonl"))
        @pytest.mark.holistic(dup)
        def test_dup(completion):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting test_dup.py*", "*duplicate instance id 'q1' (split 'test')*instance ids must be unique within a split*"])
    assert "Traceback" not in result.stdout.str()


def test_malformed_jsonl_names_file_and_line(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("data.jsonl").write_text('{"id": "a", "input": "x", "references": ["y"]}\n{"id": "b", "input": \n')
    pytester.makepyfile(
        test_bad="""
        import pytest
        from pytest_holistic import Scenario, jsonl
        bad = Scenario("bad", local=jsonl("data.jsonl"))
        @pytest.mark.holistic(bad)
        def test_bad(completion):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*data.jsonl:2: not valid JSON*"])


@pytest.mark.parametrize(
    ("marker_args", "message"),
    [
        ("capitals, adaptor='generation'", "*unknown key(s) 'adaptor'*known keys:*"),
        (
            "capitals, metrics=('exact_mach',)",
            (
                "*unknown metric 'exact_mach'; did you mean 'exact_match' or *? the * known metrics are listed by family in "
                "docs/reference/metrics.md"
            ),
        ),
        ("capitals, gates=('exact_match >> 0.5',)", "*malformed gate 'exact_match >> 0.5'*"),
        ("capitals, adapter='multiple_choice_jointly'", "*unknown adapter 'multiple_choice_jointly'*"),
        ("'capitals'", "*needs a scenario as first argument*"),
        ("capitals, split='validation'", "*no instances in split 'validation'*"),
    ],
)
def test_bad_marker_is_a_collection_error(pytester: pytest.Pytester, marker_args: str, message: str) -> None:
    pytester.makepyfile(
        test_bad=f"""
        import pytest
        from pytest_holistic import Instance, scenario
        @scenario
        def capitals():
            yield Instance(id="fr", input="The capital of France is", references=("Paris",))
        @pytest.mark.holistic({marker_args})
        def test_it(completion):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting test_bad.py*", message])


def test_empty_scenario_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_empty="""
        import pytest
        from pytest_holistic import scenario
        @scenario
        def nothing():
            return iter(())
        @pytest.mark.holistic(nothing)
        def test_it(completion):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*scenario 'nothing'*has no instances in split 'test'*"])


def test_plain_tests_are_untouched(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_ok():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "holistic summary" not in result.stdout.str()


def test_relative_data_path_starts_at_the_collected_test_file_not_the_helper_module(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, read_report
) -> None:
    # The scenario is built by a helper in another folder; its relative path belongs to the suite that uses it.
    pytester.mkpydir("common").joinpath("scenarios.py").write_text(
        "from pytest_holistic import Scenario, jsonl\n\ndef qa():\n    return Scenario('qa', local=jsonl('data/qa.jsonl'))\n"
    )
    suite = pytester.mkdir("suite")
    (suite / "data").mkdir()
    (suite / "data" / "qa.jsonl").write_text(json.dumps({"id": "q1", "input": "The capital of France is", "references": ["Paris"]}) + "\n")
    (suite / "test_qa.py").write_text(
        "import pytest\nfrom common.scenarios import qa\n\n"
        "@pytest.mark.holistic(qa(), max_train_instances=0, metrics=('exact_match',))\ndef test_qa(completion):\n    pass\n"
    )
    pytester.path.joinpath("script.json").write_text(json.dumps({"default": " Paris"}))
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    result = pytester.runpytest_subprocess("suite", "--model", "scripted:script.json")
    result.assert_outcomes(passed=1)
    (run,) = read_report(pytester.path, "scripted_script.json")["runs"]
    assert run["source_provenance"]["path"] == str(suite / "data" / "qa.jsonl")
    assert run["metrics"]["exact_match"]["value"] == 1.0
