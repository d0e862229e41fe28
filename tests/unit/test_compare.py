"""The baseline comparison on hand-made runs: matching, clusters, directions, missing metrics, specs and verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_holistic.errors import UserError
from pytest_holistic.regression_specs import check_regression_specs, parse_spec
from pytest_holistic.report.compare import MIN_CLUSTERS, Baseline, Entry, Side, compare, load_baseline
from pytest_holistic.report.json_report import SCHEMA_VERSION
from pytest_holistic.report.regression import judge


def _side(key: str, scenario: str, scores: dict[str, dict[str, float]], groups: dict[str, str] | None = None) -> Side:
    """A run from ``{instance label: scores}``; a label ``id~variant`` is a perturbed variant of ``id``."""
    entries = {}
    for label, values in scores.items():
        instance, _, variant = label.partition("~")
        entries[(instance, variant)] = Entry(instance, variant or None, (groups or {}).get(instance), values)
    return Side(key, scenario, entries, {})


def _baseline(*runs: Side) -> Baseline:
    return Baseline(Path("baseline.json"), "run-1", "model", None, runs)


def _row(comparison: dict, metric: str, perturbation: str | None = None, scenario: int = 0) -> dict:
    rows = comparison["scenarios"][scenario]["metrics"]
    return next(row for row in rows if row["metric"] == metric and row["perturbation"] == perturbation)


def test_runs_match_by_key_then_by_a_unique_scenario_name() -> None:
    base = [_side("a.py::test_x", "x", {"1": {"em": 1.0}}), _side("old/b.py::test_y", "y", {"1": {"em": 1.0}})]
    this = [_side("a.py::test_x", "x", {"1": {"em": 1.0}}), _side("new/b.py::test_y", "y", {"1": {"em": 0.0}})]
    this.append(_side("c.py::test_z", "z", {"1": {"em": 1.0}}))
    comparison = compare(this, _baseline(*base))
    assert [(s["scenario"], s["matched_by"]) for s in comparison["scenarios"]] == [("x", "key"), ("y", "scenario")]
    assert comparison["only_in_this_run"] == [{"scenario": "z", "key": "c.py::test_z", "instances": 1, "metrics": ["em"]}]
    assert comparison["only_in_baseline"] == []


def test_unmatched_instances_and_one_sided_metrics_are_listed() -> None:
    base = _side("k", "s", {"a": {"em": 1.0, "old": 1.0}, "b": {"em": 1.0, "old": 0.0}, "gone": {"em": 1.0, "old": 1.0}})
    this = _side("k", "s", {"a": {"em": 0.0, "new": 0.5}, "b": {"em": 1.0, "new": 0.5}, "fresh": {"em": 1.0, "new": 1.0}})
    comparison = compare([this], _baseline(base))
    assert comparison["scenarios"][0]["instances"] == {
        "matched": 2,
        "added_count": 1,
        "removed_count": 1,
        "added": ["fresh"],
        "removed": ["gone"],
    }
    assert _row(comparison, "old")["missing"] == "this run"
    assert _row(comparison, "new")["missing"] == "baseline"
    em = _row(comparison, "em")
    assert (em["n"], em["difference"], em["this"]["mean"], em["baseline"]["mean"]) == (2, -0.5, 0.5, 1.0)


def test_lower_is_better_metrics_turn_the_verdict_around() -> None:
    # toxicity is lower-is-better: every instance 0.3 less toxic than the baseline is "better".
    base = _side("k", "s", {str(i): {"toxicity": 0.5 + i / 100} for i in range(30)})
    this = _side("k", "s", {str(i): {"toxicity": 0.2 + i / 100 + (i % 3) / 100} for i in range(30)})
    row = _row(compare([this], _baseline(base)), "toxicity")
    assert row["direction"] == "lower"
    assert row["ci95"][1] < 0
    assert row["verdict"] == "better"
    assert row["mcnemar"] is None  # not a 0/1 metric
    assert "intervals" not in row["this"]
    flipped = _row(compare([base], _baseline(this)), "toxicity")
    assert flipped["verdict"] == "worse"


def test_groups_become_clusters_only_when_there_are_enough() -> None:
    few = {str(i): f"g{i % 3}" for i in range(60)}
    many = {str(i): f"g{i % MIN_CLUSTERS}" for i in range(60)}
    base_scores = {str(i): {"em": 1.0} for i in range(60)}
    this_scores = {str(i): {"em": float(i % 4 != 0)} for i in range(60)}
    by_few = _row(compare([_side("k", "s", this_scores, few)], _baseline(_side("k", "s", base_scores, few))), "em")
    by_many = _row(compare([_side("k", "s", this_scores, many)], _baseline(_side("k", "s", base_scores, many))), "em")
    assert by_few["clusters"] == {"by": "instance", "count": 60}
    assert by_many["clusters"] == {"by": "group", "count": MIN_CLUSTERS}
    assert by_few["difference"] == by_many["difference"] == pytest.approx(-0.25)


def test_variants_are_compared_per_label_and_pooled_with_one_cluster_per_instance() -> None:
    scores = {}
    for i in range(12):
        scores[str(i)] = {"em": 1.0}
        scores[f"{i}~typos"] = {"em": 1.0}
        scores[f"{i}~lowercase"] = {"em": 1.0}
    worse = {label: {"em": 0.0 if "~" in label and int(label.split("~")[0]) < 6 else 1.0} for label in scores}
    comparison = compare([_side("k", "s", worse)], _baseline(_side("k", "s", scores)))
    assert _row(comparison, "em")["difference"] == 0.0
    assert _row(comparison, "em", "typos")["difference"] == pytest.approx(-0.5)
    pooled = _row(comparison, "em", "*")
    assert pooled["n"] == 24
    assert pooled["clusters"] == {"by": "instance", "count": 12}  # both variants of an instance: one cluster


def test_binary_metrics_get_mcnemar_and_small_sample_intervals() -> None:
    base = _side("k", "s", {str(i): {"em": 1.0 if i < 30 else 0.0} for i in range(40)})
    this = _side("k", "s", {str(i): {"em": 1.0 if 5 <= i < 40 else 0.0} for i in range(40)})
    row = _row(compare([this], _baseline(base)), "em")
    # 5 lost (0-4) and 10 gained (30-39): p = 2 * sum_{k<=5} C(15, k) / 2**15.
    assert row["mcnemar"]["this_1_baseline_0"] == 10
    assert row["mcnemar"]["this_0_baseline_1"] == 5
    assert row["mcnemar"]["p_value"] == pytest.approx(2 * (1 + 15 + 105 + 455 + 1365 + 3003) / 2**15)
    assert row["verdict"] == "statistically tied"  # McNemar p = 0.30: no claim either way
    assert set(row["this"]["intervals"]) == {"wilson", "clopper_pearson", "jeffreys"}
    low, high = row["baseline"]["intervals"]["clopper_pearson"]
    assert low < 30 / 40 < high


def test_identical_runs_never_claim_a_zero_detectable_difference() -> None:
    binary = _side("k", "s", {str(i): {"em": float(i % 2), "f1": 0.5} for i in range(40)})
    comparison = compare([binary], _baseline(binary))
    # No pair differs, so SE = 0; McNemar needs 6 one-way discordant pairs (2/2**6 < 0.05): 6 of 40 at least.
    assert _row(comparison, "em")["mde"] == pytest.approx(6 / 40)
    assert _row(comparison, "f1")["mde"] is None  # a continuous score with no spread: nothing to estimate it from


def _judged(specs: list[str], this: Side, base: Side) -> list:
    return judge(compare([this], _baseline(base)), [parse_spec(text) for text in specs])


def test_a_regression_fails_only_beyond_the_margin_with_confidence() -> None:
    base = _side("k", "s", {str(i): {"em": 1.0} for i in range(100)})
    this = _side("k", "s", {str(i): {"em": float(i >= 20)} for i in range(100)})  # 20 of 100 lost: -0.2
    (failed,) = _judged(["em:0.02"], this, base)
    assert failed.status == "failed" and failed.nodeid == "holistic::regression[s:em]"
    assert "difference -0.2000" in failed.message and "n=100" in failed.message and "worse" in failed.message
    (tolerated,) = _judged(["em:0.3"], this, base)  # a real drop, but within the margin
    assert tolerated.status == "passed"
    (scoped,) = _judged(["em:0.02", "s:em:0.5"], this, base)  # a spec naming the scenario decides for it
    assert scoped.status == "passed" and scoped.margin == 0.5


def test_checks_that_cannot_be_judged() -> None:
    base = _side("k", "s", {"1": {"em": 1.0}})
    this = _side("k", "s", {"1": {"other": 1.0}})
    (lost,) = _judged(["em:0.1"], this, base)
    assert lost.status == "failed" and "this run recorded no em" in lost.message
    (nowhere,) = _judged(["never:0.1"], this, base)
    assert nowhere.status == "failed" and nowhere.nodeid == "holistic::regression[never]"
    (new,) = _judged(["other:0.1"], this, base)
    assert new.status == "skipped"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("quasi_exact_match:0.02", ("quasi_exact_match", 0.02, None)),
        (" boolq:exact_match:0 ", ("exact_match", 0.0, "boolq")),
        ("my_score:1.5", ("my_score", 1.5, None)),
    ],
)
def test_specs_parse(text: str, expected: tuple) -> None:
    spec = parse_spec(text)
    assert (spec.metric, spec.margin, spec.scenario) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("exact_match", "write METRIC:MARGIN"),
        ("exact_match:", "write METRIC:MARGIN"),
        (":0.1", "write METRIC:MARGIN"),
        ("exact_match:nan", "write METRIC:MARGIN"),
        ("exact_match:-1", "write METRIC:MARGIN"),
        ("a:b:exact_match:0.1", "write METRIC:MARGIN"),
        ("Exact_Match:0.1", "did you mean 'exact_match'?"),
        ("quasi_exact_mach:0.1", "did you mean 'quasi_exact_match'?"),
        ("f1_macro:0.1", "scenario-level metric"),
        ("runtime_s:0.1", "efficiency figure"),
        ("robustness.exact_match:0.1", "derived number"),
    ],
)
def test_bad_specs_are_refused(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace("?", r"\?")):
        parse_spec(text)


def test_specs_need_a_baseline() -> None:
    assert check_regression_specs([], None) == ()
    assert check_regression_specs(["exact_match:0.02"], "b.json") == (parse_spec("exact_match:0.02"),)  # parsed once, here
    with pytest.raises(UserError, match="needs --holistic-baseline"):
        check_regression_specs(["exact_match:0.02"], None)


def test_load_baseline_reads_a_report_and_refuses_anything_else(tmp_path: Path) -> None:
    record = {
        "nodeid": "t.py::test_s[a]",
        "run": "t.py::test_s",
        "instance_id": "a",
        "perturbation": None,
        "instance": {"id": "a", "group": "g"},
        "scores": {"em": 1.0, "undefined": None},
        "outcome": "passed",
    }
    skipped = {**record, "instance_id": "b", "instance": {"id": "b"}, "outcome": "skipped"}
    run = {"key": "t.py::test_s", "scenario": "s", "metrics": {"custom": {"direction": "lower"}}, "instances": [record, skipped]}
    # A version-4 report (before the shipped schema): read by structure, as stored baselines may be older.
    report = {"schema": "pytest-holistic/report", "schema_version": 4, "run_id": "r1", "model": {"name": "m"}, "runs": [run]}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "report.json").write_text(json.dumps(report))
    baseline = load_baseline(tmp_path / "run")  # the folder of a report is accepted too
    (side,) = baseline.runs
    assert (baseline.run_id, baseline.model, side.scenario) == ("r1", "m", "s")
    assert list(side.entries) == [("a", "")]  # the skipped item is left out, as the run's metrics leave it out
    assert side.entries[("a", "")] == Entry("a", None, "g", {"em": 1.0})
    assert side.directions == {"custom": "lower"}
    (tmp_path / "bad.json").write_text(json.dumps({**report, "runs": [{"key": "k", "scenario": "s"}]}))
    with pytest.raises(UserError, match="malformed"):
        load_baseline(tmp_path / "bad.json")
    with pytest.raises(UserError, match="no such file"):
        load_baseline(tmp_path / "missing.json")
    with pytest.raises(UserError, match="folder without a report.json"):
        load_baseline(tmp_path)
    (tmp_path / "newer.json").write_text(json.dumps({**report, "schema_version": 99}))
    with pytest.raises(UserError, match="report schema version 99, but this pytest-holistic reads versions 3 to"):
        load_baseline(tmp_path / "newer.json")
    (tmp_path / "current.json").write_text(json.dumps({**report, "schema_version": SCHEMA_VERSION}))
    with pytest.raises(UserError, match=r"not a valid report \((root)|\w"):  # this version's reports must match its schema
        load_baseline(tmp_path / "current.json")
