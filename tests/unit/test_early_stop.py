"""The controller's early stop (``report.early_stop.EarlyStop``): records in any order, the run's stop written once every
gate is decided, the items past it known, and each stopped run cut to the instances before its stop."""

from __future__ import annotations

import random
from pathlib import Path

from pytest_holistic.gates import parse_gate
from pytest_holistic.models.base import ModelInfo
from pytest_holistic.plans import Completion
from pytest_holistic.records import ItemRecord, RunHeader, RunInfo
from pytest_holistic.report.aggregate import RunResults
from pytest_holistic.report.early_stop import EarlyStop
from pytest_holistic.scenarios.instance import Instance, Reference
from pytest_holistic.stops import Stop, StopTable

KEY = "t.py::test_x"
ORDER = tuple(f"i{k:03d}" for k in range(300))
GATE = parse_gate("exact_match>=0.6")


def _info(stop_early: bool = True) -> RunInfo:
    gates = (GATE,)
    return RunInfo(KEY, "x", "test", "local", {}, {"method": "generation"}, (), ("exact_match",), gates, stop_early=stop_early)


def _record(instance_id: str, score: float) -> ItemRecord:
    instance = Instance(instance_id, f"input of {instance_id}", (Reference("gold"),))
    completion = Completion(text="a", prompt="p", gold=("gold",))
    return ItemRecord(f"{KEY}[{instance_id}]", KEY, instance, None, "p", completion, {"exact_match": score}, "passed", "main")


def _scores() -> dict[str, float]:
    rng = random.Random(1)
    return {instance: 1.0 if rng.random() < 0.9 else 0.0 for instance in ORDER}


def test_the_stop_is_written_once_every_gate_is_decided_whatever_the_arrival_order(tmp_path: Path) -> None:
    path = tmp_path / "early-stops.sqlite"
    early = EarlyStop(StopTable(path, "session"), 0.95)
    early.describe(RunHeader(_info(), ModelInfo("m", "scripted"), ORDER))
    scores = _scores()
    arrivals = list(ORDER)
    random.Random(7).shuffle(arrivals)
    runs = {KEY: RunResults(_info())}
    for instance_id in arrivals:
        record = _record(instance_id, scores[instance_id])
        runs[KEY].add(record)
        early.add(record)
    settled = early.sequences[KEY].settled
    assert settled is not None and settled.early and settled.n < 100
    assert StopTable(path, "session").stop_of(KEY) == Stop(KEY, settled.n, 300, settled.reason())
    assert settled.reason().startswith("gate `exact_match>=0.6` holds: [")
    assert early.problem is None
    before, after = ORDER[: settled.n], ORDER[settled.n :]
    assert not any(early.past_stop(f"{KEY}[{i}]") for i in before)
    assert all(early.past_stop(f"{KEY}[{i}]") for i in after)
    assert all(early.past_stop(f"{KEY}[{i}~typos]") for i in after)  # a variant goes with its instance
    assert not early.past_stop(KEY) and not early.past_stop("t.py::test_other[i299]")
    skipped = [f"{KEY}[{i}]" for i in after[:10]] + ["t.py::test_other[a]"]  # ten never computed, one the user's skip
    early.cut(runs, skipped)
    summary = runs[KEY].early_stop
    assert summary is not None and summary["stopped"] and summary["n"] == settled.n and summary["of"] == 300
    assert summary["not_computed"] == 10 and summary["answered_past_stop"] == 300 - settled.n
    assert {record.instance.id for record in runs[KEY].records} == set(before)
    assert early.paired() == {}  # no baseline, so no regression check decided by the sequences


def test_a_header_twice_keeps_the_sequences_and_a_run_that_cannot_stop_gets_none(tmp_path: Path) -> None:
    early = EarlyStop(StopTable(tmp_path / "s.sqlite", "s"), gates=[GATE])
    early.describe(RunHeader(_info(), None, ORDER))
    first = early.sequences[KEY]
    early.add(_record(ORDER[0], 1.0))
    early.describe(RunHeader(_info(), None, ORDER))  # the run's first record from a second worker
    assert early.sequences[KEY] is first and first.fed == 1
    other = EarlyStop(None)
    other.describe(RunHeader(_info(stop_early=False), None, ORDER))
    other.describe(RunHeader(_info(), None, ()))  # no order sent: nothing to feed
    other.add(_record(ORDER[0], 1.0))
    assert other.sequences == {} and not other.past_stop(f"{KEY}[{ORDER[-1]}]")


def test_a_stop_that_cannot_be_written_is_said_once_and_the_run_goes_on(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    early = EarlyStop(StopTable(blocked / "early-stops.sqlite", "s"))
    early.describe(RunHeader(_info(), None, ORDER))
    scores = _scores()
    for instance_id in ORDER:
        early.add(_record(instance_id, scores[instance_id]))
    assert early.sequences[KEY].settled is not None
    assert early.problem is not None and early.problem.startswith(f"could not write the early-stop table {blocked}")
    assert early.problem.endswith("items past the stops ran")
    early.close()  # nothing to remove, and no error
