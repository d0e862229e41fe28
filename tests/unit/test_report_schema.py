"""report.json against its shipped JSON Schema: real reports of plain, perturbed and ``-n 2`` runs validate, a broken
one does not, and the provenance block says which model, data, seeds and machine without leaking a secret.

(Interrupted and killed runs are validated where they are made: tests/plugin/test_faults.py.)
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

# The report's bootstrap imports numpy. Import it here, not first inside an in-process run: pytester unloads the
# modules a run imported, and numpy's C core cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest

from pytest_holistic.plans import Completion
from pytest_holistic.records import ItemRecord, RunInfo
from pytest_holistic.report.aggregate import Results, RunResults
from pytest_holistic.report.json_report import SCHEMA_VERSION, build_report
from pytest_holistic.report.schema import load_schema, validate_report
from pytest_holistic.scenarios.instance import Instance
from pytest_holistic.scenarios.scenario import instances_digest

HIVE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def hive():
    yield Instance(id="bees", input="Do Bees sting?", references=("Yes",), group="insects")
    yield Instance(id="ants", input="Do ants sting?", references=("No",), group="insects")
    yield Instance(id="cats", input="do cats purr", references=("No",), group="mammals")
    yield Instance(id="dogs", input="Do dogs bark?", references=("Yes",), group="mammals")

@pytest.mark.holistic(hive, adapter="generation", max_train_instances=0, max_tokens=2, metrics=("exact_match",),
                      gates=("exact_match>=0.5",))
def test_hive(instance, completion):
    pass
"""

RULES = {"generate": {"Bees": " Yes", "bark": " Yes"}, "default": " No"}


def _model(pytester: pytest.Pytester) -> str:
    (pytester.path / "rules.json").write_text(json.dumps(RULES))
    return "scripted:rules.json"


def _report(root: Path) -> dict:
    (path,) = (root / "reports").glob("*/latest/report.json")
    return json.loads(path.read_text())


def _valid(report: dict) -> dict:
    assert validate_report(report) == []
    return report


def test_the_shipped_schema_is_a_valid_draft_2020_12_schema_of_this_version() -> None:
    from jsonschema import Draft202012Validator

    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}


def test_a_plain_run_validates_and_its_small_binary_metric_has_a_wilson_interval(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE)
    result = pytester.runpytest("--model", _model(pytester), "-p", "no:randomly")
    result.assert_outcomes(passed=5)
    report = _valid(_report(pytester.path))
    (run,) = report["runs"]
    assert run["outcomes"] == {"passed": 4} and len(run["instances"]) == 4
    exact = run["metrics"]["exact_match"]
    # 4 right out of 4: the bootstrap's interval would be the single point [1, 1]; Wilson's reaches down to 0.51.
    assert (exact["value"], exact["interval"], exact["n"]) == (1.0, "wilson", 4)
    assert exact["ci95"] == [pytest.approx(0.5101, abs=1e-4), 1.0]
    assert run["metrics"]["runtime_s"]["interval"] == "bootstrap"
    (gate,) = report["gates"]
    assert gate["status"] == "passed" and gate["ci95"] == exact["ci95"]
    assert report["complete"] is True and report["comparison"] is None


def test_a_perturbed_run_validates(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE)
    result = pytester.runpytest("--model", _model(pytester), "--holistic-perturb", "lowercase", "-p", "no:randomly")
    result.assert_outcomes(passed=8)  # 4 originals, 3 variants ("do cats purr" is lowercase already), the gate
    report = _valid(_report(pytester.path))
    (run,) = report["runs"]
    assert {record["perturbation"] for record in run["instances"]} == {None, "lowercase"}
    lowercase = run["perturbations"]["lowercase"]
    assert lowercase["changed"] == 3 and set(lowercase["metrics"]["exact_match"]) == {"worst", "before", "after", "delta"}
    assert run["metrics"]["robustness.exact_match"]["interval"] == "wilson"
    assert run["metrics"]["robustness.wer"]["interval"] == "bootstrap"  # a word error rate is no proportion


def test_a_run_on_two_xdist_workers_validates(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE)
    result = pytester.runpytest_subprocess("--model", _model(pytester), "-n", "2", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=5)
    report = _valid(_report(pytester.path))
    assert set(report["workers"]) == {"gw0", "gw1"} and all(worker["final"] for worker in report["workers"].values())
    assert {record["execution"]["worker"] for record in report["runs"][0]["instances"]} <= {"gw0", "gw1"}


@pytest.fixture(scope="module")
def written() -> dict:
    """A real report, built from records in this process (no pytest run): the base the broken copies start from."""
    instances = [Instance(f"t{k}", "text", ("x",)) for k in range(4)]
    source = {"kind": "python", "where": "t.py:1", "instances": 4, "instances_sha256": instances_digest(instances)}
    info = RunInfo("run", "toxicity_prompts", "test", "local", source, {"method": "generation"}, (), ("toxicity",), ())
    run = RunResults(info)
    for k, score in enumerate((0.2, 0.0, 0.4, 0.1)):
        completion = Completion(text="text", prompt="p", gold=("x",), tokens_in=5, tokens_out=3, seconds=0.1)
        record = ItemRecord(f"t.py::t[{k}]", "run", instances[k], None, "p", completion, {"toxicity": score}, "passed", "main")
        run.add(record)
    return _valid(build_report(Results("scripted:x", None, [run], [], {}, ["pytest", "-q"])))


@pytest.mark.parametrize(
    ("breaks", "expected"),
    [
        (lambda r: r.pop("runs"), "(root): 'runs' is a required property"),
        (lambda r: r.pop("finished"), "(root): 'finished' is a required property"),
        (lambda r: r["provenance"].pop("datasets"), "provenance: 'datasets' is a required property"),
        (lambda r: r.update(schema_version=SCHEMA_VERSION - 1), f"schema_version: {SCHEMA_VERSION} was expected"),
        (lambda r: r.update(surprise=1), "(root): Additional properties are not allowed ('surprise' was unexpected)"),
        (lambda r: r["runs"][0]["instances"][0].update(outcome="xpassed"), "runs/0/instances/0/outcome: 'xpassed' is not one of"),
        (lambda r: r["runs"][0]["metrics"]["toxicity"].pop("n"), "runs/0/metrics/toxicity: 'n' is a required property"),
        (lambda r: r["runs"][0]["metrics"]["toxicity"].update(interval="normal"), "runs/0/metrics/toxicity/interval: 'normal'"),
        (lambda r: r["runs"][0]["metrics"]["toxicity"].update(direction="up"), "runs/0/metrics/toxicity/direction: 'up'"),
        (lambda r: r["runs"][0]["metrics"]["toxicity"].update(ci95=[0.1]), "runs/0/metrics/toxicity/ci95: [0.1] is too short"),
        (lambda r: r["runs"][0]["instances"][0].pop("completion"), "runs/0/instances/0: 'completion' is a required property"),
        (lambda r: r.update(started="yesterday"), "started: 'yesterday' is not valid under any of the given schemas"),
        (lambda r: r["runs"][0]["source_provenance"].pop("instances_sha256"), "runs/0/source_provenance: 'instances_sha256'"),
    ],
)
def test_a_broken_report_fails_validation_and_says_where(written: dict, breaks, expected: str) -> None:
    broken = copy.deepcopy(written)
    breaks(broken)
    problems = validate_report(broken)
    assert any(problem.startswith(expected) for problem in problems), problems


def test_a_gate_outcome_outside_the_enumeration_fails(written: dict) -> None:
    broken = copy.deepcopy(written)
    broken["gates"] = [
        {
            "status": "skipped",
            "gate": "toxicity<=0.5",
            "origin": "marker",
            "run": "r",
            "scenario": "s",
            "metric": "toxicity",
            "bound": "mean",
            "op": "<=",
            "threshold": 0.5,
            "observed": None,
            "n": 0,
            "ci95": [None, None],
            "passed": False,
            "message": "m",
        }
    ]
    assert validate_report(broken) == ["gates/0/status: 'skipped' is not one of ['passed', 'failed', 'not_evaluated']"]
    broken["gates"][0]["status"] = "not_evaluated"
    assert validate_report(broken) == []


CONFTEST = """
def pytest_addoption(parser):
    parser.addoption("--api-key")
    parser.addoption("--extra", action="append", default=[])
"""

SECRETS = ("sk-abcdef0123456789abcdef", "hf_secretvalue", "pa55word", "s3cr3t-token")


def test_provenance_names_model_data_seeds_and_times_and_scrubs_secrets(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_hive=HIVE)
    result = pytester.runpytest_subprocess(
        "--model",
        _model(pytester),
        "-p",
        "no:cacheprovider",
        "--holistic-gate",
        "exact_match>=0.25",
        f"--api-key={SECRETS[0]}",
        "--extra",
        f"HF_TOKEN={SECRETS[1]}",
        "--extra",
        f"https://alice:{SECRETS[2]}@example.com/data",
        "--extra",
        f"Authorization: Bearer {SECRETS[3]}",
        timeout=300,
    )
    result.assert_outcomes(passed=6)
    (path,) = (pytester.path / "reports").glob("*/latest/report.json")
    text = path.read_text()
    assert not [secret for secret in SECRETS if secret in text]
    report = _valid(json.loads(text))
    provenance = report["provenance"]
    command = provenance["command"]
    assert ["--holistic-gate", "exact_match>=0.25"] == command[command.index("--holistic-gate") :][:2]
    assert {"--api-key=***", "HF_TOKEN=***", "https://***@example.com/data", "Authorization: ***"} <= set(command)
    assert report["started"] <= report["finished"] == report["created"]
    model = provenance["model"]
    assert model["id"] == "scripted:rules.json" and model["revision"].startswith("sha256:")
    assert model["weights_fingerprint"] == model["revision"]
    (dataset,) = provenance["datasets"]
    assert dataset["scenario"] == "hive" and dataset["kind"] == "python" and dataset["instances"] == 4
    assert dataset["instances_sha256"] == report["runs"][0]["source_provenance"]["instances_sha256"]
    assert provenance["seeds"]["adapter"] == {"test_hive.py::test_hive": 0}
    assert provenance["seeds"]["bootstrap"] == {"seed": 0, "resamples": 1000}
    assert provenance["os"] and provenance["python"] and "gpus" in provenance


def test_a_transformers_model_reports_its_dtype_device_and_weights_fingerprint(
    pytester: pytest.Pytester, tiny_gpt2: Path
) -> None:
    pytester.makepyfile(test_hive=HIVE.replace('gates=("exact_match>=0.5",)', "gates=()"))
    result = pytester.runpytest("--model", str(tiny_gpt2), "-p", "no:randomly")
    result.assert_outcomes(passed=4)
    report = _valid(_report(pytester.path))
    model = report["provenance"]["model"]
    assert (model["dtype"], model["device"]) == ("float32", "cpu")
    assert model["revision"] == model["weights_fingerprint"] and model["revision"].startswith("sha256:")
    assert report["provenance"]["gpus"] is None or report["provenance"]["gpus"]["source"] == "/proc/driver/nvidia"


SERVER_CONFTEST = """
from pathlib import Path
from pytest_holistic.models.scripted import ScriptedBackend

def pytest_holistic_make_model(config, name):
    if name.startswith("myserver:"):  # a backend named by a URL with a password in it
        return ScriptedBackend(Path(__file__).parent / "rules.json")
    return None
"""


def test_a_secret_in_the_model_spec_is_never_written_or_printed(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(SERVER_CONFTEST)
    pytester.makepyfile(test_hive=HIVE)
    _model(pytester)
    spec = "myserver:https://bob:hunter2pass@example.com:8000#m"
    result = pytester.runpytest_subprocess("--model", spec, "-p", "no:cacheprovider", "--holistic-junit", "j.xml", timeout=300)
    result.assert_outcomes(passed=5)  # four items and the marker's gate
    assert "hunter2pass" not in result.stdout.str() + result.stderr.str()
    written = [path for path in pytester.path.rglob("*") if path.is_file() and path.suffix in (".json", ".html", ".xml")]
    assert {path.name for path in written} >= {"report.json", "report.html", "j.xml"}
    assert not [path for path in written if "hunter2pass" in path.read_text() or "hunter2pass" in str(path)]
    report = _valid(_report(pytester.path))
    assert report["provenance"]["model_spec"] == "myserver:https://***@example.com:8000#m"
