"""JUnit XML for CI: pytest's own ``--junitxml`` carries each item's scores, and ``--holistic-junit`` writes a
suite per scenario and one for the gates. Both are checked against the Jenkins JUnit schema (junit-10.xsd),
at ``-n 0`` and ``-n 2``; the schema is fetched once from pytest's source distribution on the package index."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

# The report's bootstrap imports numpy. Import it here, not first inside an in-process run: pytester unloads the
# modules a run imported, and numpy's C core cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest
import xmlschema

from pytest_holistic.paths import cache_root
from pytest_holistic.report.junit import clean, split_nodeid

XSD_MEMBER = "testing/example_scripts/junit-10.xsd"  # inside pytest's sdist (pytest's own junitxml tests use it)

SUITE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def hive():
    yield Instance(id="bees", input="Do Bees sting?", references=("Yes",))
    yield Instance(id="ants", input="Do ants sting?", references=("No",))
    yield Instance(id="cats", input="Do cats purr?", references=("Yes",))
    yield Instance(id="owls", input="Do owls hoot?", references=("Yes",))

@pytest.fixture
def perch(instance):
    if instance.id == "owls":
        raise RuntimeError("no perch for owls")

@pytest.mark.holistic(hive, adapter="generation", max_train_instances=0, max_tokens=20, metrics=("exact_match",),
                      perturbations=("lowercase",), gates=("exact_match>=0.0", "exact_match>=0.9"))
def test_hive(instance, completion, perch):
    if instance.id == "cats":
        pytest.skip("cats are out of scope")
    if instance.id == "bees":
        pytest.fail(completion.text, pytrace=False)

@scenario
def other():
    yield Instance(id="x", input="Is x?", references=("No",))

@pytest.mark.holistic(other, adapter="generation", max_train_instances=0, max_tokens=5, metrics=("exact_match",),
                      gates=("exact_match>=0.5",))
def test_other(instance, completion):
    pass
"""

HOSTILE = '<script>&"\x07 Yes'  # markup, a quote and a control character XML 1.0 cannot hold
RULES = {"generate": {"Bees": " " + HOSTILE}, "default": " No"}
ITEMS = {  # test name -> outcome; "cats" skips itself, "owls" errors in setup, "bees" fails with the model's answer
    "test_hive[bees]": "failed",
    "test_hive[bees~lowercase]": "failed",
    "test_hive[ants]": "passed",
    "test_hive[ants~lowercase]": "passed",
    "test_hive[cats]": "skipped",
    "test_hive[cats~lowercase]": "skipped",
    "test_hive[owls]": "error",
    "test_hive[owls~lowercase]": "error",
}
GATES = {"gate[exact_match>=0]": "passed", "gate[exact_match>=0.9]": "failed", "gate[exact_match>=0.5]": "skipped"}
CHILD = {"failure": "failed", "error": "error", "skipped": "skipped"}


def _fetch_xsd(target: Path) -> str | None:
    """Extract junit-10.xsd from pytest's sdist (this version's, else the newest) into ``target``; None, or why not."""
    version = importlib.metadata.version("pytest")
    why = "no attempt"
    with tempfile.TemporaryDirectory() as folder:
        for requirement in (f"pytest=={version}", "pytest"):
            command = [sys.executable, "-m", "pip", "download", requirement, "--no-deps", "--no-binary", ":all:"]
            command += ["--retries", "1", "--timeout", "20", "--quiet", "-d", folder]
            try:
                done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=240)
            except (OSError, subprocess.TimeoutExpired) as error:
                why = str(error)
                continue
            archives = sorted(Path(folder).glob("pytest-*.tar.gz"))
            if done.returncode != 0 or not archives:
                lines = (done.stderr or done.stdout).strip().splitlines()
                why = lines[-1] if lines else f"pip exited with {done.returncode}"
                continue
            with tarfile.open(archives[-1]) as archive:
                member = next((m for m in archive.getmembers() if m.name.endswith("/" + XSD_MEMBER)), None)
                source = archive.extractfile(member) if member is not None else None
                if source is None:
                    why = f"{archives[-1].name} has no {XSD_MEMBER}"
                    continue
                data = source.read()
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.{os.getpid()}")
            partial.write_bytes(data)
            os.replace(partial, target)  # concurrent sessions each write a whole file
            return None
    return why


@pytest.fixture(scope="session")
def junit_schema() -> xmlschema.XMLSchema:
    """The Jenkins JUnit schema, fetched once into the user's cache folder; the tests skip only when it cannot be had."""
    target = cache_root() / "test-assets" / "junit-10.xsd"
    if not target.is_file():
        why = _fetch_xsd(target)
        if why is not None:
            pytest.skip(f"junit-10.xsd could not be fetched from pytest's sdist on the package index: {why}")
    return xmlschema.XMLSchema(str(target))


def _outcome(case: ET.Element) -> str:
    found = [CHILD[child.tag] for child in case if child.tag in CHILD]
    assert len(found) <= 1, ET.tostring(case)
    return found[0] if found else "passed"


def _counts_add_up(root: ET.Element) -> None:
    """Every suite's counts are its testcases' outcomes, and the root's are the suites' sums."""
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for suite in root.iter("testsuite"):
        outcomes = [_outcome(case) for case in suite.iter("testcase")]
        counted = {"tests": len(outcomes), "failures": outcomes.count("failed"), "errors": outcomes.count("error")}
        assert {key: int(suite.get(key, "-1")) for key in counted} == counted, suite.get("name")
        assert int(suite.get("skipped", "0")) == outcomes.count("skipped"), suite.get("name")
        for key in totals:
            totals[key] += counted[key]
    if root.tag == "testsuites" and root.get("tests") is not None:
        assert {key: int(root.get(key, "-1")) for key in totals} == totals


def _properties(node: ET.Element) -> dict[str, str]:
    found = node.find("properties")
    return {} if found is None else {prop.get("name", ""): prop.get("value", "") for prop in found.iter("property")}


def _run(pytester: pytest.Pytester, workers: str) -> tuple[pytest.RunResult, dict]:
    pytester.makepyfile(test_junit_suite=SUITE)
    (pytester.path / "rules.json").write_text(json.dumps(RULES))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:randomly", "-n", workers, "--model", "scripted:rules.json",
        "-k", "not test_other", "--junitxml", "pytest.xml", "--holistic-junit", "ci/holistic.xml", timeout=300,
    )  # fmt: skip
    report = json.loads(next((pytester.path / "reports").glob("*/latest/report.json")).read_text())
    return result, report


def _check_pytest_junitxml(path: Path, schema: xmlschema.XMLSchema, records: dict[str, dict]) -> None:
    """pytest writes user_properties inside <testcase>, which junit-10.xsd does not declare (pytest-dev/pytest#5202).

    So the rest of the file is validated with those blocks taken out, and the blocks themselves are checked here.
    """
    root = ET.parse(path).getroot()
    seen = {}
    for case in root.iter("testcase"):
        properties = _properties(case)
        for block in case.findall("properties"):
            case.remove(block)
        if not case.get("name", "").startswith("test_hive["):
            continue
        record = records[case.get("name", "")]
        expected = {"holistic.scenario": "hive", "holistic.instance": record["instance_id"]}
        if record["perturbation"] is not None:
            expected["holistic.perturbation"] = record["perturbation"]
        expected.update((f"holistic.{name}", repr(value)) for name, value in record["scores"].items())
        assert {name: value for name, value in properties.items() if name.startswith("holistic.")} == expected
        seen[case.get("name")] = _outcome(case)
    assert seen == ITEMS
    schema.validate(ET.tostring(root, encoding="unicode"))


def _check_holistic_junit(path: Path, schema: xmlschema.XMLSchema, report: dict) -> None:
    schema.validate(str(path))  # the whole file, nothing taken out
    root = ET.parse(path).getroot()
    _counts_add_up(root)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("11", "3", "2")
    hive, gates = root.findall("testsuite")
    assert (hive.get("name"), gates.get("name")) == ("hive", "holistic gates")
    run = report["runs"][0]
    scenario = _properties(hive)
    assert scenario["run"] == "test_junit_suite.py::test_hive"
    exact = run["metrics"]["exact_match"]
    assert scenario["exact_match"] == repr(exact["value"]) == repr(1 / 3)  # bees 0, ants 1, owls 0 (answered before its error)
    assert (scenario["exact_match.ci95_low"], scenario["exact_match.ci95_high"]) == tuple(repr(end) for end in exact["ci95"])
    assert scenario["exact_match.n"] == str(exact["n"]) == "3"
    assert "robustness.exact_match" in scenario and "lowercase.exact_match.ci95_low" in scenario

    cases = {case.get("name"): case for case in hive.iter("testcase")}
    assert {name: _outcome(case) for name, case in cases.items()} == ITEMS
    assert {case.get("classname") for case in cases.values()} == {"test_junit_suite"}
    records = {record["nodeid"].split("::")[-1]: record for record in run["instances"]}
    bees = cases["test_hive[bees]"]
    failure = bees.find("failure")
    assert failure is not None and records["test_hive[bees]"]["error"].endswith(HOSTILE)
    assert failure.get("message", "").endswith('<script>&"\\x07 Yes')  # escaped, the control character spelled out
    assert failure.text == failure.get("message")
    output = (bees.findtext("system-out") or "").splitlines()
    assert output[:3] == ["scenario: hive", "instance: bees", "exact_match: 0.0"]
    completion = json.loads(output[-1].removeprefix("completion: "))
    assert completion == records["test_hive[bees]"]["completion"]["text"] and "\x07" in completion  # the exact text
    assert "perturbation: lowercase" in (cases["test_hive[ants~lowercase]"].findtext("system-out") or "")
    owls = cases["test_hive[owls]"].find("error")
    assert owls is not None and "no perch for owls" in owls.get("message", "")
    assert cases["test_hive[cats]"].find("skipped") is not None

    gate_cases = {case.get("name"): case for case in gates.iter("testcase")}
    assert {name: _outcome(case) for name, case in gate_cases.items()} == GATES
    judged = {gate["gate"]: gate for gate in report["gates"]}
    failed = gate_cases["gate[exact_match>=0.9]"].find("failure")
    assert failed is not None and failed.get("message") == judged["exact_match>=0.9"]["message"]
    assert failed.get("message", "").startswith("hive exact_match = 0.3333 (95% CI")
    assert gate_cases["gate[exact_match>=0.9]"].get("classname") == "test_junit_suite.test_hive"
    unchecked = gate_cases["gate[exact_match>=0.5]"].find("skipped")
    assert unchecked is not None and "deselected" in unchecked.get("message", "")
    assert _properties(gates) == {"complete": "true"}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_both_junit_files_validate_and_carry_the_scores(
    pytester: pytest.Pytester, junit_schema: xmlschema.XMLSchema, workers: str
) -> None:
    result, report = _run(pytester, workers)
    result.assert_outcomes(passed=3, failed=3, skipped=3, errors=2)
    records = {record["nodeid"].split("::")[-1]: record for record in report["runs"][0]["instances"]}
    _check_pytest_junitxml(pytester.path / "pytest.xml", junit_schema, records)
    _check_holistic_junit(pytester.path / "ci" / "holistic.xml", junit_schema, report)
    for path in (pytester.path / "pytest.xml", pytester.path / "ci" / "holistic.xml"):  # undefined numbers are left out
        assert 'value="nan"' not in path.read_text(encoding="utf-8").lower()
    result.stdout.fnmatch_lines([f"report: {pytester.path / 'ci' / 'holistic.xml'}"])


def test_an_unwritable_folder_falls_back_to_a_temporary_file(
    pytester: pytest.Pytester, junit_schema: xmlschema.XMLSchema
) -> None:
    pytester.makepyfile(test_junit_suite=SUITE)
    (pytester.path / "rules.json").write_text(json.dumps(RULES))
    (pytester.path / "blocked").write_text("a file where the folder should be")
    result = pytester.runpytest("-p", "no:randomly", "--model", "scripted:rules.json", "--holistic-junit", "blocked/out.xml")
    result.assert_outcomes(passed=5, failed=3, skipped=2, errors=2)  # test_other ran too, and its gate passed
    line = next(line for line in result.stdout.lines if "could not write" in line and "out.xml" in line)
    fallback = Path(line.rsplit("wrote ", 1)[1].removesuffix(" instead"))
    assert line.startswith("pytest-holistic: could not write ") and fallback.name == "out.xml"
    junit_schema.validate(str(fallback))
    _counts_add_up(ET.parse(fallback).getroot())
    fallback.unlink()
    fallback.parent.rmdir()


@pytest.mark.parametrize(("given", "problem"), [("", "--holistic-junit is empty"), (".", "--holistic-junit .: is a folder")])
def test_an_empty_path_or_a_folder_is_refused_before_any_work(pytester: pytest.Pytester, given: str, problem: str) -> None:
    pytester.makepyfile(test_junit_suite=SUITE)
    (pytester.path / "rules.json").write_text(json.dumps(RULES))
    result = pytester.runpytest("--model", "scripted:rules.json", "--holistic-junit", given)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*pytest-holistic: {problem}*"])


def test_an_undefined_number_is_left_out_never_written_as_nan() -> None:
    from pytest_holistic.report.aggregate import MetricResult
    from pytest_holistic.report.junit import _metric_properties

    nan = float("nan")
    undefined = MetricResult("bias", "bias", "population", nan, nan, nan, 12, "lower")
    defined = MetricResult("exact_match", "accuracy", "instance", 0.5, 0.25, 0.75, 4, "higher")
    assert _metric_properties({"bias": undefined, "exact_match": defined}) == [
        ("bias.n", "12"),
        ("exact_match", "0.5"),
        ("exact_match.ci95_low", "0.25"),
        ("exact_match.ci95_high", "0.75"),
        ("exact_match.n", "4"),
    ]


def test_an_undefined_item_score_is_left_out_of_the_user_properties() -> None:
    from pytest_holistic.plans import Completion
    from pytest_holistic.records import ItemRecord
    from pytest_holistic.scenarios.instance import Instance
    from pytest_holistic.worker import score_properties

    instance = Instance("a", "input", ("gold",))
    scores = {"exact_match": 1.0, "bias": float("nan")}
    record = ItemRecord("t.py::test[a]", "t.py::test", instance, None, "p", Completion(text="gold", prompt="p", gold=("gold",)), scores, "passed", "main")
    assert score_properties("s", record) == [
        ("holistic.scenario", "s"),
        ("holistic.instance", "a"),
        ("holistic.exact_match", "1.0"),
    ]


def test_text_is_made_safe_for_xml_and_node_ids_split_like_pytest() -> None:
    assert clean('<a>&"\x00\x1f\t\n\ud800\ufffe ok') == '<a>&"\\x00\\x1f\t\n\\ud800\\ufffe ok'
    assert split_nodeid("suites/core/test_boolq.py::test_boolq[yes~typos::x]") == (
        "suites.core.test_boolq",
        "test_boolq[yes~typos::x]",
    )
    assert split_nodeid("test_a.py::TestA::test_b[id]") == ("test_a.TestA", "test_b[id]")
    assert split_nodeid("holistic::gate[x>=1]") == ("holistic", "gate[x>=1]")


def test_a_run_cut_short_lists_the_items_it_never_reached(pytester: pytest.Pytester, junit_schema: xmlschema.XMLSchema) -> None:
    pytester.makepyfile(test_junit_suite=SUITE)
    (pytester.path / "rules.json").write_text(json.dumps(RULES))
    result = pytester.runpytest("-p", "no:randomly", "-x", "--model", "scripted:rules.json", "--holistic-junit", "out.xml")
    result.assert_outcomes(failed=1)  # test_hive[bees] comes first, and -x stops there
    junit_schema.validate(str(pytester.path / "out.xml"))
    root = ET.parse(pytester.path / "out.xml").getroot()
    _counts_add_up(root)
    hive = next(suite for suite in root.iter("testsuite") if suite.get("name") == "hive")
    outcomes = {case.get("name"): _outcome(case) for case in hive.iter("testcase")}
    assert outcomes == {name: "failed" if name == "test_hive[bees]" else "skipped" for name in ITEMS}
    other = next(suite for suite in root.iter("testsuite") if suite.get("name") == "other")  # a run without any record
    assert [(case.get("name"), _outcome(case)) for case in other.iter("testcase")] == [("test_other[x]", "skipped")]
    assert _properties(other) == {"run": "test_junit_suite.py::test_other", "model": "scripted:rules.json"}
    reason = hive.find("testcase[@name='test_hive[ants]']/skipped")
    assert reason is not None and reason.get("message", "").startswith("did not run")
    gates = next(suite for suite in root.iter("testsuite") if suite.get("name") == "holistic gates")
    assert _properties(gates)["complete"] == "false" and "interrupted" in _properties(gates)
    assert {_outcome(case) for case in gates.iter("testcase")} == {"skipped"}  # no gate is judged on part of the data
