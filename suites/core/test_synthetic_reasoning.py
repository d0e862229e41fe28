"""HELM synthetic reasoning (targeted evaluation: reasoning), generated from a seed; main metric exact match.

Adapter as HELM's ``synthetic_reasoning`` run spec: generation, instructions "Please solve the following
problem.", output prefix ``Target: ``, 5 in-context examples, max_tokens 50, stop at a newline.

The instances are HELM's (``SyntheticReasoningScenario(mode)``, seed 42), drawn as HELM draws them. HELM's class
gives 1000 train, 5000 valid and 5000 test instances per mode, and HELM evaluates a seeded 1000 of the 10000 valid
and test ones; this run keeps HELM's 1000 train instances (the pool of in-context examples) and evaluates the first
10 test instances, HELM's ``id6000``..``id6009`` (tests/conformance/golden/scenarios.json compares them, and the
whole of HELM's 11000 per mode). ``synthetic_reasoning(mode)`` gives HELM's 11000 (with ``split="test"`` 5000 items
of up to 50 generated tokens per mode instead of 10).
"""

import pytest

from pytest_holistic import Scenario, metrics
from pytest_holistic.scenarios.synthetic import synthetic_reasoning

pytestmark = [pytest.mark.helm_targeted, pytest.mark.reasoning]


def reasoning(mode: str) -> Scenario:
    """HELM's train split and its first 10 test instances of ``mode``."""
    return synthetic_reasoning(mode, train=1000, valid=0, test=10)


LAYOUT = dict(
    adapter="generation",
    perturbations=False,  # HELM perturbs the core scenarios only; a typo would change the symbols to match
    instructions="Please solve the following problem.\n",
    input_prefix="",
    output_prefix="Target: ",
    max_train_instances=5,
    max_tokens=50,
    stop=("\n",),
    metrics=(*metrics.HELM_EXACT_MATCH, "ece_10_bin", "ece_1_bin"),
)


@pytest.mark.holistic(reasoning("pattern_match"), **LAYOUT)
def test_pattern_match(completion):
    pass


@pytest.mark.holistic(reasoning("variable_substitution"), **LAYOUT)
def test_variable_substitution(completion):
    pass


@pytest.mark.holistic(reasoning("induction"), **LAYOUT)
def test_induction(completion):
    pass
