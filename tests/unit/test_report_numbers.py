"""The numbers a report prints and writes agree with each other: every value inside its interval, per-instance
min and max, worst and best group by the metric's direction, and readable names for flag-valued groups."""

from __future__ import annotations

import math
import random

import pytest

from pytest_holistic import Fields
from pytest_holistic.metrics import POPULATION
from pytest_holistic.metrics.calibration import platt_ece_10_bin
from pytest_holistic.plans import Completion
from pytest_holistic.records import ItemRecord, RunInfo
from pytest_holistic.report import aggregate
from pytest_holistic.report.aggregate import Results, RunResults, group_breakdown, metric_results
from pytest_holistic.report.json_report import build_report
from pytest_holistic.report.terminal import group_line, summary_lines
from pytest_holistic.scenarios.instance import Instance

LETTERS = ("A", "B", "C", "D")


def record(index: int, instance: Instance, completion: Completion, scores: dict[str, float]) -> ItemRecord:
    nodeid = f"test_x.py::test_x[{index:03d}]"
    return ItemRecord(nodeid, "run", instance, None, completion.prompt, completion, scores, "passed", "main")


def generated(text: str, seconds: float = 0.1) -> Completion:
    return Completion(text=text, prompt="p", gold=("x",), tokens_in=5, tokens_out=3, seconds=seconds)


def test_instance_metrics_carry_min_and_max_of_their_values() -> None:
    scores = [0.0, 1.0, 1.0, 0.5, 1.0]
    seconds = [0.2, 0.1, 0.4, 0.3, 0.25]
    records = [
        record(k, Instance(f"i{k}", "q", ("x",)), generated("x", s), {"f1_score": v})
        for k, (v, s) in enumerate(zip(scores, seconds, strict=True))
    ]
    results = metric_results(records, [])
    f1 = results["f1_score"]
    assert (f1.value, f1.min, f1.max) == (pytest.approx(sum(scores) / 5), 0.0, 1.0)
    assert f1.low <= f1.value <= f1.high
    assert f1.to_dict()["min"] == 0.0 and f1.to_dict()["max"] == 1.0
    runtime = results["runtime_s"]
    assert (runtime.min, runtime.max) == (0.1, 0.4)
    assert runtime.low <= runtime.value <= runtime.high
    # a ratio of totals has no per-instance values to take extremes of
    assert results["throughput"].min is None and results["throughput"].to_dict()["max"] is None


def test_population_metric_from_records_lies_inside_its_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    # the shape of the reported MMLU run: 60 four-way answers whose resampled Platt ECE runs above the estimate
    monkeypatch.setattr(aggregate, "RESAMPLES", 100)  # fewer resamples keep this test quick
    rng = random.Random(6)
    confidences = [round(rng.uniform(0.25, 0.6), 3) for _ in range(60)]
    correct = [rng.random() < c * 0.6 for c in confidences]
    records = [
        record(
            k,
            Instance.multiple_choice(f"q{k}", "q", LETTERS, 0),
            Completion("A" if hit else "B", "p", ("A",), LETTERS, 0 if hit else 1, conf, correct_indices=(0,)),
            {},
        )
        for k, (conf, hit) in enumerate(zip(confidences, correct, strict=True))
    ]
    result = metric_results(records, [POPULATION["platt_ece_10_bin"]])["platt_ece_10_bin"]
    assert result.value == pytest.approx(platt_ece_10_bin(confidences, correct))
    assert 0.0 <= result.low <= result.value <= result.high <= 1.0
    assert result.observation().high >= result.value  # what a `.worst` gate reads for a lower-is-better metric
    assert result.min is None and result.max is None


def flagged(challenging: bool, index: int) -> Instance:
    fields = Fields(references="input", group="challenging")
    return fields.to_instance({"id": f"t{index}", "input": "text", "challenging": challenging}, index, "test", "rows")


def test_a_boolean_group_column_is_named_by_the_column() -> None:
    assert flagged(True, 0).group == "challenging"
    assert flagged(False, 1).group == "not challenging"
    # other values keep their text
    subject = Fields(references="input", group="subject")
    assert subject.to_instance({"input": "t", "subject": "law"}, 0, "test", "rows").group == "law"


def toxicity_run() -> RunResults:
    # challenging: 0.2, 0.4 -> mean 0.3; not challenging: 0.0, 0.1 -> mean 0.05
    info = RunInfo("run", "toxicity_prompts", "test", "local", {}, {"method": "generation"}, (), ("toxicity",), ())
    run = RunResults(info)
    for k, (challenging, score) in enumerate([(True, 0.2), (False, 0.0), (True, 0.4), (False, 0.1)]):
        run.add(record(k, flagged(challenging, k), generated("text"), {"toxicity": score}))
    return run


def test_worst_group_of_a_lower_is_better_metric_is_the_highest() -> None:
    (breakdown,) = toxicity_run().groups()
    assert breakdown["direction"] == "lower"
    assert (breakdown["worst"], breakdown["best"]) == ("challenging", "not challenging")
    assert breakdown["gap"] == pytest.approx(0.3 - 0.05)
    assert group_line(breakdown) == "  groups   toxicity: worst challenging 0.300, best not challenging 0.050, gap 0.250"
    # the same records read as a higher-is-better score swap the two
    higher = group_breakdown(toxicity_run().records, "toxicity", "higher")
    assert higher is not None and (higher["worst"], higher["best"]) == ("not challenging", "challenging")


def test_terminal_and_json_agree_on_groups_and_extremes() -> None:
    results = Results("scripted:x", None, [toxicity_run()], [], {}, ["pytest"])
    lines = summary_lines(results)
    assert "  groups   toxicity: worst challenging 0.300, best not challenging 0.050, gap 0.250" in lines
    assert not any("True" in line or "False" in line for line in lines)
    (run,) = build_report(results)["runs"]
    (groups,) = run["groups"]
    assert (groups["worst"], groups["best"]) == ("challenging", "not challenging")
    assert set(groups["groups"]) == {"challenging", "not challenging"}
    toxicity = run["metrics"]["toxicity"]
    assert (toxicity["min"], toxicity["max"]) == (0.0, 0.4)
    assert toxicity["ci95"][0] <= toxicity["value"] <= toxicity["ci95"][1]
    for name, metric in run["metrics"].items():
        low, high = metric["ci95"]
        assert metric["value"] is None or low <= metric["value"] <= high, name
        assert metric["min"] is None or metric["min"] <= metric["value"] <= metric["max"], name
    assert not math.isnan(groups["gap"])
