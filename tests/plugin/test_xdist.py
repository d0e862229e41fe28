"""``-n 2`` gives the same metrics and instance records as a serial run, with or without xdist loaded;
the reporter exists only on the controller, and each worker's summary reaches it as data.

Bit for bit when every process runs the same number of CPU threads: a worker takes ``cores / N`` threads by
default, and PyTorch's CPU matmuls round differently at different thread counts (a 5-row linear layer moves in
the last bit between 1 and 2 threads), so with the default split log-probabilities agree to float32 rounding
while answers, scores and gates stay equal (docs/explanation/speed-cache-parallel.md says so).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.suites import capitals

VOLATILE = ("execution",)  # wall time and worker id legitimately differ between runs


def _stable(report: dict) -> dict:
    runs = []
    for run in report["runs"]:
        instances = [{k: v for k, v in record.items() if k not in VOLATILE} for record in run["instances"]]
        for record in instances:
            record["completion"] = {k: v for k, v in record["completion"].items() if k != "seconds"}
        metrics = {name: value for name, value in run["metrics"].items() if value["family"] != "efficiency"}  # timings
        runs.append({**run, "instances": instances, "metrics": metrics})
    return {"runs": runs, "gates": report["gates"], "model": {k: v for k, v in report["model"].items() if k != "details"}}


def _close_floats(one: object, two: object, path: str = "") -> list[str]:
    """Where two reports differ: numbers beyond float32 rounding, anything else at all.

    Split differently (another thread count, batch shape or kernel family), a float32 reduction moves in the last
    places of its largest terms: a token's log-probability by a few units in the last place of logits of size up to
    about 10 (1e-6 each), and a report's numbers are sums of a few such values or means of them, so they agree within
    1e-5 relative to their size (or to 1, for the small ones). A different answer moves them far more."""
    if isinstance(one, dict) and isinstance(two, dict):
        if one.keys() != two.keys():
            return [f"{path}: keys {sorted(one)} != {sorted(two)}"]
        return [line for key in one for line in _close_floats(one[key], two[key], f"{path}.{key}")]
    if isinstance(one, list) and isinstance(two, list):
        if len(one) != len(two):
            return [f"{path}: {len(one)} != {len(two)} entries"]
        return [line for i, (a, b) in enumerate(zip(one, two)) for line in _close_floats(a, b, f"{path}[{i}]")]
    if isinstance(one, float) and isinstance(two, float):
        return [] if abs(one - two) <= 1e-5 * max(1.0, abs(one), abs(two)) else [f"{path}: {one} != {two}"]
    return [] if one == two else [f"{path}: {one!r} != {two!r}"]


def _two_suites(pytester: pytest.Pytester) -> None:
    """Two scenarios in two files, so ``-n 2`` gives each worker a shard."""
    pytester.makepyfile(test_caps=capitals(", gates=('quasi_exact_match>=0.5',)"))
    pytester.makepyfile(
        test_more=capitals().replace("def capitals", "def capitals_more").replace("(capitals,", "(capitals_more,")
        .replace("def test_capitals", "def test_more").replace('input="The capital', 'input="Fact: the capital')
    )


def test_two_workers_match_serial(pytester: pytest.Pytester, tiny_gpt2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # every process, workers included, runs one thread: bits must match
    _two_suites(pytester)
    serial = pytester.runpytest_subprocess("--model", str(tiny_gpt2), "-p", "no:randomly", "--holistic-report-dir", "serial", timeout=300)
    serial.assert_outcomes(passed=9)
    parallel = pytester.runpytest_subprocess("--model", str(tiny_gpt2), "-n", "2", "--holistic-report-dir", "parallel", timeout=300)
    parallel.assert_outcomes(passed=9)
    parallel.stdout.fnmatch_lines(["*holistic summary*", "capitals (generation, local; 4 passed)", "*quasi_exact_match*0.750*", "capitals_more (generation*"])
    without = pytester.runpytest_subprocess("--model", str(tiny_gpt2), "-p", "no:xdist", "--holistic-report-dir", "plain", timeout=300)
    without.assert_outcomes(passed=9)
    one = json.loads((pytester.path / "serial" / "tiny-gpt2" / "latest" / "report.json").read_text())
    two = json.loads((pytester.path / "parallel" / "tiny-gpt2" / "latest" / "report.json").read_text())
    plain = json.loads((pytester.path / "plain" / "tiny-gpt2" / "latest" / "report.json").read_text())
    assert _stable(one) == _stable(two) == _stable(plain)
    assert _stable(one)["runs"] and all(run["instances"] for run in _stable(one)["runs"])
    # Per-worker batch timings are partial statistics; the report merges them over the workers.
    assert two["model_time"]["batches"] == sum(worker["batches"] for worker in two["workers"].values()) > 0
    parallel.stdout.fnmatch_lines(["all workers: * batches, * s per batch on average*"])
    assert sorted(two["workers"]) == ["gw0", "gw1"]
    assert list(one["workers"]) == ["main"]
    computed = sum(worker["generation_requests"] for worker in two["workers"].values())
    # Whole shards go to one worker, so each of the 8 distinct prompts is computed exactly once.
    assert computed == one["workers"]["main"]["generation_requests"] == 8
    assert sum(worker["cache_hits"] for worker in two["workers"].values()) == 0


def test_default_thread_split_changes_only_float_rounding(
    pytester: pytest.Pytester, tiny_gpt2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a user sees by default: the serial run on every core, each worker on its share."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    _two_suites(pytester)
    pytester.runpytest_subprocess("--model", str(tiny_gpt2), "--holistic-report-dir", "serial", timeout=300).assert_outcomes(passed=9)
    parallel = pytester.runpytest_subprocess("--model", str(tiny_gpt2), "-n", "2", "--holistic-report-dir", "parallel", timeout=300)
    parallel.assert_outcomes(passed=9)
    one = _stable(json.loads((pytester.path / "serial" / "tiny-gpt2" / "latest" / "report.json").read_text()))
    two = _stable(json.loads((pytester.path / "parallel" / "tiny-gpt2" / "latest" / "report.json").read_text()))
    assert _close_floats(one, two) == []
    answers = [[(r["completion"]["text"], r["scores"], r["outcome"]) for r in run["instances"]] for run in one["runs"]]
    assert answers == [[(r["completion"]["text"], r["scores"], r["outcome"]) for r in run["instances"]] for run in two["runs"]]
    assert one["gates"] == two["gates"]


ROLES = """
import os
from pathlib import Path

import pytest
from pytest_holistic.activation import WORKER_SIDE

HELD = []  # keeps the worker side alive, so only an explicit close (not garbage collection) can close the cache

def _open_cache_files():
    fds = Path("/proc/self/fd")
    return sum("responses.sqlite" in os.path.realpath(fd) for fd in fds.iterdir()) if fds.is_dir() else 0

def pytest_sessionfinish(session):
    config = session.config
    role = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    has_reporter = config.pluginmanager.get_plugin("holistic-reporter") is not None
    Path(__file__).parent.joinpath(f"role-{role}.txt").write_text(str(has_reporter))
    Path(__file__).parent.joinpath(f"open-{role}.txt").write_text(str(_open_cache_files()))
    HELD.append(config.stash[WORKER_SIDE])

@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    role = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    here = Path(__file__).parent
    here.joinpath(f"after-{role}.txt").write_text(str(config.pluginmanager.get_plugin("holistic-reporter") is not None))
    here.joinpath(f"closed-{role}.txt").write_text(str(_open_cache_files()))
"""


def test_reporter_lives_only_on_the_controller_and_is_unregistered_at_the_end(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    pytester.makeconftest(ROLES)
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest_subprocess("--model", str(tiny_gpt2), "-n", "2", timeout=300)
    result.assert_outcomes(passed=4)
    roles = {path.stem: path.read_text() for path in pytester.path.glob("role-*.txt")}
    assert roles == {"role-controller": "True", "role-gw0": "False", "role-gw1": "False"}
    # the conftest's last unconfigure runs after ours, which unregistered the reporter
    assert (pytester.path / "after-controller.txt").read_text() == "False"
    # the worker that ran the shard had the response cache open at the end of the session; our unconfigure closed it
    assert max(int((pytester.path / f"open-{worker}.txt").read_text()) for worker in ("gw0", "gw1")) >= 1
    assert [(pytester.path / f"closed-{worker}.txt").read_text() for worker in ("gw0", "gw1")] == ["0", "0"]


VARIANTS = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def colours():
    for k in range(12):
        text = ("Is Item {k} red?", "is item {k} red?", "q{k}")[k % 3]
        yield Instance(id=f"c{k:02d}", input=text.format(k=k), references=("Yes",))

@pytest.mark.holistic(colours, adapter="generation", max_train_instances=0, max_tokens=2, metrics=("exact_match",),
                      perturbations=("lowercase", "extra_space"))
def test_colours(instance, completion):
    pass
"""

# Collected as c00, c00~lowercase, c00~extra_space, c01, c01~extra_space, c02, c03...: instances of 3, 2 and 1
# items in turn, 24 in all. At shard size 4 the plain rule would cut at 4, 8, 16 and 20, inside c01, c03, c07 and c09.
# Six shards, boundaries nearest 4, 8, 12, 16 and 20 among the instance boundaries 3, 5, 6, 9, 11, 12, 15, 17...:
# 3 (a tie with 5), 9, 12, 15 (a tie with 17) and 21.
VARIANT_SHARDS = [3, 6, 3, 3, 6, 3]


def test_variants_of_an_instance_share_a_shard_and_a_worker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_colours=VARIANTS)
    (pytester.path / "rules.json").write_text(json.dumps({"generate": {"red": " Yes", "Item 3": " No"}, "default": " No"}))
    common = ("--model", "scripted:rules.json", "-p", "no:cacheprovider", "--holistic-shard-size", "4")
    listed = pytester.runpytest_subprocess(*common, "--co", "-q")
    collected = [line for line in listed.stdout.lines if line.startswith("test_colours.py::")]
    assert len(collected) == sum(VARIANT_SHARDS) == 24
    serial = pytester.runpytest_subprocess(*common, "--holistic-report-dir", "serial", timeout=300)
    serial.assert_outcomes(passed=24)
    parallel = pytester.runpytest_subprocess(*common, "-n", "2", "--holistic-report-dir", "parallel", timeout=300)
    parallel.assert_outcomes(passed=24)
    one = json.loads(next((pytester.path / "serial").glob("*/latest/report.json")).read_text())
    two = json.loads(next((pytester.path / "parallel").glob("*/latest/report.json")).read_text())

    def answers(report: dict) -> dict[str, tuple]:
        return {r["nodeid"]: (r["completion"]["text"], r["scores"]) for run in report["runs"] for r in run["instances"]}

    assert answers(one) == answers(two)
    assert sorted(answers(one)) == sorted(collected)
    assert {text for text, _ in answers(one).values()} == {"Yes", "No"}
    worker = {r["nodeid"]: r["execution"]["worker"] for run in two["runs"] for r in run["instances"]}
    by_instance: dict[str, set[str]] = {}
    for nodeid in collected:
        by_instance.setdefault(nodeid[nodeid.index("[") + 1 : -1].partition("~")[0], set()).add(worker[nodeid])
    assert len(by_instance) == 12 and all(len(workers) == 1 for workers in by_instance.values()), by_instance
    shards, start = [], 0
    for size in VARIANT_SHARDS:
        shards.append({worker[nodeid] for nodeid in collected[start : start + size]})
        start += size
    assert all(len(workers) == 1 for workers in shards), shards
    assert set.union(*shards) == {"gw0", "gw1"}
    # Each of the 24 distinct prompts is computed once, by the one worker that ran its shard.
    computed = [w["generation_requests"] for w in two["workers"].values()]
    assert sum(computed) == one["workers"]["main"]["generation_requests"] == 24
