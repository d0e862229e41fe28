"""The project's betting confidence sequence equals what confseq 0.0.11's ``betting_cs`` output (``golden/confseq_betting.json``).

Regenerate with ``tests/conformance/generate_confseq_goldens.py`` (its docstring has the side environment). Both
sides read the same grid of 1001 candidate means, so the bounds are grid points (scaled to the observations'
bounds) and agree exactly or by a whole grid step: the project sums log-capitals where confseq multiplies
capitals, which would move a bound only if a capital sat within rounding of 1/α. The comparison is exact to 1e-12,
which only absorbs the rescaling of the [-1, 1] case.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytest_holistic.metrics.confidence_sequence import ConfidenceSequence

from .golden import cases

CASES = cases("confseq_betting")


def _scaled(case: dict[str, Any], kind: str) -> np.ndarray:
    width = case["high"] - case["low"]
    return np.array(
        [[case["low"] + low * width, case["low"] + high * width] for low, high in zip(case[kind]["lower"], case[kind]["upper"])]
    )


def _sequence(case: dict[str, Any]) -> ConfidenceSequence:
    return ConfidenceSequence(case["low"], case["high"], level=0.95, population=case["population"])


def test_the_golden_covers_every_kind_of_input() -> None:
    names = {case["name"] for case in CASES}
    assert {"bernoulli_0.1", "bernoulli_0.5", "bernoulli_0.9", "paired_difference", "without_replacement"} <= names
    assert any(name.startswith("beta_") for name in names)
    assert all(len(case["values"]) == len(case["running"]["lower"]) == 300 for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_every_step_equals_confseq(case: dict[str, Any]) -> None:
    sequence = _sequence(case)
    latest, running = [], []
    for value in case["values"]:
        sequence.update(value)
        latest.append(sequence.latest)
        running.append(sequence.interval)
    assert sequence.n == len(case["values"])
    np.testing.assert_allclose(np.array(latest), _scaled(case, "latest"), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array(running), _scaled(case, "running"), rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_batches_give_the_same_intervals_as_single_steps(case: dict[str, Any]) -> None:
    """Updating with several observations at once (more than one internal chunk, too) changes nothing."""
    expected = _scaled(case, "running")
    sequence, seen = _sequence(case), 0
    for size in (1, 6, 33, 260):
        sequence.update(np.array(case["values"][seen : seen + size]))
        seen += size
        np.testing.assert_allclose(sequence.interval, expected[seen - 1], rtol=0, atol=1e-12)
    whole = _sequence(case)
    whole.update(case["values"])
    np.testing.assert_allclose(whole.latest, _scaled(case, "latest")[-1], rtol=0, atol=1e-12)
