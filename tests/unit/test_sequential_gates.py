"""The controller's sequences: fed in the seeded order whatever the arrival order, equal to a sequence fed directly,
and refusing the gates that cannot stop a run early, each with its reason."""

from __future__ import annotations

import random

import pytest

from pytest_holistic.gates import parse_gate
from pytest_holistic.metrics.confidence_sequence import ConfidenceSequence, GroupSequences
from pytest_holistic.plans import Completion
from pytest_holistic.records import ItemRecord, RunInfo
from pytest_holistic.report.sequential import PairedCheck, RunSequences, sequential_form
from pytest_holistic.scenarios.instance import Instance

TYPOS = {"name": "typos", "family": "robustness", "params": {"prob": 0.1}, "variants": 1}
DIALECT = {"name": "dialect", "family": "fairness", "params": {"prob": 1.0}, "variants": 1}


def _info(perturbations: tuple[dict, ...] = (), unchanged: dict[str, tuple[str, ...]] | None = None) -> RunInfo:
    return RunInfo(
        key="t.py::test_x",
        scenario="x",
        split="test",
        source="local",
        source_provenance={},
        adapter={"method": "generation"},
        few_shot_ids=(),
        metrics=("exact_match", "ece_10_bin"),
        gates=(),
        perturbations=perturbations,
        unchanged=unchanged or {},
    )


def _record(instance_id: str, label: str | None, score: float) -> ItemRecord:
    node = f"t.py::test_x[{instance_id}{'~' + label if label else ''}]"
    instance = Instance(instance_id, f"input of {instance_id}", ("gold",), perturbation=label)
    completion = Completion(text="a", prompt="p", gold=("gold",))
    return ItemRecord(node, "t.py::test_x", instance, label, "p", completion, {"exact_match": score}, "passed", "main")  # type: ignore[arg-type]


def _scores(count: int, p: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [1.0 if rng.random() < p else 0.0 for _ in range(count)]


def test_the_sequence_sees_the_seeded_order_whatever_the_arrival_order() -> None:
    order = [f"i{k:03d}" for k in range(300)]
    scores = dict(zip(order, _scores(300, 0.9, seed=1)))
    gate = parse_gate("exact_match>=0.6")
    in_order = RunSequences(_info(), [gate], order)
    for instance_id in order:
        in_order.add(_record(instance_id, None, scores[instance_id]))
    shuffled = RunSequences(_info(), [gate], order)
    arrivals = list(order)
    random.Random(7).shuffle(arrivals)
    for instance_id in arrivals:
        shuffled.add(_record(instance_id, None, scores[instance_id]))
    assert in_order.settled is not None and shuffled.settled == in_order.settled
    direct = ConfidenceSequence(0.0, 1.0, population=300)
    steps = direct.update([scores[i] for i in order[: in_order.settled.n]])
    assert in_order.settled.decisions[gate.expression] == ("holds", steps[-1])
    assert direct.decide(">=", 0.6) == "holds"
    before = ConfidenceSequence(0.0, 1.0, population=300)
    before.update([scores[i] for i in order[: in_order.settled.n - 1]])
    assert before.decide(">=", 0.6) == "undecided"  # settled at the first n that decides, not later
    assert in_order.settled.n < 100
    assert in_order.settled.message(gate.expression).startswith("gate `exact_match>=0.6` holds: [")


def test_nothing_is_fed_past_an_instance_still_out() -> None:
    order = ["a", "b", "c"]
    sequences = RunSequences(_info(), [parse_gate("exact_match>=0.5")], order)
    sequences.add(_record("b", None, 0.0))
    sequences.add(_record("c", None, 1.0))
    assert sequences.sequences["exact_match>=0.5"].n == 0
    assert sequences.add(_record("a", None, 1.0)) is not None  # all three in: 2 of 3, the mean itself, holds
    assert sequences.sequences["exact_match>=0.5"].n == 3


def test_a_family_gate_takes_the_worst_case_once_every_variant_is_in() -> None:
    info = _info((TYPOS, DIALECT), unchanged={"typos": ("b",)})
    gate = parse_gate("robustness.exact_match>=0.5")
    sequences = RunSequences(info, [gate], ["a", "b"])
    sequences.add(_record("a", None, 1.0))
    sequences.add(_record("a", "dialect", 1.0))  # another family's variant: not waited for, not counted
    assert sequences.sequences[gate.expression].n == 0  # a's typos variant is still out
    sequences.add(_record("a", "typos", 0.0))
    sequences.add(_record("b", None, 1.0))  # b's typos variant was identical (dropped): its own score counts
    direct = ConfidenceSequence(0.0, 1.0, population=2)
    direct.update([0.0, 1.0])
    assert sequences.sequences[gate.expression].n == 2
    assert sequences.sequences[gate.expression].interval == direct.interval


def test_an_item_without_a_score_means_the_run_cannot_stop_early() -> None:
    sequences = RunSequences(_info(), [parse_gate("exact_match>=0.5")], ["a", "b"])
    record = _record("a", None, 1.0)
    sequences.add(ItemRecord(record.nodeid, record.run_key, record.instance, None, "p", None, {}, "error", "main"))
    assert not sequences.can_stop and "errored, so the run cannot stop early" in str(sequences.broken)
    assert sequences.add(_record("b", None, 1.0)) is None


@pytest.mark.parametrize(
    ("gate", "reason"),
    [
        ("ece_10_bin<=0.1", "a population metric"),
        ("exact_match.lower>=0.5", "depends on the final n"),
        ("abs(exact_match-0.5)<=0.1", "depends on the final n"),
        ("typos.exact_match>=0.5", "only a family's worst case"),
        ("robustness.consistency>=0.5", "only a family's worst case"),
        ("robustness.exact_match>=0.5", "has no robustness variants"),
        ("my_own_score>=0.5", "not a per-instance metric of known bounds"),
    ],
)
def test_gates_that_cannot_stop_early_say_why(gate: str, reason: str) -> None:
    form = sequential_form(parse_gate(gate), _info())
    assert isinstance(form, str) and reason in form
    sequences = RunSequences(_info(), [parse_gate("exact_match>=0.5"), parse_gate(gate)], ["a"])
    assert not sequences.can_stop and sequences.reasons == (form,)


def test_a_run_without_gates_never_stops() -> None:
    sequences = RunSequences(_info(), [], ["a"])
    assert not sequences.can_stop
    assert sequences.add(_record("a", None, 1.0)) is None


def test_a_regression_check_is_fed_the_paired_differences_of_the_instances_the_baseline_has() -> None:
    order = [f"i{k:03d}" for k in range(200)]
    scores = dict(zip(order, _scores(200, 0.5, seed=3)))
    baseline = {instance: 1.0 for instance in order[::2]}  # every other instance, always right there
    check = PairedCheck("exact_match:0.05", "exact_match", 0.05, "higher", 0.0, 1.0, baseline)
    sequences = RunSequences(_info(), [parse_gate("exact_match>=0.1")], order, paired=[check])
    for instance in order:
        sequences.add(_record(instance, None, scores[instance]))
    settled = sequences.settled
    assert settled is not None and settled.early
    decision, interval, paired = settled.paired["exact_match:0.05"]
    used = [instance for instance in order[: settled.n] if instance in baseline]
    direct = ConfidenceSequence(-1.0, 1.0, population=100)
    direct.update([scores[instance] - 1.0 for instance in used])
    assert (decision, interval, paired) == ("fails", direct.interval, len(used))
    assert direct.decide(">=", -0.05) == "fails"
    assert "regression check `exact_match:0.05` fails: paired difference" in settled.reason()


def test_a_regression_check_with_no_instance_in_the_baseline_keeps_the_run_in_full() -> None:
    check = PairedCheck("exact_match:0.05", "exact_match", 0.05, "higher", 0.0, 1.0, {"elsewhere": 1.0})
    sequences = RunSequences(_info(), [parse_gate("exact_match>=0.1")], ["a", "b"], paired=[check])
    assert not sequences.can_stop and "no instance of this run is in the baseline" in sequences.reasons[0]


def _grouped_record(instance_id: str, group: str, score: float) -> ItemRecord:
    record = _record(instance_id, None, score)
    instance = Instance(instance_id, record.instance.input, ("gold",), group=group)
    return ItemRecord(record.nodeid, record.run_key, instance, None, "p", record.completion, record.scores, "passed", "main")


def test_a_group_gap_gate_is_decided_by_one_sequence_per_group() -> None:
    order = [f"i{k:03d}" for k in range(300)]
    groups = {instance: "a" if k % 3 else "b" for k, instance in enumerate(order)}
    rng = random.Random(5)
    scores = {instance: float(rng.random() < (0.9 if groups[instance] == "a" else 0.4)) for instance in order}
    gate = parse_gate("groups.gap.exact_match<=0.1")
    sequences = RunSequences(_info(), [gate], order, groups=groups)
    for instance in order:
        sequences.add(_grouped_record(instance, groups[instance], scores[instance]))
    settled = sequences.settled
    assert settled is not None and settled.early and settled.decisions[gate.expression][0] == "fails"
    used = order[: settled.n]
    direct = GroupSequences(["a", "b"], populations={"a": 200, "b": 100})
    for instance in used:
        direct.update(groups[instance], scores[instance])
    assert settled.decisions[gate.expression][1] == direct.spread
    means = [sum(scores[i] for i in used if groups[i] == g) / sum(1 for i in used if groups[i] == g) for g in ("a", "b")]
    assert sequences.mean(gate.expression) == pytest.approx(abs(means[0] - means[1]))


def test_a_group_gate_needs_two_groups_to_stop_early() -> None:
    sequences = RunSequences(_info(), [parse_gate("groups.worst.exact_match>=0.5")], ["a", "b"], groups={"a": "x", "b": "x"})
    assert not sequences.can_stop and "not in two groups or more" in sequences.reasons[0]
