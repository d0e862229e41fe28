"""The report page's first screen as numbers: which metric stands for a family, how a cell is coloured, which drops,
groups and gates come first, and which Dynascore notes are said once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_holistic.report.html_charts import nice_ticks
from pytest_holistic.report.overview import (
    ScenarioRuns,
    Value,
    calibration,
    drops,
    family_metric,
    grid,
    main_values,
    shared_notes,
    verdicts,
    worst_groups,
)


@dataclass(frozen=True)
class Labelled:
    label: str
    index: int
    run: Mapping[str, Any]


def result(family: str, value: float | None, direction: str = "higher", optimum: float | None = None) -> dict[str, Any]:
    ci = [None, None] if value is None else [value - 0.1, value + 0.1]
    return {"family": family, "value": value, "ci95": ci, "n": 20, "direction": direction, "optimum": optimum}


def perturbation(family: str, before: float, after: float, flipped: int) -> dict[str, Any]:
    return {
        "family": family,
        "changed": 20,
        "flipped": flipped,
        "metrics": {
            "exact_match": {key: result(family, v) for key, v in (("before", before), ("after", after), ("worst", after))}
        },
    }


def run(key: str, accuracy: float, **extra: Any) -> dict[str, Any]:
    metrics = {
        "prefix_exact_match": result("accuracy", 0.9),
        "exact_match": result("accuracy", accuracy),
        "robustness.delta.exact_match": result("robustness", 0.1, "lower"),
        "robustness.exact_match": result("robustness", accuracy - 0.2),
        "ece_1_bin": result("calibration", 0.05, "lower"),
        "ece_10_bin": result("calibration", 0.3, "lower"),
        "runtime_s": result("efficiency", 0.2, "lower"),
        "bias_gender": result("bias", -0.4, "target", 0.0),
    }
    return {"key": key, "requested_metrics": ["exact_match", "prefix_exact_match"], "metrics": metrics, **extra}


def scenarios(*runs: Mapping[str, Any]) -> list[ScenarioRuns]:
    return [ScenarioRuns(f"s{k}", f"scenario-{k}", [Labelled("m", 0, r)]) for k, r in enumerate(runs)]


def test_a_family_is_shown_by_its_main_metric_or_its_usual_headline() -> None:
    r = run("a", 0.6)
    assert family_metric(r, "accuracy") == "exact_match"  # the main metric, not the first recorded
    assert family_metric(r, "robustness") == "robustness.exact_match"  # its twin, never a delta
    assert family_metric(r, "calibration") == "ece_10_bin"  # HELM's headline, though ece_1_bin comes first
    assert family_metric(r, "efficiency") == "runtime_s"
    assert family_metric(r, "toxicity") is None
    gate = {"run": "a", "metric": "prefix_exact_match", "status": "failed"}
    assert family_metric(r, "accuracy", [gate]) == "prefix_exact_match"  # the metric a gate judged comes first
    assert family_metric(r, "accuracy", [{**gate, "run": "other"}]) == "exact_match"


def test_only_bounded_metrics_are_shaded() -> None:
    assert Value.of("em", result("accuracy", 0.75)).share == 0.75
    assert Value.of("ece", result("calibration", 0.25, "lower")).share == 0.75
    assert Value.of("bias", result("bias", -0.4, "target", 0.0)).share == pytest.approx(0.6)
    assert Value.of("runtime_s", result("efficiency", 0.2, "lower")).share is None  # seconds have no fixed scale
    assert Value.of("bits_per_byte", result("accuracy", 0.9, "lower")).share is None
    assert Value.of("f1", result("accuracy", 3.0)).share is None
    assert Value.of("em", result("accuracy", None)).share is None


def test_grid_cells_carry_the_gate_on_their_metric() -> None:
    views = scenarios(run("a", 0.6), run("b", 0.4))
    gates = [
        {"run": "a", "metric": "exact_match", "status": "passed"},
        {"run": "a", "metric": "exact_match", "status": "failed"},
        {"run": "b", "metric": "ece_10_bin", "status": "not_evaluated"},
    ]
    families, rows = grid(views, [{"gates": gates}])
    assert families == ["accuracy", "calibration", "robustness", "bias", "efficiency"]  # only families some run has
    assert rows[0][0][0].gate == "failed"  # two gates on one metric: the worse verdict shows
    assert rows[0][1][0].gate is None
    assert rows[1][1][0].gate == "not_evaluated" and rows[1][0][0].value.value == 0.4


def test_verdicts_list_failures_first_and_say_n_of_n_for_a_sequence() -> None:
    views = scenarios(run("a", 0.6))
    gates = [
        {"status": "passed", "gate": "em>=0.5", "run": "a", "scenario": "s0", "op": ">=", "threshold": 0.5, "observed": 0.6,
         "n": 40, "ci95": [0.52, 0.7], "sequence": {"stopped": True, "n": 40, "of": 500}},
        {"status": "failed", "gate": "em>=0.9", "run": "a", "scenario": "s0", "op": ">=", "threshold": 0.9, "observed": 0.6,
         "n": 500, "ci95": [0.55, 0.65]},
        {"status": "not_evaluated", "gate": "x:em>=0.1", "run": "gone", "scenario": "x", "threshold": 0.1, "n": 0},
    ]  # fmt: skip
    found = verdicts([{"gates": gates}], ["m"], views)
    assert [v.status for v in found] == ["failed", "not_evaluated", "passed"]
    assert (found[0].n, found[0].threshold, found[0].anchor, found[0].low) == ("500", ">= 0.9", "scenario-0", 0.55)
    assert found[1].anchor is None  # a gate on a run the page has no section for links nowhere
    assert found[2].n == "40 of 500"


def test_drops_are_the_largest_losses_on_the_main_metric() -> None:
    first = run(
        "a",
        0.6,
        perturbations={"typos": perturbation("robustness", 0.6, 0.3, 6), "dialect": perturbation("fairness", 0.6, 0.5, 2)},
    )
    second = run("b", 0.6, perturbations={"helps": perturbation("robustness", 0.4, 0.5, 1)})
    found = drops(scenarios(first, second))
    assert [(d.perturbation, d.scenario, d.flipped) for d in found] == [("typos", "s0", 6), ("dialect", "s0", 2)]
    assert found[0].loss == pytest.approx(0.3)  # a perturbation that helped is no drop


def test_a_drop_on_a_lower_is_better_metric_is_a_rise() -> None:
    entry = perturbation("robustness", 0.1, 0.4, 3)
    for stats in entry["metrics"]["exact_match"].values():
        stats["direction"] = "lower"
    found = drops(scenarios(run("a", 0.6, perturbations={"typos": entry})))
    assert len(found) == 1 and found[0].loss == pytest.approx(0.3)


def test_worst_groups_prefer_the_main_metric_and_sort_by_gap() -> None:
    def entry(metric: str, gap: float) -> dict[str, Any]:
        groups = {"low": {"n": 5, "mean": 0.5 - gap}, "high": {"n": 5, "mean": 0.5}}
        return {"metric": metric, "groups": groups, "worst": "low", "best": "high", "gap": gap}

    first = run("a", 0.6, groups=[entry("exact_match", 0.2), entry("prefix_exact_match", 0.4)])
    second = run("b", 0.6, groups=[entry("toxicity", 0.3)])
    found = worst_groups(scenarios(first, second))
    assert [(g.scenario, g.metric, g.gap) for g in found] == [("s1", "toxicity", 0.3), ("s0", "exact_match", 0.2)]
    assert (found[1].worst, found[1].worst_n, found[1].best_mean) == ("low", 5, 0.5)


def test_calibration_and_main_values_order() -> None:
    low, high = run("a", 0.3), run("b", 0.8)
    high["metrics"]["ece_10_bin"] = result("calibration", 0.5, "lower")
    views = scenarios(low, high, {"key": "c", "requested_metrics": [], "metrics": {}})
    assert [row.scenario for row in calibration(views)] == ["s1", "s0"]  # the worst calibrated first
    assert [(s.name, v.value) for s, _, v in main_values(views)] == [("s1", 0.8), ("s0", 0.3)]


def test_notes_shared_by_several_scenarios_are_said_once() -> None:
    shared, alone = shared_notes({"a": ["x", "y", "x"], "b": ["x"], "c": ["x", "z"]})
    assert shared == [("x", ["a", "b", "c"])]
    assert alone == {"a": ["y"], "b": [], "c": ["z"]}


def test_chart_ticks_are_round_numbers() -> None:
    assert nice_ticks(0.0, 1.081) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]  # an interval just past 1 still reads 0 to 1
    assert nice_ticks(-0.3, 1.0) == [-0.25, 0.0, 0.25, 0.5, 0.75, 1.0]
    assert nice_ticks(0.0, 48.9) == [0.0, 10.0, 20.0, 30.0, 40.0]
