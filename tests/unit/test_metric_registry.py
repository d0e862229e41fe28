"""The two metric registries: complete metadata, gate-friendly unique names, working functions, and a
plugin import that stays light (every heavy metric library is imported lazily)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.errors import UserError
from pytest_holistic.gates import parse_gate
from pytest_holistic.options import Given
from pytest_holistic.metrics import (
    BUILTIN,
    FAMILIES,
    POPULATION,
    SCORED,
    Column,
    MetricInfo,
    Score,
    ScoresOf,
    lookup,
    lookup_population,
)


def _named_sets() -> dict[str, tuple[str, ...]]:
    """The named metric sets a marker can spread (``metrics.CALIBRATION``...), read from their module."""
    from pytest_holistic.metrics import sets

    return {name: value for name, value in vars(sets).items() if name.isupper() and isinstance(value, tuple)}


def test_the_registries_share_no_name_and_key_each_metric_by_its_own_name() -> None:
    assert not set(POPULATION) & set(BUILTIN) and not set(SCORED) & (set(BUILTIN) | set(POPULATION))
    assert all(info.name == name for name, info in [*BUILTIN.items(), *POPULATION.items()])
    assert all(scored.info.name == name for name, scored in SCORED.items())


@pytest.mark.parametrize("set_name", sorted(_named_sets()))
def test_every_name_of_a_named_set_resolves_in_one_registry(set_name: str) -> None:
    """A set naming a metric no registry holds would fail every marker that spreads it, at collection."""
    names = _named_sets()[set_name]
    assert names
    missing = [name for name in names if sum(name in registry for registry in (BUILTIN, POPULATION, SCORED)) != 1]
    assert not missing, f"{set_name} names {missing}"


@pytest.mark.parametrize("info", [*BUILTIN.values(), *POPULATION.values()], ids=lambda info: info.name)
def test_metadata_is_complete_and_names_parse_as_gates(info: MetricInfo) -> None:
    assert info.direction in ("higher", "lower", "target")
    assert (info.optimum is not None) == (info.direction == "target")
    low, high = info.bounds
    assert low < high
    assert info.citation.strip()
    assert info.family in FAMILIES
    assert info.inputs and all(isinstance(column, Column | ScoresOf) for column in info.inputs)
    assert callable(info.function)
    assert info.kind == ("instance" if info.name in BUILTIN else "population")
    assert parse_gate(f"{info.name} >= 0.5").metric == info.name


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=40), st.lists(st.text(max_size=40), min_size=1, max_size=3))
def test_every_instance_metric_returns_a_named_score_within_bounds(prediction: str, golds: list[str]) -> None:
    for name, info in BUILTIN.items():
        score = info.function(prediction, golds)
        assert isinstance(score, Score) and score.metric == name
        assert info.bounds[0] <= score <= info.bounds[1] and not math.isnan(score)


def test_population_metrics_run_from_the_registry() -> None:
    # one bin: mean confidence (0.9 + 0.3)/2 = 0.6, accuracy 1/2 -> |0.6 - 0.5| = 0.1
    assert lookup_population("ece_1_bin").function([0.9, 0.3], [1, 0]) == pytest.approx(0.1)
    assert lookup_population("f1_macro").function([0, 1], [0, 1]) == 1.0
    assert lookup_population("rr_at_10").function([[0, 1]]) == 0.5  # first relevant at rank 2
    assert lookup_population("bits_per_byte").function(-8 * math.log(2), 8) == pytest.approx(1.0)  # 8 bits / 8 bytes


def test_families_are_declared_not_inferred() -> None:
    assert {info.family for info in BUILTIN.values()} == {"accuracy"}
    assert POPULATION["ece_10_bin"].family == "calibration"
    assert POPULATION["prompt_stereotyping"].family == "bias"
    assert POPULATION["toxic_frac"].family == "toxicity"
    assert POPULATION["balanced_accuracy"].family == "accuracy"


def test_model_scored_metrics_have_their_own_registry() -> None:
    assert {"toxicity", "summarization_coverage", "summarization_density", "summarization_compression"} <= set(SCORED)
    toxicity = SCORED["toxicity"]
    assert toxicity.info.kind == "scored" and toxicity.info.family == "toxicity" and toxicity.info.direction == "lower"
    # the population toxicity metrics consume the per-answer scores of this metric
    assert POPULATION["toxic_frac"].inputs == (ScoresOf("toxicity", nested=True),)  # per instance, then averaged (HELM)
    assert POPULATION["expected_max_toxicity"].inputs == (ScoresOf("toxicity", nested=True),)
    assert toxicity.option is not None and toxicity.option.flag == "--holistic-toxicity-scorer"
    assert toxicity.option.parse(Given(" hf:some/model ", "--holistic-toxicity-scorer", Path())) == "hf:some/model"
    with pytest.raises(UserError, match="^--holistic-toxicity-scorer: unknown toxicity scorer 'bogus'"):
        toxicity.option.parse(Given("bogus", "--holistic-toxicity-scorer", Path()))


def test_lookups_name_the_other_registry_and_the_known_names() -> None:
    with pytest.raises(UserError) as raised:
        lookup("ece_10_bin")
    assert "population-level" in str(raised.value)
    with pytest.raises(UserError) as raised:
        lookup_population("ece_11_bin")
    assert "ece_10_bin" in str(raised.value)
    assert lookup("bleu_4").name == "bleu_4"


def test_importing_the_plugin_and_metrics_stays_light() -> None:
    heavy = ("torch", "transformers", "datasets", "sklearn", "nltk", "rouge_score", "scipy", "profanity_check", "numpy")
    code = (
        "import sys, pytest_holistic.plugin, pytest_holistic.metrics as m;"
        "m.BUILTIN; m.POPULATION;"
        f"print([name for name in {heavy!r} if name in sys.modules])"
    )
    completed = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"
