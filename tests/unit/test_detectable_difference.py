"""The minimum detectable difference never exceeds what the metric can move: beyond its range it is "not detectable"."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_holistic.report.compare import Baseline, Entry, Side, compare
from pytest_holistic.report.regression import describe
from pytest_holistic.report.terminal import comparison_lines


def _side(scores: list[dict[str, float]]) -> Side:
    return Side("k", "s", {(str(i), ""): Entry(str(i), None, None, values) for i, values in enumerate(scores)}, {})


def _row(this: list[dict[str, float]], base: list[dict[str, float]], metric: str) -> dict:
    comparison = compare([_side(this)], Baseline(Path("b.json"), "r", "m", None, (_side(base),)))
    return next(row for row in comparison["scenarios"][0]["metrics"] if row["metric"] == metric)


def test_three_pairs_of_a_zero_one_metric_detect_nothing() -> None:
    # Differences +1, -1, +1: SE = 2/3, and the formula's 2.8016 x 2/3 = 1.868 is more than exact_match can differ.
    row = _row([{"exact_match": v} for v in (1.0, 0.0, 1.0)], [{"exact_match": v} for v in (0.0, 1.0, 0.0)], "exact_match")
    assert row["n"] == 3 and row["stderr"] == pytest.approx(2 / 3)
    assert row["mde"] is None
    assert row["mde_note"] == "not detectable at n=3: the smallest detectable difference exceeds the metric's range (1)"
    assert "MDE: not detectable at n=3" in describe(row)
    matched = {"matched": 3, "added_count": 0, "removed_count": 0, "added": [], "removed": []}
    scenario = {"label": "s", "key": "k", "matched_by": "key", "instances": matched, "metrics": [row]}
    baseline = {"path": "b.json", "run_id": "r", "model": "m"}
    lines = comparison_lines({"scenarios": [scenario], "only_in_this_run": [], "only_in_baseline": [], "baseline": baseline})
    assert any("MDE not detectable at this n" in line for line in lines)


def test_an_unregistered_zero_one_score_is_bounded_by_one() -> None:
    # Five pairs can never reach McNemar's six one-way discordant pairs: nothing is detectable, whatever the SE.
    row = _row([{"mine": 1.0}] * 5, [{"mine": 0.0}] * 5, "mine")
    assert row["mde"] is None and row["mde_note"].startswith("not detectable at n=5")


def test_enough_pairs_keep_a_number_within_the_range() -> None:
    this = [{"exact_match": float(i % 2)} for i in range(40)]
    base = [{"exact_match": float(i % 3 == 0)} for i in range(40)]
    row = _row(this, base, "exact_match")
    assert row["mde_note"] is None and 0 < row["mde"] <= 1


def test_an_unbounded_metric_keeps_its_number() -> None:
    # bits_per_byte has no upper bound, so no MDE is too large for it.
    this = [{"bits_per_byte": v} for v in (9.0, 0.0, 9.0)]
    row = _row(this, [{"bits_per_byte": 0.0}] * 3, "bits_per_byte")
    assert row["mde_note"] is None and row["mde"] > 1
