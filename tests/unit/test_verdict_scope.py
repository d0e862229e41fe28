"""The verdict path's two choices on real gates and runs: which runs each gate applies to (``choose_scope``), and the
one constructor of a result that was not evaluated (``unevaluated``), which every such result goes through."""

from __future__ import annotations

import math

from pytest_holistic.gates import Gate, MetricName, parse_gate
from pytest_holistic.plans import Completion
from pytest_holistic.records import CollectedRun, ItemRecord, RunInfo
from pytest_holistic.report.aggregate import RunResults
from pytest_holistic.report.verdicts import choose_scope, decide, not_evaluated, run_facts, unevaluated
from pytest_holistic.scenarios.instance import Instance


def _info(key: str, scenario: str, gates: tuple[Gate, ...] = ()) -> RunInfo:
    return RunInfo(key, scenario, "test", "local", {}, {}, (), ("exact_match",), gates)


def _run(info: RunInfo, scores: list[float], outcome: str = "passed") -> RunResults:
    run = RunResults(info)
    for k, score in enumerate(scores):
        instance = Instance(f"i{k}", f"input {k}", ("gold",))
        completion = Completion(text="gold", prompt="p", gold=("gold",))
        nodeid = f"t.py::{info.key}[i{k}]"
        run.add(ItemRecord(nodeid, info.key, instance, None, "p", completion, {"exact_match": score}, outcome, "main"))  # type: ignore[arg-type]
    return run


def test_a_gate_metric_is_parsed_once_into_its_parts() -> None:
    plain, group, derived = (
        parse_gate(text).metric_name for text in ("exact_match>=0.5", "groups.gap.exact_match<0.1", "robustness.exact_match>=0.5")
    )
    assert (plain.head, plain.group, plain.derived) == ("exact_match", None, None)
    assert (group.head, group.group, group.derived) == ("groups", ("gap", "exact_match"), None)
    assert derived.group is None and derived.derived is not None
    assert (derived.derived.prefix, derived.derived.statistic, derived.derived.base) == ("robustness", "worst", "exact_match")
    gate = parse_gate("exact_match>=0.5")
    assert gate.metric_name is gate.metric_name == MetricName("exact_match")
    assert "metric_name" not in {name for name in gate.__dataclass_fields__}  # a gate travels as its written fields


def test_the_scope_pairs_each_gate_with_the_runs_it_applies_to() -> None:
    marker = parse_gate("exact_match>=0.5")
    boolq = _info("t.py::test_boolq", "boolq", (marker,))
    imdb = _info("t.py::test_imdb", "imdb")
    left = _info("t.py::test_left", "left_out")
    ran = [_run(boolq, [1.0, 0.0]), _run(imdb, [1.0, 1.0])]
    collected = {info.key: CollectedRun(info, 2, 2) for info in (boolq, imdb)} | {left.key: CollectedRun(left, 2, 0)}
    scoped = parse_gate("left_out:exact_match>=0.9", "ini")
    unscoped = parse_gate("exact_match>=0.1", "ini")
    nobody = parse_gate("f1_score>=0.1", "ini")
    elsewhere = parse_gate("squad:exact_match>=0.1", "ini")
    facts = run_facts(ran, collected)
    assert [run.key for run in facts] == sorted(collected)
    assert [(run.judged, run.left_out is not None) for run in facts] == [(True, False), (True, False), (False, True)]

    scope = choose_scope([scoped, unscoped, nobody, elsewhere, unscoped], facts)

    assert [(gate.expression, run.key) for gate, run in scope.pairs] == [
        ("exact_match>=0.5", "t.py::test_boolq"),  # its marker's gate
        ("exact_match>=0.1", "t.py::test_boolq"),  # an unscoped gate, on each run that recorded its metric
        ("exact_match>=0.1", "t.py::test_imdb"),
        ("left_out:exact_match>=0.9", "t.py::test_left"),  # a scoped gate, even on its deselected run
    ]
    assert scope.unrecorded == [nobody]
    assert scope.uncollected == [elsewhere]


def test_every_not_evaluated_result_is_built_by_one_constructor() -> None:
    gate = parse_gate("boolq:exact_match>=0.5", "ini")
    result = unevaluated(gate, "t.py::test_boolq", "boolq", "the reason")
    assert (result.status, result.passed, result.n, result.evaluated) == ("not_evaluated", False, 0, False)
    assert math.isnan(result.observed) and all(math.isnan(end) for end in result.interval)
    assert result.message == "gate boolq:exact_match>=0.5: the reason"

    marker = parse_gate("exact_match>=0.5")
    info = _info("t.py::test_boolq", "boolq", (marker,))
    collected = {info.key: CollectedRun(info, 2, 2)}
    interrupted = not_evaluated([gate], collected, [_run(info, [1.0])], "the run was interrupted")
    assert interrupted == [
        unevaluated(marker, info.key, "boolq", "not evaluated, the run was interrupted"),
        unevaluated(gate, "", "boolq", "not evaluated, the run was interrupted"),
    ]

    deselected = decide([gate], [], {info.key: CollectedRun(info, 2, 0)}, strict=False)
    reason = f"scenario 'boolq' ({info.key}) was deselected: none of its 2 items was selected"
    assert [verdict.result for verdict in deselected] == [
        unevaluated(marker, info.key, "boolq", reason),
        unevaluated(gate, info.key, "boolq", reason),
    ]
    skipped = decide([], [_run(info, [0.0, 0.0], "skipped")], collected, strict=False, skipped={info.key: 2})
    assert [verdict.result for verdict in skipped] == [
        unevaluated(marker, info.key, "boolq", f"every selected item of scenario 'boolq' ({info.key}) was skipped (2)")
    ]
