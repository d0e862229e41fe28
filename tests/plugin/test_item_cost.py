"""What each item costs the plugin: no fixture on plain tests, lean records, the process's counts sent once."""

from __future__ import annotations

import json

import pytest

CONFTEST = '''
import json
from pathlib import Path

import pytest

from pytest_holistic import GenerationResult, ModelInfo
from pytest_holistic.errors import ModelOutputError
from pytest_holistic.models import BatchStreaming

SEEN = Path(__file__).with_name("seen.jsonl")


class PoisonModel(BatchStreaming):
    """Answers " fine", and fails the items whose prompt is poisoned."""

    info = ModelInfo("poison", "test", "v1", {"device": "cpu"})

    def generate_batches(self, requests):
        if any("POISON" in r.prompt for r in requests):
            raise ModelOutputError("the server rejected a poisoned prompt")
        yield [(k, GenerationResult(" fine", (-0.1,), 3)) for k in range(len(requests))]


def pytest_holistic_make_model(config, name):
    return PoisonModel() if name == "poison" else None


def pytest_runtest_logreport(report):
    """What rode on each report, as the reporter saw it."""
    if report.when != "call" and not hasattr(report, "holistic_record"):
        return
    record = getattr(report, "holistic_record", None)
    seen = {
        "nodeid": report.nodeid,
        "record_keys": sorted(record) if record is not None else None,
        "record_type": type(record).__name__,
        "run": hasattr(report, "holistic_run"),
        "worker": getattr(report, "holistic_worker", None),
    }
    with SEEN.open("a") as handle:
        handle.write(json.dumps(seen) + "\\n")
'''

SUITE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def prompts():
    for k in range(12):
        yield Instance(id=f"p{k:02d}", input="Say POISON" if k == 5 else f"Say {k}", references=("fine",))

@pytest.mark.holistic(prompts, max_train_instances=0, metrics=("exact_match",))
def test_prompts(instance):
    pass

def test_plain(request):
    assert [name for name in request.fixturenames if name != "request"] == []
"""


def _seen(pytester: pytest.Pytester) -> list[dict]:
    path = pytester.path / "seen.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.unlink()
    return rows


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_prompts=SUITE)
    return pytester


def test_an_item_that_asks_only_for_its_instance_is_answered_in_setup(suite: pytest.Pytester, read_report) -> None:
    result = suite.runpytest_subprocess("--model", "poison", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=12, errors=1)  # 11 answered items and the plain test; the poisoned item errs in setup
    result.stdout.fnmatch_lines(["*ERROR at setup of test_prompts[[]p05[]]*", "*instance 'p05': the server rejected*"])
    records = {r["instance_id"]: r for run in read_report(suite.path, "poison")["runs"] for r in run["instances"]}
    assert records["p05"]["outcome"] == "error" and records["p05"]["completion"] is None
    assert records["p00"]["completion"]["text"] == "fine" and records["p00"]["scores"] == {"exact_match": 1.0}


def test_records_are_lean_and_the_counts_travel_once(suite: pytest.Pytester, read_report) -> None:
    args = ("--model", "poison", "-p", "no:cacheprovider", "--holistic-shard-size", "4")
    for temperature in ("cold", "warm"):
        suite.runpytest_subprocess(*args, timeout=300).assert_outcomes(passed=12, errors=1)
        seen = [row for row in _seen(suite) if "::test_prompts[" in row["nodeid"]]
        assert len(seen) == 12 and sum(row["record_keys"] is not None for row in seen) == 12
        assert sum(row["run"] for row in seen) == 1  # the run's description travels once, not with every record
        assert {row["record_type"] for row in seen} == {"dict"}  # plain data for other plugins (report-log)
        for row in seen:
            assert "model" not in row["record_keys"] and "adapter" not in row["record_keys"]
        assert all(row["worker"] is None for row in seen)  # no copy of the process's counts rides on a report
        workers = read_report(suite.path, "poison")["workers"]
        assert set(workers) == {"main"} and workers["main"]["final"]
        computed, hits = workers["main"]["generation_requests"], workers["main"]["cache_hits"]
        # Warm, the poisoned shard is asked again in halves, and each asking finds its healthy items in the cache.
        assert (computed, hits) == (11, 0) if temperature == "cold" else (computed == 0 and hits >= 11)


def test_records_reach_the_controller_as_plain_data_under_xdist(suite: pytest.Pytester, read_report) -> None:
    args = ("--model", "poison", "-p", "no:cacheprovider", "-n", "2", "--holistic-shard-size", "4")
    suite.runpytest_subprocess(*args, timeout=300).assert_outcomes(passed=12, errors=1)
    seen = [row for row in _seen(suite) if "::test_prompts[" in row["nodeid"]]
    assert {row["record_type"] for row in seen} == {"dict"} and all(row["worker"] is None for row in seen)
    report = read_report(suite.path, "poison")
    assert report["complete"] and sum(len(run["instances"]) for run in report["runs"]) == 12
    assert set(report["workers"]) == {"gw0", "gw1"} and all(worker["final"] for worker in report["workers"].values())
    assert sum(worker["generation_requests"] for worker in report["workers"].values()) == 11
    assert sum(worker["generation_requests"] + worker["cache_hits"] for worker in report["workers"].values()) == 11
