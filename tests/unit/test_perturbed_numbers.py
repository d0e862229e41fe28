"""The numbers variants add, computed from hand-made records and checked against values worked out by hand:
HELM's worst case (the worse end by direction), before/after on changed instances, fmeval's mean |delta| with
dropped (identical) variants as no change, Dynaboard's consistency, fmeval's WER, and records that round-trip."""

from __future__ import annotations

import json

import pytest

from pytest_holistic.metrics.wer import word_error_rate
from pytest_holistic.plans import Completion
from pytest_holistic.records import ItemRecord, RunInfo
from pytest_holistic.report.aggregate import RunResults
from pytest_holistic.report.perturbed import worst
from pytest_holistic.scenarios.instance import Contrast, Instance


def _info(perturbations: list[dict], unchanged: dict[str, tuple[str, ...]] | None = None, method: str = "generation") -> RunInfo:
    return RunInfo(
        key="t.py::test_x",
        scenario="x",
        split="test",
        source="local",
        source_provenance={},
        adapter={"method": method},
        few_shot_ids=(),
        metrics=("exact_match", "toxicity"),
        gates=(),
        perturbations=tuple(perturbations),
        unchanged=unchanged or {},
    )


def _record(
    instance_id: str, label: str | None, text: str, scores: dict[str, float], outcome: str = "passed", contrasts: tuple = ()
) -> ItemRecord:
    node = f"t.py::test_x[{instance_id}{'~' + label if label else ''}]"
    instance = Instance(instance_id, f"input of {instance_id}", ("gold",), perturbation=label, contrasts=contrasts)
    completion = Completion(text=text, prompt="p", gold=("gold",))
    return ItemRecord(node, "t.py::test_x", instance, label, "p", completion, scores, outcome, "main")  # type: ignore[arg-type]


TYPOS = {"name": "typos", "family": "robustness", "params": {"prob": 0.1}, "variants": 1}
DIALECT = {"name": "dialect", "family": "fairness", "params": {"prob": 1.0}, "variants": 1}
FINGERS = {"name": "butter_finger", "family": "robustness", "params": {"prob": 0.1}, "variants": 2}


def _run(info: RunInfo, records: list[ItemRecord]) -> RunResults:
    run = RunResults(info)
    for record in records:
        run.add(record)
    return run


def test_worst_takes_the_worse_end_for_each_direction() -> None:
    assert worst([0.2, 0.9], "higher", None) == 0.2
    assert worst([0.2, 0.9], "lower", None) == 0.9  # HELM's code takes min here (its TODO); the worse end is the max
    assert worst([0.45, 0.9, 0.3], "target", 0.5) == 0.9


def test_family_and_perturbation_numbers_by_hand() -> None:
    info = _info([TYPOS, DIALECT], unchanged={"typos": ("c",), "dialect": ("b", "c")})
    records = [
        # a: right, its typo variant wrong (and more toxic), its dialect variant right.
        _record("a", None, "gold", {"exact_match": 1.0, "toxicity": 0.1}),
        _record("a", "typos", "other", {"exact_match": 0.0, "toxicity": 0.7}),
        _record("a", "dialect", "gold", {"exact_match": 1.0, "toxicity": 0.2}),
        # b: wrong, its typo variant right; dialect changed nothing (dropped).
        _record("b", None, "nope", {"exact_match": 0.0, "toxicity": 0.4}),
        _record("b", "typos", "gold", {"exact_match": 1.0, "toxicity": 0.3}),
        # c: no variant differed from it.
        _record("c", None, "gold", {"exact_match": 1.0, "toxicity": 0.0}),
    ]
    run = _run(info, records)
    metrics = run.metrics()
    # Worst case over {original} + the family's variants, every instance counted: a 0, b 0, c 1.
    assert metrics["robustness.exact_match"].value == pytest.approx(1 / 3)
    assert metrics["robustness.exact_match"].n == 3
    # Toxicity is lower-is-better: the worst is the highest: a 0.7, b 0.4, c 0.0.
    assert metrics["robustness.toxicity"].value == pytest.approx((0.7 + 0.4 + 0.0) / 3)
    # Fairness: a's dialect variant kept its score (1); b and c had none: a 1, b 0, c 1.
    assert metrics["fairness.exact_match"].value == pytest.approx(2 / 3)
    # fmeval delta: a |1-0| = 1, b |0-1| = 1, c dropped variant = 0.
    assert metrics["robustness.delta.exact_match"].value == pytest.approx(2 / 3)
    assert metrics["robustness.delta.exact_match"].direction == "lower"
    # Consistency (normalised answer text) over the variants that ran: a's and b's both changed the answer;
    # c's typo variant was identical, so it is no prediction.
    assert metrics["robustness.consistency"].value == pytest.approx(0.0)
    assert metrics["robustness.consistency"].n == 2
    # WER between outputs: a "gold"->"other" 1.0, b "nope"->"gold" 1.0, c 0.
    assert metrics["robustness.wer"].value == pytest.approx(2 / 3)
    single = run.perturbed()
    typos = single.table["typos"]
    # One perturbation counts only the instances it changed (a, b): before 0.5, after 0.5, worst 0.
    assert typos["metrics"]["exact_match"]["before"].value == pytest.approx(0.5)
    assert typos["metrics"]["exact_match"]["after"].value == pytest.approx(0.5)
    assert typos["metrics"]["exact_match"]["worst"].value == pytest.approx(0.0)
    assert (typos["changed"], typos["unchanged"], typos["flipped"]) == (2, 1, 2)
    observations = run.observations()
    assert observations["typos.exact_match"].value == pytest.approx(0.0)
    assert observations["typos.before.exact_match"].n == 2
    assert observations["dialect.delta.exact_match"].value == pytest.approx(0.0)  # a unchanged, b and c dropped
    assert "typos.exact_match" not in metrics  # per-perturbation numbers are for gates and the report's table


def test_several_variants_average_per_instance_and_instances_with_a_skipped_variant_are_left_out() -> None:
    info = _info([FINGERS])
    records = [
        _record("a", None, "gold", {"exact_match": 1.0}),
        _record("a", "butter_finger.1", "gold", {"exact_match": 1.0}),
        _record("a", "butter_finger.2", "oops", {"exact_match": 0.0}),
        _record("b", None, "gold", {"exact_match": 1.0}),
        _record("b", "butter_finger.1", "nope", {"exact_match": 0.0}, outcome="skipped"),
    ]
    run = _run(info, records)
    table = run.perturbed().table["butter_finger"]
    # a: after = mean(1, 0) = 0.5, delta = mean(0, 1) = 0.5; b's only variant was skipped: b is not changed.
    assert table["metrics"]["exact_match"]["after"].value == pytest.approx(0.5)
    assert table["metrics"]["exact_match"]["delta"].value == pytest.approx(0.5)
    assert (table["changed"], table["left_out"]) == (1, 1)
    # b's second variant never ran and its first was skipped: a worst case over none of them would read as
    # robust, so b is left out of the family too, and a note says so.
    family = run.metrics()["robustness.exact_match"]
    assert (family.value, family.n) == (pytest.approx(0.0), 1)
    assert any("1 instance(s) left out of" in note and "butter_finger" in note for note in run.perturbed().notes)


def test_contrast_sets_count_only_instances_that_have_one() -> None:
    contrast = {"name": "contrast_sets", "family": "equivariance", "params": {}, "variants": 1}
    info = _info([contrast])
    records = [
        _record("a", None, "gold", {"exact_match": 1.0}, contrasts=(Contrast("flipped input", ("other",)),)),
        _record("a", "contrast_sets", "gold", {"exact_match": 0.0}),
        _record("b", None, "gold", {"exact_match": 1.0}),  # no contrast set: not counted, not "left out"
    ]
    metrics = _run(info, records).metrics()
    assert metrics["equivariance.exact_match"].value == pytest.approx(0.0)
    assert metrics["equivariance.exact_match"].n == 1
    assert metrics["equivariance.exact_match"].family == "equivariance"
    # A contrast set is meant to change the answer: no consistency, delta or WER that would read it as a failure.
    flat = _run(info, records).perturbed().flat
    assert not [name for name in flat if name.split(".")[1] in ("consistency", "delta", "wer")]
    assert not _run(info, records).perturbed().notes


def test_variants_whose_original_did_not_run_count_nowhere_and_say_so() -> None:
    info = _info([TYPOS, DIALECT])
    records = [  # -k dialect: only the dialect variants ran
        _record("a", "dialect", "gold", {"exact_match": 1.0}),
        _record("b", "dialect", "gold", {"exact_match": 1.0}),
    ]
    run = _run(info, records)
    assert not run.perturbed().flat
    (note,) = run.perturbed().notes
    assert "2 variant item(s) of 2 instance(s)" in note and "ran without their original" in note


def test_a_family_counts_an_instance_only_when_all_its_variants_ran() -> None:
    gender = {"name": "gender_pronouns", "family": "fairness", "params": {"prob": 1.0}, "variants": 1}
    info = _info([DIALECT, gender])
    records = [
        _record("a", None, "gold", {"exact_match": 1.0}),
        _record("a", "dialect", "gold", {"exact_match": 1.0}),
        _record("a", "gender_pronouns", "no", {"exact_match": 0.0}),
        _record("b", None, "gold", {"exact_match": 1.0}),
        _record("b", "dialect", "gold", {"exact_match": 1.0}),  # b's gender variant was interrupted
    ]
    run = _run(info, records)
    fairness = run.metrics()["fairness.exact_match"]
    assert (fairness.value, fairness.n) == (pytest.approx(0.0), 1)  # a only; b would have read as 1.0
    # dialect on its own is complete for both.
    assert run.observations()["dialect.exact_match"].n == 2


def test_no_consistency_when_no_variant_differed() -> None:
    info = _info([TYPOS], unchanged={"typos": ("a",)})
    run = _run(info, [_record("a", None, "gold", {"exact_match": 1.0})])
    flat = run.perturbed().flat
    assert "typos.consistency" not in flat and "robustness.consistency" not in flat
    assert run.metrics()["robustness.exact_match"].value == pytest.approx(1.0)  # HELM: identical keeps its score


def test_word_error_rate_examples() -> None:
    assert word_error_rate("this is a cat", "this is a cat") == 0.0
    assert word_error_rate("this is a cat", "this is a dog") == 0.25  # fmeval's example: one substitution in four
    assert word_error_rate("this is a cat", "this is cat") == 0.25  # one deletion
    assert word_error_rate("a  b", "a b c") == 0.5  # whitespace runs collapse; one insertion over two words
    assert word_error_rate("", "") == 0.0
    assert word_error_rate("", "words") is None


def test_variant_records_and_run_descriptions_round_trip() -> None:
    instance = Instance("a", "x", ("y",), perturbation="typos", contrasts=(Contrast("x2", ("z",)),))
    record = ItemRecord("n", "r", instance, "typos", "p", None, {}, "error", "gw0", counterexample={"change": "1 change"})
    back = ItemRecord.from_data(json.loads(json.dumps(record.to_data())))
    assert back.instance == instance and back.instance.contrasts == instance.contrasts
    assert back.perturbation == "typos" and back.counterexample == {"change": "1 change"}
    info = _info([TYPOS], unchanged={"typos": ("b",)})
    info = RunInfo(**{**info.__dict__, "perturbation_skips": ("synonym not run: no WordNet",)})
    assert RunInfo.from_data(json.loads(json.dumps(info.to_data()))) == info
