"""Gate numbers over instance groups: the gap between the best and the worst group mean (HELM's performance
disparity) and the worst group's mean, each with a bootstrap interval, and their names checked like any gate's."""

from __future__ import annotations

import math

import pytest

from pytest_holistic.errors import GateSyntaxError
from pytest_holistic.gates import check_metric_name, parse_gate
from pytest_holistic.plans import Completion
from pytest_holistic.records import ItemRecord
from pytest_holistic.report.aggregate import group_number
from pytest_holistic.scenarios.instance import Instance


def _record(k: int, group: str | None, score: float, perturbation: str | None = None) -> ItemRecord:
    instance = Instance(f"i{k}", f"input {k}", ("gold",), group=group, perturbation=perturbation)
    completion = Completion(text="a", prompt="p", gold=("gold",))
    node = f"t.py::test_x[i{k}{'~' + perturbation if perturbation else ''}]"
    return ItemRecord(node, "t.py::test_x", instance, perturbation, "p", completion, {"exact_match": score}, "passed", "main")  # type: ignore[arg-type]


def test_the_gap_and_the_worst_group_over_the_originals() -> None:
    # group a: 3 of 4 right; group b: 1 of 4; a variant and an instance without a group count in neither
    scores = [("a", 1.0), ("a", 1.0), ("a", 1.0), ("a", 0.0), ("b", 1.0), ("b", 0.0), ("b", 0.0), ("b", 0.0)]
    records = [_record(k, group, score) for k, (group, score) in enumerate(scores)]
    records += [_record(100, None, 1.0), _record(0, "a", 0.0, perturbation="typos")]
    gap = group_number(records, "groups.gap.exact_match")
    worst = group_number(records, "groups.worst.exact_match")
    assert gap is not None and worst is not None
    assert (gap.value, gap.n, gap.direction, gap.family) == (0.5, 8, "lower", "fairness")
    assert (worst.value, worst.direction) == (0.25, "higher")
    assert gap.low <= 0.5 <= gap.high and 0.0 <= gap.low and gap.high <= 1.0
    assert worst.low <= 0.25 <= worst.high


def test_one_group_leaves_the_numbers_undefined_and_other_names_are_not_group_numbers() -> None:
    records = [_record(k, "a", 1.0) for k in range(5)]
    gap = group_number(records, "groups.gap.exact_match")
    assert gap is not None and math.isnan(gap.value)
    assert group_number(records, "exact_match") is None
    assert group_number(records, "groups.median.exact_match") is None


@pytest.mark.parametrize(
    ("gate", "message"),
    [
        ("groups.wrost.exact_match>=0.5", "no group statistic 'wrost'"),
        ("groups.gap.exact_mach<=0.1", "did you mean 'groups.gap.exact_match'?"),
        ("groups.gap<=0.1", "a group number is 'groups.gap.<metric>'"),
    ],
)
def test_a_misspelt_group_number_is_refused(gate: str, message: str) -> None:
    with pytest.raises(GateSyntaxError, match=message.replace("(", r"\(").replace("?", r"\?").replace(".", r"\.")):
        check_metric_name(parse_gate(gate), ["exact_match", "quasi_exact_match"], "command line")
    check_metric_name(parse_gate("groups.gap.exact_match<=0.1"), ["exact_match"], "command line")
